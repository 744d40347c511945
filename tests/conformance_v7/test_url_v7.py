"""v7 file data carries ``new URL(url).href``: chatledger's port agrees with Node's URL parser."""

from __future__ import annotations

import pytest

from chatledger.domain.convert._url import href
from tests.support.oracle import Oracle

pytestmark = pytest.mark.oracle

URLS = [
    "https://x.y/Ü b.png", "HTTPS://Example.COM/a/../b", "data:image/png;base64,AA==",
    "https://a.com", "http://a.com:80/x", "https://a.com:8443/x?q=1 2'#f g`",
    "https://user:pa ss@a.com/", "https://a.com/./b/%2e%2E/c", "https://a.com/a b/{x}^|",
    "http://127.1/", "http://0x7f.0.0.1/", "https://bücher.de/x", "file:///tmp/a b.txt",
    "file://localhost/etc", "mailto:a@b.c", "foo:bar baz", "data:text/plain,hello world#x",
    "https://a.com/?", "https://a.com/#", "not a url", "https://", "http://a b.com/",
    "https://a.com\\\\b\\\\c", "HTTP://A.COM:0080/", "https://[::1]:443/", "custom://host/p?x=1",
    "blob:https://a.com/uuid", "https://a.com/%zz", "https://a.com/ü?ü#ü", "  https://a.com/  ",
    "https://a.com/a\\tb", "https://a.com:99999/", "ws://a.com:80/x", "wss://A.com/.",
]  # fmt: skip


def test_file_urls_serialise_as_node_does(oracle_v7: Oracle) -> None:
    """Each URL, as a user file part, converts to the href Node gives (or fails where it throws)."""
    cases = [
        {
            "op": "convert",
            "messages": [
                {
                    "id": "u",
                    "role": "user",
                    "parts": [{"type": "file", "mediaType": "x/y", "url": u}],
                }
            ],
        }
        for u in URLS
    ]
    wrong = []
    for url, answer in zip(URLS, oracle_v7.run_many(cases), strict=True):
        expected = answer["modelMessages"][0]["content"][0]["data"]["url"] if answer["ok"] else None
        try:
            got: str | None = href(url)
        except ValueError:
            got = None
        if got != expected:
            wrong.append((url, got, expected))
    assert not wrong, wrong
