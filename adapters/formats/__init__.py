"""Conversations in other frameworks' formats: import into chatledger and export from it.

One module per format, each a pure mapping (``read``: the format's value →
UIMessages and tool outputs; ``write``: UIMessages → the format's value),
each naming what it cannot carry in a ``LossReport``; ``registry`` lists
them; ``service`` records an import in the store and reads an export from
it::

    from chatledger.adapters.formats import export_conversation, import_conversation

    result = import_conversation(store, "chat-9", items, "openai-agents")
    print(result.report)                       # what, if anything, was dropped
    exported = export_conversation(store, "chat-9", "langchain")
    exported.value, exported.report
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chatledger.adapters.formats.format import Exported, Format, Imported, ToolOutput
    from chatledger.adapters.formats.losses import Loss, LossReport
    from chatledger.adapters.formats.registry import FORMATS, NAMES, Listed, format_named
    from chatledger.adapters.formats.service import (
        ImportResult,
        export_conversation,
        import_conversation,
        read_format,
    )

_HOMES = {
    "Exported": "format", "Format": "format", "Imported": "format", "ToolOutput": "format",
    "Loss": "losses", "LossReport": "losses",
    "FORMATS": "registry", "NAMES": "registry", "Listed": "registry", "format_named": "registry",
    "ImportResult": "service", "export_conversation": "service",
    "import_conversation": "service", "read_format": "service",
}  # fmt: skip
"""Each public name and the module it lives in: loaded on first use, so the command line's
help (which reads only ``registry``) stays light."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


__all__ = [
    "FORMATS",
    "NAMES",
    "Exported",
    "Format",
    "ImportResult",
    "Imported",
    "Listed",
    "Loss",
    "LossReport",
    "ToolOutput",
    "export_conversation",
    "format_named",
    "import_conversation",
    "read_format",
]
