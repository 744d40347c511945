"""Tamper evidence of the log: checking every conversation's hash chain, the seals, witnesses and signed heads.

``check_integrity`` reads each conversation's events (with their links), recomputes
every digest and link (``chatledger.domain.chain``), checks the seals
(``chatledger.domain.seal_check``) and names, per conversation, the first bad
event and the kind of damage (``sealing.make_seal`` signs a checkpoint over
every conversation's head). Both work on the tables of
``chatledger.adapters.persistence.chain``; a ``memory://`` store keeps no
chain and gets None.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from eventsourcing.persistence import StoredEvent

from chatledger.adapters.persistence.chain import ChainTables, chain_tables, split_link
from chatledger.domain.chain import ChainReport, EventRow, check_chain
from chatledger.domain.errors import InvalidInputError
from chatledger.domain.seal import Seal, SealKey
from chatledger.domain.seal_check import check_seals, trusted
from chatledger.domain.signed_writes import unsigned_heads
from chatledger.domain.witness import Witnessed, check_witnessed

__all__ = [
    "Coverage",
    "IntegrityReport",
    "Tamper",
    "check_integrity",
]

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Tamper:
    """The first bad event of one conversation (or a bad seal), and the kind of damage."""

    kind: str
    """``changed``, ``missing``, ``reordered``, ``truncated``, ``unchained``, ``deleted``,
    ``rewritten`` or ``forged``."""
    conversation: UUID | None
    chat_id: str | None
    tenant: str | None
    version: int | None
    """The first bad version (None for a seal)."""
    what: str

    def __str__(self) -> str:
        if self.conversation is None:
            where = "the seals"
        elif self.chat_id is not None:
            where = f"chat {self.chat_id!r} (tenant {self.tenant!r})"
        else:
            where = f"conversation {self.conversation}"
        at = f" at version {self.version}" if self.version is not None else ""
        return f"{self.kind}: {where}{at}: {self.what}"


@dataclass
class Coverage:
    """Which part of the log the chain and the seals cover."""

    chain_start: int = 0
    """Log position after which every event is chained (0: all of them)."""
    started_at: str = ""
    conversations: int = 0
    chained_from: dict[str, int] = field(default_factory=dict)
    """Conversations chained from a version after 1 (older events predate chains): label -> version."""
    unchained: int = 0
    """Conversations with no chained event at all."""
    seal: Seal | None = None
    """The newest seal."""
    unsealed: int = 0
    """Conversations with events after the newest seal (or not in it)."""
    signatures_checked: bool = False
    seals: int = 0
    """Seals stored (the newest that checks out is ``seal``)."""
    witnessed: int = 0
    """Seals recorded outside the database that the store was checked against."""
    notes: list[tuple[str, str, str]] = field(default_factory=list)
    """What was done despite a failing check: (time, action, detail)."""

    def lines(self) -> list[str]:
        """Coverage in words, for the CLI."""
        lines = []
        if self.chain_start:
            lines.append(
                f"chain: events after log position {self.chain_start} (chains started "
                f"{self.started_at}); {len(self.chained_from)} conversation(s) partly and "
                f"{self.unchained} not chained (their older events predate chains)"
            )
        else:
            lines.append(f"chain: every event of {self.conversations} conversation(s)")
        if self.seal is None:
            some = "none that checks out" if self.seals else "none yet"
            lines.append(f"seals: {some} ('chatledger seal' makes one)")
        else:
            signed = (
                "signature checked" if self.signatures_checked else "signature NOT checked (no key)"
            )
            lines.append(
                f"seal {self.seal.seq} of {self.seal.sealed_at} ({signed}, digest "
                f"{self.seal.digest}); {self.unsealed} conversation(s) changed since"
            )
        if self.witnessed:
            lines.append(f"witness: {self.witnessed} seal(s) recorded outside the store checked")
        lines.extend(f"note: {at}: {action}: {detail}" for at, action, detail in self.notes)
        return lines


@dataclass
class IntegrityReport:
    """What ``check_integrity`` found."""

    tampered: list[Tamper] = field(default_factory=list)
    coverage: Coverage = field(default_factory=Coverage)

    @property
    def ok(self) -> bool:
        """Whether every chain and seal checks out."""
        return not self.tampered


def check_integrity(
    log: Any,
    backend: str,
    *,
    key: SealKey | None = None,
    only: UUID | None = None,
    progress: Progress | None = None,
    witnessed: Sequence[Witnessed] = (),
    signed_writes: bool = False,
) -> IntegrityReport | None:
    """Check the chains (of one conversation with ``only``) and the seals; None for ``memory://``.

    ``witnessed``: seals recorded outside the database (``chatledger.domain.witness``);
    each must still be in the store with the same digest. ``signed_writes``: the
    writers sign heads (``chatledger.domain.signed_writes``), so every head after
    the newest seal must carry a signature under ``key``.
    """
    if signed_writes and key is None:
        raise InvalidInputError(
            "checking signed writes needs the seal key (--seal-key-file or $CHATLEDGER_SEAL_KEY)"
        )
    tables = chain_tables(log.recorder, backend)
    if tables is None:
        return None
    report = IntegrityReport()
    coverage = report.coverage
    coverage.chain_start, coverage.started_at = tables.chain_start()
    coverage.notes = tables.notes()
    conversations = sorted([only] if only else tables.conversations(), key=str)
    checked: dict[UUID, ChainReport] = {}
    hashes: dict[UUID, dict[int, bytes]] = {}
    names: dict[UUID, tuple[str, str]] = {}
    for done, conversation in enumerate(conversations, start=1):
        rows, name = _event_rows(log.mapper, tables, conversation)
        if name is not None:
            names[conversation] = name
        result = check_chain(conversation, rows, coverage.chain_start)
        checked[conversation] = result
        hashes[conversation] = {row.version: row.link for row in rows if row.link is not None}
        _count(coverage, result, _label(conversation, names))
        moved = _start_moved(rows, coverage.chain_start)
        if moved and result.broken is None:
            report.tampered.append(
                _tamper(
                    "unchained",
                    conversation,
                    names,
                    moved,
                    (
                        f"it is chained, yet lies before the store's chain start "
                        f"(position {coverage.chain_start}): the chain start was moved"
                    ),
                )
            )
        if result.broken is not None:
            report.tampered.append(
                _tamper(
                    result.broken.kind,
                    conversation,
                    names,
                    result.broken.version,
                    result.broken.what,
                )
            )
        if progress is not None:
            progress("chain", done, len(conversations))
    _check_seals(tables, key, report, checked, hashes, names, only, witnessed)
    if signed_writes and key is not None:
        _check_signed_heads(tables, key, report, checked, names)
    return report


def _check_signed_heads(
    tables: ChainTables,
    key: SealKey,
    report: IntegrityReport,
    checked: dict[UUID, ChainReport],
    names: dict[UUID, tuple[str, str]],
) -> None:
    """Name each conversation whose head is past the newest seal and not signed with ``key``."""
    seal = report.coverage.seal
    sealed = {h.conversation: h.version for h in tables.seal_heads(seal.seq)} if seal else {}
    broken = {t.conversation for t in report.tampered}
    heads = {c: (r.head, r.head_hash) for c, r in checked.items() if c not in broken}
    after = f"after seal {seal.seq}" if seal else "with no seal before them"
    for conversation, first, head, why in unsigned_heads(
        heads, sealed, tables.head_signatures(), key
    ):
        span = f"version {head}" if first == head else f"versions {first}-{head}"
        report.tampered.append(
            _tamper(
                "unsigned-tail",
                conversation,
                names,
                first,
                f"{span} come {after} and {why}: appended without the seal key "
                "(or written by a store without signed writes)",
            )
        )


def _start_moved(rows: list[EventRow], chain_start: int) -> int | None:
    """The first chained event at or before the chain start: only a moved start explains one."""
    return next(
        (row.version for row in rows if row.link is not None and row.position <= chain_start),
        None,
    )


def _count(coverage: Coverage, result: ChainReport, label: str) -> None:
    coverage.conversations += 1
    if result.chained_from is None:
        coverage.unchained += result.head > 0
    elif result.chained_from > 1:
        coverage.chained_from[label] = result.chained_from


def _check_seals(
    tables: ChainTables,
    key: SealKey | None,
    report: IntegrityReport,
    checked: dict[UUID, ChainReport],
    hashes: dict[UUID, dict[int, bytes]],
    names: dict[UUID, tuple[str, str]],
    only: UUID | None,
    witnessed: Sequence[Witnessed],
) -> None:
    seals = tables.seals()
    coverage = report.coverage
    coverage.signatures_checked = key is not None
    coverage.seals = len(seals)
    newest = max((seal.seq for seal in seals), default=0)
    # A gap between seals is named below; the newest seals (or all) deleted leave only their heads.
    gone = sorted(seq for seq in tables.sealed() if seq > newest)
    if gone:
        report.tampered.append(
            _tamper(
                "deleted",
                None,
                names,
                None,
                f"seal(s) {gone[:5]} are gone, yet the conversation heads they covered are "
                "stored: a seal was deleted or renumbered",
            )
        )
    coverage.witnessed = len(witnessed)
    for seen in check_witnessed(seals, witnessed):
        report.tampered.append(_tamper(seen.kind, None, names, None, seen.what))
    if not seals:
        return
    coverage.seal = trusted(seals, key)
    heads = tables.seal_heads(coverage.seal.seq) if coverage.seal else []
    if coverage.seal is not None and coverage.seal.chain_start != coverage.chain_start:
        report.tampered.append(
            _tamper(
                "unchained",
                None,
                names,
                None,
                (
                    f"the store's chain start is position {coverage.chain_start}, seal "
                    f"{coverage.seal.seq} says {coverage.seal.chain_start}: it was moved"
                ),
            )
        )
    sealed = {head.conversation: head.version for head in heads}

    def current(conversation: UUID, version: int) -> tuple[int, bytes | None]:
        if conversation not in checked:  # no event of it is left
            return 0, None
        return checked[conversation].head, hashes[conversation].get(version)

    broken = {t.conversation for t in report.tampered}
    for finding in check_seals(seals, coverage.seal, heads, key, current):
        if finding.conversation is None:
            report.tampered.append(_tamper("forged", None, names, None, finding.what))
        elif finding.conversation not in broken and (only is None or finding.conversation == only):
            broken.add(finding.conversation)
            report.tampered.append(
                _tamper(finding.kind, finding.conversation, names, finding.version, finding.what)
            )
    coverage.unsealed = sum(
        1
        for conversation, result in checked.items()
        if result.head and sealed.get(conversation) != result.head
    )


def _event_rows(
    mapper: Any, tables: ChainTables, conversation: UUID
) -> tuple[list[EventRow], tuple[str, str] | None]:
    rows = []
    name = None
    for version, topic, state, position in tables.events(conversation):
        try:
            link, digest_or_none = mapper.chain_digest(state, conversation)
            digest: bytes | None = digest_or_none
        except Exception:  # undecodable: named as changed content
            link, digest = split_link(state)[0], None
        if version == 1:
            name = _name(mapper, conversation, topic, state)
        rows.append(EventRow(version, topic, digest, position, link))
    return rows, name


def _name(mapper: Any, conversation: UUID, topic: str, state: bytes) -> tuple[str, str] | None:
    try:
        started = mapper.to_domain_event(StoredEvent(conversation, 1, topic, state))
        return started.tenant, started.chat_id
    except Exception:  # a damaged first event: the conversation is named by its id
        return None


def _label(conversation: UUID, names: dict[UUID, tuple[str, str]]) -> str:
    name = names.get(conversation)
    return f"{name[1]!r} (tenant {name[0]!r})" if name else str(conversation)


def _tamper(
    kind: str,
    conversation: UUID | None,
    names: dict[UUID, tuple[str, str]],
    version: int | None,
    what: str,
) -> Tamper:
    name = names.get(conversation) if conversation else None
    return Tamper(
        kind, conversation, name[1] if name else None, name[0] if name else None, version, what
    )
