"""Stored events compress with a window sized to them, and events stored before still read back."""

from __future__ import annotations

import base64
import json
import zlib
from datetime import UTC, datetime
from uuid import UUID

import pytest
from eventsourcing.persistence import JSONTranscoder, StoredEvent
from hypothesis import given, settings
from hypothesis import strategies as st

from chatledger.adapters.persistence.codec import (
    _DICTIONARY_V1,
    ChunkCompressor,
    PydanticMapper,
    _window_bits,
)
from chatledger.domain.chain import content_digest
from chatledger.domain.events import ChunksReceived

_CHUNKS = [
    {"type": "start", "messageId": "msg_old1"},
    {"type": "start-step"},
    {"type": "text-start", "id": "t1"},
    *(
        {"type": "text-delta", "id": "t1", "delta": word}
        for word in ["Stored", " by", " the", " version", " before", " sized", " windows", "."]
    ),
    {"type": "text-end", "id": "t1"},
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "stop"},
]
_EVENT = ChunksReceived(
    originator_id=UUID(int=7),
    originator_version=3,
    timestamp=datetime(2026, 11, 27, 12, 0, tzinfo=UTC),
    actor="agent:old",
    stream_id="s1",
    first_seq=0,
    chunks=_CHUNKS,
)
# ``_EVENT`` as stored by chatledger before the window was sized to the event (zlib's
# default 32 KB window, memLevel 8, tag 0x01), and the SHA-256 its chain link commits to.
_STORED_BEFORE = base64.b64decode(
    "AQNKZQKTd0libgGQZ2RgZKZraKhrZB5iaGRlYABEUUCVsPIFmAfySqzyc0BJE7nwKDYECiCVIAbArJ1RmpeNEk5AOzAy"
    "EyiEgcYZIrsRrA4jy4JdDjMC7PISFF2YPgPK68ADIhhYQAKLJbxBgaJBIamSFNXA2CFFeVlqUTGozCPFPalpQC+QoqM4"
    "s4o0L5dn5qXklxeTYIcehlqkcgs1gsgqimNrAQ=="
)
_DIGEST_BEFORE = "a5b2670b607efc9153d6b5178fcfb2ec5e2deafaa1c5bde897084191b79dcc03"


def _mapper() -> PydanticMapper:
    return PydanticMapper(JSONTranscoder(), compressor=ChunkCompressor())


def test_an_event_compressed_before_sized_windows_still_decodes_to_the_same_event() -> None:
    stored = StoredEvent(UUID(int=7), 3, "chatledger.domain.events:ChunksReceived", _STORED_BEFORE)
    mapper = _mapper()
    assert mapper.to_domain_event(stored) == _EVENT
    assert content_digest(mapper.content(_STORED_BEFORE, UUID(int=7))).hex() == _DIGEST_BEFORE


def test_the_same_event_stored_now_has_the_same_content_and_chain_digest() -> None:
    """The digest covers the plain JSON, not the compressed bytes: chains written before and
    after the change verify alike."""
    stored = _mapper().to_stored_event(_EVENT)
    assert stored.state != _STORED_BEFORE  # compressed with a smaller window now
    assert stored.digest.hex() == _DIGEST_BEFORE
    assert _mapper().to_domain_event(stored) == _EVENT


@pytest.mark.parametrize("size", [0, 1, 127, 128, 129, 2048, 2049, 8192, 8193, 40_000, 200_000])
def test_every_size_round_trips_and_tiny_ones_are_stored_as_they_are(size: int) -> None:
    text = json.dumps([{"type": "text-delta", "id": "t", "delta": f" w{i}"} for i in range(size)])
    data = text.encode()[:size]
    packed = ChunkCompressor().compress(data)
    assert ChunkCompressor().decompress(packed) == data
    if size < 128:
        assert packed == b"\x00" + data
    else:
        assert len(packed) <= len(data) + 1


@given(
    st.lists(st.text(alphabet='ab "{}:,', min_size=100, max_size=12_000), min_size=2, max_size=6)
)
@settings(max_examples=60, deadline=None)
def test_a_reused_compressor_writes_what_a_fresh_deflate_stream_writes(inputs: list[str]) -> None:
    """Events are compressed by copies of a primed deflate stream: the bytes must be those of a
    new stream with the preset dictionary, event after event (no state carried between them)."""
    reused = ChunkCompressor()
    for text in inputs:
        data = b'{"chunks":' + text.encode()
        bits, memory = _window_bits(len(data))
        fresh = zlib.compressobj(1, zlib.DEFLATED, -bits, memory, zdict=_DICTIONARY_V1)
        expected = fresh.compress(data) + fresh.flush()
        packed = reused.compress(data)
        if len(data) < 128:  # tiny: stored as it is
            assert packed == b"\x00" + data
        elif len(expected) < len(data):
            assert packed == b"\x01" + expected
        else:  # deflate did not make it smaller
            assert packed == b"\x00" + data
        assert reused.decompress(packed) == data
