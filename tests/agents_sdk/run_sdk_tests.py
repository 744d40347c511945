"""Run the OpenAI Agents SDK's own session and Runner tests against ``ChatLedgerSession``.

Usage (from the repository root, in the venv where chatledger[test] is installed)::

    python tests/agents_sdk/run_sdk_tests.py [--backend memory|sqlite|postgres] [pytest args]

It downloads the sdist of the installed ``openai-agents`` version from PyPI
(``pip download --no-deps --no-binary :all:``) into ``.sdk-tests/``, makes a
side venv there that sees this venv's packages plus the SDK's test tools
(``pytest-asyncio``, ``pytest-mock``, ``inline-snapshot``), and runs the SDK's
session tests and the Runner tests that use ``SQLiteSession`` or the test
helper sessions, with ``chatledger_sdk_plugin`` putting ``ChatLedgerSession``
in their place. The last lines count the tests that drove a
``ChatLedgerSession`` and list those that failed. Nothing here runs in the
normal test suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tarfile
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".sdk-tests"
TOOLS = ["pytest-asyncio", "pytest-mock", "inline-snapshot"]
SELECTED = [
    "tests/memory/test_session.py",
    "tests/memory/test_session_limit.py",
    "tests/memory/test_session_persistence_sanitize.py",
    "tests/deferred_session_writes",
    "tests/utils/test_simple_session.py",
    "tests/test_agent_runner.py",
    "tests/test_agent_runner_streamed.py",
    "tests/test_cancel_streaming.py",
    "tests/test_handoff_history_duplication.py",
    "tests/test_hitl_session_scenario.py",
    "tests/test_invalid_final_output_handler.py",
    "tests/test_max_turns.py",
    "tests/test_native_tool_failure_history.py",
    "tests/test_programmatic_tool_calling.py",
    "tests/test_run_impl_resume_paths.py",
    "tests/test_run_state_pending_input.py",
    "tests/test_runner_guardrail_resume.py",
    "tests/test_soft_cancel.py",
    "tests/test_tool_batch_failure_history.py",
    "tests/test_tool_failure_boundaries.py",
]


def _sdk_source(sdk_version: str) -> Path:
    source = CACHE / f"openai_agents-{sdk_version}"
    if source.is_dir():
        return source
    CACHE.mkdir(exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--no-binary",
            ":all:",
            f"openai-agents=={sdk_version}",
            "-d",
            str(CACHE),
        ],
        check=True,
    )
    with tarfile.open(CACHE / f"openai_agents-{sdk_version}.tar.gz") as archive:
        archive.extractall(CACHE, filter="data")
    return source


def _side_python() -> Path:
    """A venv that sees this one's packages (a .pth file) and adds the SDK's test tools."""
    venv = CACHE / "venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        side = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        here = sysconfig.get_paths()["purelib"]
        (Path(side) / "chatledger-parent.pth").write_text(
            f"import site; site.addsitedir({here!r})\n"
        )
        subprocess.run([str(python), "-m", "pip", "install", "-q", *TOOLS], check=True)
    return python


def main(argv: list[str]) -> int:
    backend = "memory"
    if argv[:1] == ["--backend"]:
        backend, argv = argv[1], argv[2:]
    source = _sdk_source(version("openai-agents"))
    python = _side_python()
    env = {
        **os.environ,
        "CHATLEDGER_SDK_BACKEND": backend,
        "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), str(source)]),
    }
    command = [
        str(python),
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "chatledger_sdk_plugin",
        "-o",
        "addopts=",
        *(argv or SELECTED),
    ]
    return subprocess.run(command, cwd=source, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
