"""The root-level layer folders install as ``chatledger.*``, all of them, never top-level."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("chatledger", "domain", "projections", "adapters")


def _setuptools() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        table: dict[str, object] = tomllib.load(file)["tool"]["setuptools"]
    return table


def _folder_packages() -> set[str]:
    """Every folder with an ``__init__.py`` under the layers, as the dotted name it installs as."""
    package_dir: dict[str, str] = _setuptools()["package-dir"]  # type: ignore[assignment]
    folder_to_name = {folder: name for name, folder in package_dir.items()}
    found = set()
    for layer in LAYERS:
        for init in sorted((ROOT / layer).rglob("__init__.py")):
            relative = init.parent.relative_to(ROOT)
            if "__pycache__" in relative.parts:
                continue
            top = relative.parts[0]
            assert top in folder_to_name, f"{top}/ is not mapped in [tool.setuptools] package-dir"
            found.add(".".join((folder_to_name[top], *relative.parts[1:])))
    return found


def test_every_layer_folder_is_mapped_in_package_dir() -> None:
    """Each root-level layer folder installs under ``chatledger``."""
    package_dir = _setuptools()["package-dir"]
    assert package_dir == {
        "chatledger": "chatledger",
        "chatledger.domain": "domain",
        "chatledger.projections": "projections",
        "chatledger.adapters": "adapters",
    }


def test_every_subpackage_is_listed_in_pyproject_packages() -> None:
    """A package folder missing from ``packages`` would be silently left out of the wheel."""
    listed = set(_setuptools()["packages"])  # type: ignore[call-overload]
    folders = _folder_packages()
    assert not folders - listed, (
        f"missing from [tool.setuptools] packages: {sorted(folders - listed)}"
    )
    assert not listed - folders, f"listed but no such package folder: {sorted(listed - folders)}"


_PROBE = """
import importlib, json
result = {}
for layer in ("domain", "projections", "adapters"):
    for name in (layer, "chatledger." + layer):
        try:
            importlib.import_module(name)
            result[name] = "imported"
        except ImportError as error:
            result[name] = str(error)
print(json.dumps(result))
"""


def test_the_layer_folders_are_not_importable_as_top_level_modules(tmp_path: Path) -> None:
    """Outside the repository, ``import domain`` fails and ``import chatledger.domain`` works."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    probe = subprocess.run(
        [sys.executable, "-c", _PROBE],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert probe.returncode == 0, probe.stderr
    result = json.loads(probe.stdout)
    for layer in ("domain", "projections", "adapters"):
        assert result[layer] == f"No module named '{layer}'", (
            f"`import {layer}` outside the repo: {result[layer]}"
        )
        assert result[f"chatledger.{layer}"] == "imported", result[f"chatledger.{layer}"]
