"""``chatledger serve`` runs on uvloop and httptools (dependencies): its startup line says so, and it loads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.http_support import server_process


@pytest.mark.timeout(60)
def test_serve_runs_on_uvloop_and_httptools(tmp_path: Path) -> None:
    with server_process(f"sqlite:///{tmp_path / 'loop.db'}", "--no-auth", tokens=None) as (
        process,
        _,
    ):
        assert process.stdout is not None
        startup = next(line for line in process.stdout if "chatledger serving" in line)
        maps = Path(f"/proc/{process.pid}/maps").read_text()
    assert "event loop uvloop, HTTP parser httptools" in startup
    # What the process runs on, not only what it printed: their compiled modules are loaded.
    assert "/uvloop/loop." in maps
    assert "/httptools/parser/parser." in maps
