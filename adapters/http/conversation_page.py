"""What the conversation page shows: the messages at a version, what that version changed, the timeline.

``conversation_page`` reads the store's reader only (history from the read
model, past messages rebuilt from the log, redactions applied) and returns
plain data for the ``_conversation.html`` template: messages as parts the
template knows how to draw (text, reasoning, tool calls with state, input, output and the approval
with who, when and why), the ids of the messages the selected event added or
changed, those it cut, and the timeline entries that pass the filter.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from chatledger.adapters.http.branches import branch_navs
from chatledger.adapters.http.conversation_ledger import ledger_fields
from chatledger.adapters.http.errors import invalid
from chatledger.adapters.store.reads.reader import Reader
from chatledger.domain.continuation import status_of
from chatledger.domain.errors import ConversationErasedError
from chatledger.domain.timeline import TimelineEntry
from chatledger.domain.timeline_groups import TimelineRow, group, is_decision
from chatledger.projections.for_people import for_people
from chatledger.projections.listing import title_of

__all__ = ["PAGE_ROWS", "ConversationPage", "conversation_page", "part_view"]

PAGE_ROWS = 50
"""Timeline rows on one page of the conversation page."""


@dataclass
class ConversationPage:
    """Everything the conversation fragment draws."""

    chat_id: str
    title: str
    status: str
    owner: str
    """Who continues the conversation (as of the version shown; "-" once erased: nobody does)."""
    version: int
    """The version shown."""
    latest: int
    """The conversation's current version (the slider's end)."""
    following: bool
    """True when showing the latest version and refreshing while it changes."""
    live: bool
    """True when an answer streams or a continuation is pending (the page refreshes itself)."""
    messages: list[dict[str, Any]]
    changed: set[str]
    """Ids of the messages the selected event added or changed."""
    cut: list[str]
    """Ids of the messages the selected event cut."""
    event: TimelineEntry | None
    """The selected event."""
    timeline: list[TimelineRow]
    """One page of the rows passing the filter (the one holding the selected version marked)."""
    actors: list[str]
    kind: str | None = None
    actor: str | None = None
    decisions: dict[str, TimelineEntry] = field(default_factory=dict)
    """toolCallId -> the approval decision's timeline entry (who, when, why), up to ``version``."""
    lead: list[TimelineRow] = field(default_factory=list)
    """Every decision (approvals, denials, tool outputs, approvals decided on a stream), in order."""
    page: int = 1
    """The timeline page shown (from 1)."""
    pages: int = 1
    """How many pages the filtered timeline has."""
    pinned: bool = False
    """True when the reader chose the page (a live refresh keeps it, not the newest one)."""
    retracted: dict[int, tuple[int, list[int]]] = field(default_factory=dict)
    """Entry position -> (position of the ``reset-step`` entry, stream positions of this entry's
    chunks it retracted): chunks an AI SDK 7 retried step took back from the view."""
    erased: str | None = None
    """When, by whom and why the conversation was erased (only its audit skeleton is left)."""
    folded: str | None = None
    """What of a framework plug-in's bookkeeping the messages leave out (None: nothing)."""
    compacted: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Message id -> the compaction whose summary the model reads instead (at ``version``)."""
    compaction_starts: dict[str, dict[str, Any]] = field(default_factory=dict)
    """First message id of each compacted range -> its compaction (the page marks it there)."""
    usage: list[Any] = field(default_factory=list)
    """The usage ledger's entries up to ``version`` (``UsageEntry``)."""
    usage_total: Any = None
    """Their total (``UsageRow``), or None without usage."""
    usage_pending: bool = False
    """True while an answer streams: the usage is read once it ends."""
    branches: dict[str, dict[str, Any]] = field(default_factory=dict)
    forked_from: dict[str, Any] | None = None
    """A fork's origin: tenant, chatId, version and leaf (``ConversationForked``); None: not a fork."""
    """Message id -> its ``< index/total >`` and the sibling keys either side (``branch_navs``)."""


def conversation_page(
    reads: Reader,
    tenant: str,
    chat_id: str,
    at: int | None,
    kind: str | None,
    actor: str | None,
    page: int | None = None,
) -> ConversationPage:
    """The conversation as it stood at version ``at`` (None: now), for the page.

    ``page`` is the timeline page to show (from 1); by default the one holding version ``at``.
    """
    history = reads.history(chat_id, tenant=tenant)  # 404 when unknown
    latest = len(history)
    if at is not None and not 1 <= at <= latest:
        raise invalid(f"version 'at' must be between 1 and {latest}, not {at}")
    version = latest if at is None else at
    # Redactions made since hide content at every version.
    try:
        state = reads.shown_at(chat_id, version, tenant=tenant)
    except ConversationErasedError as error:
        return _erased_page(chat_id, history, version, kind, actor, str(error), page)
    readable = for_people(state.messages)  # the frameworks' bookkeeping stays in the log
    messages = readable.messages
    before = (
        for_people(reads.shown_at(chat_id, version - 1, tenant=tenant).messages).messages
        if version > 1
        else []
    )
    earlier = {message["id"]: message for message in before}
    changed = {m["id"] for m in messages if earlier.get(m["id"]) != m}
    now = {message["id"] for message in messages}
    cut = [message_id for message_id in earlier if message_id not in now]
    current = reads.status(chat_id, tenant=tenant) if at is None else None
    status = status_of(state)
    decisions = {
        str(entry.details.get("toolCallId")): entry
        for entry in history[:version]
        if entry.kind == "approval-responded"
    }
    live = current is not None and (
        current.status == "streaming" or current.continuation_request is not None
    )
    return ConversationPage(
        chat_id=chat_id,
        title=title_of(state.messages, state.title, chat_id),
        status=status.status,
        owner=status.owner,
        version=version,
        latest=latest,
        following=at is None,
        live=live,
        messages=[_message_view(message) for message in messages],
        folded=readable.note,
        changed=changed,
        cut=cut,
        decisions=decisions,
        retracted=retracted_chunks(history),
        branches=branch_navs(state),
        forked_from=state.forked_from,
        **_audit(history, version, kind, actor, page),
        **ledger_fields(reads, tenant, chat_id, version, state, latest=latest, live=live),
    )


def _erased_page(
    chat_id: str,
    history: list[TimelineEntry],
    version: int,
    kind: str | None,
    actor: str | None,
    erased: str,
    page: int | None,
) -> ConversationPage:
    """An erased conversation: no messages, its audit skeleton (kinds, actors, times) as ``history`` keeps it."""
    return ConversationPage(
        chat_id=chat_id,
        title=chat_id,
        status="erased",
        owner="-",
        version=version,
        latest=len(history),
        following=version == len(history),
        live=False,
        messages=[],
        changed=set(),
        cut=[],
        erased=erased,
        **_audit(history, version, kind, actor, page),
    )


def _audit(
    history: list[TimelineEntry],
    version: int,
    kind: str | None,
    actor: str | None,
    page: int | None,
) -> dict[str, Any]:
    """The page's audit fields: the selected event, one page of the filtered rows, the decisions.

    The history is grouped once; a filter (``kind``, ``actor``) groups what it keeps.
    """
    every = group(history)
    kept = [e for e in history if kind in (None, e.kind) and actor in (None, e.actor)]
    rows = every if len(kept) == len(history) else group(kept)
    number, pages = _page_of(rows, version, page)
    return {
        "event": history[version - 1] if history else None,
        "timeline": rows[(number - 1) * PAGE_ROWS : number * PAGE_ROWS],
        "actors": sorted({entry.actor for entry in history if entry.actor}),
        "kind": kind,
        "actor": actor,
        "lead": [row for row in every if is_decision(row)],
        "page": number,
        "pages": pages,
        "pinned": page is not None,
    }


def _page_of(rows: list[TimelineRow], version: int, page: int | None) -> tuple[int, int]:
    """(the page to show, how many pages): ``page``, else the one holding ``version``'s row."""
    pages = max(1, -(-len(rows) // PAGE_ROWS))
    if page is not None:
        if not 1 <= page <= pages:
            raise invalid(f"timeline 'page' must be between 1 and {pages}, not {page}")
        return page, pages
    index = next((i for i, row in enumerate(rows) if row.last_position >= version), len(rows) - 1)
    return max(index, 0) // PAGE_ROWS + 1, pages


def retracted_chunks(history: list[TimelineEntry]) -> dict[int, tuple[int, list[int]]]:
    """Which chunk batches hold chunks a later ``reset-step`` retracted (see ``ConversationPage.retracted``)."""
    batches = [entry for entry in history if entry.kind == "chunks"]
    found: dict[int, tuple[int, list[int]]] = {}
    for reset in batches:
        positions = set(reset.details.get("retracted") or ())
        stream = reset.details.get("streamId")
        if not positions:
            continue
        for batch in batches:
            first, count = batch.details.get("firstSeq"), batch.details.get("count")
            if batch.details.get("streamId") != stream or not isinstance(first, int):
                continue
            mine = sorted(p for p in positions if first <= p < first + int(count or 0))
            if mine:
                found[batch.position] = (reset.position, mine)
    return found


def _message_view(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": message["id"],
        "role": message["role"],
        "parts": [part_view(part) for part in message.get("parts") or ()],
    }


def part_view(part: dict[str, Any]) -> dict[str, Any]:
    """A part as the template draws it: ``kind`` (text, reasoning, tool, step, file, other) and its fields."""
    kind = part.get("type", "")
    if kind == "text":
        return {"kind": "text", "text": part.get("text", ""), "state": part.get("state")}
    if kind == "reasoning":
        return {"kind": "reasoning", "text": part.get("text", ""), "state": part.get("state")}
    if kind == "step-start":
        return {"kind": "step"}
    if kind == "file" and isinstance(part.get("url"), str):
        return file_view(part)
    if kind == "dynamic-tool" or kind.startswith("tool-"):
        approval = part.get("approval") or {}
        return {
            "kind": "tool",
            "name": part.get("toolName") or kind.removeprefix("tool-"),
            "tool_call_id": part.get("toolCallId", ""),
            "state": part.get("state", ""),
            "input": _json(part.get("input")),
            "output": _json(part["output"]) if "output" in part else None,
            "error": part.get("errorText"),
            "approval": approval,
        }
    return {"kind": "other", "type": kind, "json": _json(part)}


_SHOWN_SCHEMES = ("data:", "https:", "http:")
"""The file URLs a page links to or shows (never ``javascript:`` and the like)."""


def file_view(part: dict[str, Any]) -> dict[str, Any]:
    """A file part as the page draws it: an image inline, anything else a download link."""
    url, media = part["url"], str(part.get("mediaType") or "")
    safe = url.lower().startswith(_SHOWN_SCHEMES)
    return {
        "kind": "file",
        "url": url if safe else None,
        "media_type": media,
        "filename": part.get("filename") or media or "file",
        "image": safe and media.startswith("image/"),
    }


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)
