"""``verify``: check that the store agrees with its own event log (docs/behaviour.md §9, ``chatledger verify``).

The event log is the truth; everything else is derived from it and can drift
(a bug, an upgrade that folds differently, a hand-edited table, a restore of
part of a backup). ``verify`` re-derives it all from the log and compares:

0. **Tamper evidence**: every conversation's hash chain and the seals
   (``chatledger.adapters.store.operations.integrity``): the first bad event of each
   damaged conversation is named with the kind of damage.
1. **The log itself**: every conversation's events have consecutive
   versions from 1 (a gap means lost events), and every event decodes.
2. **Snapshots**: the conversation loaded the usual way (newest snapshot plus
   the events after it) equals the conversation folded from all its events.
3. **Read models**: the messages row (version, messages, status), the audit
   timeline (one entry per event), the pending approvals, the pending
   continuation and the conversation list's row equal what the events give.
4. **Bookkeeping** (``bookkeeping_check``): the list holds no row the log
   does not account for, the tracking position is not after the log's newest
   event, and the tracking table and settings hold only what chatledger writes.

Steps 1 to 3 are per conversation, in ``conversation_check``; this module
runs them over the store and gathers the report. It reads every event once
per conversation and changes nothing. Read-model problems are repaired by
``chatledger rebuild``; a snapshot or log problem needs a person (the report
says which conversation and what differs).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from uuid import UUID

from chatledger.adapters.store.operations.bookkeeping_check import (
    bookkeeping_findings,
    list_findings,
)
from chatledger.adapters.store.operations.conversation_check import ConversationCheck, Inbox
from chatledger.adapters.store.operations.integrity import Coverage, check_integrity
from chatledger.domain.aggregate import conversation_id
from chatledger.domain.errors import (
    ConversationNotFoundError,
    StoredDataError,
    StoreUnavailableError,
)
from chatledger.domain.events import ConversationStarted

if TYPE_CHECKING:
    from chatledger.adapters.persistence.log import ConversationLog
    from chatledger.domain.seal import SealKey
    from chatledger.domain.witness import Witnessed
    from chatledger.projections.listing import ConversationSummary
    from chatledger.projections.projector import Projector
    from chatledger.projections.read_models import ReadModelView

__all__ = ["Problem", "Progress", "Verifier", "VerifyReport"]

_QUARANTINE_SHOWN = 20
"""Quarantined events named one by one in a report; the rest are counted."""

Progress = Callable[[str, int, int], None]
"""Called as work goes on with (stage, done, total); stages: ``chain``, ``log``, ``conversations``."""


@dataclass(frozen=True)
class Problem:
    """One disagreement between the log and what is derived from it."""

    where: str
    """``chain``, ``seal``, ``log``, ``snapshot``, ``read-model``, ``settings`` or ``grants``."""
    chat_id: str | None
    tenant: str | None
    what: str
    """What differs, in words."""
    kind: str | None = None
    """For ``chain`` and ``seal``: the kind of damage (``changed``, ``missing``,
    ``reordered``, ``truncated``, ``unchained``, ``deleted``, ``rewritten``, ``forged``)."""
    version: int | None = None
    """For ``chain`` and ``seal``: the conversation's first bad event."""

    def __str__(self) -> str:
        chat = f"chat {self.chat_id!r} (tenant {self.tenant!r})" if self.chat_id else "the store"
        if self.kind is not None:
            at = f" at version {self.version}" if self.version is not None else ""
            return f"{self.where}: {chat}: {self.kind}{at}: {self.what}"
        return f"{self.where}: {chat}: {self.what}"


@dataclass
class VerifyReport:
    """What ``verify`` checked and what it found."""

    events: int = 0
    """Events read."""
    conversations: int = 0
    """Conversations checked."""
    problems: list[Problem] = field(default_factory=list)
    coverage: Coverage | None = None
    """Which part of the log the hash chain and the seals cover (None: a memory:// store)."""
    erased: int = 0
    """Erased conversations among those checked: their chains verify; they hold nothing else."""

    @property
    def ok(self) -> bool:
        """Whether nothing disagrees."""
        return not self.problems

    @property
    def advice(self) -> str:
        """How to repair what was found (empty when all is well)."""
        advice = []
        places = {problem.where for problem in self.problems}
        if places & {"chain", "seal"}:
            advice.append(
                "the event log itself was altered: restore the database from a backup taken "
                "before the damage ('chatledger rebuild' refuses to build from it)"
            )
        if "read-model" in places:
            advice.append("the read models are derived: 'chatledger rebuild' makes them again")
        if places & {"log", "snapshot"}:
            advice.append(
                "the log or a snapshot disagrees with the events: restore the database from a "
                "backup or report it (the events are the truth; nothing was changed)"
            )
        if "settings" in places:
            advice.append(
                "a setting of the store was changed by hand: restore the settings table from a "
                "backup (the key check value recognises the cipher key; the pseudonym secret "
                "names erased subjects)"
            )
        return "; ".join(advice)


class Verifier:
    """Re-derives conversations, snapshots and read models from the log and compares."""

    def __init__(self, log: ConversationLog, view: ReadModelView, projector: Projector) -> None:
        self._log = log
        self._view = view
        self._projector = projector
        self._orphans: set[UUID] = set()
        """Conversations whose events lack their first one (named by the log scan)."""
        self.also: list[Callable[[], Iterable[tuple[str, str | None, str | None, str]]]] = []
        """More checks of the whole store, each giving findings (the grant ledgers')."""

    def verify(
        self,
        tenant: str,
        chat_id: str | None,
        progress: Progress | None = None,
        seal_key: SealKey | None = None,
        witnessed: Sequence[Witnessed] = (),
        signed_writes: bool = False,
    ) -> VerifyReport:
        """Check the whole store (or one conversation) against its event log; see the module docstring.

        Seals' signatures are checked when ``seal_key`` is given, and the
        ``witnessed`` seals (kept outside the database) must be stored. Raises
        ConversationNotFoundError for an unknown ``chat_id``.
        """
        report = VerifyReport()
        only = conversation_id(tenant, chat_id) if chat_id is not None else None
        if only is not None and not self._log.has_events_after(only, 0):
            raise ConversationNotFoundError(tenant, chat_id or "")
        self._check_integrity(report, only, seal_key, progress, witnessed, signed_writes)
        self._catch_up(report)
        erased = _erased(self._log)
        if chat_id is not None:
            found = {conversation_id(tenant, chat_id): (tenant, chat_id)}
            if not self._log.has_events_after(next(iter(found)), 0):
                raise ConversationNotFoundError(tenant, chat_id)
        else:
            try:
                found = self._scan_log(report, progress, erased)
            except StoreUnavailableError:  # the database, not the data: say so as it is
                raise
            except Exception as error:  # a log row the scan cannot read
                report.problems.append(
                    Problem("log", None, None, f"the log cannot be read through: {_said(error)}")
                )
                found = {}
        # Erased conversations: their chains were checked; nothing else of them is left to compare.
        report.erased = len(erased if chat_id is None else erased & set(found))
        found = {key: names for key, names in found.items() if key not in erased}
        self._check_conversations(report, found, progress, whole=chat_id is None)
        if chat_id is None:
            head = int(self._log.recorder.max_notification_id() or 0)
            findings = bookkeeping_findings(self._view, self._log.name, head)
            report.problems.extend(Problem(*finding) for finding in findings)
            for check in self.also:
                report.problems.extend(Problem(*finding) for finding in check())
        return report

    def _check_integrity(
        self,
        report: VerifyReport,
        only: UUID | None,
        seal_key: SealKey | None,
        progress: Progress | None,
        witnessed: Sequence[Witnessed],
        signed_writes: bool,
    ) -> None:
        try:
            integrity = check_integrity(
                self._log,
                self._log.config.backend,
                key=seal_key,
                only=only,
                progress=progress,
                witnessed=witnessed,
                signed_writes=signed_writes,
            )
        except StoreUnavailableError:  # the database, not the data: say so as it is
            raise
        except Exception as error:  # a row the check cannot even read: that is the damage
            report.problems.append(
                Problem("chain", None, None, f"the chains and seals cannot be read: {_said(error)}")
            )
            return
        if integrity is None:
            return
        report.coverage = integrity.coverage
        for tamper in integrity.tampered:
            report.problems.append(
                Problem(
                    "seal" if tamper.conversation is None else "chain",
                    tamper.chat_id,
                    tenant=tamper.tenant,
                    what=tamper.what
                    if tamper.chat_id or tamper.conversation is None
                    else f"conversation {tamper.conversation}: {tamper.what}",
                    kind=tamper.kind,
                    version=tamper.version,
                )
            )

    def _scan_log(
        self, report: VerifyReport, progress: Progress | None, erased: set[UUID]
    ) -> dict[UUID, tuple[str, str]]:
        """Every conversation in the log, by id: its (tenant, chat id), from its first event."""
        recorder: Any = self._log.recorder
        mapper: Any = self._log.mapper
        head = int(recorder.max_notification_id() or 0)
        found: dict[UUID, tuple[str, str]] = {}
        seen: set[UUID] = set()
        position = 0
        while page := recorder.select_notifications(
            start=position, limit=1000, inclusive_of_start=False
        ):
            for notification in page:
                seen.add(notification.originator_id)
                if notification.originator_id in erased:
                    continue
                if notification.originator_version == 1:
                    try:
                        started = mapper.to_domain_event(notification)
                    except StoredDataError as error:
                        report.problems.append(Problem("log", None, None, str(error)))
                        continue
                    if isinstance(started, ConversationStarted):
                        found[notification.originator_id] = (started.tenant, started.chat_id)
            position = page[-1].id
            if progress is not None:
                progress("log", position, max(head, position))
        self._orphans = seen - set(found) - erased
        for orphan in sorted(self._orphans, key=str):
            report.problems.append(
                Problem(
                    "log",
                    None,
                    None,
                    f"events of conversation {orphan} without its first event "
                    "(ConversationStarted): the start of its log is missing",
                )
            )
        return found

    def _catch_up(self, report: VerifyReport) -> None:
        """Bring the read models up to date first, reporting what stops or repairs them."""
        repairs = self._projector.repairs
        try:
            self._projector.catch_up()
        except Exception as error:  # an event the projection cannot apply: report, go on
            report.problems.append(
                Problem(
                    "read-model",
                    None,
                    None,
                    f"the read models cannot catch up with the log: {type(error).__name__}: {error}",
                )
            )
        report.problems.extend(_quarantine_problems(self._projector))
        if self._projector.repairs > repairs:
            report.problems.append(
                Problem(
                    "read-model",
                    None,
                    None,
                    "the read models held rows after their tracking position (a partial "
                    "restore?); catching up re-applied the log over them",
                )
            )

    def _check_conversations(
        self,
        report: VerifyReport,
        found: dict[UUID, tuple[str, str]],
        progress: Progress | None,
        *,
        whole: bool,
    ) -> None:
        """Re-derive each conversation found and compare (each tenant's inbox and list read once)."""
        inboxes: dict[str, Inbox] = {}
        summaries: dict[UUID, ConversationSummary] = {}
        for done, (key, (owner, chat)) in enumerate(found.items(), start=1):
            if owner not in inboxes:
                inboxes[owner] = self._inbox(report, owner)
            check = ConversationCheck(self._log, self._view, key, owner, chat)
            report.conversations += 1
            try:
                check.run(inboxes[owner])
            except StoreUnavailableError:  # the database, not the data: say so as it is
                raise
            except Exception as error:  # a derived row that cannot be read back
                check.findings.append(("read-model", f"cannot be read: {_said(error)}"))
            report.events += check.events
            if check.summary is not None:
                summaries[key] = check.summary
            report.problems.extend(
                Problem(where, chat, owner, what) for where, what in check.findings
            )
            if progress is not None:
                progress("conversations", done, len(found))
        tenants = {owner for owner, _ in found.values()}
        known = set(found) | self._orphans  # an orphan's log problem is named already
        findings = list_findings(self._view, summaries, known, tenants, whole=whole)
        report.problems.extend(Problem(*finding) for finding in findings)

    def _inbox(self, report: VerifyReport, tenant: str) -> Inbox:
        """The tenant's inbox as the read models list it (None for a list that cannot be read)."""
        lists: list[Any] = []
        for what, read in (
            ("approvals inbox", self._view.pending_approvals),
            ("continuation queue", self._view.pending_continuations),
        ):
            try:
                lists.append(read(tenant))
            except StoreUnavailableError:  # the database, not the data: say so as it is
                raise
            except Exception as error:  # an undecodable row
                lists.append(None)
                report.problems.append(
                    Problem(
                        "read-model", None, tenant, f"the {what} cannot be read: {_said(error)}"
                    )
                )
        return lists[0], lists[1]


def _said(error: Exception) -> str:
    """An exception in a report line: its type and (shortened) message."""
    return f"{type(error).__name__}: {str(error)[:300]}"


def _erased(log: ConversationLog) -> set[UUID]:
    """The erased conversations of the store (none for memory://)."""
    data_keys = getattr(log.mapper, "data_keys", None)
    return data_keys.erased() if data_keys is not None else set()


def _quarantine_problems(projector: Projector) -> list[Problem]:
    """One problem per event the projector skipped because it could not be applied."""
    quarantined = projector.quarantined()
    problems = [
        Problem(
            "read-model",
            None,
            None,
            f"event {event.notification_id} (conversation {event.conversation_id}, version "
            f"{event.version}) is quarantined: it cannot be projected ({event.error})",
        )
        for event in quarantined[:_QUARANTINE_SHOWN]
    ]
    if len(quarantined) > _QUARANTINE_SHOWN:
        more = len(quarantined) - _QUARANTINE_SHOWN
        problems.append(Problem("read-model", None, None, f"{more} more events are quarantined"))
    return problems
