"""How the conversation page draws a file part: an image inline, a link, never a script URL."""

from __future__ import annotations

from chatledger.adapters.http.conversation_page import part_view


def test_an_image_is_shown_and_linked_as_sent() -> None:
    url = "data:image/png;base64,iVBORw0KGgo="
    view = part_view({"type": "file", "mediaType": "image/png", "url": url, "filename": "a.png"})
    assert view == {
        "kind": "file",
        "url": url,
        "media_type": "image/png",
        "filename": "a.png",
        "image": True,
    }


def test_another_file_is_a_link_named_by_its_media_type_without_a_filename() -> None:
    url = "https://example.com/contract.pdf"
    view = part_view({"type": "file", "mediaType": "application/pdf", "url": url})
    assert (view["url"], view["filename"], view["image"]) == (url, "application/pdf", False)


def test_a_script_url_is_neither_linked_nor_shown() -> None:
    for url in ("javascript:alert(1)", "JAVASCRIPT:alert(1)", "vbscript:x", "file:///etc/passwd"):
        view = part_view({"type": "file", "mediaType": "image/png", "url": url})
        assert view["url"] is None and view["image"] is False, url


def test_a_file_part_without_a_url_stays_an_other_part() -> None:
    assert part_view({"type": "file", "mediaType": "image/png"})["kind"] == "other"
