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
        "starlette",
        "argparse",
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
    "adapters/mcp": (
        *DRIVERS,
        *(f"{_A}.{p}" for p in ("persistence", "frameworks", "cli", "bootstrap")),
    ),
}
ALLOWED = {
    # ConversationStore is the library's entry point: it wraps what the composition root
    # builds, so store.py (and it alone in the store) sits above bootstrap. The root builds
    # the services and never imports the façade: no cycle (test_no_import_cycle_in_adapters).
    "adapters/store/store.py imports chatledger.adapters.bootstrap",
    "adapters/store/store.py imports chatledger.adapters.bootstrap.StoreOptions",
    "adapters/store/store.py imports chatledger.adapters.bootstrap.build_services",
    "adapters/store/store.py imports chatledger.adapters.bootstrap.compose",
    "adapters/store/store.py imports chatledger.adapters.bootstrap.open_services",
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


def test_the_worker_runs_turns_without_the_http_package() -> None:
    """``chatledger worker`` takes turns through the store's turn service, never ``adapters/http``."""
    found = [module for _, module in imports(ROOT / "adapters/cli/worker.py", "adapters")]
    assert [m for m in found if m.startswith(f"{_A}.http")] == []


def _module_of(path: Path) -> str:
    layer = path.relative_to(ROOT).parts[0]
    parts = _package_of(path, layer)
    return ".".join(parts if path.name == "__init__.py" else [*parts, path.stem])


def _runtime_imports(path: Path) -> set[str]:
    """Every module the file imports at run time: at the top, in functions (lazy), anywhere but
    under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    checking = {
        id(node)
        for test in ast.walk(tree)
        if isinstance(test, ast.If) and "TYPE_CHECKING" in ast.unparse(test.test)
        for stmt in test.body
        for node in ast.walk(stmt)
    }
    layer = path.relative_to(ROOT).parts[0]
    return {
        module
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in checking
        for line, module in imports_of(node, path, layer)
    }


def imports_of(
    node: ast.Import | ast.ImportFrom, path: Path, layer: str
) -> Iterator[tuple[int, str]]:
    """The modules one import statement names (``from x import y``: ``x`` and ``x.y``)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield node.lineno, alias.name
        return
    base = node.module or ""
    if node.level:
        package = _package_of(path, layer)
        base = ".".join([*package[: len(package) - node.level + 1], *([base] if base else [])])
    yield node.lineno, base
    for alias in node.names:
        yield node.lineno, f"{base}.{alias.name}"


def import_graph(folder: str) -> dict[str, set[str]]:
    """Module -> the modules of the same folder it imports at run time (lazy imports included).

    ``from package import module`` is an edge to the module, not to the package; and a
    module's own packages are not edges (Python runs them first whatever imports what).
    """
    files = {_module_of(path): path for path in (ROOT / folder).rglob("*.py")}
    graph = {}
    for module, path in files.items():
        found = {target for target in _runtime_imports(path) if target in files}
        parents = {target for target in found if any(t.startswith(f"{target}.") for t in found)}
        graph[module] = {
            target
            for target in found - parents
            if target != module and not module.startswith(f"{target}.")
        }
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of a graph, each as the path that closes it."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                found.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return found


def test_no_import_cycle_in_adapters() -> None:
    """No module of ``adapters/`` imports, even lazily, one that imports it back (``TYPE_CHECKING`` aside)."""
    assert cycles(import_graph("adapters")) == []


def test_the_cycle_scan_sees_a_lazy_cycle() -> None:
    """The guard itself: a function-level import that closes a loop is a cycle."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


PORTS_OVER_400 = {
    # Ports kept line for line with the AI SDK's own code, so a change upstream maps 1:1.
    "domain/partial_json.py",  # parsePartialJson
    "domain/convert/ai_sdk.py",  # convertToModelMessages
    "domain/convert/turns.py",  # the providers' message pairing rules
}


def test_no_product_module_is_over_400_lines_but_the_sdk_ports() -> None:
    """A module past 400 lines holds more than one concept; only the listed ports may."""
    big = {
        str(path.relative_to(ROOT))
        for layer in ("domain", "projections", "adapters", "chatledger")
        for path in (ROOT / layer).rglob("*.py")
        if len(path.read_text(encoding="utf-8").splitlines()) > 400
    }
    assert big <= PORTS_OVER_400, (
        f"split these along their concepts: {sorted(big - PORTS_OVER_400)}"
    )
