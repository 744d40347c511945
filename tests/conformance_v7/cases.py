"""Hand-written AI SDK v7 streams: every chunk type and field v7 adds, and what v7 refuses.

``CASES`` fold without error in ``ai@7.0.173``; ``REFUSED`` make its fold fail
(the failing chunk is found by the oracle, chunk by chunk). Each entry is
``{"name", "chunks", "message"?}``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CASES", "REFUSED"]

Chunk = dict[str, Any]


def _text(tid: str, text: str, **end: Any) -> list[Chunk]:
    return [
        {"type": "text-start", "id": tid},
        {"type": "text-delta", "id": tid, "delta": text},
        {"type": "text-end", "id": tid, **end},
    ]


def _call(cid: str, name: str = "weather", **extra: Any) -> Chunk:
    return {
        "type": "tool-input-available",
        "toolCallId": cid,
        "toolName": name,
        "input": {"c": 1},
        **extra,
    }


def _request(cid: str, aid: str, **extra: Any) -> Chunk:
    return {"type": "tool-approval-request", "toolCallId": cid, "approvalId": aid, **extra}


def _response(aid: str, approved: bool, **extra: Any) -> Chunk:
    return {"type": "tool-approval-response", "approvalId": aid, "approved": approved, **extra}


URL_CITATION = {
    "source": {"type": "source", "sourceType": "url", "id": "s1", "url": "https://a.example/"},
    "startIndex": 0,
    "endIndex": 2,
    "citedText": "hi",
}
DOC_CITATION = {
    "source": {
        "type": "source",
        "sourceType": "document",
        "id": "d1",
        "mediaType": "application/pdf",
        "title": "Doc",
        "filename": "doc.pdf",
        "providerMetadata": {"p": {"page": 3}},
    },
}
STEERING_PARTS = [
    {"type": "text", "text": "also check Paris"},
    {"type": "text", "text": "meta", "providerMetadata": {"openai": {"x": 1}}},
    {
        "type": "file",
        "mediaType": "image/png",
        "url": "https://files.example/p.png",
        "filename": "p.png",
        "providerReference": {"openai": "file_1"},
        "x-extra": [1],
    },
    {"type": "file", "mediaType": "image", "url": "data:image/png;base64,AA=="},
]
PRIOR = {
    "id": "a0",
    "role": "assistant",
    "parts": [
        {"type": "step-start"},
        {"type": "text", "text": "looking", "state": "done"},
        {
            "type": "tool-weather",
            "toolCallId": "c0",
            "state": "approval-requested",
            "input": {"c": 0},
            "approval": {"id": "ap0", "requestReason": "costly"},
        },
    ],
}

CASES: list[dict[str, Any]] = [
    {
        "name": "text-end with url and document citations",
        "chunks": [
            {"type": "start", "messageId": "m"},
            *_text("t", "hi", citations=[URL_CITATION, DOC_CITATION]),
        ],
    },
    {"name": "text-end with empty citations", "chunks": _text("t", "hi", citations=[])},
    {
        "name": "custom part",
        "chunks": [
            {"type": "custom", "kind": "openai.compaction"},
            {
                "type": "custom",
                "kind": "anthropic.x",
                "providerMetadata": {"anthropic": {"k": [1]}},
            },
        ],
    },
    {
        "name": "reasoning-file",
        "chunks": [
            {"type": "reasoning-start", "id": "r"},
            {
                "type": "reasoning-file",
                "url": "data:image/png;base64,AA==",
                "mediaType": "image/png",
            },
            {"type": "reasoning-delta", "id": "r", "delta": "think"},
            {"type": "reasoning-end", "id": "r"},
            {
                "type": "reasoning-file",
                "url": "https://x/y.png",
                "mediaType": "image/png",
                "providerMetadata": {"g": {"sig": "s"}},
            },
        ],
    },
    {
        "name": "steering message between steps",
        "chunks": [
            {"type": "start-step"},
            *_text("t1", "one"),
            {"type": "finish-step"},
            {"type": "steering-message", "id": "steer1", "parts": STEERING_PARTS},
            {"type": "start-step"},
            *_text("t2", "two"),
            {"type": "finish-step"},
        ],
    },
    {
        "name": "steering message between a text part's deltas",
        "chunks": [
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "a"},
            {"type": "steering-message", "id": "s", "parts": [{"type": "text", "text": "x"}]},
            {"type": "text-delta", "id": "t", "delta": "b"},
            {"type": "text-end", "id": "t"},
        ],
    },
    {
        "name": "steering message with no parts",
        "chunks": [{"type": "steering-message", "id": "s", "parts": []}],
    },
    {
        "name": "text delta after finish-step is still open in v7",
        "chunks": [
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "a"},
            {"type": "finish-step"},
            {"type": "text-delta", "id": "t", "delta": "b"},
            {"type": "text-end", "id": "t"},
        ],
    },
    {
        "name": "reset-step drops the current step and keeps step-start",
        "chunks": [
            {"type": "start-step"},
            *_text("t1", "one"),
            {"type": "finish-step"},
            {"type": "start-step"},
            {"type": "text-start", "id": "t2"},
            {"type": "text-delta", "id": "t2", "delta": "bad"},
            {"type": "reasoning-start", "id": "r"},
            _call("c1"),
            {"type": "source-url", "sourceId": "s", "url": "https://u/"},
            {"type": "file", "url": "https://f/", "mediaType": "text/plain"},
            {"type": "custom", "kind": "p.k"},
            {"type": "data-x", "id": "d", "data": 1},
            {"type": "reset-step"},
            *_text("t2", "good"),
            _call("c1"),
            {"type": "tool-output-available", "toolCallId": "c1", "output": 2},
            {"type": "finish-step"},
        ],
    },
    {
        "name": "reset-step first in every attempt (WorkflowAgent)",
        "chunks": [
            {"type": "start"},
            {"type": "start-step"},
            {"type": "reset-step"},
            *_text("t", "first try"),
            {"type": "reset-step"},
            *_text("t", "second try"),
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "stop"},
        ],
    },
    {
        "name": "reset-step with no step-start removes every part",
        "chunks": [
            *_text("t", "x"),
            _call("c1"),
            {"type": "reset-step"},
            *_text("t", "y"),
        ],
    },
    {
        "name": "reset-step keeps a data update of an earlier step",
        "chunks": [
            {"type": "start-step"},
            {"type": "data-x", "id": "d", "data": 1},
            {"type": "start-step"},
            {"type": "data-x", "id": "d", "data": 2},
            {"type": "message-metadata", "messageMetadata": {"a": 1}},
            {"type": "reset-step"},
        ],
    },
    {
        "name": "reset-step retracts an approval request; the retry reuses the call id",
        "chunks": [
            {"type": "start-step"},
            _call("c1"),
            _request("c1", "ap1"),
            {"type": "reset-step"},
            {"type": "tool-input-start", "toolCallId": "c1", "toolName": "weather"},
            {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"c":'},
            {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "2}"},
            _call("c1"),
            _request("c1", "ap1", reason="again"),
        ],
    },
    {
        "name": "reset-step on a continuation before start-step removes the answered step",
        "message": PRIOR,
        "chunks": [{"type": "reset-step"}, {"type": "start-step"}, *_text("t", "after")],
    },
    {
        "name": "reset-step leaves a trailing nothing to remove",
        "chunks": [
            *_text("t", "x"),
            {"type": "start-step"},
            {"type": "reset-step"},
            {"type": "reset-step"},
        ],
    },
    {
        "name": "approval request with reason and isAutomatic",
        "chunks": [
            _call("c1"),
            _request(
                "c1",
                "ap1",
                reason="policy",
                isAutomatic=True,
                signature="sig",
                approvalDescriptor={"d": 1},
                inputSchemaInput={"c": 1},
            ),
            _call("c2"),
            _request("c2", "ap2", isAutomatic=False),
        ],
    },
    {
        "name": "automatic approval then output",
        "chunks": [
            {"type": "start-step"},
            _call("c1"),
            _request("c1", "ap1", isAutomatic=True),
            _response("ap1", True),
            {"type": "tool-output-available", "toolCallId": "c1", "output": "sunny"},
            {"type": "finish-step"},
        ],
    },
    {
        "name": "automatic denial with reason then output-denied",
        "chunks": [
            _call("c1"),
            _request("c1", "ap1", isAutomatic=True, reason="needs review"),
            _response("ap1", False, reason="blocked by policy"),
            {"type": "tool-output-denied", "toolCallId": "c1"},
        ],
    },
    {
        "name": "approval response with providerExecuted and metadata",
        "chunks": [
            _call("c1", providerExecuted=True, providerMetadata={"p": {"a": 1}}),
            _request("c1", "ap1"),
            _response("ap1", True, providerExecuted=True, providerMetadata={"p": {"b": 2}}),
        ],
    },
    {
        "name": "approval response finds the call in an earlier step",
        "chunks": [
            {"type": "start-step"},
            _call("c1"),
            _request("c1", "ap1"),
            {"type": "finish-step"},
            {"type": "start-step"},
            *_text("t", "waiting"),
            _response("ap1", True, reason="ok"),
        ],
    },
    {
        "name": "approval response on a continued message",
        "message": PRIOR,
        "chunks": [
            _response("ap0", False, reason="no"),
            {"type": "tool-output-denied", "toolCallId": "c0"},
        ],
    },
    {
        "name": "approval response for a dynamic tool",
        "chunks": [
            _call("c1", dynamic=True),
            _request("c1", "ap1"),
            _response("ap1", True),
            {"type": "tool-output-error", "toolCallId": "c1", "errorText": "boom"},
        ],
    },
    {
        "name": "static tool-input-error keeps its input in input",
        "chunks": [
            {"type": "tool-input-start", "toolCallId": "c1", "toolName": "weather"},
            {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"c"'},
            {
                "type": "tool-input-error",
                "toolCallId": "c1",
                "toolName": "weather",
                "input": '{"c"',
                "errorText": "bad json",
            },
            {
                "type": "tool-input-error",
                "toolCallId": "c2",
                "toolName": "nope",
                "input": {"a": 1},
                "errorText": "unknown tool",
            },
        ],
    },
    {
        "name": "finish interrupted",
        "chunks": [
            {"type": "start"},
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "partial"},
            {"type": "finish", "finishReason": "interrupted"},
        ],
    },
    {
        "name": "unknown keys kept on new chunks",
        "chunks": [
            {"type": "custom", "kind": "k", "x-extra": {"a": 1}},
            {
                "type": "steering-message",
                "id": "s",
                "parts": [{"type": "text", "text": "t", "y": 2}],
                "z": 3,
            },
            {"type": "reset-step", "x": 1},
        ],
    },
]

REFUSED: list[dict[str, Any]] = [
    {
        "name": "approval response for an unknown approval id",
        "chunks": [_call("c1"), _request("c1", "ap1"), _response("nope", True)],
    },
    {
        "name": "approval response for an approval of an earlier message",
        "message": {"id": "u", "role": "user", "parts": []},
        "chunks": [*_text("t", "x"), _response("ap0", True)],
    },
    {
        "name": "output for a call retracted by reset-step",
        "chunks": [
            {"type": "start-step"},
            _call("c1"),
            {"type": "reset-step"},
            {"type": "tool-output-available", "toolCallId": "c1", "output": 1},
        ],
    },
    {
        "name": "approval response for a retracted approval",
        "chunks": [
            {"type": "start-step"},
            _call("c1"),
            _request("c1", "ap1"),
            {"type": "reset-step"},
            _response("ap1", True),
        ],
    },
    {
        "name": "delta for a text part retracted by reset-step",
        "chunks": [
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "reset-step"},
            {"type": "text-delta", "id": "t", "delta": "x"},
        ],
    },
    {
        "name": "delta for a text part of an earlier step after reset-step",
        "chunks": [
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "start-step"},
            {"type": "reset-step"},
            {"type": "text-delta", "id": "t", "delta": "x"},
        ],
    },
    {
        "name": "input delta for a call streaming in an earlier step after reset-step",
        "chunks": [
            {"type": "start-step"},
            {"type": "tool-input-start", "toolCallId": "c", "toolName": "w"},
            {"type": "start-step"},
            {"type": "reset-step"},
            {"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": "{"},
        ],
    },
]
