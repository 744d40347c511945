"""The command line's modules keep one shape and one import order: helpers <- command modules <- ``commands``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from chatledger.adapters.cli import commands

CLI = Path(__file__).resolve().parents[2] / "adapters" / "cli"
PACKAGE = "chatledger.adapters.cli"
COMMAND_MODULES = sorted(module.__name__.rsplit(".", 1)[1] for module in commands.MODULES)
HELPERS = sorted(
    path.stem
    for path in CLI.glob("*.py")
    if path.stem not in {*COMMAND_MODULES, "commands", "__init__"}
)


def _cli_imports(name: str) -> set[str]:
    """The modules of ``adapters/cli`` that ``name`` imports (lazy imports too)."""
    tree = ast.parse((CLI / f"{name}.py").read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.module is None:
            continue
        if node.module == PACKAGE:  # from chatledger.adapters.cli import common
            found |= {alias.name for alias in node.names}
        elif node.module.startswith(f"{PACKAGE}."):  # from chatledger.adapters.cli.common import X
            found.add(node.module.removeprefix(f"{PACKAGE}.").split(".")[0])
    return found


@pytest.mark.parametrize("name", HELPERS)
def test_helpers_import_no_command_module(name: str) -> None:
    """``common``, ``options``, ``render`` ... never import a command module or the parser."""
    assert _cli_imports(name) & {*COMMAND_MODULES, "commands"} == set()


@pytest.mark.parametrize("name", COMMAND_MODULES)
def test_command_modules_import_only_helpers(name: str) -> None:
    """A command module takes what it shares from the helpers, never from another command module."""
    assert _cli_imports(name) - set(HELPERS) == set()


@pytest.mark.parametrize("module", commands.MODULES, ids=lambda module: module.__name__)
def test_every_command_module_declares_its_commands_with_add(module: object) -> None:
    """Each command module has the same entry point: ``add(commands)``."""
    assert callable(getattr(module, "add", None))


def test_every_command_is_listed_once_in_the_help() -> None:
    """The parser builds only when ``LISTED`` names every declared command exactly once."""
    assert len(set(commands.LISTED)) == len(commands.LISTED)
    commands.build_parser()


@pytest.mark.parametrize("path", sorted(CLI.glob("*.py")), ids=lambda path: path.name)
def test_no_module_of_the_command_line_is_over_300_lines(path: Path) -> None:
    """Small modules: a command family that outgrows 300 lines is split."""
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 300
