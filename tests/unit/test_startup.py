"""``import chatledger`` and ``chatledger --help`` load no store and no models (they start fast).

The pydantic models behind the store take about a second to build; they are
loaded when a command or a name that needs them is used. Timings are in
``bench/startup.py``; this checks what is imported, which a slow start shows.
"""

from __future__ import annotations

import json
import subprocess
import sys

import chatledger
from chatledger.adapters.cli import conversation
from chatledger.adapters.store import DEFAULT_TENANT
from chatledger.domain.convert import FORMATS

HEAVY = ("chatledger.adapters.store.store", "chatledger.domain.events", "pydantic", "psycopg")


def _loaded_after(code: str) -> list[str]:
    child = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(child.stdout.strip().splitlines()[-1])


def test_import_chatledger_loads_no_store() -> None:
    loaded = _loaded_after("import chatledger")
    assert [name for name in HEAVY if name in loaded] == []


def test_the_cli_help_loads_no_store() -> None:
    code = (
        "import contextlib, io\n"
        "from chatledger.adapters.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['--help']) == 0\n"
        "    assert main(['show', '--help']) == 0"
    )
    loaded = _loaded_after(code)
    assert [name for name in HEAVY if name in loaded] == []


def test_every_public_name_is_there_on_first_use() -> None:
    for name in chatledger.__all__:
        assert getattr(chatledger, name) is not None, name
    assert set(chatledger.__all__) <= set(dir(chatledger))


def test_the_cli_constants_match_the_library() -> None:
    from chatledger.adapters.cli import common, worker
    from chatledger.adapters.store.turns.continuations import LEASE_SECONDS

    assert common.DEFAULT_TENANT == DEFAULT_TENANT
    assert tuple(conversation.FORMATS) == tuple(FORMATS)
    assert worker.LEASE_SECONDS == LEASE_SECONDS
