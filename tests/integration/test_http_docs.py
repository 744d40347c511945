"""``GET /docs``: the API reference page, rendered on the server from the app's own OpenAPI document."""

from __future__ import annotations

import re

import pytest

from chatledger import ConversationStore
from chatledger.adapters.http.app import create_app
from chatledger.adapters.responders.scripted import demo_responder
from tests.integration.http_support import client_of

pytestmark = pytest.mark.anyio


def _access(html: str, anchor: str) -> str:
    found = re.search(rf'id="{anchor}".*?Who may call it: ([^<]+)</p>', html, re.S)
    assert found is not None, anchor
    return found.group(1)


async def test_the_reference_lists_every_route_and_who_may_call_it(
    sqlite_store: ConversationStore,
) -> None:
    """No token needed to read it; each route says whether it needs a token, an operator's, or none."""
    app = create_app(sqlite_store, responder=demo_responder(), tokens={"t": "acme"})
    async with client_of(app) as anonymous:
        page = await anonymous.get("/docs")
        document = (await anonymous.get("/openapi.json")).json()

    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    html = page.text
    for path, item in document["paths"].items():
        for method in item:
            assert f"<code>{path}</code>" in html, (method, path)
    assert _access(html, "get-api-stats").startswith("a bearer token")
    assert _access(html, "post-api-chat-id-erase").startswith("an operator token")
    assert _access(html, "get-openapi-json") == "anyone (no token)"
    assert "http://" not in html.replace("http://www.w3.org", "")  # nothing from elsewhere
    assert "<script" not in html.split("</head>", 1)[1]  # no script of its own
