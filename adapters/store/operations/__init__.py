"""What operators run (the CLI's commands, the operator routes): ``store.operations``, off the chat surface.

``Operations`` delegates to the module holding each concept: ``verify``, ``integrity`` (hash chains,
seals), ``export``, ``erasure``, ``otel``; ``sharded`` runs them over the databases of a sharded store.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, TextIO
from uuid import UUID

from chatledger.adapters.store.operations import erasure, guard, sealing
from chatledger.adapters.store.operations.export import ExportProgress, export_bundle
from chatledger.adapters.store.operations.otel import OtelExporter
from chatledger.adapters.store.operations.subject import (
    SubjectConversation,
    SubjectErasure,
    SubjectExport,
    Subjects,
)
from chatledger.adapters.store.operations.verify import Progress as VerifyProgress
from chatledger.adapters.store.operations.verify import Verifier, VerifyReport
from chatledger.adapters.store.operations.witness import read_witness
from chatledger.domain.errors import InvalidInputError
from chatledger.domain.witness import parse_expected

if TYPE_CHECKING:
    from chatledger.adapters.persistence.config import StoreConfig
    from chatledger.adapters.persistence.log import ConversationLog
    from chatledger.adapters.store.cache import ConversationCache
    from chatledger.domain.seal import Seal, SealKey
    from chatledger.projections.projector import Progress, Projector
    from chatledger.projections.read_models import QuarantinedEvent, ReadModelView

__all__ = ["WIRING", "Operations"]

WIRING = frozenset({"notify_erasures", "also_verify"})
"""``Operations`` methods the composition root wires other services in with, not operations an
operator runs: a sharded store's services wire each shard's ``Operations`` themselves."""


class Operations:
    """A store's ``operations``: integrity, export, erasure, retention, read models, telemetry.

    ``tenant=None`` means the store's default tenant (for ``retain``: every tenant).
    """

    def __init__(
        self,
        *,
        config: StoreConfig,
        log: ConversationLog,
        read_models: ReadModelView,
        projector: Projector,
        cache: ConversationCache,
        forget_reads: Callable[[], None],
        tenant: str,
    ) -> None:
        """Compose from the store's parts; ``forget_reads`` drops what its reads cache."""
        self.tenant = tenant
        """The tenant of calls that name none (the store's default tenant)."""
        self._config = config
        self._log = log
        self._read_models = read_models
        self._projector = projector
        self._cache = cache
        self._forget_reads = forget_reads
        self._verifier = Verifier(log, read_models, projector)
        self._eraser = erasure.Eraser(log, read_models, projector, self._forget_one)
        self._subjects = Subjects(log, read_models, projector, self._eraser)

    def verify(
        self,
        chat_id: str | None = None,
        *,
        tenant: str | None = None,
        progress: VerifyProgress | None = None,
        seal_key: SealKey | None = None,
        witness: str | os.PathLike[str] | None = None,
        expect_seals: Sequence[str] = (),
        signed_writes: bool | None = None,
    ) -> VerifyReport:
        """Check the log's hash chains and seals, re-derive snapshots and read models and compare.

        All conversations, or one. The report names each disagreement (for a
        damaged chain: the first bad event and the kind of damage) and how to
        repair it, and says which part of the log the chain and seals cover;
        see ``chatledger.adapters.store.operations.verify``. Seal signatures
        are checked with ``seal_key``. Every seal the ``witness`` file records
        (see ``seal(witness=)``) and every ``expect_seals`` entry (``N:DIGEST``)
        must still be in the store with that digest: a store stripped of its
        seals or put back to an older copy is named ``rolled-back``. With
        ``signed_writes`` (the store's writers sign their heads: ``open(sign_writes=)``)
        every head after the newest seal must be signed with ``seal_key``, else
        it is named ``unsigned-tail``; None: when this store signs its writes
        (with its signing key as ``seal_key`` unless one is given). Raises
        ConversationNotFoundError for an unknown ``chat_id``.
        """
        witnessed = [*(read_witness(witness) if witness is not None else ()),
                     *(parse_expected(text) for text in expect_seals)]  # fmt: skip
        signer = getattr(self._log.recorder, "signer", None)
        if signed_writes is None:
            signed_writes = signer is not None
        if seal_key is None and signer is not None:
            seal_key = signer.key
        if signed_writes and seal_key is None:
            raise InvalidInputError(
                "checking signed writes needs the seal key (--seal-key-file or $CHATLEDGER_SEAL_KEY)"
            )
        return self._verifier.verify(
            tenant or self.tenant, chat_id, progress, seal_key, witnessed, signed_writes
        )

    def seal(self, key: SealKey, *, witness: str | os.PathLike[str] | None = None) -> Seal:
        """Sign and store a checkpoint over every conversation's chain head (see ``chatledger.domain.seal``).

        Seal at intervals and after a ``verify``: a seal makes deleting whole
        conversations or the tail of one detectable, and pins every chain it
        covers. Keep the returned seal's ``digest`` outside the store as well:
        ``witness`` names a file (out of the database's reach) that each seal's
        number, time and digest is appended to, for ``verify(witness=)``.
        """
        return sealing.make_seal(self._log, self._config.backend, key, witness)

    def head(self) -> int:
        """The id of the last event recorded in the whole store (0 when empty)."""
        return self._log.head()

    def export(
        self,
        chat_id: str,
        out: TextIO,
        *,
        tenant: str | None = None,
        at_version: int | None = None,
        progress: ExportProgress | None = None,
    ) -> int:
        """Write the conversation (as it stood at ``at_version``) as a verifiable JSON Lines bundle.

        The bundle holds the events, their chain and the newest seal covering
        the conversation; ``chatledger.domain.bundle.verify_bundle`` checks it
        offline with the seal key (see that module for the format). Returns
        the lines written. Needs a seal first (``seal()``). ``progress`` is
        called with (events read, events in the bundle) after each event.
        """
        return export_bundle(self._log, tenant or self.tenant, chat_id, out, at_version, progress)

    def erase(
        self,
        chat_id: str,
        *,
        actor: str,
        reason: str,
        tenant: str | None = None,
        wait_for_readers: float = erasure.DEFAULT_WAIT_SECONDS,
    ) -> erasure.ErasureReport:
        """Erase the conversation for good (e.g. a data-subject request); its audit skeleton stays.

        Its data key is destroyed (crypto-shredding) and, in the same
        transaction, its events become tombstones, its snapshots and
        read-model rows are deleted, and a ``ConversationErased`` event
        records ``actor``, the time and ``reason``. Afterwards every read of
        it raises ConversationErasedError, except ``history``, which keeps
        each event's kind, actor and time; ``verify`` still passes. Erasing
        it again raises ConversationErasedError; the chat id cannot be used
        again. Not for ``memory://`` stores (StoreConfigurationError).
        """
        return self._eraser.erase(tenant or self.tenant, chat_id, actor, reason)

    def retain(
        self,
        older_than: timedelta,
        *,
        tenant: str | None = None,
        dry_run: bool = False,
        actor: str = "system:retention",
        reason: str | None = None,
        progress: erasure.RetainProgress | None = None,
        now: datetime | None = None,
        wait_for_readers: float = erasure.DEFAULT_WAIT_SECONDS,
    ) -> erasure.RetentionReport:
        """Erase every conversation idle for longer than ``older_than`` (of ``tenant``, or of all tenants).

        Idle means no event since then (as the conversation list shows).
        ``dry_run`` only lists them. Each is erased as ``erase`` does, by
        ``actor``, with ``reason`` (default: the retention period).
        ``progress`` is called with (done, total) after each conversation.
        ``now`` is the moment idleness is measured from (default: the current time).
        The files are cleaned once, after the erasures (the report's ``compaction``, as ``erase``).
        """
        return self._eraser.retain(
            older_than, tenant=tenant, dry_run=dry_run, actor=actor, reason=reason,
            progress=progress, now=now, wait=wait_for_readers,
        )  # fmt: skip

    def conversations_of(
        self, subject: str, *, tenant: str | None = None
    ) -> list[SubjectConversation]:
        """The conversations of ``tenant`` in which ``subject`` (a user id) took part: ``erase_subject``'s dry run.

        ``subject`` is matched exactly as the actor of recorded events (who
        wrote a message, answered an approval...); content is not searched.
        Conversations erased before are listed too (``erased``): their audit
        skeleton still names the subject until ``erase_subject``.
        """
        return self._subjects.conversations_of(subject, tenant or self.tenant)

    def erase_subject(
        self,
        subject: str,
        *,
        actor: str,
        reason: str,
        tenant: str | None = None,
        progress: erasure.RetainProgress | None = None,
        wait_for_readers: float = erasure.DEFAULT_WAIT_SECONDS,
    ) -> SubjectErasure:
        """Erase every conversation ``subject`` took part in (a data-subject request), as ``erase`` does each.

        The audit skeleton erasure keeps (kinds, actors, times) names the
        subject's stable pseudonym (``subject:<16 hex digits>``) instead of
        the user id, in those conversations and in ones erased before;
        ``verify`` still passes. ``reason`` must not contain the user id (the
        audit keeps it: InvalidInputError). ``progress`` is called with
        (done, total) after each conversation; the files are cleaned once at
        the end (the receipt's ``compaction``).
        """
        return self._subjects.erase_subject(
            subject, tenant or self.tenant, actor=actor, reason=reason, progress=progress,
            wait=wait_for_readers,
        )  # fmt: skip

    def export_subject(
        self,
        subject: str,
        directory: str | Path,
        *,
        tenant: str | None = None,
        progress: erasure.RetainProgress | None = None,
    ) -> SubjectExport:
        """Write each conversation ``subject`` took part in as a bundle into ``directory`` (a data-access request).

        One ``<conversation id>.jsonl`` per conversation; each is checked
        offline as ``export``'s bundles are. Needs a seal first (``seal()``).
        """
        return self._subjects.export_subject(
            subject, tenant or self.tenant, Path(directory), progress
        )

    def finish_erasure(
        self, *, wait_for_readers: float = erasure.DEFAULT_WAIT_SECONDS
    ) -> erasure.Compaction:
        """Complete a "pending" compaction of ``erase`` or ``retain``: clean the files again.

        Run it once the readers the pending report named have finished (it
        waits up to ``wait_for_readers`` seconds for them). Harmless to run
        at any time.
        """
        return self._eraser.compact(wait_for_readers, everything=True)

    def rebuild(
        self, *, progress: Progress | None = None, accept_broken_chain: bool = False
    ) -> int:
        """Drop the read models and rebuild them from the whole log; returns how many events were applied.

        The log's hash chain is checked first: a log that fails it raises
        LogTamperedError and nothing is changed (rebuilding would make the
        damage look legitimate). ``accept_broken_chain=True`` rebuilds anyway
        and records, beside the chain, that it did and what was wrong.
        """
        guard.guard(self._log, "rebuild the read models", accept=accept_broken_chain)
        return self._projector.rebuild(progress=progress)

    def catch_up(self, *, progress: Progress | None = None) -> int:
        """Bring the read models up to date with the log; returns how many events were applied.

        Reads do this by themselves; call it to keep reads fast (for example
        from a background worker, or ``chatledger project``).
        """
        return self._projector.catch_up(progress=progress)

    def quarantined(self) -> list[QuarantinedEvent]:
        """Events the read models skipped because they cannot be applied (``verify`` names them).

        One bad event (stored by an older version, or by hand) must not stop
        the read models for every conversation: it is set aside here, logged,
        and the projection goes on. ``rebuild`` tries them again.
        """
        return self._projector.quarantined()

    def read_model_counts(self) -> dict[str, int]:
        """Rows per read model: conversations, timeline, approvals, continuations."""
        return self._read_models.counts()

    def forget_cached(self) -> None:
        """Drop what this process caches (conversations, message rows); reads go to the database again.

        Nothing is needed for writes from other processes (every read checks
        the log first); use it after changing the database behind the store's
        back, e.g. a restore.
        """
        self._cache.clear()
        self._forget_reads()
        heads = getattr(self._log.recorder, "heads", None)  # the chain heads last written
        if heads is not None:
            heads.clear()

    def otel_exporter(
        self, endpoint: str, *, content: bool = False, name: str = "otel"
    ) -> OtelExporter:
        """An exporter of the timeline as OpenTelemetry GenAI spans to an OTLP/HTTP ``endpoint``.

        ``run_once()`` sends the spans finished since its last run (it keeps
        its own position, under ``name``); ``follow(stop)`` keeps going.
        ``content=True`` adds tool arguments and results to the spans. Needs
        ``pip install 'chatledger[otel]'``.
        """
        return OtelExporter(self._log, endpoint, name=name, content=content)

    def notify_erasures(self, hook: Callable[[str, str], object]) -> None:
        """Call ``hook(tenant, chat_id)`` after each conversation is erased, before the files are cleaned."""
        self._eraser.on_erased = hook

    def also_verify(
        self, check: Callable[[], Iterable[tuple[str, str | None, str | None, str]]]
    ) -> None:
        """Run ``check`` in every ``verify`` of the whole store; its findings are problems."""
        self._verifier.also.append(check)

    def _forget_one(self, key: UUID) -> None:
        """Drop what this process caches of one conversation (after erasing it)."""
        self._cache.take(key)
        self._forget_reads()
