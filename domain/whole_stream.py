"""Folding a whole stream at once (the SDK's ``readUIMessageStream``), by the rules the store applies live."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from chatledger.domain.chunks import check_chunk
from chatledger.domain.conversation import ConversationState
from chatledger.domain.dialects import IMPLICIT_MAJOR
from chatledger.domain.errors import InvalidChunkError

__all__ = ["fold_into_conversation", "fold_stream"]


def fold_stream(
    chunks: Iterable[Mapping[str, Any]],
    message: dict[str, Any] | None = None,
    *,
    ai_sdk: int = IMPLICIT_MAJOR,
) -> dict[str, Any]:
    """Fold a whole stream like ``readUIMessageStream(message?)`` and return the final message.

    A given assistant ``message`` is continued (a copy; the argument is not
    changed); any other starting message only lends its id, as in the SDK.
    Replays change nothing (docs/behaviour.md §3.2). Raises InvalidChunkError, naming the
    chunk's position, at the first chunk that is refused (docs/behaviour.md §3.4).
    ``ai_sdk`` picks the AI SDK major whose chunks and fold apply (6 or 7).
    """
    if message is not None and message.get("role") == "assistant":
        folded = fold_into_conversation([message], chunks, continuation=True, ai_sdk=ai_sdk)
    else:
        start_id = message["id"] if message is not None else ""
        folded = fold_into_conversation([], chunks, message_id=start_id, ai_sdk=ai_sdk)
    result: dict[str, Any] = folded[-1]
    return result


def fold_into_conversation(
    messages: list[dict[str, Any]],
    chunks: Iterable[Mapping[str, Any]],
    *,
    continuation: bool = False,
    message_id: str = "",
    ai_sdk: int = IMPLICIT_MAJOR,
) -> list[dict[str, Any]]:
    """Fold one stream into a copy of ``messages`` and return the new list.

    Every chunk is schema-checked first (as a chunk of AI SDK ``ai_sdk``); the
    first refused chunk raises InvalidChunkError naming its position.
    """
    state = ConversationState("", "", ai_sdk=ai_sdk)
    for message in copy.deepcopy(messages):
        state.append_message(message)
    state.open_stream(
        "s", message_id, continuation=continuation, trigger="submit-message", actor=""
    )
    for chunk in chunks:
        try:
            check_chunk(chunk, state.dialect)
        except InvalidChunkError as error:
            raise error.at(state.skip_position()) from None
        state.receive_chunk(chunk)
    return state.messages
