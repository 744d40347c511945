"""Witnesses: seals kept outside the database, and checking the store's seals against them (pure).

A seal stored in the database proves nothing against someone who can write
that database: they can delete every seal, or put back an older copy of the
whole store, and what is left still checks out. A *witness* is a record of
seals kept somewhere that database access does not reach (a file on another
machine, an append-only bucket, a log collector): one JSON line per seal,
``{"seq": N, "sealed_at": "...", "digest": "<hex>"}``. ``verify`` then
requires that the store still holds each witnessed seal with the same
digest. A store rolled back to before a witnessed seal, or stripped of its
seals, lacks that seal (``rolled-back``); a seal replaced by another one of
the same number has another digest (``forged``).

An operator can also pin one seal by hand (``N:DIGEST``, as ``chatledger
seal`` prints it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from chatledger.domain.errors import InvalidInputError
from chatledger.domain.seal import Seal

__all__ = ["Witnessed", "check_witnessed", "parse_expected", "parse_witness", "witness_line"]


@dataclass(frozen=True)
class Witnessed:
    """A seal as a witness recorded it: its number and digest (and time, when known)."""

    seq: int
    digest: str
    sealed_at: str = ""
    where: str = "the witness"
    """Where it was read from (named in findings)."""


def witness_line(seal: Seal) -> str:
    """The JSON line a witness keeps for ``seal`` (no newline)."""
    return json.dumps(
        {"seq": seal.seq, "sealed_at": seal.sealed_at, "digest": seal.digest},
        sort_keys=True,
        separators=(",", ":"),
    )


def parse_witness(text: str, where: str) -> list[Witnessed]:
    """The seals in a witness's text (JSON lines; blank lines skipped); InvalidInputError names a bad line."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            found.append(
                Witnessed(
                    int(data["seq"]), _digest(data["digest"]), str(data.get("sealed_at", "")), where
                )
            )
        except (ValueError, KeyError, TypeError) as error:
            raise InvalidInputError(
                f"{where} line {number} is not a witnessed seal "
                f'(want {{"seq": N, "sealed_at": "...", "digest": "<64 hex>"}}): {error}'
            ) from None
    return found


def parse_expected(text: str, where: str = "--expect-seal") -> Witnessed:
    """``N:DIGEST`` (as ``chatledger seal`` prints them) as a witnessed seal."""
    seq, _, digest = text.partition(":")
    try:
        return Witnessed(int(seq), _digest(digest), "", where)
    except ValueError as error:
        raise InvalidInputError(
            f"{where} {text!r} is not N:DIGEST (a seal's number and its 64-hex digest, "
            f"as 'chatledger seal' prints them): {error}"
        ) from None


def _digest(value: object) -> str:
    text = str(value).strip().lower()
    if len(text) != 64 or any(c not in "0123456789abcdef" for c in text):
        raise ValueError(f"digest {value!r} is not 64 hex digits")
    return text


@dataclass(frozen=True)
class WitnessFinding:
    """A witnessed seal the store does not hold as witnessed."""

    kind: str
    """``rolled-back`` (the store lacks the seal) or ``forged`` (another digest)."""
    what: str


def check_witnessed(seals: Sequence[Seal], witnessed: Sequence[Witnessed]) -> list[WitnessFinding]:
    """Each witnessed seal must be in ``seals`` with the same digest; one finding per one that is not."""
    stored = {seal.seq: seal for seal in seals}
    newest = max(stored, default=0)
    findings = []
    for seen in sorted(witnessed, key=lambda w: w.seq):
        seal = stored.get(seen.seq)
        if seal is None:
            has = f"its newest seal is {newest}" if newest else "it holds no seal"
            findings.append(
                WitnessFinding(
                    "rolled-back",
                    f"{seen.where} records seal {seen.seq}"
                    f"{f' of {seen.sealed_at}' if seen.sealed_at else ''}; the store lacks it "
                    f"({has}): its seals were deleted or the store was put back to an older copy",
                )
            )
        elif seal.digest != seen.digest:
            findings.append(
                WitnessFinding(
                    "forged",
                    f"seal {seen.seq} has digest {seal.digest}; {seen.where} records "
                    f"{seen.digest}: the seal was replaced",
                )
            )
    return findings
