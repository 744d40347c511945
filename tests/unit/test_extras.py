"""Each plug-in says which extra to install when its framework is missing.

A child Python marks the framework unimportable (``sys.modules[name] = None``,
which makes ``import name`` raise ImportError as if it were not installed)
and then uses the plug-in as a user would.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _child(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


@pytest.mark.parametrize(
    ("missing", "use", "extra"),
    [
        ("pydantic_ai", "import chatledger.adapters.frameworks.pydantic_ai", "pydantic-ai"),
        ("pydantic_ai", "import chatledger.adapters.responders.pydantic_ai", "pydantic-ai"),
        (
            "agents",
            "from chatledger import ConversationStore\n"
            "from chatledger.adapters.frameworks.openai_agents import ChatLedgerSession\n"
            "ChatLedgerSession(ConversationStore.open('memory://'), 's', "
            "session_settings={'limit': 2})",
            "agents",
        ),
        (
            "cryptography",
            "from chatledger import ConversationStore\n"
            "ConversationStore.open('memory://', cipher_key='k')",
            "crypto",
        ),
    ],
)
def test_a_missing_framework_names_the_extra_to_install(missing: str, use: str, extra: str) -> None:
    child = _child(f"import sys\nsys.modules[{missing!r}] = None\n{use}\n")
    assert child.returncode != 0
    assert f"pip install 'chatledger[{extra}]'" in child.stderr.strip().splitlines()[-1]


def test_the_extras_are_declared() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert any(dep.startswith("openai-agents") for dep in extras["agents"])
    assert any(dep.startswith("pydantic-ai-slim") for dep in extras["pydantic-ai"])
    assert any(dep.startswith("cryptography") for dep in extras["crypto"])
