"""The README's install lines work as written on a fresh machine.

chatledger is not on PyPI: every install line installs from the repository's
folder (``.``) or a built wheel, never ``chatledger`` by name; "Try it" makes
and activates a virtual environment first (Debian's system Python refuses
``pip install`` outside one), and keeps its one command that runs the server
on SQLite; "Run the tests" keeps ``bash scripts/test`` (what CI runs).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BY_NAME = re.compile(r"pip install\s+(-\S+\s+)*['\"]?chatledger(\[|['\"`\s]|$)")
"""``pip install chatledger`` or ``'chatledger[extra]'`` (a wheel's file name is fine)."""


def _section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else None]


def _shell_blocks(text: str) -> list[list[str]]:
    blocks = re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL)
    return [[line.strip() for line in block.splitlines() if line.strip()] for block in blocks]


def test_no_install_line_asks_an_index_for_chatledger_by_name() -> None:
    """``pip install 'chatledger[agents]'`` would ask PyPI for a package not published there."""
    texts = {"README.md": README} | {
        f"docs/{path.name}": path.read_text(encoding="utf-8")
        for path in sorted((ROOT / "docs").glob("*.md"))
    }
    found = [
        f"{name}:{number}: {line.strip()}"
        for name, text in texts.items()
        for number, line in enumerate(text.splitlines(), 1)
        if BY_NAME.search(line)
    ]
    assert found == []


def test_try_it_makes_a_virtual_environment_then_installs_and_serves() -> None:
    """The fresh-machine commands: a venv made and activated, then ``pip install .`` and serve."""
    section = _section("Try it")
    first = _shell_blocks(section)[0]
    assert len(first) == 2, first  # the two commands of a fresh machine
    makes, serves = first
    assert "python3 -m venv .venv" in makes and ". .venv/bin/activate" in makes
    assert serves.startswith("pip install . && chatledger serve")
    assert "clone" in section and "wheel" in section


def test_the_test_command_is_still_the_one_ci_runs() -> None:
    """``bash scripts/test`` stays the README's test command (``.ci/run`` runs it)."""
    assert ["bash scripts/test"] in _shell_blocks(_section("Run the tests"))
    assert "bash scripts/test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
