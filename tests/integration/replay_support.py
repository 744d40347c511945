"""A recorded three-turn conversation for the replay tests, and the scripts that answer it.

Turn 1: text, then ``delete_file`` awaiting approval; approved, the
responder runs the tool itself (``tool-output-available``) and answers.
Turn 2: ``get_weather`` left to the client (``input-available``); the
client gives its result; the responder answers with it. Turn 3: text only.
``scripts(**changes)`` builds the responder's answers with changes made on
purpose, so a test knows exactly which divergences a replay must find.
"""

from __future__ import annotations

from typing import Any

from chatledger.adapters.responders.scripted import ResponderRequest, ScriptedResponder

USER = "user:alice"
AGENT = "agent:scripted"
QUESTIONS = [
    "Free some disk space on the CI runner.",
    "What is the weather in Paris?",
    "Thanks, that is all.",
]
DELETE_INPUT = {"path": "/var/log/ci/archive", "recursive": True}
WEATHER_INPUT = {"city": "Paris"}
DELETED = {"deleted": "/var/log/ci/archive", "files": 1284}
WEATHER = {"temperature": 21, "sky": "clear"}
LIVE_DELETED = {"deleted": "/", "files": 999999}
"""What the responder's own tool "returns" when it runs under a replay: never stored for a match."""


def _text(item: str, text: str) -> list[dict[str, Any]]:
    return [
        {"type": "text-start", "id": item},
        {"type": "text-delta", "id": item, "delta": text},
        {"type": "text-end", "id": item},
    ]


def _call(call_id: str, name: str, input: Any) -> list[dict[str, Any]]:
    return [
        {"type": "tool-input-start", "toolCallId": call_id, "toolName": name},
        {"type": "tool-input-available", "toolCallId": call_id, "toolName": name, "input": input},
    ]


def scripts(
    *,
    first_text: str = "I can remove the archived logs.",
    delete_input: Any = None,
    weather_input: Any = None,
    last_text: str = "You're welcome.",
    last_finish: str = "stop",
    result: Any = None,
) -> list[list[dict[str, Any]]]:
    """The five answers of the conversation (turn 1 and its continuation, turn 2 and its, turn 3)."""
    delete_input = DELETE_INPUT if delete_input is None else delete_input
    weather_input = WEATHER_INPUT if weather_input is None else weather_input
    return [
        [
            {"type": "start"},
            {"type": "start-step"},
            *_text("t1", first_text),
            *_call("call_del", "delete_file", delete_input),
            {"type": "tool-approval-request", "approvalId": "appr_del", "toolCallId": "call_del"},
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "tool-calls"},
        ],
        [
            {"type": "start"},
            {
                "type": "tool-output-available",
                "toolCallId": "call_del",
                "output": result or DELETED,
            },
            {"type": "start-step"},
            *_text("t2", "Done: 1,284 files deleted."),
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "stop"},
        ],
        [
            {"type": "start"},
            {"type": "start-step"},
            *_call("call_wx", "get_weather", weather_input),
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "tool-calls"},
        ],
        [
            {"type": "start"},
            {"type": "start-step"},
            *_text("t3", "It is 21°C and clear in Paris."),
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "stop"},
        ],
        [
            {"type": "start"},
            {"type": "start-step"},
            *_text("t4", last_text),
            {"type": "finish-step"},
            {"type": "finish", "finishReason": last_finish},
        ],
    ]


def record(store: Any, chat_id: str) -> None:
    """Record the conversation as an app would: messages, streams, a human approval, a client result."""
    answers = scripts()
    store.start_conversation(chat_id, actor=USER)

    def ask(turn: int) -> None:
        message = {
            "id": f"u{turn}",
            "role": "user",
            "parts": [{"type": "text", "text": QUESTIONS[turn]}],
        }
        store.append_message(chat_id, message, actor=USER)

    ask(0)
    store.ingest(chat_id, answers[0], actor=AGENT)
    store.respond_to_approval(
        chat_id, approval_id="appr_del", approved=True, reason="old logs", actor=USER
    )
    store.ingest(chat_id, answers[1], actor=AGENT, continuation=True)
    ask(1)
    store.ingest(chat_id, answers[2], actor=AGENT)
    store.add_tool_output(chat_id, "call_wx", output=WEATHER, actor="user:browser")
    store.ingest(chat_id, answers[3], actor=AGENT, continuation=True)
    ask(2)
    store.ingest(chat_id, answers[4], actor=AGENT)


class TurnScripted(ScriptedResponder):
    """Answers by where the conversation stands (the turn, and whether it continues), not by count.

    A run that stops early in a turn (a call left unanswered) then still gets
    the next turn's answer for the next turn.
    """

    def _pick(self, request: ResponderRequest) -> int:
        turn = sum(1 for message in request.messages if message["role"] == "user")
        return {1: 0, 2: 2, 3: 4}[turn] + (request.trigger == "continuation")


def responder(**changes: Any) -> TurnScripted:
    """A responder giving ``scripts(**changes)``, one per turn and step."""
    return TurnScripted(scripts(**changes), actor=AGENT)


def same_responder() -> TurnScripted:
    """``--responder`` target: the recording's own answers."""
    return responder()


def new_prompt_responder() -> TurnScripted:
    """``--responder`` target: a new prompt that answers the last turn otherwise."""
    return responder(last_text="Glad to help!")
