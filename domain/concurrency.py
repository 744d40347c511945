"""What to do with a user message sent while an answer streams: the policy, and its decision.

Five policies, per server (``chatledger serve --message-concurrency``) or per
conversation (``messageConcurrency`` in the metadata set with ``set_metadata``,
which wins; metadata given at creation is not part of the state):

* ``queue`` (the default, as before): an AI SDK 7 conversation queues the
  message as steering (the running answer may take it; else it is answered
  once that answer ends); an AI SDK 6 one refuses it (409).
* ``latest``: the running answer is stopped (closed as ``aborted``) and the
  newest message answered at once, in either major.
* ``merge``: queued as with ``queue``; once the running answer ends, the
  messages queued during it are answered as one turn: the responder is given
  them as one user message (their parts in order). The log keeps each message
  as it was sent.
* ``drop``: refused (409); the refusal is recorded, the message is not.
* ``debounce``: queued as with ``queue``; the answer waits until the user has
  sent nothing for ``debounce_seconds`` (a later message takes the turn over).

An AI SDK 6 conversation cannot hold a message while an answer streams, so
there ``merge`` and ``debounce`` refuse as ``queue`` does. Every outcome
other than ``queue``'s is a ``MidAnswerMessage`` event in the audit.

Pure: no I/O, no clock (``quiet_left`` is given the times).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from chatledger.domain.errors import InvalidInputError, StreamAlreadyOpenError

__all__ = [
    "DEFAULT_DEBOUNCE_SECONDS",
    "METADATA_KEY",
    "POLICIES",
    "Concurrency",
    "Decision",
    "MessageDroppedError",
    "MessagePolicy",
    "decide",
    "merged_message",
    "parse_concurrency",
    "policy_of",
    "quiet_left",
]

MessagePolicy = Literal["queue", "latest", "merge", "drop", "debounce"]
POLICIES: Final[tuple[str, ...]] = get_args(MessagePolicy)
METADATA_KEY: Final = "messageConcurrency"
"""The conversation metadata key that sets its own policy (``"latest"``, or ``"debounce:2"``)."""
DEFAULT_DEBOUNCE_SECONDS: Final = 1.0

Decision = Literal["steer", "refuse", "latest", "merge", "drop", "debounce"]
"""What the turn does: ``steer`` (today's queue), ``refuse`` (409 as today), or the policy's own."""


@dataclass(frozen=True)
class Concurrency:
    """A policy for messages sent mid-answer, and the quiet time ``debounce`` waits for."""

    policy: MessagePolicy = "queue"
    debounce_seconds: float = DEFAULT_DEBOUNCE_SECONDS

    def __str__(self) -> str:
        if self.policy == "debounce":
            return f"debounce:{self.debounce_seconds:g}"
        return self.policy


class MessageDroppedError(StreamAlreadyOpenError):
    """A message sent while an answer streams, refused by the ``drop`` policy (HTTP 409)."""

    def __init__(self, chat_id: str, stream_id: str) -> None:
        super().__init__(chat_id, stream_id)
        self.args = (
            f"conversation {chat_id!r} is answering (stream {stream_id!r}) and its policy for "
            "messages sent meanwhile is 'drop': send the message again once the answer has ended",
        )


def parse_concurrency(value: Any, where: str = "message concurrency") -> Concurrency:
    """``"latest"``, ``"debounce"`` or ``"debounce:SECONDS"`` as a ``Concurrency``; else InvalidInputError."""
    text = value.strip() if isinstance(value, str) else value
    name, _, seconds = text.partition(":") if isinstance(text, str) else ("", "", "")
    if name not in POLICIES or (seconds and name != "debounce"):
        raise InvalidInputError(
            f"{where} must be one of {', '.join(POLICIES)} (or debounce:SECONDS), not {value!r}"
        )
    quiet = DEFAULT_DEBOUNCE_SECONDS
    if seconds:
        try:
            quiet = float(seconds)
        except ValueError:
            quiet = -1.0
        if not 0 <= quiet <= 3600:
            raise InvalidInputError(
                f"{where}: debounce takes seconds between 0 and 3600, not {seconds!r}"
            )
    return Concurrency(name, quiet)  # type: ignore[arg-type]


def policy_of(metadata: Mapping[str, Any], default: Concurrency) -> Concurrency:
    """The conversation's own policy (its metadata's ``messageConcurrency``), else ``default``.

    A value that is not a policy is ignored (metadata is the client's to write):
    the server's default applies.
    """
    value = metadata.get(METADATA_KEY)
    if value is None:
        return default
    try:
        return parse_concurrency(value, METADATA_KEY)
    except InvalidInputError:
        return default


def decide(policy: MessagePolicy, *, steers: bool, new_message: bool) -> Decision:
    """What a request does while an answer streams.

    ``steers``: whether the conversation's AI SDK major holds messages mid-answer
    (7); ``new_message``: whether the request only adds a user message (anything
    else is refused, as before, whatever the policy).
    """
    if not new_message:
        return "refuse"
    if policy in ("latest", "drop"):
        return policy
    if not steers:
        return "refuse"
    return "steer" if policy == "queue" else policy


def quiet_left(now: float, last_arrival: float, seconds: float) -> float:
    """Seconds still to wait before the user counts as done typing (0: answer now)."""
    return max(0.0, last_arrival + seconds - now)


def merged_message(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Consecutive user messages as the one user message a merged turn answers (the last one's id)."""
    last = messages[-1]
    parts = [part for message in messages for part in message.get("parts", [])]
    return {**last, "parts": parts}
