"""The committed chat bundle is exactly what the lock file builds (so it can be trusted and rebuilt).

Rebuild it after changing ``frontend/chat``: ``cd frontend/chat && npm ci && npm run build``.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = ROOT / "frontend" / "chat"
BUNDLE = Path("adapters") / "http" / "static" / "chat" / "chat.js"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.timeout(300)
def test_the_bundle_is_rebuilt_identically_from_the_lock_file(tmp_path: Path) -> None:
    if shutil.which("npm") is None:
        pytest.fail("npm is needed to rebuild the chat bundle (Node.js 18+)", pytrace=False)
    work = tmp_path / "frontend" / "chat"
    work.mkdir(parents=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(FRONTEND / name, work / name)
    shutil.copytree(FRONTEND / "src", work / "src")
    (tmp_path / BUNDLE).parent.mkdir(parents=True)
    for command in (["npm", "ci", "--no-audit", "--no-fund"], ["npm", "run", "build"]):
        done = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=240)
        assert done.returncode == 0, done.stderr[-2000:]
    for built in (BUNDLE, BUNDLE.with_name("chat.js.LEGAL.txt")):
        assert _digest(tmp_path / built) == _digest(ROOT / built), (
            f"{built} is stale: cd frontend/chat && npm ci && npm run build"
        )
