"""The general chunk check's shortcut for the usual chunks: bare deltas and plain framing chunks.

``fold_checked`` checks any chunk with ``Limits.chunk_cost`` (storable, names,
sizes) and ``check_chunk`` (the dialect's models). Besides the text deltas an
open part takes at once (``OpenStream.receive_plain_delta``), a stream is made
of bare deltas (``tool-input-delta`` among them) and a few framing chunks
(``start``, ``start-step``, ``text-start``, ``text-end``, ``finish-step``,
``finish``, the reasoning parts' start and end, ``tool-input-start``) whose
values are short strings. ``usual_cost`` gives such a
chunk's cost without encoding it as JSON or running the models, or None when
it cannot vouch for it: the general check then decides, refusals included.

A framing chunk's shape (its model, its keys and its finish reason) decides
whether the models take it, as its values are strings; the models check each
shape the first time it comes, and the shapes they took are remembered (a
handful: the keys and finish reasons the models know).
"""

from __future__ import annotations

from json.encoder import encode_basestring
from typing import Any, Final

from chatledger.domain.chunks import check_chunk
from chatledger.domain.dialects import Dialect
from chatledger.domain.errors import InvalidChunkError, InvalidInputError
from chatledger.domain.limits import PART_ALLOWANCE, Limits, check_name

__all__ = ["usual_cost"]

_FRAMING: Final = frozenset(
    {
        "start",
        "start-step",
        "text-start",
        "text-end",
        "reasoning-start",
        "reasoning-end",
        "finish-step",
        "finish",
        "tool-input-start",
    }
)
_FRAMING_KEYS: Final = frozenset(
    {"type", "id", "messageId", "finishReason", "toolCallId", "toolName"}
)
"""The keys a framing chunk may have to take the shortcut (each a string)."""
_BARE_DELTAS: Final = {
    "text-delta": ("id", "delta"),
    "reasoning-delta": ("id", "delta"),
    "tool-input-delta": ("toolCallId", "inputTextDelta"),
}
"""Delta type -> its id's key and its text's key (as ``check_chunk``'s and ``delta_text``'s)."""
_NAMED: Final = ("messageId", "toolCallId", "toolName")
"""The keys of these chunks whose values are names (``Limits.chunk_cost`` checks them)."""

_accepted: set[tuple[Any, frozenset[str], str | None]] = set()
"""Framing shapes (model, keys, finish reason) the models took."""


def usual_cost(chunk: Any, dialect: Dialect, limits: Limits) -> int | None:
    """``limits.chunk_cost(chunk)`` for a usual chunk that ``check_chunk`` takes; else None.

    A bare delta (its type, its id, its text) costs its text's length; a
    framing chunk whose keys are among type, id, messageId, finishReason,
    toolCallId and toolName, each a string, costs its JSON size plus
    ``PART_ALLOWANCE``. Either must be within ``limits.max_chunk_bytes`` and
    its names (messageId, toolCallId, toolName) must pass ``check_name``. None means nothing was decided.
    """
    if type(chunk) is not dict or type(limits) is not Limits or limits.max_depth < 1:
        return None
    kind = chunk.get("type")
    if type(kind) is not str:
        return None
    delta_keys = _BARE_DELTAS.get(kind)
    if delta_keys is None:
        if kind not in _FRAMING:
            return None
    elif len(chunk) != 3 or delta_keys[0] not in chunk or delta_keys[1] not in chunk:
        return None
    size = 1  # the braces, less the comma the first key does not need
    for key, value in chunk.items():
        if type(value) is not str or (delta_keys is None and key not in _FRAMING_KEYS):
            return None
        if value.isascii():
            size += len(key) + 4 + len(encode_basestring(value))
        else:
            try:
                size += len(key) + 4 + len(encode_basestring(value).encode())
            except UnicodeEncodeError:  # a lone surrogate: refused there
                return None
    if size > limits.max_chunk_bytes:
        return None
    for key in _NAMED:
        name = chunk.get(key)
        if name is not None:
            try:
                check_name(key, name)
            except InvalidInputError:
                return None
    if delta_keys is not None:
        return len(chunk[delta_keys[1]])
    shape = (dialect.chunk_models.get(kind), frozenset(chunk), chunk.get("finishReason"))
    if shape not in _accepted:
        try:
            check_chunk(chunk, dialect)
        except InvalidChunkError:
            return None
        _accepted.add(shape)
    return size + PART_ALLOWANCE
