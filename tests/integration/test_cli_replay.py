"""``chatledger replay`` on a stored conversation: the report, its JSON, the exit status for CI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chatledger.adapters.cli import main
from tests.integration.replay_support import record

SUPPORT = "tests.integration.replay_support"


def test_replay_exits_0_when_the_new_responder_does_what_was_recorded(
    durable_backend: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    store = durable_backend.open()
    record(store, "rec")
    code = main(["replay", "rec", "--url", durable_backend.url, "--responder", f"{SUPPORT}:same_responder",
                 "--into", "rec-same"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "no divergence" in out
    assert store.status("rec-same").status == "idle"


def test_replay_exits_3_with_a_json_report_naming_each_divergence(
    durable_backend: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = durable_backend.open()
    record(store, "rec")
    report_file = tmp_path / "replay.json"
    code = main(["replay", "rec", "--url", durable_backend.url, "--json",
                 "--responder", f"{SUPPORT}:new_prompt_responder", "--report", str(report_file)])  # fmt: skip
    printed = json.loads(capsys.readouterr().out)
    assert code == 3
    assert json.loads(report_file.read_text()) == printed
    assert [(d["turn"], d["kind"]) for d in printed["divergences"]] == [(3, "text")]
    assert printed["divergences"][0]["replayed"] == "Glad to help!"
    assert store.messages(printed["replayChatId"])[-1]["parts"][-1]["text"] == "Glad to help!"


def test_replay_of_an_unknown_chat_or_a_bad_responder_is_an_error(
    durable_backend: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    store = durable_backend.open()
    record(store, "rec")
    assert (
        main(
            [
                "replay",
                "nope",
                "--url",
                durable_backend.url,
                "--responder",
                f"{SUPPORT}:same_responder",
            ]
        )
        == 1
    )
    assert "nope" in capsys.readouterr().err
    assert (
        main(["replay", "rec", "--url", durable_backend.url, "--responder", "no_such_module:x"])
        == 1
    )
    assert "--responder" in capsys.readouterr().err
