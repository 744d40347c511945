"""Asking before a command destroys something: on a terminal, a question; elsewhere, ``--yes``.

``erase`` and ``retain`` cannot be undone. On a terminal they show what would
go and ask; without one (a script, a cron job, CI) nobody can answer, so they
erase nothing unless ``--yes`` says the question was answered beforehand.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from chatledger.adapters.cli.common import CommandError
from chatledger.adapters.cli.options import flag

__all__ = ["YES", "confirmed"]

YES = flag("--yes", "do not ask for confirmation (needed when stdin is not a terminal)")


def confirmed(command: str, what: Iterable[str], question: str, *, yes: bool) -> bool:
    """Whether to go on: ``yes``, or the person at the terminal typed ``yes`` after ``what``.

    ``what`` (lines naming what would go) and ``question`` are written to
    stderr, so they reach the person even when stdout is redirected. Without
    a terminal on stdin and without ``yes``, raises ``CommandError`` naming
    ``--yes``.
    """
    if yes:
        return True
    if not sys.stdin.isatty():
        raise CommandError(
            f"{command} erases for good and asks first, but stdin is not a terminal: nothing "
            "was erased (run it on a terminal to answer, or pass --yes)"
        )
    for line in what:
        print(line, file=sys.stderr)
    print(f"{question} This cannot be undone. Type 'yes' to go on: ", end="", file=sys.stderr)
    sys.stderr.flush()
    answer = sys.stdin.readline()
    if answer.strip().lower() in ("yes", "y"):
        return True
    print("" if answer else "\n", "nothing was erased", sep="", file=sys.stderr)
    return False
