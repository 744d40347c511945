"""Every format chatledger imports and exports, by name: the one list both CLI commands use."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from chatledger.adapters.formats.ai_sdk import AI_SDK_6, AI_SDK_7
from chatledger.adapters.formats.bundle import NAME as BUNDLE
from chatledger.adapters.formats.bundle import read_bundle
from chatledger.adapters.formats.format import Format
from chatledger.domain.errors import InvalidInputError

__all__ = ["BUNDLE", "FORMATS", "NAMES", "format_named"]


FORMATS: Mapping[str, Format] = MappingProxyType(
    {
        f.name: f
        for f in (
            AI_SDK_7,
            AI_SDK_6,
            Format(BUNDLE, "a verifiable chatledger bundle (JSON Lines)", read_bundle, None),
        )
    }
)
"""Format name -> ``Format``."""

NAMES = tuple(FORMATS)
"""The format names, in the order help lists them."""


def format_named(name: str) -> Format:
    """The format called ``name``; InvalidInputError listing the known ones otherwise."""
    found = FORMATS.get(name)
    if found is None:
        raise InvalidInputError(f"unknown format {name!r}: use one of {', '.join(NAMES)}")
    return found
