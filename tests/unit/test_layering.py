"""Imports go one way: domain <- projections <- adapters; the domain does no I/O.

Inside ``adapters/`` the sub-packages have rules of their own (see
``adapters/__init__.py``): only ``persistence`` touches database drivers, and
it imports nothing else from adapters; ``store`` (the use cases) reaches
storage through ``persistence`` only; the entry points (``http``, ``cli``,
``frameworks``) and ``responders`` never import ``persistence``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

DOMAIN_FORBIDDEN = (
    "chatledger.projections",
    "chatledger.adapters",
    "projections",
    "adapters",
    "psycopg",
    "psycopg2",
    "psycopg_pool",
    "sqlite3",
    "http",
    "httpx",
    "requests",
    "aiohttp",
    "urllib.request",
    "socket",
    "eventsourcing.postgres",
    "eventsourcing.sqlite",
)
PROJECTIONS_FORBIDDEN = ("chatledger.adapters", "adapters")


def _package_of(path: Path, layer: str) -> list[str]:
    """The dotted package a module lives in, as installed (``chatledger.<layer>...``)."""
    top = layer.split("/")[0]
    return ["chatledger", top, *path.parent.relative_to(ROOT / top).parts]


def imports(path: Path, layer: str) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in the module, nested and relative ones too."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = _package_of(path, layer)
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            yield node.lineno, module
            for alias in node.names:  # `from chatledger import adapters`
                yield node.lineno, f"{module}.{alias.name}"


def violations(layer: str, forbidden: tuple[str, ...]) -> list[str]:
    """``file:line imports module`` for each import of a forbidden module or its submodules."""
    found = []
    for path in sorted((ROOT / layer).rglob("*.py")):
        for line, module in imports(path, layer):
            if any(module == bad or module.startswith(f"{bad}.") for bad in forbidden):
                found.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    return sorted(set(found))


DRIVERS = ("psycopg", "psycopg_pool", "sqlite3", "eventsourcing.postgres", "eventsourcing.sqlite")
_A = "chatledger.adapters"
ADAPTER_RULES = {
    "adapters/persistence": tuple(
        f"{_A}.{p}" for p in ("store", "http", "responders", "frameworks", "cli", "bootstrap")
    ),
    "adapters/store": (
        *DRIVERS,
        *(f"{_A}.{p}" for p in ("http", "responders", "frameworks", "cli", "bootstrap")),
    ),
    "adapters/responders": (
        *DRIVERS,
        *(f"{_A}.{p}" for p in ("persistence", "http", "frameworks", "cli", "bootstrap")),
    ),
    "adapters/http": (*DRIVERS, *(f"{_A}.{p}" for p in ("persistence", "frameworks", "cli"))),
    "adapters/frameworks": (
        *DRIVERS,
        *(f"{_A}.{p}" for p in ("persistence", "http", "cli", "bootstrap")),
    ),
    "adapters/cli": (*DRIVERS, f"{_A}.persistence"),
}
ALLOWED = {
    # ConversationStore.open is the public way in; it calls the composition root
    # lazily (inside the method), so the import graph has no cycle at load time.
    "adapters/store/store.py imports chatledger.adapters.bootstrap",
    "adapters/store/store.py imports chatledger.adapters.bootstrap.open_store",
}


@pytest.mark.parametrize("package", sorted(ADAPTER_RULES))
def test_adapter_packages_import_only_what_their_role_allows(package: str) -> None:
    """Each sub-package of ``adapters/`` keeps to its role's imports (see the module docstring)."""
    found = [
        v
        for v in violations(package, ADAPTER_RULES[package])
        if v.split(":", 1)[0] + " imports " + v.split(" imports ", 1)[1] not in ALLOWED
    ]
    assert found == []


def test_the_domain_imports_no_outer_layer_and_no_io() -> None:
    """Modules in ``domain/`` never import projections, adapters, database drivers or HTTP."""
    assert violations("domain", DOMAIN_FORBIDDEN) == []


def test_projections_never_import_adapters() -> None:
    """Modules in ``projections/`` never import ``adapters``."""
    assert violations("projections", PROJECTIONS_FORBIDDEN) == []


@pytest.mark.parametrize(
    ("source", "module"),
    [
        ("import psycopg\n", "psycopg"),
        ("from chatledger.adapters.store import ConversationStore\n", "chatledger.adapters.store"),
        ("from chatledger import adapters\n", "chatledger.adapters"),
        ("from ..adapters import store\n", "chatledger.adapters"),
        ("def f():\n    import sqlite3\n", "sqlite3"),
        ("from http import client\n", "http"),
    ],
)
def test_the_import_scan_sees_every_form_of_import(
    tmp_path: Path, source: str, module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guard itself catches plain, from, relative and nested imports."""
    layer = tmp_path / "domain"
    layer.mkdir()
    (layer / "bad.py").write_text(source)
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert any(module in v for v in violations("domain", DOMAIN_FORBIDDEN)), violations(
        "domain", DOMAIN_FORBIDDEN
    )
