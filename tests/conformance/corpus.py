"""The hand-written conformance corpus: chunk streams (plus an optional starting message).

Cases live as plain data in ``cases/*.py`` (one module per theme, each with a
``CASES`` list); this module loads them, checks their shape and can dump them
as JSON Lines for the Node oracle (``python -m tests.conformance.corpus``).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.conformance import cases as _cases_package

__all__ = ["Case", "load", "oracle_case"]

Json = Any


@dataclass(frozen=True)
class Case:
    """One named stream: ``chunks`` folded into ``message`` (``None``: a new message)."""

    name: str
    chunks: list[dict[str, Json]]
    message: dict[str, Json] | None = None
    theme: str = ""
    note: str = ""
    extra: dict[str, Json] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.theme}/{self.name}"


def _theme_modules() -> Iterator[tuple[str, Any]]:
    for info in sorted(pkgutil.iter_modules(_cases_package.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            yield info.name, importlib.import_module(f"{_cases_package.__name__}.{info.name}")


def load(list_name: str = "CASES", *, themes: tuple[str, ...] | None = None) -> list[Case]:
    """Every case of ``list_name`` in every theme module (or only ``themes``), in order."""
    found: list[Case] = []
    for theme, module in _theme_modules():
        if themes is not None and theme not in themes:
            continue
        for raw in getattr(module, list_name, []):
            known = {"name", "chunks", "message", "note"}
            found.append(
                Case(
                    name=raw["name"],
                    chunks=raw["chunks"],
                    message=raw.get("message"),
                    theme=theme,
                    note=raw.get("note", ""),
                    extra={k: v for k, v in raw.items() if k not in known},
                )
            )
    names = [str(c) for c in found]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise ValueError(f"duplicate corpus case names: {sorted(duplicates)}")
    return found


def oracle_case(chunks: list[dict[str, Json]], message: dict[str, Json] | None = None) -> dict:
    """The oracle's ``read`` case for ``chunks`` (continuing ``message`` if given)."""
    case: dict[str, Json] = {"op": "read", "chunks": chunks}
    if message is not None:
        case["message"] = message
    return case


if __name__ == "__main__":
    # Dump the corpus as oracle input: python -m tests.conformance.corpus [LIST] > cases.jsonl
    for c in load(sys.argv[1] if len(sys.argv) > 1 else "CASES"):
        print(json.dumps({"name": str(c), **oracle_case(c.chunks, c.message)}, ensure_ascii=False))
