"""The state of one conversation (ordered UIMessages, the open stream) and how chunks change it.

Pure and in memory. The aggregate (``aggregate.py``) drives it from events;
tests and the conformance suite can drive it directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from chatledger.domain.branches import BranchTree
from chatledger.domain.dialects import IMPLICIT_MAJOR, Dialect, dialect_for
from chatledger.domain.errors import InvalidChunkError
from chatledger.domain.fold import StreamFold
from chatledger.domain.limits import chunk_cost, json_size
from chatledger.domain.open_stream import OpenStream
from chatledger.domain.owners import owner_of
from chatledger.domain.replay import approval_response_is_replay, is_replay
from chatledger.domain.tool_parts import is_tool_part, part_for_approval

__all__ = ["ConversationState", "Verdict"]


class Verdict(StrEnum):
    """What became of a received chunk."""

    APPLIED = "applied"
    """Folded into the conversation."""
    REPLAY = "replay"
    """A replay of a known tool call (docs/behaviour.md §3.2): recorded, changes nothing."""
    REFUSED = "refused"
    """Invalid (docs/behaviour.md §3.4): recorded for the audit, changes nothing."""


@dataclass
class ConversationState:
    """One conversation: its identity, its UIMessages and its open stream."""

    tenant: str
    chat_id: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    stream: OpenStream | None = None
    last_outcome: dict[str, Any] | None = None
    """``{"streamId", "outcome", "reason"}`` of the last closed stream."""
    continuation: dict[str, Any] | None = None
    """The pending continuation request: requestId, messageId, cause, requestedAt, claimedBy, leaseUntil."""
    wants_continuation: dict[str, str] | None = None
    """An answer asked to continue while a stream was open (its actor and cause): decided at close."""
    answered_since_stream: bool = False
    """A tool call was answered after the last stream opened."""
    approval_times: dict[str, str] = field(default_factory=dict)
    """toolCallId -> ISO time its approval was requested."""
    approval_calls: dict[str, str] = field(default_factory=dict)
    """approval id -> toolCallId, kept even when a part no longer carries its approval."""
    title: str | None = None
    """The title someone set (``TitleSet``), or None."""
    metadata: dict[str, Any] | None = None
    """The metadata someone set (``MetadataSet``), or None."""
    ai_sdk: int = IMPLICIT_MAJOR
    """The AI SDK major the conversation speaks, as recorded (set it only when constructing)."""
    halted_message: str | None = None
    """The message whose last stream finished ``interrupted`` (nothing continues it), if the dialect halts."""
    steering: list[dict[str, Any]] = field(default_factory=list)
    """User messages sent while the open stream runs, not yet taken by it (in order), if the dialect steers."""
    redactions: list[dict[str, Any]] = field(default_factory=list)
    """What views hide (``Redacted`` events): toolCallId or messageId, fields, version."""
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Answer key -> ``{"streamId", "messageId", "outcome"?, "reason"?}`` of each answer opened
    with a key (``StreamOpened.answer_key``): how a retried write is recognised."""
    owner: str | None = None
    """Who continues it, as recorded (None: from before owners; ``owners.owner_of`` decides)."""
    branches: BranchTree | None = None
    """The tree of every message shown (``chatledger.domain.branches``); None until the first cut."""
    forked_from: dict[str, Any] | None = None
    """A fork's origin (tenant, chatId, version, leaf: ``ConversationForked``); None: not a fork."""
    _tool_index: dict[str, tuple[int, int]] | None = None
    """toolCallId -> (message index, part index); built on first use (reads never need it)."""
    dialect: Dialect = field(init=False, repr=False, compare=False)
    """The AI SDK dialect of ``ai_sdk``: its chunks, parts, fold, converter and turn rules."""

    def __post_init__(self) -> None:
        self.dialect = dialect_for(self.ai_sdk)

    @property
    def tool_index(self) -> dict[str, tuple[int, int]]:
        """toolCallId -> (message index, part index) of the latest part with that id."""
        if self._tool_index is None:
            index: dict[str, tuple[int, int]] = {}
            for message_index, message in enumerate(self.messages):
                for part_index, part in enumerate(message["parts"]):
                    if is_tool_part(part) and isinstance(part.get("toolCallId"), str):
                        index[part["toolCallId"]] = (message_index, part_index)
            self._tool_index = index
        return self._tool_index

    # -- messages -----------------------------------------------------------

    def append_message(self, message: dict[str, Any]) -> None:
        """Append a whole (already validated) UIMessage."""
        self.messages.append(message)
        if self.branches is not None:
            self.branches.appended(message)
        self._index_parts(len(self.messages) - 1, 0)

    def has_message(self, message_id: str) -> bool:
        """Whether a message with this id is in the current view."""
        return any(message["id"] == message_id for message in self.messages)

    def tool_part(self, tool_call_id: str) -> dict[str, Any] | None:
        """The latest tool part with this toolCallId, anywhere in the conversation."""
        where = self.tool_index.get(tool_call_id)
        if where is None:
            return None
        part: dict[str, Any] = self.messages[where[0]]["parts"][where[1]]
        return part

    def cut_from(self, index: int) -> None:
        """Drop messages from ``index`` on from the current view (they stay in the log and the tree)."""
        if self.branches is None:
            self.branches = BranchTree.of(self.messages)
        self.branches.cut(index, self.messages)
        self._left_view(index)

    def switch_to(self, key: str) -> None:
        """Show the branch of node ``key`` (down its latest path to a leaf) instead of the active one."""
        assert self.branches is not None, "only a cut conversation has branches"
        self.messages = self.branches.switch(key, self.messages)
        self._left_view(len(self.messages))

    def _left_view(self, index: int) -> None:
        del self.messages[index:]
        self._tool_index = None
        self.continuation = None
        self.wants_continuation = None
        self.answered_since_stream = False

    def _index_parts(self, message_index: int, first_part: int) -> None:
        parts = self.messages[message_index]["parts"]
        for part_index in range(first_part, len(parts)):
            part = parts[part_index]
            if is_tool_part(part) and isinstance(part.get("toolCallId"), str):
                if self._tool_index is not None:
                    self._tool_index[part["toolCallId"]] = (message_index, part_index)
                approval = part.get("approval")
                if isinstance(approval, dict) and isinstance(approval.get("id"), str):
                    self.approval_calls[approval["id"]] = part["toolCallId"]

    # -- streams ------------------------------------------------------------

    def open_stream(
        self,
        stream_id: str,
        message_id: str,
        *,
        continuation: bool,
        trigger: str,
        actor: str,
        opened_at: datetime | None = None,
        lease_seconds: float | None = None,
        answer_key: str | None = None,
    ) -> None:
        """Start writing a new assistant message, or continue the last one.

        ``opened_at`` starts the stream's lease of ``lease_seconds`` (see ``chatledger.domain.lease``).
        ``answer_key`` (the writer's name for the answer) is remembered in ``answers``.
        """
        if answer_key is not None:
            self.answers[answer_key] = {"streamId": stream_id, "messageId": message_id}
        if continuation:
            index = len(self.messages) - 1
        else:
            self.append_message({"id": message_id, "role": "assistant", "parts": []})
            index = len(self.messages) - 1
        fold = StreamFold(
            self.messages[index],
            dialect=self.dialect,
            continuation=continuation,
            resolve_tool_part=self._earlier_part,
        )
        size = json_size(self.messages[index])
        self.stream = OpenStream(stream_id, index, continuation, trigger, actor, fold, 0, size)
        self.stream.renewed_at = opened_at
        self.stream.lease_seconds = lease_seconds
        self.answered_since_stream = False
        self.wants_continuation = None
        if not continuation:
            self.continuation = None  # a new turn overtakes a pending continuation

    def _earlier_part(self, tool_call_id: str) -> dict[str, Any] | None:
        """docs/behaviour.md §3.3: results for calls of earlier messages land on those parts."""
        return self.tool_part(tool_call_id)

    def receive_chunk(self, chunk: Mapping[str, Any], cost: int | None = None) -> Verdict:
        """Fold one schema-valid chunk into the open stream's message.

        Returns APPLIED or REPLAY; raises InvalidChunkError (naming the chunk's
        position) when the chunk cannot apply, leaving the state unchanged. The
        chunk's position is consumed either way.
        """
        stream = self.stream
        assert stream is not None, "receive_chunk needs an open stream"
        position = stream.next_seq
        stream.next_seq += 1
        tool_call_id = chunk.get("toolCallId")
        if tool_call_id is not None:
            existing = self.tool_part(tool_call_id)
            if existing is not None and is_replay(chunk, existing):
                return Verdict.REPLAY
        elif chunk["type"] == "tool-approval-response":
            answered = part_for_approval(stream.fold.parts, chunk["approvalId"])
            if answered is not None and approval_response_is_replay(chunk, answered, position):
                return Verdict.REPLAY
        if chunk["type"] == "start" and not stream.continuation:
            self._check_new_message_id(chunk.get("messageId"), stream.message_index, position)
        parts_before = len(stream.fold.parts)
        try:
            stream.fold.apply(chunk)
        except InvalidChunkError as error:
            raise error.at(position) from None
        if chunk["type"] == "start" and self.branches is not None and not stream.continuation:
            self.branches.renamed(self.messages[stream.message_index])
        if tool_call_id is not None and len(stream.fold.parts) > parts_before:
            self._index_parts(stream.message_index, parts_before)
        self._track_step(stream, chunk, position)
        if chunk["type"] == "steering-message":
            # The running answer took a queued user message: it is no longer pending.
            self.steering = [m for m in self.steering if m["id"] != chunk["id"]]
        if stream.fold.retracted:
            self._forget(stream.fold.retracted)
            stream.fold.retracted = []
        if chunk["type"] == "tool-approval-request":
            self.approval_calls[chunk["approvalId"]] = chunk["toolCallId"]
        stream.message_bytes += chunk_cost(chunk) if cost is None else cost
        return Verdict.APPLIED

    def _track_step(self, stream: OpenStream, chunk: Mapping[str, Any], position: int) -> None:
        """Remember which chunks built the current step, to name those a reset retracts."""
        kind = chunk["type"]
        if kind == "start-step":
            stream.step_chunks = []
        elif kind == "reset-step":
            self._tool_index = None
            retracted = [
                at
                for at, call in stream.step_chunks
                if call is None or self.tool_part(call) is None
            ]
            stream.step_chunks = []
            if retracted:
                stream.retractions[position] = retracted
        elif kind not in _STEPLESS:
            call = chunk.get("toolCallId")
            if kind == "tool-approval-response":
                call = self.approval_calls.get(chunk["approvalId"])
            stream.step_chunks.append((position, call))

    def _forget(self, retracted: list[dict[str, Any]]) -> None:
        """Retracted tool calls are no longer known: their ids are free for the retried step."""
        self._tool_index = None
        for part in retracted:
            approval = part.get("approval") if is_tool_part(part) else None
            if not isinstance(approval, dict) or not isinstance(approval.get("id"), str):
                continue
            if self.tool_part(part["toolCallId"]) is None:
                self.approval_calls.pop(approval["id"], None)

    def _check_new_message_id(self, message_id: Any, index: int, position: int) -> None:
        """A new message cannot take the id of another message of the conversation."""
        if message_id is None:
            return
        for other, message in enumerate(self.messages):
            if other != index and message["id"] == message_id:
                raise InvalidChunkError(
                    f"start names message {message_id!r}, the id of message {other + 1} of this "
                    "conversation: a new message needs an id of its own (leave messageId out "
                    "to keep the one the stream opened with)",
                    chunk_type="start",
                ).at(position)

    def skip_position(self) -> int:
        """Consume a stream position for a chunk refused before folding; return it."""
        assert self.stream is not None
        position = self.stream.next_seq
        self.stream.next_seq += 1
        return position

    def halts(self) -> bool:
        """Whether closing the open stream halts its message (an ``interrupted`` finish, if the dialect halts)."""
        stream = self.stream
        return self.dialect.halts_on_interrupted and stream is not None and stream.interrupted

    def in_halted_message(self, tool_call_id: str) -> bool:
        """Whether the call belongs to the halted message: a late answer to it changes nothing."""
        if self.halted_message is None:
            return False
        where = self.tool_index.get(tool_call_id)
        return where is not None and self.messages[where[0]]["id"] == self.halted_message

    def close_stream(self, outcome: str, reason: str | None) -> None:
        """Close the open stream with its outcome."""
        assert self.stream is not None
        self.last_outcome = {
            "streamId": self.stream.stream_id,
            "outcome": outcome,
            "reason": reason,
        }
        message_id = self.messages[self.stream.message_index]["id"]
        if self.answers:  # an answer opened with a key is the last one recorded
            keyed = self.answers[next(reversed(self.answers))]
            if keyed["streamId"] == self.stream.stream_id:
                keyed.update(messageId=message_id, outcome=outcome, reason=reason)
        if self.halts():
            self.halted_message = message_id
        elif outcome == "finished" and message_id == self.halted_message:
            self.halted_message = None  # a later answer for the message finished normally
        for message in self.steering:  # not taken by the answer: the next user turns, in order
            self.append_message(message)
            self.continuation = None
        self.steering = []
        self.stream = None
        self.wants_continuation = None

    # -- snapshots ------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The whole state as JSON (the tool index is derived and left out)."""
        return {
            "tenant": self.tenant,
            "chatId": self.chat_id,
            "messages": self.messages,
            "stream": self.stream.to_json() if self.stream else None,
            "lastOutcome": self.last_outcome,
            "continuation": self.continuation,
            "wantsContinuation": self.wants_continuation,
            "answeredSinceStream": self.answered_since_stream,
            "approvalTimes": self.approval_times,
            "approvalCalls": self.approval_calls,
            # Only when set, so the snapshots of untitled conversations stay as they were.
            **({"title": self.title} if self.title is not None else {}),
            **({"metadata": self.metadata} if self.metadata is not None else {}),
            **({"aiSdk": self.ai_sdk} if self.ai_sdk != IMPLICIT_MAJOR else {}),
            **({"haltedMessage": self.halted_message} if self.halted_message else {}),
            **({"steering": self.steering} if self.steering else {}),
            **({"redactions": self.redactions} if self.redactions else {}),
            **({"answers": self.answers} if self.answers else {}),
            **({"owner": self.owner} if self.owner is not None else {}),
            **({"branches": self.branches.to_json()} if self.branches is not None else {}),
            **({"forkedFrom": self.forked_from} if self.forked_from is not None else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ConversationState:
        """Rebuild a state from ``to_json()`` output (which it then owns)."""
        state = cls(
            data["tenant"],
            data["chatId"],
            list(data["messages"]),
            ai_sdk=int(data.get("aiSdk", IMPLICIT_MAJOR)),
        )
        state.last_outcome = data.get("lastOutcome")
        state.continuation = data.get("continuation")
        state.wants_continuation = data.get("wantsContinuation")
        state.answered_since_stream = bool(data.get("answeredSinceStream"))
        state.approval_times = dict(data.get("approvalTimes") or {})
        state.approval_calls = dict(data.get("approvalCalls") or {})
        state.title = data.get("title")
        state.metadata = data.get("metadata")
        state.halted_message = data.get("haltedMessage")
        state.steering = list(data.get("steering") or [])
        state.redactions = list(data.get("redactions") or [])
        state.answers = {key: dict(value) for key, value in (data.get("answers") or {}).items()}
        state.owner = data.get("owner")
        state.forked_from = data.get("forkedFrom")
        if data.get("branches") is not None:
            state.branches = BranchTree.from_json(data["branches"])
        if state.continuation is not None and "owner" not in state.continuation:
            # a snapshot from before owners: the request is addressed as it would be now
            state.continuation = {**state.continuation, "owner": owner_of(state)}
        stream = data.get("stream")
        if stream is not None:
            state.stream = OpenStream.from_json(
                stream,
                state.messages[stream["messageIndex"]],
                dialect=state.dialect,
                resolve_tool_part=state._earlier_part,
            )
        return state


_STEPLESS = frozenset({"start", "finish", "finish-step", "message-metadata", "error", "abort"})
"""Chunks that add nothing a ``reset-step`` takes back."""
