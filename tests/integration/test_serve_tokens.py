"""``chatledger serve``'s tokens: the first one names a user, the file is read again when it changes,
and a caller without a token is told where the tokens are (``cli/tokens.py``, ``http/token_file.py``)."""

from __future__ import annotations

import io
from pathlib import Path

import httpx
import pytest

from chatledger import ConversationStore
from chatledger.adapters.cli.tokens import TokenError, serve_tokens
from chatledger.adapters.http.app import create_app
from chatledger.adapters.http.token_file import TokenFile
from chatledger.adapters.responders import demo
from chatledger.adapters.responders.scripted import demo_responder
from tests.integration.http_support import error_of, send_body, server_process, sse_events


def test_the_first_token_names_a_user_and_new_lines_work_without_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real server's first start: its token's decisions are recorded as $CHATLEDGER_USER;
    a line added to the file works at once; a 401 names the file."""
    monkeypatch.setenv("CHATLEDGER_USER", "user:alice")
    path = tmp_path / "ops.tokens"
    url = f"sqlite:///{tmp_path / 'tokens.db'}"
    with server_process(url, "--token-file", str(path), "--delay", "0.02", tokens=None) as (
        _,
        base,
    ):
        (line,) = [x for x in path.read_text().splitlines() if not x.startswith("#")]
        token, _, who = line.partition("=")
        assert who == "default:user:alice"
        alice = {"authorization": f"Bearer {token}"}
        body = send_body("c", [demo.USER_MESSAGE])
        sse_events(httpx.post(f"{base}/api/chat", json=body, headers=alice, timeout=30))
        denial = {"approvalId": demo.APPROVAL_ID, "approved": False, "autoContinue": False}
        answered = httpx.post(f"{base}/api/chats/c/approvals", json=denial, headers=alice)
        assert answered.status_code == 200, answered.text

        bob = {"authorization": "Bearer tok-bob"}
        refused = httpx.get(f"{base}/api/approvals", headers=bob)
        assert str(path) in error_of(refused, 401, "UnauthorizedError")
        with path.open("a", encoding="utf-8") as file:
            file.write("tok-bob=default:user:bob\n")
        assert httpx.get(f"{base}/api/approvals", headers=bob).status_code == 200
    with ConversationStore.open(url) as store:
        (decision,) = store.history("c", kinds=["approval-responded"])
    assert decision.actor == "user:alice"


def test_the_first_user_is_asked_on_a_terminal_else_the_login(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No $CHATLEDGER_USER: a terminal is asked (a bare name becomes user:NAME); else user:<login>."""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("CHATLEDGER_USER", raising=False)
    monkeypatch.delenv("CHATLEDGER_TOKENS", raising=False)
    err = io.StringIO()
    monkeypatch.setattr("sys.stdin", Terminal("carol\n"))
    asked = serve_tokens(
        str(tmp_path / "a"), no_auth=False, tenant="acme", out=io.StringIO(), err=err
    )
    assert asked is not None and "who are you?" in err.getvalue()
    assert [who.user for who in asked.tokens.values()] == ["user:carol"]
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    quiet = serve_tokens(
        str(tmp_path / "b"), no_auth=False, tenant="acme", out=io.StringIO(), err=err
    )
    assert quiet is not None
    ((who),) = quiet.tokens.values()
    assert who.user is not None and who.user.startswith("user:")


def test_no_auth_is_not_refused_because_a_token_was_once_generated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """./chatledger.tokens left by a first start does not block --no-auth; an explicit file does."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CHATLEDGER_TOKEN_FILE", raising=False)
    monkeypatch.delenv("CHATLEDGER_TOKENS", raising=False)
    monkeypatch.setenv("CHATLEDGER_USER", "user:dave")
    out, err = io.StringIO(), io.StringIO()
    assert serve_tokens(None, no_auth=False, tenant="acme", out=out, err=err) is not None
    assert (tmp_path / "chatledger.tokens").is_file()
    assert serve_tokens(None, no_auth=True, tenant="acme", out=out, err=err) is None
    assert "are not used" in err.getvalue()
    with pytest.raises(TokenError, match="--no-auth, but tokens are configured"):
        serve_tokens("chatledger.tokens", no_auth=True, tenant="acme", out=out, err=err)


@pytest.mark.anyio
async def test_the_pages_token_prompt_says_where_the_tokens_are(
    sqlite_store: ConversationStore, tmp_path: Path
) -> None:
    """The page shell's token form names the token file."""
    path = tmp_path / "pages.tokens"
    path.write_text("tok=default:user:erin\n", encoding="utf-8")
    app = create_app(sqlite_store, responder=demo_responder(), authenticate=TokenFile(path))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        page = await client.get("/")
    assert page.status_code == 200
    assert 'id="token-where"' in page.text and str(path) in page.text
