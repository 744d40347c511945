"""Read-model values kept as compressed bytes: a conversation's messages, a timeline entry's text.

The same zlib with a preset dictionary of chatledger's JSON as the event log
(raw when that is smaller), then sealed with the store key, if there is one.
"""

from __future__ import annotations

from chatledger.adapters.persistence.codec import ChunkCompressor
from chatledger.adapters.persistence.keys import ColumnKey

__all__ = ["pack", "pack_plain", "unpack"]

_RAW = b"\x00"
"""The compressor's tag of a value stored as it is."""
_COMPRESSOR = ChunkCompressor(level=6)
"""Level 6: read models are written once per page in the background and read often."""


def pack(key: ColumnKey, text: str) -> bytes:
    """``text`` as stored: compressed, then sealed with ``key``."""
    return key.seal_bytes(_COMPRESSOR.compress(text.encode("utf-8", "surrogatepass")))


def pack_plain(key: ColumnKey, text: str) -> bytes:
    """``text`` as stored uncompressed (sealed with ``key``): read back by ``unpack`` at no inflate cost.

    For what is read on every turn start (a conversation's messages): inflating
    each message tripled the read's latency for a third of its bytes.
    """
    return key.seal_bytes(_RAW + text.encode("utf-8", "surrogatepass"))


def unpack(key: ColumnKey, data: bytes) -> str:
    """Undo ``pack``."""
    plain = _COMPRESSOR.decompress(key.unseal_bytes(bytes(data)))
    return plain.decode("utf-8", "surrogatepass")
