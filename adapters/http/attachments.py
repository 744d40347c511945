"""Attachments by URL: ``GET /api/chats/{id}/attachments/{sha256}`` and the messages that link to it.

A client that asks for ``GET /api/chats/{id}/messages?attachments=url`` gets
each inline file (kept once as a blob) as a link to this route instead of a
data URL: the page loads the file when it shows it, with the caller's own
credentials (the route answers the caller's tenant only, like every read).
When such a client sends its messages back (``POST /api/chat``), the links
are turned back into the data URLs they stand for before the send is
planned, so its copy and the store's agree.

The route answers the blob's bytes with the media type the link names when
it is one a browser shows safely (images, audio, video, PDF, plain text),
else ``application/octet-stream``; never sniffed, sandboxed, cacheable (the
bytes behind a digest never change).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from chatledger.adapters.http.auth import Identity
from chatledger.adapters.http.errors import invalid
from chatledger.adapters.store import ConversationStore
from chatledger.domain.aggregate import conversation_id
from chatledger.domain.attachments import DEFAULT_LIFT, linked, unlinked
from chatledger.domain.errors import StoredDataError

__all__ = ["AttachmentRoutes", "attachment_path", "has_links"]

_DIGEST = re.compile(r"[0-9a-f]{64}")
_SHOWN = re.compile(
    r"(image/(png|jpeg|gif|webp|avif)|audio/[\w.+-]+|video/[\w.+-]+|application/pdf|text/plain)"
)
_LINK = re.compile(r"/api/chats/(?P<chat>.+)/attachments/(?P<digest>[0-9a-f]{64})(\?.*)?$")


def attachment_path(chat_id: str, digest: str, media_type: str) -> str:
    """The route's path for one blob of a conversation (relative to the server)."""
    return f"/api/chats/{quote(chat_id, safe='')}/attachments/{digest}?type={quote(media_type, safe='')}"


def has_links(messages: list[Any]) -> bool:
    """Whether a client's messages hold a file part linking to an attachment route (a cheap look)."""
    return any(
        isinstance(part, dict)
        and part.get("type") == "file"
        and isinstance(part.get("url"), str)
        and not part["url"].startswith("data:")
        and "/attachments/" in part["url"]
        for message in messages
        if isinstance(message, dict) and isinstance(message.get("parts"), list)
        for part in message["parts"]
    )


class AttachmentRoutes:
    """The blob route and the link mapping, on one store, for the caller ``identify`` names."""

    def __init__(self, store: ConversationStore, identify: Callable[[Request], Identity]) -> None:
        self.store = store
        self.identify = identify

    async def get(self, request: Request) -> Response:
        """``GET /api/chats/{id}/attachments/{sha256}[?type=MEDIA]``: one attachment's bytes."""
        who = self.identify(request)
        chat_id, digest = request.path_params["chat_id"], request.path_params["sha256"]
        if not _DIGEST.fullmatch(digest):
            raise invalid("the attachment is named by the 64 lowercase hex digits of its SHA-256")
        data = await run_in_threadpool(self._read, who.tenant, chat_id, digest)
        if data is None:
            return JSONResponse(
                {"error": {"type": "NotFoundError", "message": "no such attachment in this chat"}},
                status_code=404,
            )
        media = request.query_params.get("type", "")
        return Response(
            data,
            media_type=media if _SHOWN.fullmatch(media) else "application/octet-stream",
            headers={
                "x-content-type-options": "nosniff",
                "content-security-policy": "sandbox",
                "cache-control": "private, max-age=31536000, immutable",
            },
        )

    def _read(self, tenant: str, chat_id: str, digest: str) -> bytes | None:
        self.store.reads.status(chat_id, tenant=tenant)  # not found / erased: its 404 / 410
        blobs = self._blobs(tenant, chat_id)
        if blobs is None:
            return None
        try:
            data: bytes = blobs.get(conversation_id(tenant, chat_id), digest)
        except StoredDataError:
            return None
        return data

    def _mapper(self, tenant: str, chat_id: str) -> Any:
        """The log mapper of the database holding the conversation (a sharded store: its shard's)."""
        shard = getattr(self.store, "shard", None)
        store = shard(chat_id, tenant) if shard is not None else self.store
        return store.log.mapper

    def _blobs(self, tenant: str, chat_id: str) -> Any:
        return getattr(self._mapper(tenant, chat_id), "blobs", None)

    def link(
        self, tenant: str, chat_id: str, messages: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """``messages`` with their inline files as links to the route (in place; memory stores: as they are)."""
        mapper = self._mapper(tenant, chat_id)
        if getattr(mapper, "blobs", None) is not None:
            linked(
                messages,
                lambda digest, media: attachment_path(chat_id, digest, media),
                getattr(mapper, "lift_policy", None) or DEFAULT_LIFT,
            )
        return messages

    def unlink(self, tenant: str, chat_id: str, messages: list[Any]) -> None:
        """Turn the links to this chat's attachments in a client's messages back into data URLs (in place)."""
        blobs = self._blobs(tenant, chat_id)
        if blobs is None:
            return
        key = conversation_id(tenant, chat_id)

        def digest_of(url: str) -> str | None:
            found = _LINK.search(url)
            if found is None or found["chat"] != quote(chat_id, safe=""):
                return None
            return found["digest"]

        def fetch(digest: str) -> bytes:
            data: bytes = blobs.get(key, digest)
            return data

        unlinked([m for m in messages if isinstance(m, dict)], digest_of, fetch)
