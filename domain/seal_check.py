"""Checking seals against each other and against the chains as they stand now (pure).

- every seal's signature (when the key is given), its number, and its link to
  the seal before it (``previous``): a failure is a ``forged`` seal;
- the newest seal's recorded heads against its signed Merkle root;
- every head the newest seal covers against the chain now: a conversation
  gone is ``deleted``, one that ends before its sealed version is
  ``truncated``, one whose link at the sealed version has another hash was
  ``rewritten`` (at or before that version).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from uuid import UUID

from chatledger.domain.seal import Head, Seal, SealKey, merkle_root

__all__ = ["Finding", "check_seals", "trusted"]


@dataclass(frozen=True)
class Finding:
    """One thing wrong with the seals, or with a conversation measured against them."""

    kind: str
    """``forged``, ``deleted``, ``truncated`` or ``rewritten``."""
    conversation: UUID | None
    version: int | None
    what: str


def trusted(seals: Sequence[Seal], key: SealKey | None) -> Seal | None:
    """The newest seal that checks out (the one the heads are measured against)."""
    bad = {finding.seq for finding in _check_signatures(seals, key)}
    return next((seal for seal in reversed(seals) if seal.seq not in bad), None)


def check_seals(
    seals: Sequence[Seal],
    latest: Seal | None,
    latest_heads: Sequence[Head],
    key: SealKey | None,
    current: Callable[[UUID, int], tuple[int, bytes | None]],
) -> list[Finding]:
    """Findings about ``seals`` (oldest first) and the heads of ``latest`` (see ``trusted``).

    ``current(id, v)`` gives (head version now, hash of link ``v``).
    """
    findings: list[Finding] = [
        Finding("forged", None, None, f"seal {bad.seq} {bad.what}")
        for bad in _check_signatures(seals, key)
    ]
    if latest is None:
        return findings
    if merkle_root(latest_heads).hex() != latest.root or len(latest_heads) != latest.conversations:
        findings.append(
            Finding(
                "forged",
                None,
                None,
                f"seal {latest.seq}: the heads stored with it do not match its signed root "
                f"({len(latest_heads)} heads stored, {latest.conversations} sealed)",
            )
        )
        return findings
    for head in sorted(latest_heads, key=lambda h: str(h.conversation)):
        now, hashed = current(head.conversation, head.version)
        if now == 0:
            findings.append(
                Finding(
                    "deleted",
                    head.conversation,
                    1,
                    f"seal {latest.seq} covers it at version {head.version}; "
                    "the log has no event of it",
                )
            )
        elif now < head.version:
            findings.append(
                Finding(
                    "truncated",
                    head.conversation,
                    now + 1,
                    f"seal {latest.seq} covers it up to version {head.version}; "
                    f"the log ends at version {now}",
                )
            )
        elif hashed != head.hash:
            findings.append(
                Finding(
                    "rewritten",
                    head.conversation,
                    head.version,
                    f"its chain at version {head.version} differs from seal {latest.seq}: "
                    "events at or before it were rewritten",
                )
            )
    return findings


@dataclass(frozen=True)
class _Bad:
    seq: int
    what: str


def _check_signatures(seals: Sequence[Seal], key: SealKey | None) -> list[_Bad]:
    findings = []
    previous: Seal | None = None
    for seal in seals:
        problem = None
        if previous is not None and seal.seq != previous.seq + 1:
            problem = (
                f"follows seal {previous.seq} (seals {previous.seq + 1}-{seal.seq - 1} are gone)"
            )
        elif previous is not None and seal.previous != previous.digest:
            problem = f"does not follow seal {previous.seq} (its 'previous' digest differs)"
        elif previous is None and seal.seq != 1:
            problem = f"is the oldest seal stored (seals 1-{seal.seq - 1} are gone)"
        elif key is not None and seal.key_id != key.key_id:
            problem = f"was made with key {seal.key_id}, not with the given key {key.key_id}"
        elif key is not None and not key.verifies(seal.body_bytes(), seal.signature):
            problem = "its signature does not verify: the seal was edited or made without the key"
        if problem is not None:
            findings.append(_Bad(seal.seq, problem))
        previous = seal
    return findings
