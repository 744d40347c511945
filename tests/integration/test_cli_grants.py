"""``chatledger grant``, ``grants`` and ``revoke-grant`` on a stored conversation, per durable backend."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatledger.adapters.cli import main
from chatledger.domain.grants import input_digest
from tests.integration.test_grants import approved_by_grant, ask


def test_grant_from_the_shell_approves_later_calls_until_revoked(
    durable_backend: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    store = durable_backend.open()
    url = durable_backend.url
    first = ask(store, "a", "search", {"q": "x"})
    assert main(["grant", "a", first, "--url", url, "--actor", "user:ops", "--reason", "read-only",
                 "--for", "600", "--json"]) == 0  # fmt: skip
    given = json.loads(capsys.readouterr().out)
    assert (given["scope"], given["toolName"], given["input"]) == ("input", "search", None)
    assert given["inputDigest"] == input_digest({"q": "x"})
    assert given["actor"] == "user:ops" and given["expiresAt"] is not None

    assert approved_by_grant(store, "b", ask(store, "b", "search", {"q": "x"}))
    assert not approved_by_grant(store, "b", ask(store, "b", "search", {"q": "y"}))

    assert main(["grants", "--url", url]) == 0
    listed = capsys.readouterr().out
    assert given["grantId"] in listed and "used 1x" in listed and "[live]" in listed
    assert " in b at " in listed  # the call it approved, and where

    assert main(["revoke-grant", given["grantId"], "--url", url, "--reason", "audit"]) == 0
    assert "[revoked]" in capsys.readouterr().out
    assert main(["grants", "--url", url]) == 0
    assert capsys.readouterr().out.strip() == "no grants"
    assert not approved_by_grant(store, "c", ask(store, "c", "search", {"q": "x"}))


def test_grant_errors_name_what_to_fix(
    durable_backend: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    store = durable_backend.open()
    url = durable_backend.url
    first = ask(store, "a", "search", {"q": "x"})
    assert main(["grant", "a", "call_nope", "--url", url]) == 1
    assert "not awaiting approval" in capsys.readouterr().err
    assert main(["grant", "a", first, "--url", url, "--for", "-5"]) == 1
    assert "positive number of seconds" in capsys.readouterr().err
    assert store.status("a").status == "awaiting-approval"
    assert main(["revoke-grant", "grant_nope", "--url", url]) == 1
    assert "no grant" in capsys.readouterr().err
