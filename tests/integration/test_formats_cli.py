"""``chatledger import`` and ``chatledger export --format``, as a user runs them, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chatledger import ConversationStore
from chatledger.adapters.responders.demo import record_demo
from tests.integration.conftest import Backend

ROOT = Path(__file__).resolve().parents[2]
CHATGPT = ROOT / "tests" / "support" / "chatgpt_conversations.json"


def cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("CHATLEDGER_")}
    return subprocess.run(
        [sys.executable, "-m", "chatledger", *args],
        capture_output=True, text=True, cwd=cwd, env={**environ, **(env or {})}, timeout=90,
    )  # fmt: skip


@pytest.mark.timeout(240)
def test_every_format_goes_out_and_back_in_through_the_cli(
    durable_backend: Backend, tmp_path: Path
) -> None:
    with durable_backend.open() as store:
        record_demo(store, "demo")
        messages = store.messages("demo")
    url = ["--url", durable_backend.url]
    for name in ("ai-sdk-7", "openai-agents", "pydantic-ai", "langchain", "chatgpt"):
        out = tmp_path / f"{name}.json"
        exported = cli("export", "demo", "--format", name, "-o", str(out), *url, cwd=tmp_path)
        assert exported.returncode == 0, exported.stderr
        assert f"exported {len(messages)} message(s) as {name}" in exported.stderr
        imported = cli(
            "import", str(out), "--format", name, "--chat", f"from-{name}", *url, cwd=tmp_path
        )
        assert imported.returncode == 0, imported.stderr
        assert f"created 'from-{name}'" in imported.stdout
    with durable_backend.open() as store:
        assert store.messages("from-ai-sdk-7") == messages  # the lossless one, exactly
        for name in ("openai-agents", "pydantic-ai", "langchain", "chatgpt"):
            texts = [p.get("text") for m in store.messages(f"from-{name}") for p in m["parts"]]
            assert messages[-1]["parts"][-1]["text"] in texts, name


def test_the_loss_report_is_printed_and_strict_fails_on_it(
    durable_backend: Backend, tmp_path: Path
) -> None:
    with durable_backend.open() as store:
        record_demo(store, "demo")
    url = ["--url", durable_backend.url]
    result = cli("export", "demo", "--format", "langchain", *url, cwd=tmp_path)
    assert result.returncode == 0
    assert json.loads(result.stdout)[0]["type"] == "human"  # stdout is the JSON alone
    assert "tool state dropped" in result.stderr
    strict = cli(
        "export", "demo", "--format", "langchain", "--strict", "--json", *url, cwd=tmp_path
    )
    assert strict.returncode == 1
    report = json.loads(strict.stderr.splitlines()[0])
    assert report["lossless"] is False and report["losses"][0]["what"] == "tool state"


def test_a_chatgpt_export_is_imported_by_conversation(
    durable_backend: Backend, tmp_path: Path
) -> None:
    url = ["--url", durable_backend.url]
    many = cli("import", str(CHATGPT), "--format", "chatgpt", *url, cwd=tmp_path)
    assert many.returncode == 1 and "--conversation" in many.stderr
    one = cli("import", str(CHATGPT), "-f", "chatgpt", "--conversation", "Disk full", "--chat", "g",
              *url, cwd=tmp_path)  # fmt: skip
    assert one.returncode == 0, one.stderr
    assert "created 'g': 5 message(s)" in one.stdout
    assert "image_asset_pointer dropped" in one.stderr and "branches dropped" in one.stderr
    strict = cli("import", str(CHATGPT), "-f", "chatgpt", "--conversation", "Disk full",
                 "--chat", "g2", "--strict", *url, cwd=tmp_path)  # fmt: skip
    assert strict.returncode == 1
    with durable_backend.open() as store:
        assert len(store.messages("g")) == 5
        assert "g2" not in {c.chat_id for c in store.list_conversations().conversations}


def test_a_big_import_shows_progress_and_is_one_commit(
    durable_backend: Backend, tmp_path: Path
) -> None:
    turns: list[dict[str, Any]] = []
    for n in range(600):
        turns.append({"role": "user", "content": f"question {n}"})
        turns.append({"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": f"answer {n}", "annotations": []}]})  # fmt: skip
    big = tmp_path / "items.json"
    big.write_text(json.dumps(turns))
    url = ["--url", durable_backend.url]
    result = cli("import", str(big), "-f", "openai-agents", "--chat", "big", "--progress", *url,
                 cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (
        "importing" in result.stderr and "1200/1200" in result.stderr
    )  # the bar, past 1,000 steps
    with durable_backend.open() as store:
        assert len(store.messages("big")) == 1200
        assert store.version("big") == 1201  # started, then every message in one commit's events
    again = cli(
        "import", str(big), "-f", "openai-agents", "--chat", "big", "--progress", *url, cwd=tmp_path
    )
    assert again.returncode == 0  # new ids: appended again
    small = tmp_path / "small.json"
    small.write_text(json.dumps(turns[:2]))
    quiet = cli("import", str(small), "-f", "openai-agents", "--chat", "big", *url, cwd=tmp_path)
    assert quiet.returncode == 0 and "appended to 'big'" in quiet.stdout  # new ids: appended
    assert "importing" not in quiet.stderr  # stderr is no terminal, and no --progress


def test_bad_input_is_a_one_line_error(durable_backend: Backend, tmp_path: Path) -> None:
    url = ["--url", durable_backend.url]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = cli("import", str(bad), "-f", "ai-sdk-7", *url, cwd=tmp_path)
    assert result.returncode == 1 and "bad.json is not JSON" in result.stderr
    assert "Traceback" not in result.stderr
    bad.write_text(json.dumps([{"id": "m", "role": "user", "parts": [{"type": "text"}]}]))
    result = cli("import", str(bad), "-f", "ai-sdk-7", *url, cwd=tmp_path)
    assert result.returncode == 1 and "ai-sdk-7 message 0" in result.stderr
    unknown = cli("import", str(bad), "-f", "yaml", *url, cwd=tmp_path)
    assert unknown.returncode == 2 and "invalid choice" in unknown.stderr
    missing = cli("export", "nobody", "-f", "ai-sdk-7", *url, cwd=tmp_path)
    assert missing.returncode == 1 and "nobody" in missing.stderr


def test_the_bundle_goes_through_import_with_its_seal_key(
    durable_backend: Backend, tmp_path: Path
) -> None:
    key = tmp_path / "seal.key"
    key.write_text("22" * 32)
    with durable_backend.open() as store:
        record_demo(store, "demo")
        messages = store.messages("demo")
    url = ["--url", durable_backend.url]
    assert cli("seal", "--seal-key-file", str(key), *url, cwd=tmp_path).returncode == 0
    bundle = tmp_path / "demo.jsonl"
    assert cli("export", "demo", "-o", str(bundle), *url, cwd=tmp_path).returncode == 0
    result = cli("import", str(bundle), "-f", "chatledger", "--chat", "moved",
                 "--seal-key-file", str(key), *url, cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr and "history dropped" in result.stderr
    with ConversationStore.open(durable_backend.url) as store:
        assert store.messages("moved") == messages


@pytest.mark.parametrize(("missing", "name", "extra"), [("langchain_core", "langchain", "langchain"),
                                                       ("pydantic_ai", "pydantic-ai", "pydantic-ai")])  # fmt: skip
def test_a_missing_framework_names_its_extra(missing: str, name: str, extra: str) -> None:
    code = (
        f"import sys\nsys.modules[{missing!r}] = None\n"
        "from chatledger.adapters.formats import format_named\n"
        f"format_named({name!r})\n"
    )
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert f"pip install 'chatledger[{extra}]'" in child.stderr.strip().splitlines()[-1]
