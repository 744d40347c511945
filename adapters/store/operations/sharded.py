"""``Operations`` over the databases of a sharded store (``ShardedStore.operations``).

A conversation's operations (``verify`` of one chat, ``export``, ``erase``)
go to its shard; the others run in every shard and add up (retention is
measured from one moment for all of them). ``seal`` and ``otel_exporter``
need one log, and ``erase_subject`` and ``export_subject`` one pseudonym
secret and one receipt, so a sharded store refuses them: run them on each
database's own URL.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

from chatledger.adapters.store.operations.erasure import (
    DEFAULT_WAIT_SECONDS,
    Compaction,
    RetentionReport,
)
from chatledger.domain.errors import InvalidInputError

if TYPE_CHECKING:
    from chatledger.adapters.store.operations import Operations
    from chatledger.adapters.store.operations.erasure import ErasureReport, RetainProgress
    from chatledger.adapters.store.operations.export import ExportProgress
    from chatledger.adapters.store.operations.subject import SubjectConversation
    from chatledger.adapters.store.operations.verify import Progress as VerifyProgress
    from chatledger.adapters.store.operations.verify import VerifyReport
    from chatledger.domain.seal import SealKey
    from chatledger.projections.projector import Progress
    from chatledger.projections.read_models import QuarantinedEvent

__all__ = ["ShardedOperations"]


class ShardedOperations:
    """The operations of every shard as one; ``locate(chat_id, tenant)`` names a chat's shard."""

    def __init__(
        self, shards: Sequence[Operations], locate: Callable[[str, str | None], Operations]
    ) -> None:
        if not shards:
            raise InvalidInputError("a sharded store needs at least one database")
        self.shards = list(shards)
        """One shard's ``Operations`` per database, in the URL's order."""
        self._locate = locate
        self.tenant = self.shards[0].tenant
        """The tenant of calls that name none (the store's default tenant)."""

    def verify(
        self,
        chat_id: str | None = None,
        *,
        tenant: str | None = None,
        progress: VerifyProgress | None = None,
        seal_key: SealKey | None = None,
        witness: object = None,
        expect_seals: Sequence[str] = (),
        signed_writes: bool | None = None,
    ) -> VerifyReport:
        """Verify one conversation (in its shard), or every shard; the first report with problems, else the last."""
        if witness is not None or expect_seals:
            raise InvalidInputError(
                "a sharded store has no single log to check against a witness: verify each "
                "database with its own URL and its own --witness / --expect-seal"
            )
        if chat_id is not None:
            return self._locate(chat_id, tenant).verify(
                chat_id,
                tenant=tenant,
                progress=progress,
                seal_key=seal_key,
                signed_writes=signed_writes,
            )
        reports = [
            s.verify(
                tenant=tenant, progress=progress, seal_key=seal_key, signed_writes=signed_writes
            )
            for s in self.shards
        ]
        return next((r for r in reports if not r.ok), reports[-1])

    def seal(self, key: SealKey, *, witness: object = None) -> NoReturn:
        """Not for a sharded store: seal each database as a store of its own."""
        raise InvalidInputError(
            "a sharded store has no single log to seal: seal each database with its own URL"
        )

    def head(self) -> int:
        """Events recorded in all shards (each shard's last position, added up)."""
        return sum(s.head() for s in self.shards)

    def export(
        self,
        chat_id: str,
        out: TextIO,
        *,
        tenant: str | None = None,
        at_version: int | None = None,
        progress: ExportProgress | None = None,
    ) -> int:
        """Write the conversation as a verifiable bundle, from its shard (see ``Operations.export``)."""
        return self._locate(chat_id, tenant).export(
            chat_id, out, tenant=tenant, at_version=at_version, progress=progress
        )

    def erase(
        self,
        chat_id: str,
        *,
        actor: str,
        reason: str,
        tenant: str | None = None,
        wait_for_readers: float = DEFAULT_WAIT_SECONDS,
    ) -> ErasureReport:
        """Erase the conversation in its shard (see ``Operations.erase``).

        The grant ledger (the first shard's) is rewritten too: that database's
        files are cleaned as well, and the report's compaction covers both.
        """
        shard = self._locate(chat_id, tenant)
        report = shard.erase(
            chat_id, actor=actor, reason=reason, tenant=tenant, wait_for_readers=wait_for_readers
        )
        first = self.shards[0]
        if shard is not first and report.compaction is not None:
            ledger = first.finish_erasure(wait_for_readers=wait_for_readers)
            report = replace(report, compaction=Compaction.of_all([report.compaction, ledger]))
        return report

    def retain(
        self,
        older_than: timedelta,
        *,
        tenant: str | None = None,
        dry_run: bool = False,
        actor: str = "system:retention",
        reason: str | None = None,
        progress: RetainProgress | None = None,
        now: datetime | None = None,
        wait_for_readers: float = DEFAULT_WAIT_SECONDS,
    ) -> RetentionReport:
        """Retention in every shard, measured from one moment; one report for all of them."""
        now = now or datetime.now(UTC)
        merged: RetentionReport | None = None
        parts: list[Compaction] = []
        later: list[RetentionReport] = []
        for shard in self.shards:
            offset = len(merged.idle) if merged is not None else 0

            def shifted(done: int, total: int, offset: int = offset) -> None:
                if progress is not None:
                    progress(offset + done, offset + total)

            report = shard.retain(
                older_than, tenant=tenant, dry_run=dry_run, actor=actor, reason=reason,
                progress=shifted, now=now, wait_for_readers=wait_for_readers,
            )  # fmt: skip
            if merged is None:
                merged = RetentionReport(report.cutoff, report.dry_run)
            merged.idle += report.idle
            merged.erased += report.erased
            merged.failed += report.failed
            later += [report] if shard is not self.shards[0] else []
            parts += [report.compaction] if report.compaction is not None else []
        assert merged is not None  # there is at least one shard
        if any(r.erased for r in later):  # their grant uses were rewritten in the first's ledger
            parts.append(self.shards[0].finish_erasure(wait_for_readers=wait_for_readers))
        merged.compaction = Compaction.of_all(parts)
        return merged

    def conversations_of(
        self, subject: str, *, tenant: str | None = None
    ) -> list[SubjectConversation]:
        """The subject's conversations in every shard (see ``Operations.conversations_of``)."""
        return [c for s in self.shards for c in s.conversations_of(subject, tenant=tenant)]

    def erase_subject(
        self,
        subject: str,
        *,
        actor: str,
        reason: str,
        tenant: str | None = None,
        progress: RetainProgress | None = None,
        wait_for_readers: float = DEFAULT_WAIT_SECONDS,
    ) -> NoReturn:
        """Not for a sharded store: erase the subject on each database's own URL."""
        raise InvalidInputError(
            "a sharded store erases by subject one database at a time: run it with each "
            "database's own URL (each keeps its own pseudonym secret and receipt)"
        )

    def export_subject(
        self,
        subject: str,
        directory: str | Path,
        *,
        tenant: str | None = None,
        progress: RetainProgress | None = None,
    ) -> NoReturn:
        """Not for a sharded store: export the subject from each database's own URL."""
        raise InvalidInputError(
            "a sharded store exports by subject one database at a time: run it with each "
            "database's own URL"
        )

    def finish_erasure(self, *, wait_for_readers: float = DEFAULT_WAIT_SECONDS) -> Compaction:
        """Clean every shard's files (see ``Operations.finish_erasure``)."""
        done = [s.finish_erasure(wait_for_readers=wait_for_readers) for s in self.shards]
        combined = Compaction.of_all(done)
        assert combined is not None  # there is at least one shard
        return combined

    def rebuild(
        self, *, progress: Progress | None = None, accept_broken_chain: bool = False
    ) -> int:
        """Rebuild every shard's read models; the events applied in all."""
        return sum(
            s.rebuild(progress=progress, accept_broken_chain=accept_broken_chain)
            for s in self.shards
        )

    def catch_up(self, *, progress: Progress | None = None) -> int:
        """Bring every shard's read models up to date; the events applied in all."""
        return sum(s.catch_up(progress=progress) for s in self.shards)

    def quarantined(self) -> list[QuarantinedEvent]:
        """The events no shard could project."""
        return [q for s in self.shards for q in s.quarantined()]

    def read_model_counts(self) -> dict[str, int]:
        """Rows per read model, added up over the shards."""
        total: dict[str, int] = {}
        for shard in self.shards:
            for name, count in shard.read_model_counts().items():
                total[name] = total.get(name, 0) + count
        return total

    def forget_cached(self) -> None:
        """Drop every shard's cached conversations."""
        for shard in self.shards:
            shard.forget_cached()

    def otel_exporter(
        self, endpoint: str, *, content: bool = False, name: str = "otel"
    ) -> NoReturn:
        """Not for a sharded store: export each database with its own URL."""
        raise InvalidInputError(
            "a sharded store has no single log to export: export each database with its own URL"
        )
