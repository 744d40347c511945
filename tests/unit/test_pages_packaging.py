"""The pages' templates and static files ship in the wheel (users need no Node, no build)."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_template_and_static_file_is_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["chatledger.adapters.http"]
    http = ROOT / "adapters" / "http"
    files = [
        path.relative_to(http).as_posix()
        for folder in ("templates", "static")
        for path in (http / folder).rglob("*")
        if path.is_file()
    ]
    assert files
    missing = [f for f in files if not any(fnmatch.fnmatch(f, p) for p in patterns)]
    assert missing == []
