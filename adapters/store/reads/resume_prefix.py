"""What an AI SDK 7 resume sends before the open stream: the message as its continuation found it."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from chatledger.domain.message_replay import replay_chunks

if TYPE_CHECKING:
    from chatledger.adapters.store.reads.reader import Reader

__all__ = ["resume_prefix_of"]

log = logging.getLogger("chatledger.reads")


def resume_prefix_of(reader: Reader, tenant: str, chat_id: str) -> list[dict[str, Any]]:
    """The chunks of the continued message as it stood when its open stream began (``Reader.resume_prefix``)."""
    state = reader.stored_state(chat_id, tenant=tenant)
    if state is None or not state.dialect.replays_message_on_resume:
        return []
    stream = state.stream
    if stream is None or not stream.continuation:
        return []
    opened = reader.history(chat_id, tenant=tenant, kinds=["stream-opened"])
    if not opened or opened[-1].details.get("streamId") != stream.stream_id:
        return []
    before = reader.messages(chat_id, tenant=tenant, at_version=opened[-1].position - 1)
    if stream.message_index >= len(before):
        return []
    chunks = replay_chunks(before[stream.message_index])
    if chunks is None:
        log.warning(
            "chat %r: message %r cannot be replayed as chunks; resuming its stream alone",
            chat_id,
            before[stream.message_index].get("id"),
        )
        return []
    return chunks
