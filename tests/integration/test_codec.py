"""How events and snapshots are stored: values JavaScript allows but UTF-8 cannot hold still round-trip."""

from __future__ import annotations

import json
from typing import Any

from eventsourcing.cryptography import AESCipher

from chatledger.domain.events import ChunksReceived
from tests.integration.conftest import Backend, drop_schema
from tests.support.ledger import stored_events, stored_records


def test_partial_tool_input_ending_inside_a_surrogate_pair_is_stored_and_reloaded(
    durable_backend: Backend,
) -> None:
    """A delta that stops between the two escapes of a surrogate pair leaves a lone surrogate in the
    partial input (as in the SDK); the snapshot still saves and the conversation reloads equal."""
    store = durable_backend.open()
    store.start_conversation("chat")
    with store.open_stream("chat") as stream:
        stream.append({"type": "tool-input-start", "toolCallId": "c1", "toolName": "say"})
        stream.append(
            {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"emoji":"\\ud83d'}
        )
        live = stream.conversation.state.messages[-1]["parts"][0]["input"]
    assert live == {"emoji": "\ud83d"}
    reopened = durable_backend.open()
    assert reopened.messages("chat") == store.messages("chat")
    assert reopened.messages("chat")[-1]["parts"][0]["input"] == {"emoji": "\ud83d"}


def test_events_can_be_stored_uncompressed_or_encrypted_and_read_back(
    durable_backend: Backend,
) -> None:
    """docs/behaviour.md §7 options: without compression, and encrypted at rest (the text is not in the rows)."""
    key = AESCipher.create_key(32)
    # A store is encrypted or not from its creation (its key is checked at open): one database each.
    encrypted = Backend(durable_backend.name, durable_backend.url)
    if durable_backend.name == "sqlite":
        encrypted.url = durable_backend.url.replace(".db", "-encrypted.db")
    else:
        encrypted.url = durable_backend.url.replace("schema=", "schema=enc_")
    for backend, options in (
        (durable_backend, {"compress": False}),
        (encrypted, {"cipher_key": key}),
    ):
        store = backend.open(**options)
        chat = f"chat-{len(options)}-{'cipher_key' in options}"
        store.start_conversation(chat)
        store.ingest(
            chat,
            [
                {"type": "text-start", "id": "t"},
                {"type": "text-delta", "id": "t", "delta": "a secret plan"},
                {"type": "text-end", "id": "t"},
            ],
        )
        reopened = backend.open(**options)
        assert reopened.messages(chat)[-1]["parts"] == [
            {"type": "text", "text": "a secret plan", "state": "done"}
        ]
        states = b"".join(bytes(state) for _, _, state in stored_records(store, chat))
        assert (b"a secret plan" in states) is ("cipher_key" not in options)
    encrypted.close_all()
    if durable_backend.name == "postgres":
        drop_schema(encrypted.url)


def test_a_batch_is_stored_as_the_json_pydantic_gives_its_event(durable_backend: Backend) -> None:
    """Chunks are written as received (no per-value pass through pydantic, which was most of a
    batch's storing cost); the stored JSON still holds exactly the event's pydantic JSON form,
    unusual values included."""
    store = durable_backend.open()
    store.start_conversation("chat")
    chunks = [
        {"type": "start", "messageMetadata": {"n": 1.5, "big": 2**60, "list": [None, True, "é"]}},
        {"type": "text-start", "id": "t"},
        {"type": "text-delta", "id": "t", "delta": "caf\u00e9 \U0001f600"},
        {"type": "text-end", "id": "t"},
    ]
    with store.open_stream("chat") as stream:
        for chunk in chunks:
            stream.append(chunk)
    mapper: Any = store.log.mapper
    events = stored_events(store, "chat")
    batches = [
        (json.loads(mapper.content(state)), event)
        for (_version, _topic, state), event in zip(
            stored_records(store, "chat"), events, strict=True
        )
        if isinstance(event, ChunksReceived)
    ]
    assert [chunk for _stored, event in batches for chunk in event.chunks] == chunks
    for stored, event in batches:
        expected = event.model_dump(
            mode="json", exclude={"originator_id", "originator_version"}, exclude_defaults=True
        )
        assert stored == expected
