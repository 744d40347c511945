"""The project stands on its own: its text cites nothing outside the repository.

README, docs and docstrings say the rules in the project's words (or point to
``docs/behaviour.md``); the licence file matches the declared licence; the
changelog and package metadata are there.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ["README.md", "CHANGELOG.md", "docs", "domain", "projections", "adapters", "chatledger"]
OUTSIDE = re.compile(r"SPEC §|\.\./shared|/work/shared|ai-sdk-v6\.md|reference/[a-z-]+\.md")


def _texts() -> list[Path]:
    found: list[Path] = []
    for name in SOURCES:
        path = ROOT / name
        found += (
            [path] if path.is_file() else sorted(path.rglob("*.py")) + sorted(path.rglob("*.md"))
        )
    return found


def test_no_text_cites_a_file_outside_the_repository() -> None:
    cited = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in _texts()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert cited == []


def test_docs_the_readme_links_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#:]+)\)", readme):
        assert (ROOT / target).exists(), target


def test_licence_changelog_and_metadata() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == {"text": "MIT"}
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "License :: OSI Approved :: MIT License" in project["classifiers"]
    assert (ROOT / "CHANGELOG.md").read_text().startswith("# Changelog")
    assert (ROOT / "docs" / "behaviour.md").is_file()
