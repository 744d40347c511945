"""The AI SDK majors chatledger speaks, each a ``Dialect``: the one place where versions differ.

A conversation records the major it speaks when it starts
(``ConversationStarted.ai_sdk``, an int: the public spelling). ``dialect_for``
turns that int into its dialect once, refusing any other value, and the rest
of the domain asks the dialect (``state.dialect.steers``), never the number.
Speaking a new major means adding one dialect here.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from chatledger.domain.dialects.dialect import Dialect, ModelMessageRules
from chatledger.domain.dialects.v6 import V6
from chatledger.domain.dialects.v7 import V7
from chatledger.domain.errors import InvalidAiSdkVersionError

__all__ = [
    "DIALECTS",
    "IMPLICIT_MAJOR",
    "SDK_VERSIONS",
    "V6",
    "V7",
    "Dialect",
    "ModelMessageRules",
    "dialect_for",
]

DIALECTS: Final[Mapping[int, Dialect]] = MappingProxyType({6: V6, 7: V7})
"""AI SDK major -> its dialect."""
SDK_VERSIONS: Final = tuple(DIALECTS)
"""The AI SDK majors chatledger speaks."""
IMPLICIT_MAJOR: Final = 6
"""The major of a conversation whose events or snapshot name none (recorded before AI SDK 7)."""


def dialect_for(major: object, *, where: str = "ai_sdk") -> Dialect:
    """The dialect of AI SDK ``major``; any other value raises ``InvalidAiSdkVersionError``.

    ``where`` names the setting in the error (``ai_sdk``, ``--ai-sdk``, ...).
    """
    for dialect in DIALECTS.values():
        if major == dialect.major:
            return dialect
    raise InvalidAiSdkVersionError(major, where=where)
