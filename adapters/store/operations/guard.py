"""Guarding what depends on an intact log: refuse it on a failing chain, or note that it was done anyway.

``guard`` runs the integrity check (``integrity.check_integrity``) before an
action such as a rebuild of the read models; ``record_note`` keeps, beside the
chain, a note that ``verify`` shows from then on.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from chatledger.adapters.persistence.chain import chain_tables
from chatledger.adapters.store.operations.integrity import IntegrityReport, check_integrity
from chatledger.domain.errors import LogTamperedError

__all__ = ["guard", "record_note"]


def guard(log: Any, action: str, *, accept: bool) -> None:
    """Refuse ``action`` on a log whose chain fails (LogTamperedError), or note that it was accepted."""
    report = check_integrity(log, log.config.backend)
    if report is None or report.ok:
        return
    _raise_if_unreadable(log, report)
    problems = [str(tamper) for tamper in report.tampered]
    if not accept:
        raise LogTamperedError(action, problems)
    record_note(
        log,
        log.config.backend,
        action,
        f"done although the chain failed ({len(problems)} problem(s)): " + "; ".join(problems),
    )


def _raise_if_unreadable(log: Any, report: IntegrityReport) -> None:
    """A first bad event that does not even decode is a reading problem (StoredDataError) first.

    E.g. a store opened with settings that do not fit its log (compression,
    key): every event then looks changed, but the cause is the settings.
    """
    for tamper in report.tampered:
        if tamper.conversation is None or tamper.version is None or tamper.kind != "changed":
            continue
        stored = log.recorder.select_events(
            tamper.conversation, gt=tamper.version - 1, lte=tamper.version
        )
        for event in stored:
            log.mapper.to_domain_event(event)  # raises StoredDataError when unreadable


def record_note(log: Any, backend: str, action: str, detail: str) -> None:
    """Keep, beside the chain, a note of something done despite a failing check."""
    tables = chain_tables(log.recorder, backend)
    if tables is not None:
        tables.add_note(datetime.now(UTC).isoformat(timespec="seconds"), action, detail)
