"""Writing a conversation as a verifiable bundle (format: ``chatledger.domain.bundle``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TextIO

from chatledger.adapters.persistence.chain import chain_tables
from chatledger.domain.aggregate import conversation_id
from chatledger.domain.bundle import BUNDLE_FORMAT, encode_line, end_line
from chatledger.domain.chain import content_digest
from chatledger.domain.errors import ConversationNotFoundError, InvalidInputError
from chatledger.domain.seal import inclusion_proof

__all__ = ["ExportProgress", "export_bundle"]

ExportProgress = Callable[[int, int], None]
"""Called with (events read, events in the bundle) as the bundle is made."""


def export_bundle(
    log: Any,
    tenant: str,
    chat_id: str,
    out: TextIO,
    at_version: int | None = None,
    progress: ExportProgress | None = None,
) -> int:
    """Write the conversation (up to ``at_version``) with its chain and newest covering seal; returns lines written.

    InvalidInputError when the store keeps no chain (memory://), the version
    is past the conversation's end, or no seal covers the conversation yet;
    ConversationErasedError for an erased conversation.
    """
    tables = chain_tables(log.recorder, log.config.backend)
    if tables is None:
        raise InvalidInputError("a memory:// store keeps no chain: there is nothing to export")
    key = conversation_id(tenant, chat_id)
    events = tables.events(key)
    if not events:
        raise ConversationNotFoundError(tenant, chat_id)
    data_keys = getattr(log.mapper, "data_keys", None)
    erasure = data_keys.erasure(key) if data_keys is not None else None
    if erasure is not None:  # its content is gone: a bundle could hold nothing of it
        raise erasure.error(tenant, chat_id)
    head = events[-1][0]
    version = head if at_version is None else at_version
    if not 1 <= version <= head:
        raise InvalidInputError(
            f"--at-version {at_version} is outside conversation {chat_id!r} (versions 1-{head})"
        )
    found = _covering_seal(tables, key, head)
    if found is None:
        raise InvalidInputError(
            f"no seal covers conversation {chat_id!r} yet: run 'chatledger seal' "
            "(store.operations.seal()) first, then export"
        )
    seal, heads, sealed = found
    chain_start = tables.chain_start()[0]
    lines = [
        encode_line(
            {
                "type": "header",
                "format": BUNDLE_FORMAT,
                "tenant": tenant,
                "chat_id": chat_id,
                "conversation": str(key),
                "version": version,
                "chain_start": chain_start,
                "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
            }
        )
    ]
    included = events[: max(version, sealed.version)]
    for number, topic, state, position in included:
        link, content = log.mapper.unpack(state, key)
        line: dict[str, Any]
        if number <= version:
            line = {
                "type": "event",
                "version": number,
                "topic": topic,
                "position": position,
                "link": link.hex() if link is not None else None,
                "content": content.decode("utf-8"),
            }
        else:
            line = {
                "type": "link",
                "version": number,
                "topic": topic,
                "digest": content_digest(content).hex(),
                "link": link.hex() if link is not None else None,
            }
        lines.append(encode_line(line))
        if progress is not None:
            progress(len(lines) - 1, len(included))
    lines.append(
        encode_line(
            {
                "type": "seal",
                "seal": seal.to_json(),
                "head": {"version": sealed.version, "link": sealed.hash.hex()},
                "proof": [list(step) for step in inclusion_proof(heads, key)],
            }
        )
    )
    lines.append(end_line(lines))
    for text in lines:
        out.write(text + "\n")
    return len(lines)


def _covering_seal(tables: Any, key: Any, head: int) -> Any:
    """(seal, its heads, this conversation's head in it) of the newest seal that covers it."""
    for seal in reversed(tables.seals()):
        heads = tables.seal_heads(seal.seq)
        mine = next((h for h in heads if h.conversation == key and h.version <= head), None)
        if mine is not None:
            return seal, heads, mine
    return None
