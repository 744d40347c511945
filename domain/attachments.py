"""Attachments kept once: which values of a stored event are lifted into blobs, and how they come back.

A file part with inline data (``{"type": "file", "url": "data:..."}``, in a
message or a stream's chunk) and a large tool output are stored once, by
content, outside the event (``chatledger.adapters.persistence.blobs``); the
event keeps a short placeholder in their place and, at its top level, the
list of what was lifted (``BLOBS_KEY``): each entry names the path of the
value, the SHA-256 of the blob's bytes and how to rebuild the value from
them. Restoring follows that list only, so no value the user wrote can be
mistaken for a reference, and a restored event is the event as it was
given, value for value.

A data URL in canonical base64 is kept as its decoded bytes (a quarter
smaller, and the same file under another media type is the same blob); any
other data URL as its UTF-8 text; a tool output as its JSON.

Pure: no I/O. ``lift`` answers the new state and the blobs to store,
``restore`` takes a function that answers a blob's bytes by digest.
"""

from __future__ import annotations

import base64
import binascii
import copy
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BLOBS_KEY",
    "DEFAULT_LIFT",
    "Blob",
    "LiftPolicy",
    "Lifted",
    "blob_digest",
    "lift",
    "linked",
    "placeholder",
    "restore",
    "unlinked",
    "worth_a_look",
]

BLOBS_KEY = "_blobs"
"""The top-level key of a stored event's JSON that lists its lifted values (absent when none)."""

_B64, _TEXT, _JSON = "b64", "text", "json"


@dataclass(frozen=True)
class LiftPolicy:
    """Which values are lifted: data URLs and tool outputs from a size up (bytes of their JSON text)."""

    data_url_bytes: int = 1024
    """A file part's data URL this long or longer is lifted (0 turns lifting data URLs off)."""
    tool_output_bytes: int = 16384
    """A tool output whose JSON is this long or longer is lifted (0 turns it off)."""

    @property
    def smallest(self) -> int:
        """No state shorter than this (as JSON) holds anything to lift."""
        sizes = [size for size in (self.data_url_bytes, self.tool_output_bytes) if size > 0]
        return min(sizes) if sizes else -1

    @property
    def enabled(self) -> bool:
        """Whether anything is lifted at all."""
        return self.smallest > 0


DEFAULT_LIFT = LiftPolicy()


@dataclass(frozen=True)
class Blob:
    """Bytes to store once, under the SHA-256 of those bytes."""

    digest: str
    """Hex SHA-256 of ``data``."""
    data: bytes


@dataclass(frozen=True)
class Lifted:
    """A state with its large values lifted out, and the blobs that hold them."""

    state: dict[str, Any]
    blobs: tuple[Blob, ...]


def blob_digest(data: bytes) -> str:
    """The hex SHA-256 that names a blob."""
    return hashlib.sha256(data).hexdigest()


def placeholder(digest: str) -> str:
    """What a lifted value reads as in the stored JSON."""
    return f"blob:sha256:{digest}"


def worth_a_look(text: str | bytes, policy: LiftPolicy = DEFAULT_LIFT) -> bool:
    """Whether a state's JSON text may hold a value to lift: a scan far cheaper than ``lift``'s walk.

    False means ``lift`` would find nothing (a data URL holds ``data:``; a tool
    output is under an ``"output"`` key).
    """
    data, output = (b"data:", b'"output"') if isinstance(text, bytes) else ("data:", '"output"')
    return (
        0 < policy.data_url_bytes <= len(text) and data in text  # type: ignore[operator]
    ) or (0 < policy.tool_output_bytes <= len(text) and output in text)  # type: ignore[operator]


def lift(state: dict[str, Any], policy: LiftPolicy = DEFAULT_LIFT) -> Lifted:
    """``state`` with its inline files and large tool outputs replaced by placeholders (``state`` is unchanged).

    A state that already lists lifted values (``BLOBS_KEY``) is returned as it is.
    """
    if not policy.enabled or BLOBS_KEY in state:
        return Lifted(state, ())
    found: list[tuple[list[Any], str, Any]] = []
    _walk(state, [], policy, found)
    if not found:
        return Lifted(state, ())
    lifted = copy.deepcopy(state)
    entries: list[list[Any]] = []
    blobs: dict[str, Blob] = {}
    for path, kind, value in found:
        entry, data = _entry(kind, value)
        digest = blob_digest(data)
        blobs.setdefault(digest, Blob(digest, data))
        _put(lifted, path, placeholder(digest))
        entries.append([path, digest, *entry])
    lifted[BLOBS_KEY] = entries
    return Lifted(lifted, tuple(blobs.values()))


def restore(state: dict[str, Any], fetch: Callable[[str], bytes]) -> dict[str, Any]:
    """``state`` (changed in place and returned) with each lifted value put back from its blob.

    ``fetch(digest)`` answers the blob's bytes (and raises when it cannot).
    """
    entries = state.pop(BLOBS_KEY, None)
    if not entries:
        return state
    cache: dict[str, bytes] = {}
    for path, digest, kind, *rest in entries:
        data = cache.get(digest)
        if data is None:
            data = cache[digest] = fetch(digest)
        _put(state, path, _value(kind, rest, data))
    return state


def _walk(node: Any, path: list[Any], policy: LiftPolicy, found: list[Any]) -> None:
    """Collect (path, kind, value) of every value to lift, depth first."""
    if isinstance(node, dict):
        url = node.get("url")
        if (
            policy.data_url_bytes > 0
            and node.get("type") == "file"
            and isinstance(url, str)
            and url.startswith("data:")
            and len(url) >= policy.data_url_bytes
        ):
            found.append(([*path, "url"], "url", url))
        skip = None
        if (
            policy.tool_output_bytes > 0
            and "output" in node
            and isinstance(node.get("toolCallId"), str)
            and node["output"] is not None
            and _json_size(node["output"]) >= policy.tool_output_bytes
        ):
            found.append(([*path, "output"], _JSON, node["output"]))
            skip = "output"
        for key, value in node.items():
            if key != skip and isinstance(value, dict | list):
                _walk(value, [*path, key], policy, found)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            if isinstance(value, dict | list):
                _walk(value, [*path, index], policy, found)


def _json_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    try:
        return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError):
        return 0


def _entry(kind: str, value: Any) -> tuple[list[Any], bytes]:
    """(how to rebuild the value, the blob's bytes)."""
    if kind == _JSON:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        return [_JSON], text.encode("utf-8", "surrogatepass")
    head, comma, body = value.partition(",")
    if comma and head.endswith(";base64"):
        try:
            data = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            data = None
        if data is not None and base64.b64encode(data).decode("ascii") == body:
            return [_B64, head + ","], data
    return [_TEXT], value.encode("utf-8", "surrogatepass")


def _value(kind: str, rest: list[Any], data: bytes) -> Any:
    if kind == _B64:
        return rest[0] + base64.b64encode(data).decode("ascii")
    if kind == _TEXT:
        return data.decode("utf-8", "surrogatepass")
    if kind == _JSON:
        return json.loads(data.decode("utf-8", "surrogatepass"))
    raise ValueError(f"unknown kind of lifted value {kind!r}")


def _put(node: Any, path: list[Any], value: Any) -> None:
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value


Link = Callable[[str, str], str]
"""The URL of a blob, given its digest and its part's media type."""


def linked(messages: list[dict[str, Any]], link: Link, policy: LiftPolicy = DEFAULT_LIFT) -> None:
    """Give each file part kept as a blob (by ``policy``) the URL ``link`` answers, in place.

    For clients that fetch files from the server (``?attachments=url``) rather
    than receive them inline. Only a data URL that ``unlinked`` rebuilds exactly
    (``data:<the part's mediaType>;base64,`` and canonical base64) is linked.
    """
    for message in messages:
        for part in message.get("parts") or ():
            url = part.get("url") if isinstance(part, dict) else None
            if (
                part.get("type") == "file"
                and isinstance(url, str)
                and url.startswith("data:")
                and 0 < policy.data_url_bytes <= len(url)
            ):
                entry, data = _entry("url", url)
                media = str(part.get("mediaType") or "application/octet-stream")
                if entry == [_B64, f"data:{media};base64,"]:  # rebuilt exactly by ``unlinked``
                    part["url"] = link(blob_digest(data), media)


def unlinked(
    messages: list[dict[str, Any]],
    digest_of: Callable[[str], str | None],
    fetch: Callable[[str], bytes],
) -> None:
    """Put back, in place, the data URL of each file part whose URL ``digest_of`` recognises as a link.

    Undoes ``linked`` on the messages a client sends back (its copy holds the
    links); the data URL is rebuilt from the blob and the part's media type.
    """
    for message in messages:
        for part in message.get("parts") or ():
            url = part.get("url") if isinstance(part, dict) else None
            digest = digest_of(url) if part.get("type") == "file" and isinstance(url, str) else None
            if digest is not None:
                media = str(part.get("mediaType") or "application/octet-stream")
                part["url"] = f"data:{media};base64,{base64.b64encode(fetch(digest)).decode()}"
