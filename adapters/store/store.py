"""``ConversationStore``: chatledger's public API, one method per use case.

Every public operation is a method of this class, each a few lines that
resolve defaults and delegate to the module holding the concept: the
``unit_of_work`` (load, decide, save), ``actions``, ``reads``, ``inbox``,
``follow``, ``operations`` and the stream ``writer``. The parts it is composed of
come from ``chatledger.adapters.bootstrap``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from chatledger.adapters.store.actions import ActionResult
from chatledger.adapters.store.chats import Chats
from chatledger.adapters.store.inbox import Inbox
from chatledger.adapters.store.operations import Operations
from chatledger.adapters.store.reads.follow import FollowedChunk
from chatledger.adapters.store.reads.follow_async import AsyncFollower
from chatledger.adapters.store.reads.news import News
from chatledger.adapters.store.reads.reader import Reader
from chatledger.adapters.store.streams.flusher import Flusher
from chatledger.adapters.store.streams.leases import Clock, process_name
from chatledger.adapters.store.streams.policy import (
    DEFAULT_BATCH_CHUNKS,
    DEFAULT_BATCH_MS,
    BatchPolicy,
)
from chatledger.adapters.store.streams.service import IngestReport, Streams
from chatledger.adapters.store.streams.writer import StreamWriter
from chatledger.adapters.store.transaction import Transaction
from chatledger.adapters.store.turns.service import Turns
from chatledger.adapters.store.unit_of_work import UnitOfWork
from chatledger.domain.aggregate import Conversation, conversation_id
from chatledger.domain.continuation import ConversationStatus
from chatledger.domain.convert import Format, Unanswered
from chatledger.domain.dialects import SDK_VERSIONS
from chatledger.domain.errors import (
    InvalidAiSdkVersionError,
)
from chatledger.domain.lease import DEFAULT_STREAM_LEASE_SECONDS, check_lease_seconds, renew_every
from chatledger.domain.limits import Limits
from chatledger.domain.timeline import TimelineEntry
from chatledger.projections.listing import ConversationList
from chatledger.projections.read_models import (
    ContinuationRequest,
    PendingApproval,
)

if TYPE_CHECKING:
    from chatledger.adapters.persistence.config import StoreConfig
    from chatledger.adapters.persistence.log import ConversationLog
    from chatledger.projections.projector import Projector
    from chatledger.projections.read_models import ReadModelView

__all__ = [
    "DEFAULT_TENANT",
    "DEPRECATED_OPERATIONS",
    "ConversationStore",
    "IngestReport",
    "StoreParts",
]

DEFAULT_TENANT = "default"
DEPRECATED_OPERATIONS = frozenset(
    ("verify", "seal", "head", "export", "erase", "retain", "rebuild", "catch_up",
     "quarantined", "read_model_counts", "forget_cached", "otel_exporter")
)  # fmt: skip
"""The operator methods that moved to ``store.operations``: the store still answers them, with a
DeprecationWarning, for one release."""
T = TypeVar("T")


@dataclass(frozen=True)
class StoreParts:
    """The infrastructure a ``ConversationStore`` is composed of (built by ``chatledger.adapters.bootstrap``)."""

    config: StoreConfig
    log: ConversationLog
    read_models: ReadModelView
    projector: Projector


class ConversationStore:
    """An event-sourced store of AI chat conversations.

    Open one with ``ConversationStore.open(url)``; it is safe to share between
    threads. Every method takes the chat id and, optionally, a ``tenant``
    (default: the one the store was opened with).
    """

    def __init__(
        self,
        parts: StoreParts,
        *,
        tenant: str = DEFAULT_TENANT,
        limits: Limits | None = None,
        batch: BatchPolicy | None = None,
        auto_continue: bool = True,
        ai_sdk: int = 7,
        stream_lease_seconds: float = DEFAULT_STREAM_LEASE_SECONDS,
    ) -> None:
        """Compose a store from opened parts; use ``open()`` (or ``bootstrap.build_store``)."""
        if ai_sdk not in SDK_VERSIONS:
            raise InvalidAiSdkVersionError(ai_sdk)
        check_lease_seconds(stream_lease_seconds)
        self.stream_lease_seconds = float(stream_lease_seconds)
        """The lease of the streams this store opens, and of old streams that recorded none."""
        self.process = process_name()
        """Who this process is in the audit when it closes a stream whose lease expired."""
        self.ai_sdk = ai_sdk
        """The AI SDK major new conversations speak unless ``start_conversation`` says otherwise."""
        self.config: StoreConfig = parts.config
        self.tenant = tenant
        self.limits = limits or Limits()
        self.batch = batch or BatchPolicy()
        self.auto_continue = auto_continue
        self.log: ConversationLog = parts.log
        """The event log (an eventsourcing ``Application``): the source of truth."""
        self.read_models: ReadModelView = parts.read_models
        """The read-model tables next to the log."""
        self.projector: Projector = parts.projector
        """Keeps the read models up to date with the log."""
        self._flusher = Flusher(self.batch.max_delay, self.stream_lease_seconds)
        # Read-your-writes: every decision first commits what this process's writers hold back.
        self._uow = UnitOfWork(self.log, settle_writers=self._flusher.settle)
        self.streams = Streams(
            self._uow, self._flusher, policy=self.batch, limits=self.limits,
            lease_seconds=self.stream_lease_seconds, process=self.process,
            read_models=self.read_models, projector=self.projector,
        )  # fmt: skip
        """Opening, closing and expiring streams (the stream methods below forward to it)."""
        self._news = News(self.log)
        self.reads = Reader(
            self._uow, self.log, self.read_models, self.projector, self._news, tenant=tenant,
            expire=self._expire_followed, expire_every=renew_every(self.stream_lease_seconds),
            writes=self._flusher.writes,
        )  # fmt: skip
        """The one reader: messages, model messages, the timeline, status, follows."""
        self.chats = Chats(
            self._uow, self.limits, tenant=tenant, ai_sdk=ai_sdk, auto_continue=auto_continue,
            expire_lapsed=self._expire_lapsed,
        )  # fmt: skip
        """Writing conversations: start, messages, tool outputs, approvals, titles, redactions."""
        self.inbox = Inbox(
            self._uow, self.read_models, self.projector, tenant=tenant,
            settle_all=self._flusher.settle_all,
        )  # fmt: skip
        """What waits across conversations: approvals, continuations, the conversation list."""
        self.turns = Turns(self.chats, self.reads, self, self.limits, tenant=tenant)
        """Taking a turn: record what a request adds, open the stream of its answer."""
        self.operations = Operations(
            config=self.config, log=self.log, read_models=self.read_models,
            projector=self.projector, cache=self._uow.cache,
            forget_reads=self.reads.forget_cached, tenant=self.tenant,
        )  # fmt: skip
        """What operators run: verify, seal, export, erase, retain, rebuild... (``Operations``)."""

    @classmethod
    def open(
        cls,
        url: str | None = None,
        *,
        tenant: str = DEFAULT_TENANT,
        batch_chunks: int = DEFAULT_BATCH_CHUNKS,
        batch_ms: float = DEFAULT_BATCH_MS,
        limits: Limits | None = None,
        compress: bool = True,
        cipher_key: str | None = None,
        auto_continue: bool = True,
        ai_sdk: int | None = None,
        stream_lease_seconds: float | None = None,
    ) -> ConversationStore:
        """Open (creating tables on first use) the store at ``url``.

        ``url`` is ``sqlite:///path/file.db`` (the default is
        ``sqlite:///./chatledger.db``), ``postgresql://user@host:5432/db``
        (``?schema=name`` to use another schema) or ``memory://``; when it is
        None, ``CHATLEDGER_URL`` is used if set. ``cipher_key`` (from
        ``AESCipher.create_key``; default ``$CHATLEDGER_CIPHER_KEY``, else the
        file ``$CHATLEDGER_CIPHER_KEY_FILE`` names) encrypts events, snapshots
        and read models at rest; the store remembers a check value of its key
        and refuses a wrong or missing one (CipherKeyError). ``auto_continue=False``
        turns off the default continuation after approvals and tool outputs.
        ``ai_sdk`` (6 or 7; default ``CHATLEDGER_AI_SDK``, else 7) is the AI SDK
        major new conversations speak; a conversation keeps the one it started with.
        ``stream_lease_seconds`` (default ``CHATLEDGER_STREAM_LEASE_SECONDS``, else 30) is
        how long a stream this store opens stays open with nothing written to it: the
        writer renews it while alive, and once a dead writer's lease has run out any
        process closes the stream as ``interrupted`` (docs/behaviour.md §7.1).
        Chunks are committed when the oldest buffered one is ``batch_ms`` old (what a
        ``kill -9`` may lose), when ``batch_chunks`` are buffered (a cap), and after
        boundary chunks (see ``BatchPolicy``).
        """
        # The composition root imports this module; importing it here keeps the cycle lazy.
        from chatledger.adapters.bootstrap import open_store

        return open_store(
            url,
            tenant=tenant,
            batch_chunks=batch_chunks,
            batch_ms=batch_ms,
            limits=limits,
            compress=compress,
            cipher_key=cipher_key,
            auto_continue=auto_continue,
            ai_sdk=ai_sdk,
            stream_lease_seconds=stream_lease_seconds,
        )

    def close(self) -> None:
        """Release database connections."""
        self._flusher.stop()
        self._news.close()
        self.log.close()
        self.read_models.close()

    def __enter__(self) -> ConversationStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ------------------------------------------------------------

    def start_conversation(
        self,
        chat_id: str,
        *,
        tenant: str | None = None,
        actor: str = "system",
        metadata: dict[str, Any] | None = None,
        exist_ok: bool = False,
        ai_sdk: int | None = None,
    ) -> bool:
        """Create a conversation; ConversationExistsError if it is already there.

        With ``exist_ok`` an existing conversation is left as it is (checked
        first: no failing write). Returns whether the conversation was created.
        ``ai_sdk`` (6 or 7, default: the store's ``ai_sdk``) is the AI SDK major
        it speaks, for good: its chunks, its fold and its ``ai-sdk`` conversion.
        """
        return self.chats.start_conversation(
            chat_id, tenant=tenant, actor=actor, metadata=metadata, exist_ok=exist_ok, ai_sdk=ai_sdk
        )

    def append_message(
        self,
        chat_id: str,
        message: dict[str, Any],
        *,
        tenant: str | None = None,
        actor: str = "system",
    ) -> None:
        """Append a whole UIMessage of any role (imported assistant messages keep every tool state).

        While an answer streams, a user message of an AI SDK 7 conversation is
        queued as a steering message (see ``steering``) instead of refused.
        """
        self.chats.append_message(chat_id, message, tenant=tenant, actor=actor)

    def open_stream(
        self,
        chat_id: str,
        *,
        tenant: str | None = None,
        actor: str = "system",
        continuation: bool = False,
        trigger: str | None = None,
        message_id: str | None = None,
        request_id: str | None = None,
        user_message: dict[str, Any] | None = None,
        user_actor: str = "system",
        commit: bool = True,
    ) -> StreamWriter:
        """Open the conversation's one stream: a new assistant message, or a continuation of the last.

        A second open stream is refused (StreamAlreadyOpenError), unless the open
        one's lease has expired (its writer died): that one is closed as
        ``interrupted`` first, in the same transaction. The new stream holds a
        lease of ``stream_lease_seconds``, renewed by the writer while it lives.
        ``request_id`` names the continuation request this stream fulfils
        (see ``claim_continuation``); it implies ``continuation=True``.
        ``user_message`` (by ``user_actor``) is appended first, in the same
        transaction: a turn then costs one commit less than ``append_message``
        followed by ``open_stream``, and either both are recorded or neither.

        The open (with the user message) is committed before this returns
        (``commit=True``, the default): another process sees the stream at
        once, and one that opened a stream first makes this raise
        ``StreamAlreadyOpenError``. With ``commit=False`` it is decided now,
        against the conversation as stored, and committed with the stream's
        first batch: a reply written within ``BatchPolicy.settle`` (5 ms) is
        one transaction with its open and close (for callers that write a
        whole turn in one go: imports, batch jobs). It is then committed
        alone once that time has passed, and before anything else in this
        process decides on or reads the conversation; a stream opened
        meanwhile by another process is found at that commit, and this
        writer ends, its calls raising ``StreamOpenLostError``
        (docs/behaviour.md §7.2).
        """
        return self.streams.open(
            tenant or self.tenant, chat_id, actor=actor, continuation=continuation,
            trigger=trigger, message_id=message_id, request_id=request_id,
            user_message=user_message, user_actor=user_actor, commit=commit,
        )  # fmt: skip

    def _settle(self, tenant: str | None, chat_id: str) -> str:
        """Commit what this process's streams of the conversation hold back (a pending open, a
        batch a boundary ended) before reading it; returns the tenant."""
        tenant = tenant or self.tenant
        self._uow.settle_writers(conversation_id(tenant, chat_id))
        return tenant

    def _expire_lapsed(self, conversation: Conversation, noticed_by: str) -> None:
        """Close the conversation's stream if its writer's lease ran out (a decision step)."""
        self.streams.expire_lapsed(conversation, noticed_by)

    @property
    def clock(self) -> Clock:
        """Now, for lease decisions (tests may replace it)."""
        return self.streams.clock

    @clock.setter
    def clock(self, clock: Clock) -> None:
        self.streams.clock = clock

    def _expire_followed(self, tenant: str, chat_id: str, stream_id: str) -> bool:
        """Close a followed stream whose writer's lease ran out (a follower noticed)."""
        return self.expire_stream(
            chat_id, tenant=tenant, stream_id=stream_id, noticed_by="a follower"
        )

    def expire_stream(
        self,
        chat_id: str,
        *,
        tenant: str | None = None,
        stream_id: str | None = None,
        actor: str | None = None,
        noticed_by: str = "a check",
    ) -> bool:
        """Close the open stream as ``interrupted`` if its lease expired (its writer died); whether it did.

        Of several processes that call it at once, exactly one records the
        close. ``actor`` (default: this process, ``chatledger:HOST:PID``) is who
        closes it in the audit; ``noticed_by`` goes into the reason.
        """
        return self.streams.expire(
            tenant or self.tenant, chat_id, stream_id=stream_id, actor=actor, noticed_by=noticed_by
        )

    def expire_streams(
        self, *, tenant: str | None = None, actor: str | None = None, noticed_by: str = "a sweep"
    ) -> list[str]:
        """Close every stream of the tenant whose lease expired; the chat ids closed (the sweep)."""
        return self.streams.sweep(tenant or self.tenant, actor=actor, noticed_by=noticed_by)

    def close_stream(
        self,
        chat_id: str,
        stream_id: str | None = None,
        outcome: str = "interrupted",
        reason: str | None = None,
        *,
        tenant: str | None = None,
        actor: str = "system",
    ) -> None:
        """Close a stream from outside its writer (e.g. one a crashed process left open).

        ``stream_id`` None closes whichever stream is open.
        """
        self.streams.close(tenant or self.tenant, chat_id, stream_id, outcome, reason, actor=actor)

    def ingest(
        self,
        chat_id: str,
        chunks: Iterable[Any],
        *,
        tenant: str | None = None,
        actor: str = "system",
        continuation: bool = False,
        outcome: str = "finished",
    ) -> IngestReport:
        """Write a whole recorded stream (open, every chunk, close) and report what became of it."""
        return self.streams.ingest(
            tenant or self.tenant, chat_id, chunks, actor=actor, continuation=continuation,
            outcome=outcome,
        )  # fmt: skip

    # -- human in the loop ----------------------------------------------------

    def add_tool_output(
        self,
        chat_id: str,
        tool_call_id: str,
        *,
        output: Any = None,
        state: str = "output-available",
        error_text: str | None = None,
        actor: str = "system",
        auto_continue: bool | None = None,
        tenant: str | None = None,
    ) -> ActionResult:
        """Give a tool call's result (``output-available``) or error (``output-error``).

        Accepted when the call is ``input-available``, ``approval-requested`` or
        ``approval-responded``. ``output-error`` with ``error_text`` is how a
        client sends a custom denial. A call that already has a result keeps it
        (first write wins; ``changed`` is False). ``auto_continue`` defaults to
        True for results and False for errors.
        """
        return self.chats.add_tool_output(
            chat_id,
            tool_call_id,
            output=output,
            state=state,
            error_text=error_text,
            actor=actor,
            auto_continue=auto_continue,
            tenant=tenant,
        )

    def respond_to_approval(
        self,
        chat_id: str,
        *,
        approved: bool,
        approval_id: str | None = None,
        tool_call_id: str | None = None,
        reason: str | None = None,
        actor: str = "system",
        auto_continue: bool | None = None,
        tenant: str | None = None,
    ) -> ActionResult:
        """Approve or deny a tool call awaiting approval (by approval id or tool call id).

        Approved: ``approval-responded``; denied: ``output-denied`` with
        ``approval.approved = false`` and the reason, so the model is told. The
        same answer again records nothing; a different one raises
        ApprovalConflictError. ``auto_continue`` defaults to True for both.
        """
        return self.chats.respond_to_approval(
            chat_id,
            approved=approved,
            approval_id=approval_id,
            tool_call_id=tool_call_id,
            reason=reason,
            actor=actor,
            auto_continue=auto_continue,
            tenant=tenant,
        )

    def regenerate(
        self,
        chat_id: str,
        message_id: str | None = None,
        *,
        reason: str | None = None,
        actor: str = "system",
        tenant: str | None = None,
    ) -> int:
        """Cut an assistant message (default: the last one) and everything after it from the view.

        Given a user message id, the messages after it are cut. The cut
        messages stay in the log (``messages(at_version=...)`` shows them).
        Open the new stream with ``trigger="regenerate-message"``. Returns how
        many messages were cut.
        """
        return self.chats.regenerate(chat_id, message_id, reason=reason, actor=actor, tenant=tenant)

    def cut(
        self,
        chat_id: str,
        from_message_id: str,
        *,
        trigger: str = "cut",
        reason: str | None = None,
        actor: str = "system",
        tenant: str | None = None,
    ) -> int:
        """Cut ``from_message_id`` (any role) and every later message from the view.

        The general form of ``regenerate`` and ``edit``, for stores of other
        frameworks (``trigger`` names why, in the audit). The cut messages stay
        in the log. Returns how many messages were cut.
        """
        return self.chats.cut(
            chat_id, from_message_id, trigger=trigger, reason=reason, actor=actor, tenant=tenant
        )

    def edit(
        self,
        chat_id: str,
        message_id: str,
        new_message: dict[str, Any],
        *,
        reason: str | None = None,
        actor: str = "system",
        tenant: str | None = None,
    ) -> int:
        """Replace a user message: it and every later message leave the view, ``new_message`` is appended.

        Returns how many messages were cut; they stay in the log.
        """
        return self.chats.edit(
            chat_id, message_id, new_message, reason=reason, actor=actor, tenant=tenant
        )

    def transact(
        self,
        chat_id: str,
        decide: Callable[[Transaction], T],
        *,
        tenant: str | None = None,
    ) -> T:
        """Several actions on one conversation decided together and recorded in one commit.

        ``decide`` gets a ``Transaction`` (the current messages; append, cut,
        tool outputs, approvals) and may raise to give up, recording nothing.
        When another writer commits first, ``decide`` runs again on the new
        state. Returns what ``decide`` returned. For stores of other
        frameworks, whose one save is several actions.
        """
        return self.chats.transact(chat_id, decide, tenant=tenant)

    def status(self, chat_id: str, *, tenant: str | None = None) -> ConversationStatus:
        """Where the turn stands: idle, streaming, awaiting-approval, awaiting-tool-output, ready-to-continue."""
        return self.reads.status(chat_id, tenant=tenant)

    def steering(self, chat_id: str, *, tenant: str | None = None) -> list[dict[str, Any]]:
        """User messages sent while the open answer streams (AI SDK 7), not yet taken by it.

        A responder takes one by emitting a ``steering-message`` chunk with the
        message's id and parts at a step boundary; those it leaves become the
        next user messages when its stream closes.
        """
        return self.reads.steering(chat_id, tenant=tenant)

    def pending_approvals(self, *, tenant: str | None = None) -> list[PendingApproval]:
        """Every tool call awaiting approval across the tenant's conversations, oldest first."""
        return self.inbox.pending_approvals(tenant=tenant)

    def pending_continuations(self, *, tenant: str | None = None) -> list[ContinuationRequest]:
        """Continuation requests not yet started (claimed or not), oldest first."""
        return self.inbox.pending_continuations(tenant=tenant)

    def list_conversations(
        self,
        *,
        tenant: str | None = None,
        query: str | None = None,
        status: str | None = None,
        updated_before: datetime | None = None,
        updated_after: datetime | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> ConversationList:
        """One page of the tenant's conversations, most recently changed first.

        ``query`` keeps those whose title or message text holds every word
        (as a prefix); ``status`` those whose turn stands there (see
        ``chatledger.projections.listing.STATUSES``); ``updated_before`` /
        ``updated_after`` bound the last change. Pass the page's
        ``next_cursor`` as ``cursor`` for the next page.
        """
        return self.inbox.list_conversations(
            tenant=tenant,
            query=query,
            status=status,
            updated_before=updated_before,
            updated_after=updated_after,
            limit=limit,
            cursor=cursor,
        )

    def set_title(
        self,
        chat_id: str,
        title: str | None,
        *,
        tenant: str | None = None,
        actor: str = "system",
    ) -> bool:
        """Name the conversation (None: back to its first user text); False if it already had that title."""
        return self.chats.set_title(chat_id, title, tenant=tenant, actor=actor)

    def set_metadata(
        self,
        chat_id: str,
        metadata: dict[str, Any],
        *,
        tenant: str | None = None,
        actor: str = "system",
    ) -> bool:
        """Replace the conversation's metadata (a JSON object); False if it already was exactly that."""
        return self.chats.set_metadata(chat_id, metadata, tenant=tenant, actor=actor)

    def redact(
        self,
        chat_id: str,
        *,
        tool_call_id: str | None = None,
        message_id: str | None = None,
        fields: list[str] | None = None,
        actor: str,
        reason: str,
        tenant: str | None = None,
    ) -> bool:
        """Hide one tool call's input/output, or parts of one message, from every view; False if already hidden.

        Name exactly one of ``tool_call_id`` (``fields``: ``input``, ``output``)
        or ``message_id`` (``fields``: the kinds of its parts, e.g. ``text``,
        ``reasoning``, ``file``); ``fields`` defaults to all of them. Records a
        ``Redacted`` event (who, why); from then on messages (also at earlier
        versions), model conversions, the timeline, followed streams and the
        read models show ``[redacted]`` instead. The original events stay in
        the log unchanged, so the chain still verifies and an operator holding
        the store's key can still read them (see docs/audit.md).
        """
        return self.chats.redact(
            chat_id,
            tool_call_id=tool_call_id,
            message_id=message_id,
            fields=fields,
            actor=actor,
            reason=reason,
            tenant=tenant,
        )

    def claim_continuation(
        self,
        worker: str,
        *,
        lease_seconds: float = 60.0,
        tenant: str | None = None,
        chat_id: str | None = None,
        min_age_seconds: float = 0.0,
    ) -> ContinuationRequest | None:
        """Take the oldest unclaimed (or lease-expired) request; exactly one worker wins each.

        Then open its stream with ``open_stream(chat_id, request_id=...)``
        within the lease; that fulfils the request. ``chat_id`` takes only
        that conversation's request; ``min_age_seconds`` leaves alone requests
        younger than that (a request its own writer is about to fulfil).
        """
        return self.inbox.claim_continuation(
            worker,
            lease_seconds=lease_seconds,
            tenant=tenant,
            chat_id=chat_id,
            min_age_seconds=min_age_seconds,
        )

    # -- reading ------------------------------------------------------------

    def messages(
        self,
        chat_id: str,
        *,
        tenant: str | None = None,
        at_version: int | None = None,
        at_time: datetime | None = None,
    ) -> list[dict[str, Any]]:
        """The conversation's UIMessages (JSON dicts), now or as they stood at a version or time.

        The current messages come from the read model (brought up to date
        first); past ones are rebuilt from the log.
        """
        return self.reads.messages(chat_id, tenant=tenant, at_version=at_version, at_time=at_time)

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
    ) -> Any:
        """The conversation (now, or at a version or time) in a model API's format.

        ``format`` is ``"ai-sdk"`` (AI SDK ``ModelMessage`` list), ``"anthropic"``
        (``{"system": ..., "messages": [...]}``), ``"openai-chat"`` (Chat
        Completions messages) or ``"openai-responses"`` (Responses ``input``
        items). See ``chatledger.domain.convert.to_model_messages`` for the options.
        """
        return self.reads.model_messages(
            chat_id,
            format,
            tenant=tenant,
            at_version=at_version,
            at_time=at_time,
            ignore_incomplete_tool_calls=ignore_incomplete_tool_calls,
            unanswered=unanswered,
        )

    def ai_sdk_of(self, chat_id: str, *, tenant: str | None = None) -> int:
        """The AI SDK major the conversation speaks (6 for conversations started before v7)."""
        return self.reads.ai_sdk_of(chat_id, tenant=tenant)

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
        return self.reads.history(
            chat_id, tenant=tenant, kinds=kinds, actor=actor, after=after, limit=limit, full=full
        )

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
        ``chatledger.adapters.store.follow``.
        """
        return self.reads.follow(
            chat_id, after=after, tenant=tenant, timeout=timeout, poll_seconds=poll_seconds
        )

    async def follow_async(
        self,
        chat_id: str,
        *,
        after: str | None = None,
        tenant: str | None = None,
        timeout: float | None = None,
    ) -> AsyncFollower:
        """``follow`` for asyncio: an async iterator of the same chunks, no thread per follower.

        Awaiting it resolves the stream (raising ``ConversationNotFoundError``
        or ``InvalidInputError`` at once); iterate it with ``async for``, and
        ``await aclose()`` it to stop early. It waits on the event loop and
        reads the log in a worker thread only when there is news; a stream
        whose writer died ends as with ``follow``. Details:
        ``chatledger.adapters.store.follow_async``.
        """
        return await self.reads.follow_async(chat_id, after=after, tenant=tenant, timeout=timeout)

    def version(self, chat_id: str, *, tenant: str | None = None) -> int:
        """The conversation's current version (number of events)."""
        return self.reads.version(chat_id, tenant=tenant)

    def conversation(
        self, chat_id: str, *, tenant: str | None = None, at_version: int | None = None
    ) -> Conversation:
        """The aggregate itself, loaded from the log (at ``at_version``): for tools and tests.

        Its state is the fold of the log as stored: redacted content is still
        there (``state.redactions`` says what views hide; ``messages()`` hides it).
        """
        return self.reads.conversation(chat_id, tenant=tenant, at_version=at_version)

    # -- deprecated: the operator methods, now on ``operations`` ---------------------

    if not TYPE_CHECKING:  # type checkers keep flagging misspelt names, and point at old callers

        def __getattr__(self, name: str) -> Any:
            """``store.verify(...)`` and the other operator methods: ``store.operations``'s, with a warning.

            Called only for names the store does not have, so real attributes
            never come here; any other missing name raises AttributeError. The
            deprecated names are answered but not listed by ``dir()``.
            """
            if name not in DEPRECATED_OPERATIONS:
                message = f"{type(self).__name__!r} object has no attribute {name!r}"
                raise AttributeError(message, name=name, obj=self)
            warnings.warn(
                f"store.{name}(...) is deprecated: use store.operations.{name}(...)",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(self.operations, name)
