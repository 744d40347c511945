"""AI SDK UIMessages (``useChat``'s ``messages``), v6 and v7: chatledger's own shape.

Reading checks each message as the SDK's ``validateUIMessages`` of that
major does (the store checks them again as it appends them); nothing is
changed or dropped. Writing gives the conversation's messages as they are,
for the conversation's own major; for the other major:

- v7 → v6 drops the parts v6 has no type for (``custom``,
  ``reasoning-file``, ``steering-message``) and an approval's
  ``isAutomatic``, each named in the report;
- v6 → v7 keeps everything (v7 reads every v6 part).

Any other part the target major refuses is dropped and named, so an
export always validates in its target.
"""

from __future__ import annotations

import copy
from typing import Any

from chatledger.adapters.formats.format import Exported, Format, Imported, Json, message_list
from chatledger.adapters.formats.losses import LossReport
from chatledger.domain.dialects import V6, V7, Dialect
from chatledger.domain.errors import InvalidInputError, InvalidMessageError
from chatledger.domain.parts import check_message

__all__ = ["AI_SDK_6", "AI_SDK_7", "read_ui_messages", "write_ui_messages"]

_DIALECTS = {6: V6, 7: V7}
_ONLY_V7 = frozenset(V7.part_models) - frozenset(V6.part_models)


def read_ui_messages(value: Any, major: int) -> Imported:
    """UIMessages of AI SDK ``major`` (a list, or ``{"messages": [...]}``), checked, unchanged."""
    name = f"ai-sdk-{major}"
    messages = message_list(value, f"an {name} file")
    for index, message in enumerate(messages):
        try:
            check_message(message, _DIALECTS[major])
        except InvalidMessageError as error:
            raise InvalidInputError(f"{name} message {index}: {error}") from None
    return Imported(messages, LossReport(name, "import", len(messages)), ai_sdk=major)


def write_ui_messages(messages: list[Json], source: int, major: int) -> Exported:
    """The messages for AI SDK ``major`` (from a conversation speaking ``source``)."""
    report = LossReport(f"ai-sdk-{major}", "export", len(messages))
    out = copy.deepcopy(messages)
    if source == major:
        return Exported(out, report)
    dialect = _DIALECTS[major]
    for message in out:
        kept: list[Json] = []
        for index, part in enumerate(message["parts"]):
            kind = part.get("type")
            if kind in _ONLY_V7 and major == 6:
                report.add(kind, "AI SDK 6 has no such part", message["id"], index)
                continue
            approval = part.get("approval")
            if major == 6 and isinstance(approval, dict) and "isAutomatic" in approval:
                del approval["isAutomatic"]
                report.add("approval.isAutomatic", "AI SDK 6 approvals have no such field",
                           message["id"], index)  # fmt: skip
            if _refused(part, message, dialect):
                report.add(str(kind), f"AI SDK {major} refuses this part", message["id"], index)
                continue
            kept.append(part)
        message["parts"] = kept
    return Exported(out, report)


def _refused(part: Json, message: Json, dialect: Dialect) -> bool:
    try:
        check_message({"id": message["id"], "role": message["role"], "parts": [part]}, dialect)
    except InvalidMessageError:
        return True
    return False


AI_SDK_6 = Format(
    "ai-sdk-6",
    "AI SDK 6 UIMessages (useChat's messages), a JSON array",
    lambda value: read_ui_messages(value, 6),
    lambda messages, source, _history: write_ui_messages(messages, source, 6),
)
AI_SDK_7 = Format(
    "ai-sdk-7",
    "AI SDK 7 UIMessages (useChat's messages), a JSON array",
    lambda value: read_ui_messages(value, 7),
    lambda messages, source, _history: write_ui_messages(messages, source, 7),
)
