"""How events are stored: pydantic JSON, then compression against a preset dictionary.

Plugged into ``eventsourcing`` as its mapper and compressor (MAPPER_TOPIC,
COMPRESSOR_TOPIC). The stored JSON is plain (no ``_type_`` envelopes), so
other tools can read it once decompressed.
"""

from __future__ import annotations

import json
import zlib
from typing import Any
from uuid import UUID

import pydantic_core
from eventsourcing.persistence import Compressor, Mapper, StoredEvent
from eventsourcing.utils import get_topic, resolve_topic
from pydantic import BaseModel

from chatledger.adapters.persistence.chain import DigestedStoredEvent, split_link
from chatledger.domain.chain import content_digest
from chatledger.domain.errors import StoredDataError
from chatledger.domain.snapshot import ConversationSnapshot

__all__ = ["ChunkCompressor", "PydanticMapper"]

_IDS = {"originator_id", "originator_version"}
_RAW_JSON = ("chunks",)
"""Fields that already hold plain JSON values (the chunks as received, checked storable):
written as they are, since pydantic's per-value type inference over a batch of chunks was
most of the cost of storing it (200 of 245 us for a 156-chunk batch)."""


def _state(event: BaseModel, class_version: int, raw: tuple[str, ...]) -> dict[str, Any]:
    """The event's stored JSON object: pydantic's JSON form, ``raw`` fields taken as they are."""
    fields = type(event).model_fields
    taken = {name: getattr(event, name) for name in raw if name in fields}
    state = event.model_dump(mode="json", exclude=_IDS | set(taken), exclude_defaults=True)
    state.update(taken)
    if class_version > 1:
        state["class_version"] = class_version
    return state


class PydanticMapper(Mapper[UUID]):
    """Maps pydantic domain events (and snapshots) to stored events and back."""

    def to_stored_event(self, domain_event: Any) -> StoredEvent:
        """Serialise with pydantic; defaults are left out to keep rows small."""
        assert isinstance(domain_event, BaseModel), domain_event
        class_version = getattr(type(domain_event), "class_version", 1)
        try:
            data = _encode(_state(domain_event, class_version, raw=_RAW_JSON))
        except (TypeError, ValueError):  # a raw value pydantic alone can serialise
            data = _encode(_state(domain_event, class_version, raw=()))
        # The hash chain commits to the plain JSON of events (snapshots are not chained).
        digest = b"" if isinstance(domain_event, ConversationSnapshot) else content_digest(data)
        if self.compressor:
            data = self.compressor.compress(data)
        if self.cipher:
            data = self.cipher.encrypt(data)
        return DigestedStoredEvent(
            originator_id=domain_event.originator_id,  # type: ignore[attr-defined]
            originator_version=domain_event.originator_version,  # type: ignore[attr-defined]
            topic=get_topic(type(domain_event)),
            state=data,
            digest=digest,
        )

    def content(self, state: bytes) -> bytes:
        """A stored event's plain JSON bytes (link stripped, decrypted, decompressed): what its digest covers."""
        return self.unpack(state)[1]

    def unpack(self, state: bytes) -> tuple[bytes | None, bytes]:
        """(the event's link or None, its plain JSON bytes); raises if the state does not decode."""
        link, inner = split_link(state)
        if link is not None:
            try:
                return link, self._plain(inner)
            except Exception:
                # An event encrypted before chains whose ciphertext happens to start like
                # a link (1 in 256): the cipher refused the stripped bytes, so use them all.
                if not self.cipher:
                    raise
        return None, self._plain(state)

    def _plain(self, state: bytes) -> bytes:
        if self.cipher:
            state = self.cipher.decrypt(state)
        if self.compressor:
            state = self.compressor.decompress(state)
        return state

    def to_domain_event(self, stored_event: StoredEvent) -> Any:
        """Decode, upcast old schema versions, and validate with the event's model.

        Stored data that cannot be read back (corrupt, an unknown encoding,
        an unknown event class) raises StoredDataError naming the event.
        """
        try:
            return self._decode_event(stored_event)
        except StoredDataError as error:
            raise StoredDataError(f"{_name(stored_event)} cannot be read: {error}") from None
        except Exception as error:  # decryption, decompression, JSON and validation all differ
            raise StoredDataError(
                f"{_name(stored_event)} cannot be read: {type(error).__name__}: {error}"[:1000]
            ) from error

    def _decode_event(self, stored_event: StoredEvent) -> Any:
        cls = resolve_topic(stored_event.topic)
        data = self.content(stored_event.state)
        state: dict[str, Any] = _decode(data)
        from_version = state.pop("class_version", 1)
        while from_version < getattr(cls, "class_version", 1):
            getattr(cls, f"upcast_v{from_version}_v{from_version + 1}")(state)
            from_version += 1
        originator_id = stored_event.originator_id
        state["originator_id"] = (
            originator_id if isinstance(originator_id, UUID) else UUID(str(originator_id))
        )
        state["originator_version"] = stored_event.originator_version
        return cls.model_validate(state)


_ASCII_JSON = b"\x01"


def _name(stored_event: StoredEvent) -> str:
    return (
        f"stored event {stored_event.originator_version} of {stored_event.originator_id} "
        f"({stored_event.topic.rsplit(':', 1)[-1]})"
    )


def _encode(state: dict[str, Any]) -> bytes:
    """UTF-8 JSON; ASCII-escaped JSON (tagged) when a string holds a lone surrogate.

    Inputs with lone surrogates are refused, but state derived from them can
    hold one: a partial tool input parsed from a prefix that ends between the
    two escapes of a surrogate pair (JavaScript keeps such strings too).
    """
    try:
        return pydantic_core.to_json(state)
    except pydantic_core.PydanticSerializationError:
        return _ASCII_JSON + json.dumps(state, ensure_ascii=True, separators=(",", ":")).encode()


def _decode(data: bytes) -> Any:
    if data[:1] == _ASCII_JSON:
        return json.loads(data[1:])
    return pydantic_core.from_json(data)


# Strings that recur in stored events: zlib starts from them, so even a small
# event compresses well. Stored data depends on this text: never edit it;
# add a new version (a new leading byte) instead.
_DICTIONARY_V1 = (
    b'"actor":"system""tenant":"default""chat_id":"metadata":"stream_id":"first_seq":'
    b'"ages_ms":[0,0,0,1,1,1,2,2,"replays":"refusals":"outcome":"finished","reason":'
    b'"trigger":"submit-message","continuation":false,"message_id":"messages":'
    b'{"type":"step-start"},{"type":"start-step"},{"type":"finish-step"},{"type":"finish",'
    b'"finishReason":"stop"},{"type":"start","messageId":"{"type":"text-start","id":"'
    b'{"type":"text-end","id":"{"type":"reasoning-start","id":"{"type":"reasoning-end","id":"'
    b'{"type":"tool-input-start","toolCallId":"call_","toolName":"'
    b'{"type":"tool-input-available","toolCallId":"{"type":"tool-output-available","toolCallId":"'
    b'"input":{"output":{"state":"output-available","state":"input-available","providerMetadata":'
    b'{"type":"tool-approval-request","approvalId":"{"type":"tool-input-delta","toolCallId":"'
    b'"inputTextDelta":"{"type":"text","text":"{"id":"msg_","role":"user","parts":[{"type":"text",'
    b'"text":"","role":"assistant","parts":[],"state":"done"},{"type":"reasoning-delta","id":"'
    b'"delta":"the "delta":" of "delta":" and "delta":"ing "delta":" to "},'
    b'{"type":"text-delta","id":"'
)
_RAW, _ZLIB_V1 = b"\x00", b"\x01"


class ChunkCompressor(Compressor):
    """zlib with a preset dictionary of chatledger's JSON; raw when that is smaller."""

    def __init__(self, level: int = 1) -> None:
        self.level = level

    def compress(self, data: bytes) -> bytes:
        """Compress ``data``, tagging the result with its format."""
        packer = zlib.compressobj(self.level, zlib.DEFLATED, -15, zdict=_DICTIONARY_V1)
        packed = packer.compress(data) + packer.flush()
        if len(packed) < len(data):
            return _ZLIB_V1 + packed
        return _RAW + data

    def decompress(self, data: bytes) -> bytes:
        """Undo ``compress``."""
        tag, body = data[:1], data[1:]
        if tag == _ZLIB_V1:
            unpacker = zlib.decompressobj(-15, zdict=_DICTIONARY_V1)
            return unpacker.decompress(body) + unpacker.flush()
        if tag == _RAW:
            return bytes(body)
        if tag == b"{":  # written without compression (compress=False): plain JSON
            return bytes(data)
        raise StoredDataError(
            f"unknown stored-event encoding tag 0x{data[0]:02x} (written by a newer version, "
            "or corrupt)"
            if data
            else "an empty stored event"
        )
