"""The stream use cases: open a conversation's stream, close or expire one, ingest a recorded one.

``Streams`` is ``store.streams``; ``ConversationStore`` forwards its stream
methods here. Opening decides on the conversation through the unit of work
(closing a stream whose lease ran out, appending the user message given with
it) and hands the decision to a ``StreamWriter``, committed or pending
(``PendingOpen``). ``tenant=None`` means the store's default tenant.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from chatledger.adapters.store.streams.flusher import Flusher
from chatledger.adapters.store.streams.leases import Clock, expire_stream, expire_streams
from chatledger.adapters.store.streams.pending_open import PendingOpen
from chatledger.adapters.store.streams.policy import BatchPolicy
from chatledger.adapters.store.streams.writer import StreamWriter
from chatledger.adapters.store.unit_of_work import UnitOfWork
from chatledger.domain.aggregate import Conversation, conversation_id
from chatledger.domain.conversation import Verdict
from chatledger.domain.errors import InvalidChunkError, InvalidInputError
from chatledger.domain.limits import Limits, check_choice, check_flag, check_names
from chatledger.domain.stream_commands import STREAM_OUTCOMES
from chatledger.projections.listing import ConversationList, ListQuery
from chatledger.projections.projector import Projector
from chatledger.projections.read_models import ReadModelView

__all__ = ["IngestReport", "Streams"]


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class IngestReport:
    """What ``ingest()`` did with a list of chunks."""

    message_id: str
    """The assistant message written."""
    applied: int = 0
    """Chunks folded into the conversation."""
    replays: int = 0
    """Chunks recognised as replays of known tool calls (recorded, no change)."""
    refused: list[InvalidChunkError] = field(default_factory=list)
    """Chunks refused, with the reason for each."""


class Streams:
    """Opening, closing and expiring conversations' streams, and ingesting recorded ones.

    The streams it opens write through ``unit_of_work`` and are committed in
    batches by ``flusher`` as ``policy`` says; each holds a lease of
    ``lease_seconds``. ``process`` is who closes an expired stream in the
    audit (unless the caller names someone); the sweep finds candidates in
    ``read_models``, caught up by ``projector`` first.
    """

    def __init__(
        self,
        unit_of_work: UnitOfWork,
        flusher: Flusher,
        *,
        tenant: str,
        policy: BatchPolicy,
        limits: Limits,
        lease_seconds: float,
        process: str,
        read_models: ReadModelView,
        projector: Projector,
    ) -> None:
        self.tenant = tenant
        self._uow = unit_of_work
        self._flusher = flusher
        self._policy = policy
        self._limits = limits
        self._lease_seconds = lease_seconds
        self._process = process
        self._read_models = read_models
        self._projector = projector
        self.clock: Clock = _utc_now
        self.after_close: Callable[[str, str], None] | None = None
        """What each writer calls once it closed a stream on a call awaiting approval (grants)."""
        """Now, for lease decisions (tests may replace it)."""

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
        answer_key: str | None = None,
    ) -> StreamWriter:
        """Open the conversation's one stream: a new assistant message, or a continuation of the last.

        A second open stream is refused (StreamAlreadyOpenError), unless the open
        one's lease has expired (its writer died): that one is closed as
        ``interrupted`` first, in the same transaction. The new stream holds a
        lease of ``stream_lease_seconds``, renewed by the writer while it lives.
        ``request_id`` names the continuation request this stream fulfils
        (see ``claim_continuation``); it implies ``continuation=True``.
        ``answer_key`` is the writer's name for the answer: opening again with
        a key the conversation holds raises ``AnswerAlreadyWrittenError`` (a
        retried write is written once).
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
        tenant = tenant or self.tenant
        check_names(actor=actor, user_actor=user_actor)
        check_flag("continuation", continuation)
        check_flag("commit", commit)
        continuation = continuation or request_id is not None
        stream_id = f"s_{uuid.uuid4().hex[:16]}"
        new_message_id = message_id or f"msg_{uuid.uuid4().hex[:16]}"
        trigger = trigger or ("continuation" if continuation else "submit-message")

        def decide(c: Conversation) -> None:
            self.expire_lapsed(c, f"a new turn by {user_actor if user_message else actor}")
            if user_message is not None:
                c.append_message(user_message, actor=user_actor, limits=self._limits)
            c.open_stream(
                stream_id,
                new_message_id,
                continuation=continuation,
                trigger=trigger,
                actor=actor,
                request_id=request_id,
                lease_seconds=self._lease_seconds,
                answer_key=answer_key,
            )

        pending = None
        if commit or self._policy.settle <= 0:
            conversation, _, _ = self._uow.act(tenant, chat_id, decide, keep=False)
        else:
            conversation = self._uow.decide_uncommitted(tenant, chat_id, decide)
            pending = PendingOpen.decided(decide, conversation)
        writer = StreamWriter(
            conversation,
            stream_id,
            actor=actor,
            limits=self._limits,
            policy=self._policy,
            flusher=self._flusher,
            unit_of_work=self._uow,
            lease_seconds=self._lease_seconds,
            open=pending,
        )
        writer.after_close = self.after_close
        return writer

    def writer_of(self, chat_id: str, *, tenant: str | None = None) -> StreamWriter | None:
        """This process's open writer of the conversation, if it has exactly one (a resume reads
        the stream from its memory: ``StreamWriter.live_stream``)."""
        found = self._flusher.writer_of(conversation_id(tenant or self.tenant, chat_id))
        return found if isinstance(found, StreamWriter) else None

    def expire_lapsed(self, conversation: Conversation, noticed_by: str) -> None:
        """Close the conversation's stream if its writer's lease ran out (a decision step)."""
        conversation.expire_stream(
            now=self.clock(),
            default_lease_seconds=self._lease_seconds,
            actor=self._process,
            noticed_by=noticed_by,
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
        return expire_stream(
            self._uow, tenant or self.tenant, chat_id, clock=self.clock,
            default_lease_seconds=self._lease_seconds, actor=actor or self._process,
            noticed_by=noticed_by, stream_id=stream_id,
        )  # fmt: skip

    def expire_streams(
        self, *, tenant: str | None = None, actor: str | None = None, noticed_by: str = "a sweep"
    ) -> list[str]:
        """Close every stream of the tenant whose lease expired; the chat ids closed (the sweep)."""
        return expire_streams(
            self._uow, self._streaming, tenant or self.tenant, clock=self.clock,
            default_lease_seconds=self._lease_seconds, actor=actor or self._process,
            noticed_by=noticed_by,
        )  # fmt: skip

    def _streaming(self, query: ListQuery) -> ConversationList:
        """The conversation list the sweep reads, brought up to date with the log first."""
        self._projector.catch_up()
        return self._read_models.list_conversations(query)

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
        check_names(stream_id=stream_id, optional=True)
        check_names(actor=actor)

        def close(conversation: Conversation) -> None:
            open_stream = conversation.state.stream
            target = stream_id or (open_stream.stream_id if open_stream else None)
            conversation.close_stream(target or "", outcome, reason, actor=actor)

        self._uow.act(tenant or self.tenant, chat_id, close)

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
        """Write a whole recorded stream (open, every chunk, close) and report what became of it.

        ``chunks`` is any iterable of chunks (a list, a generator); ``outcome``
        one of ``STREAM_OUTCOMES``. Both are checked before the stream opens.
        """
        check_choice("outcome", outcome, STREAM_OUTCOMES)
        if isinstance(chunks, str | bytes | Mapping) or not isinstance(chunks, Iterable):
            raise InvalidInputError(
                f"chunks must be a list (or other iterable) of chunks, not {type(chunks).__name__}"
            )
        opened = self.open_stream(chat_id, tenant=tenant, actor=actor, continuation=continuation)
        with opened as stream:
            report = IngestReport(stream.message_id)
            for chunk in chunks:
                received = stream.append(chunk)
                if received.verdict is Verdict.APPLIED:
                    report.applied += 1
                elif received.verdict is Verdict.REPLAY:
                    report.replays += 1
                elif received.error is not None:
                    report.refused.append(received.error)
            stream.close(outcome)
        report.message_id = stream.message_id
        return report
