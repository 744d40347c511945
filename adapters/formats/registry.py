"""Every format chatledger imports and exports, by name: the one list both CLI commands use.

A format's module is imported when the format is used, so a format whose
framework is an optional extra (``pydantic-ai``, ``langchain``) costs
nothing, and says which extra to install, when that extra is missing; this
module imports nothing heavy (the command line's help reads it).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chatledger.adapters.formats.format import Format

__all__ = ["BUNDLE", "FORMATS", "NAMES", "Listed", "format_named"]

BUNDLE = "chatledger"
"""The name of the chatledger bundle format (written by the store, not by a ``Format.write``)."""


@dataclass(frozen=True)
class Listed:
    """A format as the registry lists it: where its ``Format`` lives, and the extra it needs."""

    name: str
    summary: str
    module: str
    """``chatledger.adapters.formats.<module>``, holding ``attribute``."""
    attribute: str
    extra: str | None = None
    """The pip extra that installs the framework (None: nothing to install)."""


FORMATS: Mapping[str, Listed] = MappingProxyType(
    {
        listed.name: listed
        for listed in (
            Listed("ai-sdk-7", "AI SDK 7 UIMessages (useChat's messages)", "ai_sdk", "AI_SDK_7"),
            Listed("ai-sdk-6", "AI SDK 6 UIMessages (useChat's messages)", "ai_sdk", "AI_SDK_6"),
            Listed("openai-agents", "OpenAI Agents SDK session items", "openai_agents",
                   "OPENAI_AGENTS"),
            Listed("pydantic-ai", "Pydantic AI ModelMessages (JSON)", "pydantic_ai", "PYDANTIC_AI",
                   "pydantic-ai"),
            Listed("langchain", "LangChain / LangGraph messages (messages_to_dict JSON)",
                   "langchain", "LANGCHAIN", "langchain"),
            Listed("chatgpt", "a ChatGPT data export (conversations.json)", "chatgpt", "CHATGPT"),
            Listed(BUNDLE, "a verifiable chatledger bundle (JSON Lines, 'chatledger export')",
                   "bundle", "CHATLEDGER_BUNDLE"),
        )
    }
)  # fmt: skip
"""Format name -> where it lives, in the order help lists them."""

NAMES = tuple(FORMATS)
"""The format names."""


def format_named(name: str) -> Format:
    """The format called ``name`` (its module imported); InvalidInputError for an unknown one.

    A format whose framework is not installed is an InvalidInputError naming the extra.
    """
    from chatledger.domain.errors import InvalidInputError

    listed = FORMATS.get(name) if isinstance(name, str) else None
    if listed is None:
        raise InvalidInputError(f"unknown format {name!r}: use one of {', '.join(NAMES)}")
    try:
        module = importlib.import_module(f"chatledger.adapters.formats.{listed.module}")
    except ImportError as error:
        raise InvalidInputError(
            f"format {name!r} needs {error.name or 'its framework'}: "
            f"pip install 'chatledger[{listed.extra}]'"
        ) from None
    found: Format = getattr(module, listed.attribute)
    return found
