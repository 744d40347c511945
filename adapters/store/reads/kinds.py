"""The timeline kinds a read asks for, checked: one kind or a list of them, each a known kind."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from chatledger.domain.errors import InvalidInputError
from chatledger.domain.timeline import KINDS

__all__ = ["wanted_kinds"]


def wanted_kinds(kinds: object) -> list[str] | None:
    """The timeline kinds asked for (None: all); InvalidInputError naming the bad ones otherwise."""
    if kinds is None:
        return None
    items = [kinds] if isinstance(kinds, str) else kinds
    if isinstance(items, Mapping | bytes) or not isinstance(items, Iterable):
        raise InvalidInputError("kinds must be a kind (a string) or a list of kinds")
    wanted = list(items)
    if not all(isinstance(kind, str) for kind in wanted):
        raise InvalidInputError("kinds must be a kind (a string) or a list of kinds")
    unknown = sorted(set(wanted) - set(KINDS))
    if unknown:
        raise InvalidInputError(
            f"unknown timeline kind(s) {[kind[:40] for kind in unknown]}; the kinds are "
            f"{', '.join(KINDS)}"
        )
    return wanted
