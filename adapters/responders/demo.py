"""The demo conversation: a recorded AI SDK v6 tool-approval turn, denied, then continued.

The chunks are what ``streamText(...).toUIMessageStream()`` sends for an
OpenAI Responses model: a turn that ends on a
``tool-approval-request``, then the continuation after the user's denial, in
which the provider re-sends the earlier tool call (the replay chatledger
ignores, docs/behaviour.md §3.2) before ``tool-output-denied`` and the final answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chatledger.adapters.store import ConversationStore

__all__ = [
    "DENIAL_REASON",
    "DemoResult",
    "approved_continuation_chunks",
    "continuation_chunks",
    "first_turn_chunks",
    "record_demo",
]

USER = "user:alice"
AGENT = "agent:ops-assistant"
MESSAGE_ID = "msg-Zr8LqT2vXc4NwK9p"
"""The server's id for the assistant message (``generateMessageId``)."""
TOOL_CALL_ID = "call_7HbQzW1mKf3sYtRe"
APPROVAL_ID = "aTq9XbL2mWc5RzN8"
TOOL_INPUT_DELTAS = ['{"path":"', "/var/log/ci", '/archive","recursive"', ":true}"]
DENIAL_REASON = "Those logs are still needed for the Q3 audit; archive them to S3 instead."

USER_MESSAGE: dict[str, Any] = {
    "id": "msg-user-1",
    "role": "user",
    "parts": [
        {
            "type": "text",
            "text": "The CI runner's disk is almost full. Can you delete the old build logs "
            "in /var/log/ci/archive?",
        }
    ],
}


def _text(item_id: str, pieces: list[str]) -> list[dict[str, Any]]:
    """A streamed text part, as the OpenAI Responses provider sends it."""
    metadata = {"openai": {"itemId": item_id}}
    return [
        {"type": "text-start", "id": item_id, "providerMetadata": metadata},
        *({"type": "text-delta", "id": item_id, "delta": piece} for piece in pieces),
        {"type": "text-end", "id": item_id, "providerMetadata": metadata},
    ]


def _tool_call(deltas: list[str]) -> list[dict[str, Any]]:
    """``delete_file`` with its JSON input streamed in pieces."""
    return [
        {"type": "tool-input-start", "toolCallId": TOOL_CALL_ID, "toolName": "delete_file"},
        *(
            {"type": "tool-input-delta", "toolCallId": TOOL_CALL_ID, "inputTextDelta": d}
            for d in deltas
        ),
        {
            "type": "tool-input-available",
            "toolCallId": TOOL_CALL_ID,
            "toolName": "delete_file",
            "input": {"path": "/var/log/ci/archive", "recursive": True},
            "providerMetadata": {"openai": {"itemId": "fc_68c2f1a0b4e88193"}},
        },
    ]


def first_turn_chunks() -> list[dict[str, Any]]:
    """The assistant's first response: some text, then a call that needs approval."""
    return [
        {"type": "start", "messageId": MESSAGE_ID},
        {"type": "start-step"},
        *_text(
            "msg_68c2f19e7f5c8193",
            ["I can", " free up", " space by", " removing the", " archived build", " logs."],
        ),
        *_tool_call(TOOL_INPUT_DELTAS),
        {"type": "tool-approval-request", "approvalId": APPROVAL_ID, "toolCallId": TOOL_CALL_ID},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "tool-calls"},
    ]


def continuation_chunks() -> list[dict[str, Any]]:
    """The continuation after the denial, with the provider's replay of the earlier call."""
    return [
        {"type": "start", "messageId": MESSAGE_ID},
        # The Responses API re-sends the earlier call with the same id (fewer,
        # larger deltas this time); the real SDK would regress the part.
        *_tool_call(["".join(TOOL_INPUT_DELTAS[:2]), "".join(TOOL_INPUT_DELTAS[2:])]),
        {"type": "tool-output-denied", "toolCallId": TOOL_CALL_ID},
        {"type": "start-step"},
        *_text(
            "msg_68c2f1b3d2a08193",
            [
                "Understood, I won't delete anything.",
                " To archive the logs instead, run:\n\n",
                "    aws s3 sync /var/log/ci/archive s3://ci-logs/archive/",
                "\n\nOnce the upload is verified,",
                " you can remove the local copy to free the space.",
            ],
        ),
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop"},
    ]


TOOL_OUTPUT: dict[str, Any] = {
    "deleted": "/var/log/ci/archive",
    "files": 1284,
    "freedBytes": 3_435_973_837,
}
"""What the demo's ``delete_file`` returns when it runs (after an approval)."""


def approved_continuation_chunks() -> list[dict[str, Any]]:
    """The continuation after an approval: the provider's replay, the tool's result, an answer using it."""
    return [
        {"type": "start", "messageId": MESSAGE_ID},
        *_tool_call(["".join(TOOL_INPUT_DELTAS[:2]), "".join(TOOL_INPUT_DELTAS[2:])]),
        {"type": "tool-output-available", "toolCallId": TOOL_CALL_ID, "output": TOOL_OUTPUT},
        {"type": "start-step"},
        *_text(
            "msg_68c2f1c7a1e48193",
            [
                f"Done: I deleted {TOOL_OUTPUT['deleted']}",
                f" ({TOOL_OUTPUT['files']:,} files),",
                f" which freed {TOOL_OUTPUT['freedBytes'] / 2**30:.1f} GiB",
                " on the CI runner's disk.",
            ],
        ),
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop"},
    ]


@dataclass
class DemoResult:
    """What recording the demo did."""

    chat_id: str
    events: int
    """Events in the conversation's log."""
    replays: int
    """Replayed chunks recorded and ignored."""
    refused: list[str] = field(default_factory=list)
    """Refusals (none expected)."""


def record_demo(store: ConversationStore, chat_id: str) -> DemoResult:
    """Write the whole demo conversation into ``store`` as a new conversation ``chat_id``."""
    store.start_conversation(chat_id, actor=USER, metadata={"title": "Disk cleanup (demo)"})
    store.append_message(chat_id, USER_MESSAGE, actor=USER)
    first = store.ingest(chat_id, first_turn_chunks(), actor=AGENT)
    store.respond_to_approval(
        chat_id, approval_id=APPROVAL_ID, approved=False, reason=DENIAL_REASON, actor=USER
    )
    second = store.ingest(chat_id, continuation_chunks(), actor=AGENT, continuation=True)
    return DemoResult(
        chat_id=chat_id,
        events=store.version(chat_id),
        replays=first.replays + second.replays,
        refused=[str(error) for error in (*first.refused, *second.refused)],
    )
