"""Compaction: a summary stands in for a range of messages in the model's input; the originals stay.

A ``MessagesCompacted`` event names a range of the conversation's messages
(first and last message id, both included) and the summary that replaces
them *for model input only*: ``model_messages()`` in every format shows one
system message holding the summary where the range was, while
``messages()``, the pages and the audit keep every original message (the
pages mark them as compacted, with who, when and why, from
``compaction_marks``). The fold of the messages is unchanged, so nothing a
store decides depends on a compaction; a read at a version before it sees no
compaction at all.

Rules: the range must be messages of the current view, first before last,
and must leave the latest message out (the model always sees it as it is,
with the tool calls it may still wait on); no stream may be open. A later
compaction may cover earlier ones whole (a summary of summaries); one that
cuts through an earlier range is refused. A compaction whose messages were
cut since (edit, regenerate) no longer applies: the model then sees the
messages of the current view as they are.

Its class path is stored data (``chatledger.domain.compaction:MessagesCompacted``):
never rename or move it without registering the old topic. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

from chatledger.domain.conversation import ConversationState
from chatledger.domain.errors import InvalidInputError, InvalidMessageError, StreamAlreadyOpenError
from chatledger.domain.events import ConversationEvent
from chatledger.domain.limits import check_name, check_names, check_text

__all__ = [
    "SUMMARY_ID_PREFIX",
    "MessagesCompacted",
    "compacted_messages",
    "compaction_marks",
    "decide_compaction",
    "effective_compactions",
    "record_compaction",
]

SUMMARY_ID_PREFIX: Final = "compaction-"
"""The id of a summary message in model input: this prefix and the compaction's log position."""


class MessagesCompacted(ConversationEvent):
    """A summary replaced a range of messages in the model's input; the messages stay in every view."""

    from_message_id: str
    """The first message of the range."""
    to_message_id: str
    """The last message of the range (included)."""
    count: int
    """How many messages the range held when it was compacted."""
    summary: str
    """What the model reads instead of the range."""
    reason: str | None = None
    """Why, when given (``auto: model input over 8000 tokens``, ``manual``)."""

    def apply_to(self, state: ConversationState) -> None:
        """Remember the compaction; the messages themselves stay as folded."""
        state.compactions.append(self.record())

    def record(self) -> dict[str, Any]:
        """The compaction as ``ConversationState.compactions`` keeps it."""
        return {
            "from": self.from_message_id,
            "to": self.to_message_id,
            "count": self.count,
            "summary": self.summary,
            "reason": self.reason,
            "actor": self.actor,
            "time": self.timestamp.isoformat(),
            "version": self.originator_version,
        }


def decide_compaction(
    state: ConversationState, from_message_id: str, to_message_id: str, summary: str
) -> int:
    """Check a compaction of ``from_message_id``..``to_message_id`` against ``state``; the count of messages.

    Raises InvalidMessageError (naming the message) for an id not in the
    current view, InvalidInputError for a range that is backwards, holds the
    latest message, or cuts through an earlier compaction, or an empty summary.
    """
    check_names(from_message_id=from_message_id, to_message_id=to_message_id)
    check_text("summary", summary)
    if not isinstance(summary, str) or not summary.strip():
        raise InvalidInputError("a compaction needs a summary (the text the model reads instead)")
    ids = [message["id"] for message in state.messages]
    where = {message_id: index for index, message_id in enumerate(ids)}
    for message_id in (from_message_id, to_message_id):
        if message_id not in where:
            raise InvalidMessageError(
                "no message with this id in the conversation", message_id=message_id
            )
    first, last = where[from_message_id], where[to_message_id]
    if first > last:
        raise InvalidInputError(
            f"the compaction's first message {from_message_id!r} comes after its last "
            f"{to_message_id!r}: name the earlier message first"
        )
    if last == len(ids) - 1:
        raise InvalidInputError(
            f"a compaction must leave the latest message ({to_message_id!r}) out: "
            "end the range before it"
        )
    for start, end, _ in _ranges(state.messages, state.compactions):
        if start < first <= end < last or first < start <= last < end:
            raise InvalidInputError(
                f"the range cuts through an earlier compaction ({ids[start]!r}..{ids[end]!r}): "
                "cover it whole or leave it out"
            )
    return last - first + 1


def record_compaction(
    conversation: Any,
    from_message_id: str,
    to_message_id: str,
    *,
    summary: str,
    reason: str | None,
    actor: str,
) -> int:
    """The ``Conversation.compact`` command: check it, record ``MessagesCompacted``; the messages covered.

    Refused while a stream is open (StreamAlreadyOpenError), and as ``decide_compaction`` says.
    """
    check_name("actor", actor)
    check_text("reason", reason)
    state: ConversationState = conversation.state
    if state.stream is not None:
        raise StreamAlreadyOpenError(state.chat_id, state.stream.stream_id)
    count = decide_compaction(state, from_message_id, to_message_id, summary)
    conversation.trigger_event(
        MessagesCompacted,
        from_message_id=from_message_id,
        to_message_id=to_message_id,
        count=count,
        summary=summary,
        reason=reason,
        actor=actor,
    )
    return count


def effective_compactions(
    messages: Sequence[dict[str, Any]], compactions: Iterable[dict[str, Any]]
) -> list[tuple[int, int, dict[str, Any]]]:
    """``(first index, last index, compaction)`` of the compactions that apply to ``messages``, in order.

    A compaction applies while both ends are in ``messages`` and no later
    compaction covers it.
    """
    kept: list[tuple[int, int, dict[str, Any]]] = []
    for start, end, record in _ranges(messages, compactions):
        kept = [k for k in kept if not (start <= k[0] and k[1] <= end)]
        kept.append((start, end, record))
    return sorted(kept, key=lambda k: k[0])


def compacted_messages(
    messages: Sequence[dict[str, Any]], compactions: Iterable[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``messages`` as the model reads them: each compacted range replaced by its summary.

    The summary is a system UIMessage (``compaction-<position>``) with one text
    part, so every converter places it where the range was.
    """
    shown: list[dict[str, Any]] = []
    at = 0
    for start, end, record in effective_compactions(messages, compactions):
        shown.extend(messages[at:start])
        shown.append(
            {
                "id": f"{SUMMARY_ID_PREFIX}{record['version']}",
                "role": "system",
                "parts": [{"type": "text", "text": record["summary"]}],
            }
        )
        at = end + 1
    shown.extend(messages[at:])
    return shown


def compaction_marks(
    messages: Sequence[dict[str, Any]], compactions: Iterable[dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Message id -> the compaction that stands in for it in model input (for pages and reads)."""
    marks: dict[str, dict[str, Any]] = {}
    for start, end, record in effective_compactions(messages, compactions):
        for message in messages[start : end + 1]:
            marks[message["id"]] = record
    return marks


def _ranges(
    messages: Sequence[dict[str, Any]], compactions: Iterable[dict[str, Any]]
) -> list[tuple[int, int, dict[str, Any]]]:
    """The compactions whose both ends are in ``messages``, with their indices, in log order."""
    where = {message["id"]: index for index, message in enumerate(messages)}
    found = []
    for record in compactions:
        start, end = where.get(record["from"]), where.get(record["to"])
        if start is not None and end is not None and start <= end:
            found.append((start, end, record))
    return found
