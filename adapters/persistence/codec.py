"""How events are stored: pydantic JSON, then compression against a preset dictionary.

Plugged into ``eventsourcing`` as its mapper and compressor (MAPPER_TOPIC,
COMPRESSOR_TOPIC). The stored JSON is plain (no ``_type_`` envelopes), so
other tools can read it once decompressed.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Callable
from typing import Any
from uuid import UUID

import orjson
import pydantic_core
from eventsourcing.persistence import Cipher, Compressor, Mapper, StoredEvent, Transcoder
from eventsourcing.utils import get_topic, resolve_topic
from pydantic import BaseModel

from chatledger.adapters.persistence.chain import DigestedStoredEvent, split_link
from chatledger.adapters.persistence.data_keys import ENVELOPE, DataKeys
from chatledger.domain.attachments import (
    BLOBS_KEY,
    DEFAULT_LIFT,
    LiftPolicy,
    lift,
    restore,
    worth_a_look,
)
from chatledger.domain.chain import content_digest
from chatledger.domain.erasure import ConversationErased, Tombstone, is_tombstone, read_tombstone
from chatledger.domain.errors import ConversationErasedError, StoredDataError
from chatledger.domain.snapshot import ConversationSnapshot

__all__ = ["ChunkCompressor", "PydanticMapper"]

_IDS = {"originator_id", "originator_version"}
_RAW_JSON = ("chunks",)
"""Fields that already hold plain JSON values (the chunks as received, checked storable):
written as they are, since pydantic's per-value type inference over a batch of chunks was
most of the cost of storing it (200 of 245 us for a 156-chunk batch)."""
_RAW_SNAPSHOT = ("state",)
"""A snapshot's state is ``ConversationState.to_json()``, plain JSON already: taken as it is:
pydantic's walk over a whole conversation was a third of a snapshot's cost (330 of 1,020 us for
a 27 KB state)."""


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
    """Maps pydantic domain events (and snapshots) to stored events and back.

    With ``data_keys`` enabled (a store key), a conversation's events and
    snapshots are encrypted with its own data key (``ENVELOPE``); the
    ``ConversationErased`` event, which holds no content and must stay
    readable, with the store's key. Events written before data keys keep
    the store's cipher. An erased event (a tombstone) decodes to
    ``ConversationErasedError``; its chain digest stays readable
    (``chain_digest``).
    """

    def __init__(
        self,
        transcoder: Transcoder,
        compressor: Compressor | None = None,
        cipher: Cipher | None = None,
        data_keys: DataKeys | None = None,
    ) -> None:
        super().__init__(transcoder, compressor=compressor, cipher=cipher)
        self.data_keys = data_keys
        """The store's data keys (None: events are written with the store's cipher alone)."""
        self.resolve: Callable[[Any], Any] | None = None
        """Completes a decoded event that refers to another conversation (a fork's shared messages)."""
        self.blobs: Any = None
        """The store's blob table (``blobs.BlobStore``; None: nothing is lifted out of events)."""
        self.lift_policy: LiftPolicy = DEFAULT_LIFT
        """Which values of an event are kept as blobs (``chatledger.domain.attachments``)."""

    def to_stored_event(self, domain_event: Any) -> StoredEvent:
        """Serialise with pydantic; defaults are left out to keep rows small."""
        assert isinstance(domain_event, BaseModel), domain_event
        class_version = getattr(type(domain_event), "class_version", 1)
        raw = _RAW_SNAPSHOT if isinstance(domain_event, ConversationSnapshot) else _RAW_JSON
        try:
            state = _state(domain_event, class_version, raw=raw)
            data = _encode(state)
        except (TypeError, ValueError):  # a raw value pydantic alone can serialise
            state = _state(domain_event, class_version, raw=())
            data = _encode(state)
        if self.blobs is not None and worth_a_look(data, self.lift_policy):
            data = self._lift(domain_event.originator_id, state, data)  # type: ignore[attr-defined]
        # The hash chain commits to the plain JSON of events (snapshots are not chained).
        digest = b"" if isinstance(domain_event, ConversationSnapshot) else content_digest(data)
        if self.compressor:
            data = self.compressor.compress(data)
        key = None
        if self.data_keys is not None and not isinstance(domain_event, ConversationErased):
            key = self.data_keys.for_write(domain_event.originator_id)  # type: ignore[attr-defined]
        if key is not None:
            data = _seal(key, data, domain_event.originator_id)  # type: ignore[attr-defined]
        elif self.cipher:
            data = self.cipher.encrypt(data)
        return DigestedStoredEvent(
            originator_id=domain_event.originator_id,  # type: ignore[attr-defined]
            originator_version=domain_event.originator_version,  # type: ignore[attr-defined]
            topic=get_topic(type(domain_event)),
            state=data,
            digest=digest,
        )

    def _lift(self, conversation: UUID, state: dict[str, Any], data: bytes) -> bytes:
        """``data`` with its inline files and large tool outputs kept as blobs (stored now)."""
        lifted = lift(state, self.lift_policy)
        if not lifted.blobs:
            return data
        self.blobs.put(conversation, lifted.blobs)
        return _encode(lifted.state)

    def content(self, state: bytes, conversation: UUID | None = None) -> bytes:
        """A stored event's plain JSON bytes (link stripped, decrypted, decompressed): what its digest covers."""
        return self.unpack(state, conversation)[1]

    def unpack(self, state: bytes, conversation: UUID | None = None) -> tuple[bytes | None, bytes]:
        """(the event's link or None, its plain JSON bytes); raises if the state does not decode.

        ``conversation`` (the event's originator id) finds its data key. An
        erased event raises ConversationErasedError.
        """
        link, inner = split_link(state)
        if is_tombstone(inner):
            raise ConversationErasedError(None, None)
        if link is not None:
            try:
                return link, self._plain(inner, conversation)
            except Exception:
                # An event encrypted before chains whose ciphertext happens to start like
                # a link (1 in 256): the cipher refused the stripped bytes, so use them all.
                if not self.cipher:
                    raise
        return None, self._plain(state, conversation)

    def chain_digest(self, state: bytes, conversation: UUID) -> tuple[bytes | None, bytes]:
        """(link or None, the digest its link commits to): from the content, or kept by a tombstone."""
        link, inner = split_link(state)
        if is_tombstone(inner):
            return link, read_tombstone(inner).digest
        link, content = self.unpack(state, conversation)
        return link, content_digest(content)

    def tombstone_of(self, stored_event: StoredEvent) -> Tombstone | None:
        """What the log keeps of an erased event (None for an event that was not erased)."""
        inner = split_link(stored_event.state)[1]
        return read_tombstone(inner) if is_tombstone(inner) else None

    def _plain(self, state: bytes, conversation: UUID | None) -> bytes:
        if state[: len(ENVELOPE)] == ENVELOPE and self.data_keys is not None:
            opened = self._open(state, conversation)
            if opened is not None:
                state = opened
            elif self.cipher:  # a store-key ciphertext that starts like an envelope
                state = self.cipher.decrypt(state)
        elif self.cipher:
            state = self.cipher.decrypt(state)
        if self.compressor:
            state = self.compressor.decompress(state)
        return state

    def _open(self, state: bytes, conversation: UUID | None) -> bytes | None:
        """Decrypt with the conversation's data key; None if it is not that (legacy ciphertext)."""
        from cryptography.exceptions import InvalidTag

        assert self.data_keys is not None
        key = self.data_keys.for_read(conversation) if conversation is not None else None
        if key is None:
            if self.cipher:
                return None
            raise StoredDataError(
                f"the data key of conversation {conversation} is missing (deleted by hand?)"
            )
        body = state[len(ENVELOPE) :]
        try:
            return bytes(key.decrypt(body[:_NONCE], body[_NONCE:], _aad(conversation)))
        except InvalidTag:
            if self.cipher:
                return None
            raise StoredDataError(
                f"an event of conversation {conversation} does not decrypt with its data key "
                "(damaged, or moved from another conversation)"
            ) from None

    def _blob(self, conversation: UUID, digest: str) -> bytes:
        if self.blobs is None:
            raise StoredDataError("the event refers to attachments, and this store keeps none")
        data: bytes = self.blobs.get(conversation, digest)
        return data

    def to_domain_event(self, stored_event: StoredEvent) -> Any:
        """Decode, upcast old schema versions, and validate with the event's model.

        Stored data that cannot be read back (corrupt, an unknown encoding,
        an unknown event class) raises StoredDataError naming the event.
        """
        try:
            event = self._decode_event(stored_event)
        except ConversationErasedError:
            raise
        except StoredDataError as error:
            raise StoredDataError(f"{_name(stored_event)} cannot be read: {error}") from None
        except Exception as error:  # decryption, decompression, JSON and validation all differ
            raise StoredDataError(
                f"{_name(stored_event)} cannot be read: {type(error).__name__}: {error}"[:1000]
            ) from error
        return event if self.resolve is None else self.resolve(event)

    def _decode_event(self, stored_event: StoredEvent) -> Any:
        cls = resolve_topic(stored_event.topic)
        originator = stored_event.originator_id
        key = originator if isinstance(originator, UUID) else UUID(str(originator))
        data = self.content(stored_event.state, key)
        state: dict[str, Any] = _decode(data)
        if BLOBS_KEY in state:
            restore(state, lambda digest: self._blob(key, digest))
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
_NONCE = 12


def _aad(conversation: UUID | None) -> bytes:
    return b"chatledger-event/1" + (conversation.bytes if conversation else b"")


def _seal(key: Any, data: bytes, conversation: UUID) -> bytes:
    """``data`` encrypted with a conversation's data key (an AES-GCM object; see ``data_keys``)."""
    nonce = os.urandom(_NONCE)
    sealed: bytes = key.encrypt(nonce, data, _aad(conversation))
    return ENVELOPE + nonce + sealed


def _name(stored_event: StoredEvent) -> str:
    return (
        f"stored event {stored_event.originator_version} of {stored_event.originator_id} "
        f"({stored_event.topic.rsplit(':', 1)[-1]})"
    )


def _encode(state: dict[str, Any]) -> bytes:
    """UTF-8 JSON; ASCII-escaped JSON (tagged) when a string holds a lone surrogate.

    orjson writes it (a third of pydantic's time, the same bytes for JSON
    values); what orjson refuses (an integer beyond 64 bits, a non-string
    key, a lone surrogate) goes to pydantic as before. The one difference,
    NaN or an infinity (null here, NaN for pydantic), cannot arise: inputs
    refuse non-finite numbers (``chatledger.domain.limits``).

    Inputs with lone surrogates are refused, but state derived from them can
    hold one: a partial tool input parsed from a prefix that ends between the
    two escapes of a surrogate pair (JavaScript keeps such strings too).
    """
    try:
        return orjson.dumps(state)
    except TypeError:  # orjson.JSONEncodeError
        pass
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


_RAW_BELOW = 128
"""Plain JSON shorter than this is stored as it is: deflate's setup (its state and the preset
dictionary) cost more than the few dozen bytes it saves on such an event."""


def _window_bits(size: int) -> tuple[int, int]:
    """(log2 of the deflate window, memLevel) for ``size`` bytes of input.

    A window no larger than the input (but holding the whole preset
    dictionary) and a small hash table: deflate's state is then a few KB, not
    the 256 KB of the defaults, whose allocation and first touch (page faults)
    cost more than compressing a batch. The stream stays raw deflate with the
    same dictionary, so it inflates with the 32 KB window every version reads with.
    """
    if size <= 2048:
        return 11, 2
    if size <= 8192:
        return 13, 4
    if size <= 32768:
        return 15, 5
    return 15, 8


class ChunkCompressor(Compressor):
    """zlib with a preset dictionary of chatledger's JSON; raw when that is smaller or the input tiny."""

    def __init__(self, level: int = 1) -> None:
        self.level = level
        self._primed: dict[tuple[int, int], zlib._Compress] = {}
        """A compressor per window size with the preset dictionary already loaded: each event is
        compressed by a copy of it, which skips loading the dictionary again (a small live
        batch: 0.92x the time, about half a microsecond); the output is the same bytes."""

    def _packer(self, bits: int, memory: int) -> zlib._Compress:
        """A fresh deflate stream with the preset dictionary loaded (a copy of a primed one)."""
        primed = self._primed.get((bits, memory))
        if primed is None:  # two threads may both make one: either serves
            primed = zlib.compressobj(
                self.level, zlib.DEFLATED, -bits, memory, zdict=_DICTIONARY_V1
            )
            self._primed[(bits, memory)] = primed
        return primed.copy()

    def compress(self, data: bytes) -> bytes:
        """Compress ``data``, tagging the result with its format."""
        if len(data) < _RAW_BELOW:
            return _RAW + data
        packer = self._packer(*_window_bits(len(data)))
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
