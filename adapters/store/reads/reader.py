"""The one reader of conversations: messages, model messages, the timeline, status, and what use cases read.

Every read of one conversation goes through ``Reader``, and it is the one application module
that applies redactions: whatever it returns shows ``[redacted]`` where the conversation's
``Redacted`` events say so, now and at every past version (``reads/shown.py`` holds that rule,
for the use cases that fold a conversation themselves). It picks the source: current messages
and the timeline come from the read models (brought up to date first when the log has moved on),
past states are rebuilt from the log, and what a turn or a resume needs comes from the
conversation's aggregate, which never waits for the projection.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Generator, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any
from uuid import UUID

from chatledger.adapters.store.reads.compacted import CompactionReads
from chatledger.adapters.store.reads.follow import FollowedChunk, follow
from chatledger.adapters.store.reads.follow_async import AsyncFollower, open_follower
from chatledger.adapters.store.reads.live_stream import LiveStream
from chatledger.adapters.store.reads.resume_prefix import resume_prefix_of
from chatledger.adapters.store.reads.rows import MessageRows
from chatledger.adapters.store.reads.shown import masks_of, shown, shown_messages
from chatledger.adapters.store.reads.timeline_page import kinds_asked, timeline_page
from chatledger.domain.aggregate import Conversation, conversation_id
from chatledger.domain.branches import Siblings, path_messages, siblings_of
from chatledger.domain.continuation import ConversationStatus, status_of
from chatledger.domain.conversation import ConversationState
from chatledger.domain.convert import Format, Unanswered, to_model_messages
from chatledger.domain.errors import (
    ConversationErasedError,
    ConversationNotFoundError,
    InvalidInputError,
)
from chatledger.domain.limits import check_position
from chatledger.domain.owners import ClaimWatch, wall_clock_watch
from chatledger.domain.redaction import Masks
from chatledger.domain.timeline import KINDS, TimelineEntry
from chatledger.domain.timeline_groups import TimelinePage
from chatledger.projections.projector import full_timeline
from chatledger.projections.read_models import HistoryQuery

if TYPE_CHECKING:
    from chatledger.adapters.persistence.log import ConversationLog
    from chatledger.adapters.store.reads.news import News
    from chatledger.adapters.store.unit_of_work import UnitOfWork
    from chatledger.domain.events import ConversationEvent
    from chatledger.projections.projector import Projector
    from chatledger.projections.read_models import ReadModelView

__all__ = ["Expire", "Reader"]

Expire = Callable[[str, str, str], bool]
"""``(tenant, chat_id, stream_id) -> closed?``: closes a stream whose writer's lease ran out."""


class Reader(CompactionReads):
    """Reads one conversation at a time (``tenant=None``: the store's default tenant)."""

    def __init__(
        self,
        uow: UnitOfWork,
        log: ConversationLog,
        view: ReadModelView,
        projector: Projector,
        news: News,
        *,
        tenant: str,
        expire: Expire,
        expire_every: float,
        writes: Callable[[UUID], bool],
        overdue: ClaimWatch = wall_clock_watch,
    ) -> None:
        self.tenant = tenant
        self._uow, self._log, self._view, self._projector = uow, log, view, projector
        self._news, self._expire, self._expire_every = news, expire, expire_every
        self._writes, self._watch = writes, overdue  # the store's clock and claim limit
        self._rows = MessageRows(log, view, projector)
        self._versions: dict[tuple[str, str], int] = {}

    def forget_cached(self) -> None:
        """Drop the cached message rows: the next reads fetch them again."""
        self._rows.forget()

    def messages(
        self,
        chat_id: str,
        *,
        tenant: str | None = None,
        at_version: int | None = None,
        at_time: datetime | None = None,
        leaf: str | None = None,
    ) -> list[dict[str, Any]]:
        """The conversation's UIMessages (JSON dicts), now or as they stood at a version or time.

        The current messages come from the read model (brought up to date
        first); past ones are rebuilt from the log. ``leaf`` (a message id or
        branch key, ``branches``) reads the path that ends there instead of the active one.
        """
        tenant = tenant or self.tenant
        if at_time is not None:
            at_version = self._uow.version_at(tenant, chat_id, at_time)
            if at_version == 0:
                return []
        if at_version is not None:
            check_position("at_version", at_version)
        if at_version is not None or leaf is not None:
            if at_version is None:
                self._settle(tenant, chat_id)  # a path of now: read your writes
            state = self._uow.load(tenant, chat_id, at_version).state
            past = (
                state.messages
                if leaf is None
                else path_messages(state.branches, state.messages, leaf)
            )
            return self._masks(tenant, chat_id).message_list(past)  # redactions made since too
        key = self._settle(tenant, chat_id)
        current = self._rows.messages(key)
        if current is None:  # not projected even after catching up: unknown, or stuck on it
            return shown_messages(self._uow.load(tenant, chat_id).state)
        return current

    def model_messages(
        self,
        chat_id: str,
        format: Format = "ai-sdk",
        *,
        tenant: str | None = None,
        at_version: int | None = None,
        at_time: datetime | None = None,
        ignore_incomplete_tool_calls: bool = False,
        unanswered: Unanswered = "refuse",
        leaf: str | None = None,
    ) -> Any:
        """The conversation (now, or at a version or time) in a model API's format.

        ``format`` is ``"ai-sdk"`` (AI SDK ``ModelMessage`` list), ``"anthropic"``
        (``{"system": ..., "messages": [...]}``), ``"openai-chat"`` (Chat
        Completions messages) or ``"openai-responses"`` (Responses ``input``
        items). See ``chatledger.domain.convert.to_model_messages`` for the options.
        """
        messages = self.messages(
            chat_id, tenant=tenant, at_version=at_version, at_time=at_time, leaf=leaf
        )
        return to_model_messages(
            self._model_input(messages, chat_id, tenant, at_version, at_time),  # compactions
            format,
            ignore_incomplete_tool_calls=ignore_incomplete_tool_calls,
            unanswered=unanswered,
            ai_sdk=self.ai_sdk_of(chat_id, tenant=tenant),
        )

    def branches(
        self,
        chat_id: str,
        message: str,
        *,
        tenant: str | None = None,
        at_version: int | None = None,
    ) -> Siblings:
        """Message ``message`` (id or branch key) and its sibling branches (``< index/total >``).

        Edits and regenerations make siblings; each branch names the leaf a
        switch to it shows (``switch_branch``). At ``at_version``: as it stood then.
        """
        if at_version is not None:
            check_position("at_version", at_version)
        tenant = tenant or self.tenant
        self._settle(tenant, chat_id)  # read your writes
        state = self._uow.load(tenant, chat_id, at_version).state
        return siblings_of(state.branches, state.messages, message)

    def ai_sdk_of(self, chat_id: str, *, tenant: str | None = None) -> int:
        """The AI SDK major the conversation speaks (6 for conversations started before v7)."""
        key = (tenant or self.tenant, chat_id)
        conversation_id(*key)  # refuses a tenant or chat id that is no string
        version = self._versions.get(key)
        if version is None:
            # Recorded by the first event and never changed: load that event once.
            version = self._uow.load(key[0], chat_id, 1).state.ai_sdk
            self._versions[key] = version
        return version

    def history(
        self,
        chat_id: str,
        *,
        tenant: str | None = None,
        kinds: Iterable[str] | None = None,
        actor: str | None = None,
        after: int = 0,
        limit: int | None = None,
        full: bool = False,
    ) -> list[TimelineEntry]:
        """The conversation's audit timeline: one entry per event, in order.

        ``kinds`` keeps entries of those kinds (see ``chatledger.domain.timeline.KINDS``),
        ``actor`` those of one actor, ``after`` those after a position.
        Replayed and refused chunks show in the ``marks`` and ``details`` of
        their batch's entry. A batch's details list only those chunks (the
        read model stays small); ``full=True`` lists every chunk, re-read from
        the log. Raises ConversationNotFoundError for an unknown chat.
        """
        tenant = tenant or self.tenant
        wanted = kinds_asked(kinds)
        unknown = sorted(set(wanted or ()) - set(KINDS))
        if unknown:
            raise InvalidInputError(
                f"unknown timeline kind(s) {[kind[:40] for kind in unknown]}; the kinds are "
                f"{', '.join(KINDS)}"
            )
        key = self._settle(tenant, chat_id)
        self._projector.catch_up()
        if self._view.conversation(key) is None:
            try:
                self._uow.load(tenant, chat_id)  # raises ConversationNotFoundError
            except ConversationErasedError:
                full = False  # erased: the timeline keeps kinds, actors and times, no content
        entries = self._view.history(key, HistoryQuery(wanted, actor, after, limit))
        batches = {entry.position for entry in entries if entry.details.get("compact")}
        if not full or not batches:
            return entries
        events: Iterable[ConversationEvent] = self._log.events.get(key)  # type: ignore[assignment]
        fuller = full_timeline(events, batches, self._masks(tenant, chat_id))
        return [fuller.get(entry.position, entry) for entry in entries]

    def timeline(
        self,
        chat_id: str,
        *,
        tenant: str | None = None,
        kinds: Iterable[str] | None = None,
        actor: str | None = None,
        after: int = 0,
        limit: int | None = None,
    ) -> TimelinePage:
        """The audit timeline grouped: one row per event, but one per run of a stream's chunk batches.

        In log order, at most ``limit`` rows after position ``after`` (the page's ``next_after``
        continues); filters and errors as ``history``, which still lists every event.
        """
        return timeline_page(
            self.history, chat_id, tenant=tenant, kinds=kinds, actor=actor, after=after, limit=limit
        )

    def status(self, chat_id: str, *, tenant: str | None = None) -> ConversationStatus:
        """Where the turn stands: idle, streaming, awaiting-approval, awaiting-tool-output, ready-to-continue."""
        tenant = tenant or self.tenant
        self._settle(tenant, chat_id)
        return status_of(shown(self._uow.load(tenant, chat_id).state), *self._watch())  # as shown

    def steering(self, chat_id: str, *, tenant: str | None = None) -> list[dict[str, Any]]:
        """User messages sent while the open answer streams (AI SDK 7), not yet taken by it.

        A responder takes one by emitting a ``steering-message`` chunk with the
        message's id and parts at a step boundary; those it leaves become the
        next user messages when its stream closes.
        """
        tenant = tenant or self.tenant
        self._settle(tenant, chat_id)
        conversation = self._uow.current(tenant, chat_id)
        try:
            state = conversation.state
            return copy.deepcopy(shown_messages(state, state.steering))
        finally:
            self._uow.give_back(conversation)

    def version(self, chat_id: str, *, tenant: str | None = None) -> int:
        """The conversation's current version (number of events)."""
        tenant = tenant or self.tenant
        self._settle(tenant, chat_id)
        return int(self._uow.load(tenant, chat_id).version)

    def conversation(
        self, chat_id: str, *, tenant: str | None = None, at_version: int | None = None
    ) -> Conversation:
        """The aggregate itself, loaded from the log (at ``at_version``): for tools and tests.

        Its state is the fold of the log as stored: redacted content is still
        there (``state.redactions`` says what views hide; ``messages()`` hides it).
        """
        tenant = tenant or self.tenant
        self._settle(tenant, chat_id)
        return self._uow.load(tenant, chat_id, at_version)

    def follow(
        self,
        chat_id: str,
        *,
        after: str | None = None,
        tenant: str | None = None,
        timeout: float | None = None,
        poll_seconds: float | None = None,
    ) -> Generator[FollowedChunk, None, None]:
        """Yield, in order, the chunks appended to the conversation's stream after ``after``.

        ``after=None`` follows the stream open now from its start (or replays
        the last stream when none is open; nothing if there never was one);
        ``after=`` a ``FollowedChunk.cursor`` resumes right after that chunk.
        Waits for new chunks until the stream closes, then returns; replayed
        and refused chunks are not yielded. ``timeout`` (seconds with nothing
        new) raises ``FollowTimeoutError``. A stream whose writer died ends too:
        while waiting, the follower closes it as ``interrupted`` once its lease
        has expired. Close the generator to release its connection. Details:
        ``chatledger.adapters.store.reads.follow``.
        """
        tenant = tenant or self.tenant
        self._settle(tenant, chat_id)
        return follow(
            self._log, tenant, chat_id,
            after=after, timeout=timeout, poll_seconds=poll_seconds, news=self._news,
            expire=self._expiry(tenant, chat_id), expire_every=self._expire_every,
        )  # fmt: skip

    async def follow_async(
        self,
        chat_id: str,
        *,
        after: str | None = None,
        tenant: str | None = None,
        timeout: float | None = None,
        live: LiveStream | None = None,
    ) -> AsyncFollower:
        """``follow`` for asyncio: an async iterator of the same chunks, no thread per follower.

        Awaiting it resolves the stream (raising ``ConversationNotFoundError``
        or ``InvalidInputError`` at once); iterate it with ``async for``, and
        ``await aclose()`` it to stop early. It waits on the event loop and
        reads the log in a worker thread only when there is news; a stream
        whose writer died ends as with ``follow``. ``live`` (the stream as this process's writer
        holds it): no settle, and its start is found without a load. See ``follow_async``.
        """
        tenant = tenant or self.tenant
        if live is None and self._writes(conversation_id(tenant, chat_id)):  # off the loop
            await asyncio.to_thread(self._settle, tenant, chat_id)
        return await open_follower(
            self._log, self._news, tenant, chat_id, after=after, timeout=timeout,
            expire=self._expiry(tenant, chat_id), expire_every=self._expire_every, live=live,
        )  # fmt: skip

    # -- what the use cases read: the aggregate as stored, as every view shows it -------------

    def stored_state(self, chat_id: str, *, tenant: str | None = None) -> ConversationState | None:
        """The conversation as its aggregate holds it now (None: there is none), for the use cases.

        As stored: redacted content is still there, and whatever leaves the
        store from it goes through ``shown`` or ``shown_messages``. Never the
        read models, which may lag behind: a turn decides on it.
        """
        tenant = tenant or self.tenant
        self._settle(tenant, chat_id)
        try:
            return self._uow.load(tenant, chat_id).state
        except ConversationNotFoundError:
            return None

    def resume_prefix(self, chat_id: str, *, tenant: str | None = None) -> list[dict[str, Any]]:
        """What an AI SDK 7 resume sends before the open stream: the message as its continuation found it.

        An AI SDK 7 client expects a resume from the start to replay the whole
        assistant message; a continuation's stream holds only what it adds.
        Empty unless the conversation's dialect replays the message on resume
        (v7) and its open stream continues a message, and when the message
        cannot be expressed as chunks (logged; the client then gets the stream
        alone).
        """
        return resume_prefix_of(self, tenant or self.tenant, chat_id)

    def shown_at(
        self, chat_id: str, version: int, *, tenant: str | None = None
    ) -> ConversationState:
        """The conversation as it stood at ``version``, under the redactions made since (for pages)."""
        tenant = tenant or self.tenant
        self._settle(tenant, chat_id)
        return self._masks(tenant, chat_id).state(self._uow.load(tenant, chat_id, version).state)

    def _masks(self, tenant: str, chat_id: str) -> Masks:
        """The conversation's redactions as they stand now (they hide content at every version)."""
        conversation = self._uow.current(tenant, chat_id)
        try:
            return masks_of(conversation.state)
        finally:
            self._uow.give_back(conversation)

    def _settle(self, tenant: str, chat_id: str) -> UUID:
        """Commit what this process's writers hold back of the conversation (read your writes)."""
        key = conversation_id(tenant, chat_id)
        self._uow.settle_writers(key)
        return key

    def _expiry(self, tenant: str, chat_id: str) -> Callable[[str], bool]:
        def expire(stream_id: str) -> bool:
            return self._expire(tenant, chat_id, stream_id)

        return expire
