"""Attachments kept once (``chatledger.domain.attachments``): what is lifted, and that it comes back exactly."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pydantic_core
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatledger.adapters.persistence.blobs import lift_policy
from chatledger.domain.attachments import (
    BLOBS_KEY,
    LiftPolicy,
    blob_digest,
    lift,
    placeholder,
    restore,
    worth_a_look,
)
from chatledger.domain.errors import StoreConfigurationError

SMALL = LiftPolicy(data_url_bytes=16, tool_output_bytes=32)


def _round_trip(state: dict[str, Any], policy: LiftPolicy = SMALL) -> dict[str, Any]:
    """Lift, store as the log does (JSON bytes), read back and restore."""
    lifted = lift(state, policy)
    store = {blob.digest: blob.data for blob in lifted.blobs}
    for blob in lifted.blobs:
        assert blob_digest(blob.data) == blob.digest
    stored = pydantic_core.from_json(pydantic_core.to_json(lifted.state))
    return restore(stored, store.__getitem__)


def _data_url(data: bytes, media: str = "image/png") -> str:
    return f"data:{media};base64,{base64.b64encode(data).decode()}"


def test_a_data_url_is_kept_as_its_bytes_once() -> None:
    png = bytes(range(256)) * 8
    part = {"type": "file", "mediaType": "image/png", "url": _data_url(png)}
    message = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}, part, part]}
    lifted = lift({"message": message})
    assert [blob.data for blob in lifted.blobs] == [png]  # twice in the message, one blob
    digest = blob_digest(png)
    assert lifted.state["message"]["parts"][1]["url"] == placeholder(digest)
    assert len(json.dumps(lifted.state)) < 1000  # from 7,400
    assert message["parts"][1]["url"] == _data_url(png)  # the given state is unchanged
    assert _round_trip({"message": message}, LiftPolicy()) == {"message": message}


def test_the_same_file_under_another_media_type_is_the_same_blob() -> None:
    data = b"%PDF-1.7 " * 300
    state = {
        "parts": [
            {"type": "file", "url": _data_url(data, "application/pdf")},
            {"type": "file", "url": _data_url(data, "application/octet-stream")},
        ]
    }
    lifted = lift(state)
    assert len(lifted.blobs) == 1
    assert _round_trip(state) == state


def test_non_canonical_base64_and_plain_data_urls_come_back_as_given() -> None:
    odd = "data:text/plain;base64," + base64.encodebytes(b"x" * 2000).decode()  # line breaks
    plain = "data:text/plain," + "y" * 2000
    state = {"parts": [{"type": "file", "url": odd}, {"type": "file", "url": plain}]}
    assert len(lift(state).blobs) == 2
    assert _round_trip(state) == state


def test_small_values_and_urls_stay_inline() -> None:
    state = {
        "parts": [
            {"type": "file", "url": "data:image/png;base64,AAAA"},
            {"type": "file", "url": "https://example.com/" + "a" * 5000},
            {"type": "text", "text": "data:" + "z" * 5000},  # not a file part
            {"type": "tool-x", "toolCallId": "c", "output": {"ok": 1}},
        ]
    }
    lifted = lift(state, LiftPolicy())
    assert lifted.blobs == () and lifted.state is state and BLOBS_KEY not in lifted.state


def test_a_large_tool_output_is_kept_as_its_json() -> None:
    output = {"rows": [{"n": i, "name": f"row {i}", "ratio": i / 7} for i in range(500)]}
    chunk = {"type": "tool-output-available", "toolCallId": "call_1", "output": output}
    state = {"chunks": [chunk]}
    lifted = lift(state)
    assert len(lifted.blobs) == 1 and lifted.state["chunks"][0]["output"].startswith("blob:")
    assert _round_trip(state, LiftPolicy()) == state


def test_off_lifts_nothing() -> None:
    state = {"parts": [{"type": "file", "url": _data_url(b"q" * 5000)}]}
    assert lift(state, LiftPolicy(0, 0)).blobs == ()


def test_a_state_naming_a_key_like_the_list_is_not_lifted_again() -> None:
    state = {BLOBS_KEY: "the user's own", "parts": [{"type": "file", "url": _data_url(b"q" * 99)}]}
    assert lift(state, SMALL).state is state


def test_the_policy_from_the_environment() -> None:
    assert lift_policy({}) == LiftPolicy()
    assert lift_policy({"CHATLEDGER_ATTACHMENT_MIN_BYTES": "0"}).data_url_bytes == 0
    with pytest.raises(StoreConfigurationError, match="CHATLEDGER_TOOL_OUTPUT_MIN_BYTES"):
        lift_policy({"CHATLEDGER_TOOL_OUTPUT_MIN_BYTES": "big"})


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
_file = st.builds(
    lambda data, media, canonical: {
        "type": "file",
        "mediaType": media,
        "url": _data_url(data, media)
        if canonical
        else f"data:{media};base64,{base64.b64encode(data).decode().rstrip('=')}",
    },
    st.binary(min_size=0, max_size=80),
    st.sampled_from(["image/png", "application/pdf", "text/plain"]),
    st.booleans(),
)
_tool = st.builds(
    lambda call, output: {"type": "dynamic-tool", "toolCallId": call, "output": output},
    st.text(min_size=1, max_size=6),
    _json,
)
_part = st.one_of(_file, _tool, st.builds(lambda t: {"type": "text", "text": t}, st.text()), _json)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_part, max_size=6),
    st.dictionaries(st.text(max_size=6), _json, max_size=3),
    st.sampled_from([SMALL, LiftPolicy(1, 1), LiftPolicy(0, 1), LiftPolicy()]),
)
def test_every_state_comes_back_exactly(
    parts: list[Any], extra: dict[str, Any], policy: LiftPolicy
) -> None:
    """Whatever the parts hold, lifting then restoring gives the state given, value for value."""
    extra.pop(BLOBS_KEY, None)
    state = {**extra, "message": {"id": "m", "role": "user", "parts": parts}}
    given_state = copy.deepcopy(state)
    if not worth_a_look(pydantic_core.to_json(state), policy):  # the scan never skips a lift
        assert lift(state, policy).blobs == ()
    if not worth_a_look(json.dumps(state, separators=(",", ":")), policy):
        assert lift(state, policy).blobs == ()
    back = _round_trip(state, policy)
    assert back == given_state
    assert json.dumps(back, sort_keys=True) == json.dumps(given_state, sort_keys=True)
    assert state == given_state
