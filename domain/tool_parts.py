"""Tool parts of a UIMessage: how the AI SDK finds and writes them, and their states."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "MISSING",
    "find_in_current_step",
    "is_terminal",
    "is_tool_part",
    "new_tool_part",
    "part_for_approval",
    "static_tool_name",
    "tool_name",
    "write_tool_part",
]


class _Missing:
    """JavaScript ``undefined``: the key is absent once the part is serialised."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Final[Any] = _Missing()

_RESULT_STATES: Final = frozenset({"output-available", "output-error"})


def is_tool_part(part: Mapping[str, Any]) -> bool:
    """Whether a part (as JSON) is a tool part: ``tool-<name>`` or ``dynamic-tool``."""
    kind = part.get("type")
    return isinstance(kind, str) and (kind == "dynamic-tool" or kind.startswith("tool-"))


def static_tool_name(part: Mapping[str, Any]) -> str:
    """The tool name of a static part: everything after the first ``-`` of its type."""
    kind: str = part["type"]
    return kind.split("-", 1)[1]


def tool_name(part: Mapping[str, Any]) -> str:
    """The tool a tool part calls: ``toolName`` of a dynamic part, else its type after the first '-'.

    Raises ValueError for a part that is not a tool part.
    """
    kind = part.get("type")
    if kind == "dynamic-tool":
        return str(part["toolName"])
    if isinstance(kind, str) and kind.startswith("tool-"):
        return kind.split("-", 1)[1]
    raise ValueError(f"not a tool part: type {kind!r}")


def is_terminal(part: Mapping[str, Any]) -> bool:
    """Terminal (docs/behaviour.md §1): output-available (not preliminary), output-error, output-denied."""
    state = part.get("state")
    if state == "output-available":
        return part.get("preliminary") is not True
    return state in ("output-error", "output-denied")


def current_step_start(parts: list[dict[str, Any]]) -> int:
    """Index of the first part of the current step (after the last ``step-start``)."""
    for index in range(len(parts) - 1, -1, -1):
        if parts[index]["type"] == "step-start":
            return index + 1
    return 0


def find_in_current_step(
    parts: list[dict[str, Any]], tool_call_id: str, *, dynamic: bool | None
) -> int | None:
    """Index of the current step's tool part for ``tool_call_id``.

    ``dynamic`` limits the search to one kind of part (as the SDK's two writers
    do); ``None`` accepts both.
    """
    for index in range(current_step_start(parts), len(parts)):
        part = parts[index]
        if part.get("toolCallId") != tool_call_id:
            continue
        kind = part["type"]
        if dynamic is None and (kind.startswith("tool-") or kind == "dynamic-tool"):
            return index
        if dynamic is True and kind == "dynamic-tool":
            return index
        if dynamic is False and kind.startswith("tool-"):
            return index
    return None


def part_for_approval(parts: list[dict[str, Any]], approval_id: str) -> dict[str, Any] | None:
    """The tool part of ``parts`` whose approval has ``approval_id`` (the SDK's first match)."""
    for part in parts:
        approval = part.get("approval")
        if is_tool_part(part) and isinstance(approval, dict) and approval.get("id") == approval_id:
            return part
    return None


def _put(target: dict[str, Any], key: str, value: Any) -> None:
    """Assign like JavaScript: assigning ``undefined`` leaves no key behind."""
    if value is MISSING:
        target.pop(key, None)
    else:
        target[key] = value


def write_tool_part(part: dict[str, Any], *, dynamic: bool, **write: Any) -> None:
    """Update an existing tool part in place, as the SDK's ``updateToolPart`` does.

    ``write`` holds: state, tool_name, and any of input, output, error_text,
    raw_input, input_encoding, preliminary, title, tool_metadata,
    provider_executed, provider_metadata. Keys not given are ``undefined``:
    input/output/errorText/rawInput/preliminary are then cleared (SDK c.3).
    """
    state = write["state"]
    part["state"] = state
    if dynamic:
        part["toolName"] = write["tool_name"]
    else:
        part["type"] = f"tool-{write['tool_name']}"
    _put(part, "input", write.get("input", MISSING))
    _put(part, "output", write.get("output", MISSING))
    _put(part, "errorText", write.get("error_text", MISSING))
    _put(part, "rawInput", write.get("raw_input", MISSING))
    _put(part, "inputEncoding", write.get("input_encoding", MISSING))
    _put(part, "preliminary", write.get("preliminary", MISSING))
    title = write.get("title", MISSING)
    if title is not MISSING:
        part["title"] = title
    tool_metadata = write.get("tool_metadata", MISSING)
    if tool_metadata is not MISSING:
        part["toolMetadata"] = tool_metadata
    provider_executed = write.get("provider_executed", MISSING)
    if provider_executed is not MISSING and provider_executed is not None:
        part["providerExecuted"] = provider_executed
    provider_metadata = write.get("provider_metadata", MISSING)
    if provider_metadata is not MISSING and provider_metadata is not None:
        key = "resultProviderMetadata" if state in _RESULT_STATES else "callProviderMetadata"
        part[key] = provider_metadata


def new_tool_part(tool_call_id: str, *, dynamic: bool, **write: Any) -> dict[str, Any]:
    """A new tool part, as the SDK's writers append it (keys left undefined are absent)."""
    part: dict[str, Any] = (
        {"type": "dynamic-tool", "toolName": write["tool_name"]}
        if dynamic
        else {"type": f"tool-{write['tool_name']}"}
    )
    part["toolCallId"] = tool_call_id
    part["state"] = write["state"]
    for key, name in _NEW_PART_FIELDS:
        if dynamic and name == "raw_input":
            continue  # the SDK's dynamic writer does not set rawInput on creation
        _put(part, key, write.get(name, MISSING))
    provider_metadata = write.get("provider_metadata", MISSING)
    if provider_metadata is not MISSING and provider_metadata is not None:
        key = (
            "resultProviderMetadata" if write["state"] in _RESULT_STATES else "callProviderMetadata"
        )
        part[key] = provider_metadata
    return part


_NEW_PART_FIELDS: Final = (
    ("title", "title"),
    ("toolMetadata", "tool_metadata"),
    ("input", "input"),
    ("inputEncoding", "input_encoding"),
    ("output", "output"),
    ("rawInput", "raw_input"),
    ("errorText", "error_text"),
    ("providerExecuted", "provider_executed"),
    ("preliminary", "preliminary"),
)
