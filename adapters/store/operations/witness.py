"""Witness files: each seal's number, time and digest appended outside the database (see ``chatledger.domain.witness``).

The file is opened for appending before the seal is stored, so a witness
that cannot be written stops the seal instead of leaving the store ahead of
its witness unnoticed; the line is written (and flushed to disk) once the seal
is committed, so a failed seal never leaves the witness ahead of the store
(which ``verify`` would name as a rollback).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from chatledger.domain.errors import InvalidInputError
from chatledger.domain.seal import Seal
from chatledger.domain.witness import Witnessed, parse_witness, witness_line

__all__ = ["read_witness", "witnessing"]


@contextmanager
def witnessing(path: str | os.PathLike[str] | None) -> Iterator[Callable[[Seal], None]]:
    """Yield ``record(seal)``, which appends the seal's witness line to ``path`` (nothing when None)."""
    if path is None:
        yield lambda seal: None
        return
    try:
        file = open(path, "a", encoding="ascii", newline="\n")  # noqa: SIM115 (closed below)
    except OSError as error:
        raise InvalidInputError(
            f"cannot open the witness file {str(path)!r} for appending (--witness): "
            f"{error.strerror or error}; nothing was sealed"
        ) from None

    def record(seal: Seal) -> None:
        file.write(witness_line(seal) + "\n")
        file.flush()
        os.fsync(file.fileno())

    with file:
        yield record


def read_witness(path: str | os.PathLike[str]) -> list[Witnessed]:
    """The seals a witness file records (InvalidInputError when it cannot be read or a line is bad)."""
    try:
        text = Path(path).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidInputError(
            f"cannot read the witness file {str(path)!r} (--witness): "
            f"{getattr(error, 'strerror', None) or error}"
        ) from None
    return parse_witness(text, f"the witness file {str(path)!r}")
