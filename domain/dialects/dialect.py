"""What one AI SDK major is to chatledger: its wire models, its fold and its turn rules, as one frozen value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, get_args

from chatledger.domain._wire import WireModel
from chatledger.domain.fold import FoldHandler

__all__ = ["Dialect", "ModelMessageRules", "models_by_type"]


@dataclass(frozen=True)
class ModelMessageRules:
    """Where a major's ``convertToModelMessages`` differs from AI SDK 6's (``convert.ai_sdk``).

    The converter also follows the dialect's turn rules: superseded approval
    requests are dropped, and a steering message speaks as the user.
    """

    content_part_types: frozenset[str]
    """Part types, beyond text, reasoning and files, that an assistant step sends as content."""
    file_data_as_url: bool
    """A file goes as ``{type: 'url', url}`` (the WHATWG href) or a provider reference (v6: the URL string)."""
    approval_request_details: bool
    """An approval request passes on ``isAutomatic`` and the reason it was requested."""
    denial_result: bool
    """A denied ``approval-responded`` call also gets an ``execution-denied`` tool result."""


@dataclass(frozen=True, eq=False)
class Dialect:
    """One AI SDK major's rules, as data; look one up with ``dialects.dialect_for``.

    Everything that differs between majors is here, so that the rest of the
    domain asks the dialect (``state.dialect.steers``) instead of the number.
    """

    major: int
    """The AI SDK major (what ``ConversationStarted.ai_sdk`` records)."""
    chunk_models: Mapping[str, type[WireModel]]
    """Fixed chunk type -> its model (any ``data-*`` type is a data chunk besides)."""
    part_models: Mapping[str, type[WireModel]]
    """Part type -> model, for the part types this major adds to v6's (``parts``)."""
    fold_handlers: Mapping[str, FoldHandler]
    """Fixed chunk type -> how the fold applies it (``fold.StreamFold``)."""
    partial_json_strict: bool
    """Partial tool input is repaired by AI SDK 7's ``fixJson``: a half-read first array item is dropped."""
    steers: bool
    """A user message sent while a stream runs is queued as a steering message (else refused)."""
    supersedes_approvals: bool
    """A new user message leaves older pending approval requests behind: answering them changes nothing."""
    halts_on_interrupted: bool
    """A stream that finishes ``interrupted`` halts its message: nothing continues it, late answers change nothing."""
    replays_message_on_resume: bool
    """A resumed continuation stream is preceded by its message as chunks (the client rebuilds it)."""
    stream_encoding: Literal[6, 7]
    """The UI message stream version a responder encodes chunks for."""
    model_messages: ModelMessageRules
    """How ``convertToModelMessages`` differs from v6's."""


def models_by_type(*models: type[WireModel]) -> Mapping[str, type[WireModel]]:
    """A read-only table ``type`` literal -> model, for wire models with a literal ``type`` field."""
    return MappingProxyType(
        {get_args(model.model_fields["type"].annotation)[0]: model for model in models}
    )
