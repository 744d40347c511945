"""Files kept once, and a message dropped mid-answer, on the pages in headless Chromium (SQLite and PostgreSQL).

A user sends a real PNG and a PDF as data URLs; the store lifts both into
``chatledger_blobs``. The conversation page and the chat page (the real
``useChat``) show them exactly as sent: the image renders from the data URL it
was sent as, the PDF is a download link to its own data URL. A conversation
whose policy is ``drop`` refuses a message sent while an answer streams (409
from the served app); the audit on the conversation page shows the refusal.
Screenshots go to ``tests/artifacts/screenshots/``.
"""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from chatledger import ConversationStore
from tests.browser.conftest import Served, browsing, serving, signed_in
from tests.integration.http_support import error_of, send_body, text_turn
from tests.integration.tamper import Tamperer

pytestmark = [pytest.mark.browser, pytest.mark.timeout(90)]


def png(width: int = 40, height: int = 30) -> bytes:
    """A real RGB PNG (a colour gradient with noise: over 1 KiB, so it is lifted)."""
    rows = b"".join(
        b"\x00"
        + b"".join(
            bytes(((x * 6) % 256, (y * 8) % 256, (x * y * 37 + y * 11) % 256)) for x in range(width)
        )
        for y in range(height)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 0))
        + chunk(b"IEND", b"")
    )


def pdf() -> bytes:
    """A one-page PDF (its content stream padded past 1 KiB)."""
    text = b"BT /F1 12 Tf 72 720 Td (chatledger keeps this once) Tj ET\n" + b"% pad\n" * 200
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(text) + text + b"endstream",
    ]
    out, offsets = b"%PDF-1.4\n", []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%EOF\n" % (len(objects) + 1, xref)
    return out


def data_url(data: bytes, media: str) -> str:
    return f"data:{media};base64,{base64.b64encode(data).decode()}"


IMAGE, DOCUMENT = data_url(png(), "image/png"), data_url(pdf(), "application/pdf")
SENT = {
    "id": "u1",
    "role": "user",
    "parts": [
        {"type": "text", "text": "What is in this chart, and the contract?"},
        {"type": "file", "mediaType": "image/png", "url": IMAGE, "filename": "chart.png"},
        {"type": "file", "mediaType": "application/pdf", "url": DOCUMENT, "filename": "contract.pdf"},
    ],
}  # fmt: skip
ANSWER = "The chart rises; the contract is one page."


def _seed(url: str) -> None:
    with ConversationStore.open(url, tenant="acme") as store:
        store.start_conversation("files", actor="user:alice", ai_sdk=7)
        store.append_message("files", SENT, actor="user:alice")
        answer = text_turn("a1", ANSWER)  # with the same image, as an answer's file chunk
        answer.insert(-2, {"type": "file", "mediaType": "image/png", "url": IMAGE})
        store.ingest("files", answer, actor="agent:bot")
        store.start_conversation("dropping", actor="user:alice", ai_sdk=7)
        store.set_metadata("dropping", {"messageConcurrency": "drop"}, actor="user:alice")
        store.append_message(
            "dropping", {"id": "q1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
        )


@pytest.fixture(scope="module")
def served(
    backend_url: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    name, url = backend_url
    _seed(url)
    with serving(name, url, tmp_path_factory.mktemp(f"serve-files-{name}")) as server:
        yield server


def _files_shown(tab: Any) -> dict[str, Any]:
    """The file parts of the messages as the page shows them (each image once it has loaded)."""
    tab.wait_for_function(
        "() => [...document.querySelectorAll('.part.file img')].every(i => i.complete)"
    )
    return tab.evaluate(
        """() => {
          const images = [...document.querySelectorAll('.part.file img')];
          const links = [...document.querySelectorAll('.part.file a')];
          return {
            images: images.map(i => [i.getAttribute('src'), i.naturalWidth, i.naturalHeight]),
            links: links.map(a => [a.textContent, a.getAttribute('href'), a.getAttribute('download')]),
            types: [...document.querySelectorAll('.part.file')].map(f => f.dataset.mediaType),
          };
        }"""
    )


def _assert_as_sent(shown: dict[str, Any]) -> None:
    # The data URL each was sent as, not a blob reference; decoded: the image renders.
    assert shown["images"] == [[IMAGE, 40, 30], [IMAGE, 40, 30]]  # the user's, the answer's
    assert shown["types"] == ["image/png", "application/pdf", "image/png"]
    assert shown["links"] == [
        ["chart.png", IMAGE, "chart.png"],
        ["contract.pdf", DOCUMENT, "contract.pdf"],
        ["image/png", IMAGE, "image/png"],
    ]


def test_the_files_are_lifted_and_the_conversation_page_shows_them_as_sent(
    chromium: Any, served: Served
) -> None:
    rows = Tamperer(served.url).run("SELECT size FROM chatledger_blobs")
    # The image (sent by the user, then in the answer) and the PDF: each kept once.
    assert sorted(size for (size,) in rows) == sorted([len(png()), len(pdf())])
    with ConversationStore.open(served.url, tenant="acme") as store:
        assert store.messages("files")[0] == SENT
    address = served.base + "/conversation?id=files"
    with signed_in(chromium, address, "#conversation-view .part.file") as tab:
        _assert_as_sent(_files_shown(tab))
        assert ANSWER in tab.inner_text("#conversation-view")
        served.screenshot(tab, "attachments-conversation")


def test_the_chat_page_shows_them_as_sent(chromium: Any, served: Served) -> None:
    with browsing(chromium, width=1100) as tab:
        tab.goto(f"{served.base}/chat?id=files")
        tab.fill("#token", "acme-token")
        tab.keyboard.press("Enter")
        tab.wait_for_selector("#messages .part.file")
        _assert_as_sent(_files_shown(tab))
        assert ANSWER in tab.inner_text("#messages")
        served.screenshot(tab, "attachments-chat")


def test_a_dropped_message_is_refused_and_marked_in_the_audit(
    chromium: Any, served: Served
) -> None:
    with ConversationStore.open(served.url, tenant="acme") as writer:
        stream = writer.open_stream("dropping", actor="agent:elsewhere")
        for chunk in text_turn("a1", "Hello there")[:-2]:  # answering, not finished
            stream.append(chunk)
        stream.flush()
        seen = [{"id": "q1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]
        late = {"id": "q2", "role": "user", "parts": [{"type": "text", "text": "also this"}]}
        body = send_body("dropping", [*seen, {"id": "a1", "role": "assistant", "parts": []}, late])
        sent = httpx.post(
            served.base + "/api/chat",
            json=body,
            headers={"Authorization": "Bearer acme-token"},
            timeout=30,
        )
        assert "'drop'" in error_of(sent, 409, "MessageDroppedError")
        stream.close()
        assert [m["id"] for m in writer.messages("dropping")] == ["q1", "a1"]
    address = served.base + "/conversation?id=dropping"
    with signed_in(chromium, address, "#conversation-view") as tab:
        entry = tab.locator(".timeline > .entry.kind-mid-answer-message")
        entry.wait_for()
        assert entry.locator(".mark-refused").inner_text() == "refused"
        assert "policy drop: dropped" in entry.inner_text()
        served.screenshot(tab, "mid-answer-dropped")
