"""How the audit timeline (``timeline``) describes each event class: a describer per class, the dispatch.

A describer reads an event and the state just before it (changing neither) and
gives the entry's summary, details and marks; a chunk batch's describer is in
``_timeline_chunks``, the text helpers are in ``_timeline_text``.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from datetime import timedelta
from typing import Any, Final

from chatledger.domain._timeline_chunks import _chunks, _parts_digest
from chatledger.domain._timeline_text import (
    _call,
    _Described,
    _id,
    _listed,
    _name,
    _preview,
    _quote,
    _stream_matches,
    _stream_message_id,
    _tool,
    _who,
)
from chatledger.domain.branch_events import BranchSwitched, ConversationForked, ForkMade
from chatledger.domain.conversation import ConversationState
from chatledger.domain.events import (
    ChunksReceived,
    ContinuationClaimed,
    ContinuationRequested,
    ConversationEvent,
    ConversationStarted,
    MessageAppended,
    MessagesCut,
    MetadataSet,
    Redacted,
    SteeringQueued,
    StreamClosed,
    StreamOpened,
    StreamRenewed,
    TitleSet,
    ToolApprovalResponded,
    ToolOutputAdded,
)
from chatledger.domain.owner_events import ContinuationRetired, OwnerSet
from chatledger.domain.owners import ANY, owner_of
from chatledger.domain.tool_outputs import DEFAULT_DENIAL_TEXT

__all__ = ["Describer", "describer_of", "raw_details"]

Describer = Callable[[Any, ConversationState], _Described]
"""Describes one event given the state before it: (summary, details, marks)."""


# -- one describer per event class ------------------------------------------------


def _started(event: ConversationStarted, before: ConversationState) -> _Described:
    summary = f"conversation {_id(event.chat_id)} started in tenant {_id(event.tenant)}"
    if isinstance(event.metadata, dict) and event.metadata:
        summary += f" (metadata: {', '.join(_id(key) for key in event.metadata)})"
    if event.owner not in (None, ANY):
        summary += f", owned by {_id(event.owner)}"
    details = {
        "tenant": event.tenant,
        "chatId": event.chat_id,
        "metadata": event.metadata,
        "owner": event.owner,
    }
    return summary, details, ()


def _message(event: MessageAppended, before: ConversationState) -> _Described:
    message = event.message
    role, message_id = message.get("role"), message.get("id")
    parts = message.get("parts")
    content = _parts_digest(parts if isinstance(parts, list) else [])
    summary = f"{_id(role)} message {_id(message_id)}: {content or '(no parts)'}"
    details = {"messageId": message_id, "role": role, "message": message}
    return summary, details, ()


def _opened(event: StreamOpened, before: ConversationState) -> _Described:
    stream, message = _id(event.stream_id), _id(event.message_id)
    if event.continuation:
        summary = f"stream {stream} opened continuing message {message}"
        usual = "continuation"
    else:
        # The new message is named once, by the stream's ``start`` (which may give it another id).
        summary = f"stream {stream} opened for a new assistant message"
        usual = "submit-message"
    notes = [] if event.trigger == usual else [_id(event.trigger)]
    if event.request_id is not None:
        notes.append(f"continuation request {_id(event.request_id)}")
    if event.answer_key is not None:
        notes.append(f"answer key {_id(event.answer_key)}")
    if notes:
        summary += f" ({', '.join(notes)})"
    details = {
        "streamId": event.stream_id,
        "messageId": event.message_id,
        "continuation": event.continuation,
        "trigger": event.trigger,
        "requestId": event.request_id,
        # Only when given: the details of streams opened without a key stay as they were.
        **({"answerKey": event.answer_key} if event.answer_key is not None else {}),
    }
    return summary, details, ()


def _closed(event: StreamClosed, before: ConversationState) -> _Described:
    summary = f"stream {_id(event.stream_id)} closed: {_id(event.outcome)}"
    if event.reason:
        summary += f" ({event.reason})"
    stream = before.stream if _stream_matches(before, event.stream_id) else None
    details = {
        "streamId": event.stream_id,
        "outcome": event.outcome,
        "reason": event.reason,
        "messageId": _stream_message_id(before) if stream else None,
        "chunkCount": stream.next_seq if stream else None,
    }
    return summary, details, ("error",) if event.outcome == "errored" else ()


def _renewed(event: StreamRenewed, before: ConversationState) -> _Described:
    summary = f"stream {_id(event.stream_id)} renewed: its writer is alive (wrote nothing lately)"
    return summary, {"streamId": event.stream_id}, ()


def _approval(event: ToolApprovalResponded, before: ConversationState) -> _Described:
    part, where = _tool(before, event.tool_call_id)
    verb = "approved" if event.approved else "denied"
    summary = f"{_who(event)} {verb} {_call(part, event.tool_call_id)}"
    if event.reason:
        summary += f": {event.reason}"
    details = {
        "toolCallId": event.tool_call_id,
        "approvalId": event.approval_id,
        "approved": event.approved,
        "reason": event.reason,
        "autoContinue": event.auto_continue,
        "toolName": _name(part),
        "messageId": where,
        "input": copy.deepcopy(part.get("input")) if part else None,
    }
    if event.late:
        summary += " (late: its stream was interrupted; changes nothing)"
        details["late"] = True
    return summary, details, () if event.approved else ("denied",)


def _output(event: ToolOutputAdded, before: ConversationState) -> _Described:
    part, where = _tool(before, event.tool_call_id)
    call = _call(part, event.tool_call_id)
    if event.state == "output-error":
        text = event.error_text
        shown = text if text is not None else f"{DEFAULT_DENIAL_TEXT} (default text)"
        summary = f"{_who(event)} added error for {call}: {shown}"
    else:
        summary = f"{_who(event)} added output for {call}: {_preview(event.output, 60)}"
    details = {
        "toolCallId": event.tool_call_id,
        "state": event.state,
        "output": event.output,
        "errorText": event.error_text,
        "autoContinue": event.auto_continue,
        "toolName": _name(part),
        "messageId": where,
    }
    if event.late:
        summary += " (late: its stream was interrupted; changes nothing)"
        details["late"] = True
    return summary, details, ("error",) if event.state == "output-error" else ()


def _requested(event: ContinuationRequested, before: ConversationState) -> _Described:
    summary = (
        f"continuation {_id(event.request_id)} requested for message "
        f"{_id(event.message_id)}: {event.cause}"
    )
    owner = owner_of(before)
    if owner != ANY:
        summary += f" (for {_id(owner)})"
    details = {
        "requestId": event.request_id,
        "messageId": event.message_id,
        "cause": event.cause,
        "owner": owner,
    }
    return summary, details, ()


def _owner_set(event: OwnerSet, before: ConversationState) -> _Described:
    summary = (
        f"{_who(event)} handed the conversation from {_id(event.previous)} to {_id(event.owner)}"
    )
    if event.reason:
        summary += f": {_quote(event.reason, 80)}"
    details = {"owner": event.owner, "previous": event.previous, "reason": event.reason}
    return summary, details, ()


def _switched(event: BranchSwitched, before: ConversationState) -> _Described:
    summary = f"{_who(event)} switched to the branch ending at {_id(event.leaf)}"
    if event.previous_leaf is not None:
        summary += f" (from {_id(event.previous_leaf)})"
    if event.reason:
        summary += f": {_quote(event.reason, 80)}"
    details = {"leaf": event.leaf, "previousLeaf": event.previous_leaf, "reason": event.reason}
    return summary, details, ()


def _forked(event: ConversationForked, before: ConversationState) -> _Described:
    summary = (
        f"{_who(event)} forked this conversation from {_id(event.origin_chat_id)} at version "
        f"{event.origin_version}" + (f", up to {_id(event.leaf)}" if event.leaf else "")
    )
    if event.reason:
        summary += f": {_quote(event.reason, 80)}"
    return summary, raw_details(event), ()


def _fork_made(event: ForkMade, before: ConversationState) -> _Described:
    summary = (
        f"{_who(event)} forked it into {_id(event.fork_chat_id)} at version {event.at_version}"
    )
    if event.reason:
        summary += f": {_quote(event.reason, 80)}"
    return summary, raw_details(event), ()


def _retired(event: ContinuationRetired, before: ConversationState) -> _Described:
    summary = (
        f"{_who(event)} retired continuation {_id(event.request_id)}: {_quote(event.reason, 80)}"
    )
    return summary, {"requestId": event.request_id, "reason": event.reason}, ()


def _claimed(event: ContinuationClaimed, before: ConversationState) -> _Described:
    lease = event.lease_seconds
    summary = (
        f"{_id(event.worker)} claimed continuation {_id(event.request_id)} (lease {lease:g} s)"
    )
    try:
        until: str | None = (event.timestamp + timedelta(seconds=lease)).isoformat()
    except (OverflowError, ValueError):  # an absurd lease is recorded as given
        until = None
    details = {
        "requestId": event.request_id,
        "worker": event.worker,
        "leaseSeconds": lease if math.isfinite(lease) else str(lease),
        "leaseUntil": until,
    }
    return summary, details, ()


def _cut(event: MessagesCut, before: ConversationState) -> _Described:
    messages = before.messages
    index = next((i for i, m in enumerate(messages) if m.get("id") == event.from_message_id), None)
    cut = messages[index : index + max(event.count, 0)] if index is not None else []
    noun = "message" if event.count == 1 else "messages"
    summary = f"{_TRIGGER_LABELS.get(event.trigger, _id(event.trigger))}: cut {event.count} {noun}"
    if index is None:
        summary += f" from {_id(event.from_message_id)}"
    else:
        kept = f"after {_id(messages[index - 1].get('id'))}" if index else "from the start"
        summary += f" {kept} ({_listed([m.get('id') for m in cut])})"
    if event.reason:
        summary += f": {event.reason}"
    details = {
        "fromMessageId": event.from_message_id,
        "count": event.count,
        "trigger": event.trigger,
        "reason": event.reason,
        "cutMessages": copy.deepcopy(cut),
    }
    return summary, details, ()


def _title(event: TitleSet, before: ConversationState) -> _Described:
    if event.title is None:
        return "title cleared", {"title": None, "previous": before.title}, ()
    return f"titled {event.title}", {"title": event.title, "previous": before.title}, ()


def _metadata(event: MetadataSet, before: ConversationState) -> _Described:
    keys = ", ".join(_id(key) for key in event.metadata) or "none"
    details = {"metadata": copy.deepcopy(event.metadata), "previous": before.metadata}
    return f"metadata set (keys: {keys})", details, ()


_TRIGGER_LABELS: Final = {"regenerate-message": "regenerate", "edit": "edit"}


def _steering(event: SteeringQueued, before: ConversationState) -> _Described:
    text = " ".join(p["text"] for p in event.message.get("parts", []) if p.get("type") == "text")
    summary = f"{_who(event)} steered the running answer: {_preview(text, 60)}"
    details = {
        "streamId": event.stream_id,
        "messageId": event.message.get("id"),
        "message": copy.deepcopy(event.message),
    }
    return summary, details, ()


def _redacted(event: Redacted, before: ConversationState) -> _Described:
    if event.tool_call_id is not None:
        part, where = _tool(before, event.tool_call_id)
        what = f"the {' and '.join(event.fields)} of {_call(part, event.tool_call_id)}"
    else:
        where = event.message_id
        what = f"the {', '.join(_id(f) for f in event.fields)} parts of message {_id(where)}"
    summary = f"{_who(event)} redacted {what}: {event.reason}"
    details = {
        "toolCallId": event.tool_call_id,
        "messageId": where,
        "fields": list(event.fields),
        "reason": event.reason,
    }
    return summary, details, ()


# -- dispatch ---------------------------------------------------------------------


def raw_details(event: ConversationEvent) -> dict[str, Any]:
    """The event's own data as JSON, without the fields every event has (empty if it will not dump)."""
    base = {"originator_id", "originator_version", "timestamp", "actor"}
    try:
        return event.model_dump(mode="json", exclude=base)
    except Exception:
        return {}


def _fallback(event: Any, before: ConversationState) -> _Described:
    return f"{type(event).__name__} event", raw_details(event), ()


_DESCRIBERS: Final[tuple[tuple[type[ConversationEvent], str, Describer], ...]] = (
    (ConversationStarted, "conversation-started", _started),
    (MessageAppended, "message-appended", _message),
    (StreamOpened, "stream-opened", _opened),
    (ChunksReceived, "chunks", _chunks),
    (StreamRenewed, "stream-renewed", _renewed),
    (StreamClosed, "stream-closed", _closed),
    (ToolApprovalResponded, "approval-responded", _approval),
    (ToolOutputAdded, "tool-output-added", _output),
    (ContinuationRequested, "continuation-requested", _requested),
    (ContinuationClaimed, "continuation-claimed", _claimed),
    (MessagesCut, "messages-cut", _cut),
    (TitleSet, "title-set", _title),
    (MetadataSet, "metadata-set", _metadata),
    (SteeringQueued, "steering-queued", _steering),
    (Redacted, "redacted", _redacted),
    (OwnerSet, "owner-set", _owner_set),
    (ContinuationRetired, "continuation-retired", _retired),
    (BranchSwitched, "branch-switched", _switched),
    (ConversationForked, "conversation-forked", _forked),
    (ForkMade, "fork-made", _fork_made),
)


def describer_of(event: ConversationEvent) -> tuple[str, Describer]:
    """The kind and describer of ``event``; an event class added later gets a generic entry."""
    for cls, kind, describer in _DESCRIBERS:
        if isinstance(event, cls):
            return kind, describer
    name = type(event).__name__
    kebab = "".join(f"-{c.lower()}" if c.isupper() else c for c in name).lstrip("-")
    return kebab, _fallback
