"""AI SDK ``ModelMessage`` JSON from UIMessages: a port of ``convertToModelMessages`` (``ai@6.0.326``).

The result is what the SDK's result serialises to: a key the SDK leaves
``undefined`` is absent, a ``null`` stays ``null``. The SDK is matched as
called with no ``tools`` and no ``convertDataPart``, so data parts are dropped.
Where the SDK throws (an unsupported role, or a ``TypeError`` on a malformed
message), ``MessageConversionError`` is raised instead.
"""

from __future__ import annotations

import copy
import json
import math
import re
from decimal import Decimal
from typing import Any, Final

from chatledger.domain.errors import MessageConversionError
from chatledger.domain.tool_parts import MISSING, is_tool_part, static_tool_name

__all__ = ["convert"]

Json = dict[str, Any]

_DENIED: Final = "Tool call execution denied."
_UNAVAILABLE_TOOL: Final = "Tool output omitted because the tool is no longer available."
_BLOCK_KINDS: Final = ("text", "reasoning", "file")


def convert(
    messages: list[dict[str, Any]], *, ignore_incomplete_tool_calls: bool = False
) -> list[dict[str, Any]]:
    """The SDK's ``convertToModelMessages(messages, {ignoreIncompleteToolCalls})`` as JSON.

    Pure: ``messages`` is not changed and shares nothing with the result.
    Raises ``MessageConversionError`` where the SDK throws.
    """
    if ignore_incomplete_tool_calls:
        messages = [_without_incomplete_tool_calls(message) for message in messages]
    converted: list[Json] = []
    for message in messages:
        converted += _convert_message(message)
    return converted


def _convert_message(message: Any) -> list[Json]:
    if not isinstance(message, dict):
        raise _error(message, f"a message is not an object: {_show(message)}")
    role = message.get("role", MISSING)
    if role == "system":
        return [_system_message(message)]
    if role == "user":
        return [_user_message(message)]
    if role == "assistant":
        return _assistant_messages(message)
    raise _error(message, f"unsupported role {_show(role)}")


# -- the ignoreIncompleteToolCalls pre-filter ---------------------------------------------------


def _without_incomplete_tool_calls(message: Any) -> Any:
    """The message without tool parts that have no answer yet (a shallow copy)."""
    parts = _parts(message)
    kept = [part for part in parts if not _is_tool(part, message) or _is_complete(part)]
    return {**message, "parts": kept}


def _is_complete(part: Json) -> bool:
    state = part.get("state")
    if state == "output-available":
        return part.get("preliminary") is not True
    return state in ("approval-responded", "output-error", "output-denied")


# -- system and user messages -------------------------------------------------------------------


def _system_message(message: Json) -> Json:
    """All text joined with no separator; other parts ignored; metadata merged shallowly."""
    texts = [part for part in _parts(message) if _is_system_text(part, message)]
    merged: Json = {}
    for part in texts:
        if part.get("providerMetadata") is not None:
            merged |= _spread(part["providerMetadata"])
    system: Json = {"role": "system", "content": "".join(_js_string(p.get("text")) for p in texts)}
    # Emitted even with no text at all (content "").
    return system | ({"providerOptions": copy.deepcopy(merged)} if merged else {})


def _is_system_text(part: Any, message: Json) -> bool:
    if part is None:
        raise _error(message, "a part is null")
    return isinstance(part, dict) and part.get("type") == "text"


def _user_message(message: Json) -> Json:
    """Text and file parts in order; everything else (data, reasoning, tools, ...) dropped."""
    content: list[Json] = []
    for part in _parts(message):
        kind = _kind(part, message)
        if kind == "text":
            content.append(_text(part))
        elif kind == "file":
            content.append(_file(part))
    # Emitted even when no part is left.
    return {"role": "user", "content": content}


# -- assistant messages: one block per step ------------------------------------------------------


def _assistant_messages(message: Json) -> list[Json]:
    """An assistant message, then a tool message, for each non-empty step."""
    parts = message.get("parts")
    if parts is None:
        return []  # the SDK skips an assistant message without parts
    if parts == "":
        return []  # the SDK iterates a string's characters: there are none
    if not isinstance(parts, list):
        raise _error(message, f"parts is not a list: {_show(parts)}")
    converted: list[Json] = []
    for block in _blocks(parts, message):
        converted += _block_messages(block)
    return converted


def _blocks(parts: list[Any], message: Json) -> list[list[Json]]:
    """The parts cut at every ``step-start``; sources and unknown parts left out."""
    blocks: list[list[Json]] = [[]]
    for part in parts:
        kind = _kind(part, message)
        if kind in _BLOCK_KINDS or is_tool_part(part) or kind.startswith("data-"):
            blocks[-1].append(part)
        elif kind == "step-start":
            blocks.append([])
    return [block for block in blocks if block]


def _block_messages(block: list[Json]) -> list[Json]:
    messages: list[Json] = []
    content = [item for part in block for item in _assistant_content(part)]
    if content:
        messages.append({"role": "assistant", "content": content})
    answers = [item for part in block if _in_tool_message(part) for item in _tool_content(part)]
    if answers:
        messages.append({"role": "tool", "content": answers})
    return messages


def _assistant_content(part: Json) -> list[Json]:
    kind = part["type"]
    if kind == "text":
        return [_text(part)]
    if kind == "file":
        return [_file(part)]
    if kind == "reasoning":
        # Unlike text and files, reasoning passes its metadata on as it is, null included.
        reasoning = {"type": "reasoning", "text": _get(part, "text")}
        return [_defined(reasoning | {"providerOptions": _get(part, "providerMetadata")})]
    if is_tool_part(part):
        return _tool_call_content(part)
    return []  # a data part: dropped, as the SDK does without convertDataPart


def _text(part: Json) -> Json:
    text = _defined({"type": "text", "text": _get(part, "text")})
    return text | _provider_options(part.get("providerMetadata"))


def _file(part: Json) -> Json:
    fields = {"mediaType": _get(part, "mediaType"), "filename": _get(part, "filename")}
    file = _defined({"type": "file", **fields, "data": _get(part, "url")})
    return file | _provider_options(part.get("providerMetadata"))


# -- tool parts in the assistant message ---------------------------------------------------------


def _tool_call_content(part: Json) -> list[Json]:
    """The call, its approval request, and a provider-executed tool's result."""
    state = part.get("state")
    if state == "input-streaming":
        return []
    content = [_tool_call(part)]
    # Any part with an approval object gets a request, whatever its state.
    if part.get("approval") is not None:
        content.append(_approval_request(part, part["approval"]))
    if part.get("providerExecuted") is True and state in ("output-available", "output-error"):
        content.append(_provider_executed_result(part))
    return content


def _tool_call(part: Json) -> Json:
    metadata = part.get("callProviderMetadata")
    if metadata is None and part.get("state") == "output-error":
        metadata = part.get("resultProviderMetadata")
    call = {
        "type": "tool-call",
        "toolCallId": _get(part, "toolCallId"),
        "toolName": _tool_name(part),
        "input": _tool_call_input(part),
        "providerExecuted": _get(part, "providerExecuted"),
    }
    return _defined(call) | _provider_options(metadata)


def _tool_call_input(part: Json) -> Any:
    if part.get("state") != "output-error" or part.get("input") is not None:
        return _get(part, "input")
    # A failed call without input (or with input null) sends the model its raw input
    # text, so an invalid call goes back as it was written; absent rawInput: no input key.
    return _get(part, "rawInput")


def _approval_request(part: Json, approval: Any) -> Json:
    request = _defined(
        {
            "type": "tool-approval-request",
            "approvalId": _get(approval, "id"),
            "toolCallId": _get(part, "toolCallId"),
        }
    )
    # The SDK tests inputSchemaInput with hasOwnProperty (null counts) but signature
    # with != null; the descriptor is not passed on.
    if isinstance(approval, dict) and "inputSchemaInput" in approval:
        request["inputSchemaInput"] = copy.deepcopy(approval["inputSchemaInput"])
    signature = _get(approval, "signature")
    if not _nullish(signature):
        request["signature"] = signature
    return request


def _provider_executed_result(part: Json) -> Json:
    """A provider-executed tool's result stays in the assistant message; errors as error-json."""
    if part.get("state") == "output-error":
        output: Json = {"type": "error-json", "value": copy.deepcopy(part.get("errorText"))}
    else:
        output = _model_output(part)
    metadata = part.get("resultProviderMetadata")
    if metadata is None:
        metadata = part.get("callProviderMetadata")
    return _tool_result(part, output, metadata)


# -- tool parts in the tool message ------------------------------------------------------------


def _in_tool_message(part: Json) -> bool:
    if not is_tool_part(part):
        return False
    return part.get("providerExecuted") is not True or _approved(part) is not None


def _tool_content(part: Json) -> list[Json]:
    """The approval answer (if any), then the result of a finished, client-executed call."""
    content: list[Json] = []
    if _approved(part) is not None:
        content.append(_approval_response(part, part["approval"]))
    if part.get("providerExecuted") is True:
        return content  # its result is in the assistant message
    metadata = part.get("callProviderMetadata")
    state = part.get("state")
    if state == "output-denied":
        content.append(_tool_result(part, _denial(part), metadata))
    elif state == "output-error":
        error = {"type": "error-text", "value": _error_message(part.get("errorText"))}
        content.append(_tool_result(part, error, metadata))
    elif state == "output-available":
        content.append(_tool_result(part, _model_output(part), metadata))
    # approval-responded parts, approved or denied, get no tool-result in v6.
    return content


def _approved(part: Json) -> Any:
    approval = part.get("approval")
    return approval.get("approved") if isinstance(approval, dict) else None


def _approval_response(part: Json, approval: Json) -> Json:
    response = {
        "type": "tool-approval-response",
        "approvalId": _get(approval, "id"),
        "approved": _get(approval, "approved"),
        "reason": _get(approval, "reason"),
        "providerExecuted": _get(part, "providerExecuted"),
    }
    return _defined(response)


def _denial(part: Json) -> Json:
    # The denial reason is given back (not the "execution-denied" output streamText uses).
    reason = _get(part.get("approval"), "reason")
    return {"type": "error-text", "value": _DENIED if _nullish(reason) else reason}


def _tool_result(part: Json, output: Json, metadata: Any) -> Json:
    result = {
        "type": "tool-result",
        "toolCallId": _get(part, "toolCallId"),
        "toolName": _tool_name(part),
        "output": output,
    }
    return _defined(result) | _provider_options(metadata)


def _model_output(part: Json) -> Json:
    """A finished call's output: text for a string, else JSON (missing output: null)."""
    # Validation marks a dynamic part whose tool is gone with dynamic: false; with no
    # tools given, the SDK then hides its output even when the tool still exists.
    if part["type"] == "dynamic-tool" and part.get("dynamic") is False:
        return {"type": "text", "value": _UNAVAILABLE_TOOL}
    output = part.get("output")
    if isinstance(output, str):
        return {"type": "text", "value": output}
    return {"type": "json", "value": copy.deepcopy(output)}


def _error_message(error: Any) -> str:
    """The SDK's ``getErrorMessage``: the text of a string, else its JSON."""
    if error is None:
        return "unknown error"
    return error if isinstance(error, str) else _json_stringify(error)


def _tool_name(part: Json) -> Any:
    """``getToolName``: a dynamic part's ``toolName`` as it is (maybe absent), else from the type."""
    return _get(part, "toolName") if part["type"] == "dynamic-tool" else static_tool_name(part)


# -- JSON dicts as JavaScript objects ------------------------------------------------------------


def _parts(message: Any) -> list[Any]:
    """``message.parts`` where the SDK calls an array method on it."""
    parts = message.get("parts") if isinstance(message, dict) else None
    if not isinstance(parts, list):
        raise _error(message, f"parts is not a list: {_show(parts)}")
    return parts


def _kind(part: Any, message: Any) -> str:
    """``part.type``, where the SDK calls ``startsWith`` on it (a TypeError unless a string)."""
    kind = part.get("type") if isinstance(part, dict) else None
    if not isinstance(kind, str):
        raise _error(message, f"the part {_show(part)} has no string 'type'")
    return kind


def _is_tool(part: Any, message: Any) -> bool:
    kind = _kind(part, message)
    return kind == "dynamic-tool" or kind.startswith("tool-")


def _nullish(value: Any) -> bool:
    """JavaScript's ``value == null``: null or undefined."""
    return value is None or value is MISSING


def _get(source: Any, key: str) -> Any:
    """``source[key]`` copied, or ``MISSING`` (undefined) when ``source`` has no such key."""
    if isinstance(source, dict) and key in source:
        return copy.deepcopy(source[key])
    return MISSING


def _defined(fields: Json) -> Json:
    """An object as JSON serialises it: undefined values leave no key."""
    return {key: value for key, value in fields.items() if value is not MISSING}


def _provider_options(metadata: Any) -> Json:
    """``providerOptions``, only when the metadata is neither null nor undefined."""
    return {} if metadata is None else {"providerOptions": copy.deepcopy(metadata)}


def _spread(value: Any) -> Json:
    """The own enumerable properties that ``{...value}`` copies."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return {str(index): item for index, item in enumerate(value)}
    if isinstance(value, str):  # a string spreads its UTF-16 code units
        units = value.encode("utf-16-le", "surrogatepass")
        return {
            str(index // 2): units[index : index + 2].decode("utf-16-le", "surrogatepass")
            for index in range(0, len(units), 2)
        }
    return {}


def _js_string(value: Any) -> str:
    """``String(value)`` as ``Array.prototype.join`` uses it: null and undefined give ""."""
    if _nullish(value):
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _js_number(value)
    if isinstance(value, list):
        return ",".join(_js_string(item) for item in value)
    return "[object Object]"


def _js_number(value: int | float) -> str:
    """``String(number)``: shortest round-trip digits, exponent only beyond 1e21 or below 1e-6."""
    try:
        number = float(value)  # a JavaScript number is a double
    except OverflowError:  # JSON.parse reads a longer integer as Infinity
        number = math.inf if value > 0 else -math.inf
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0:
        return "0"
    _, digit_tuple, exponent = Decimal(repr(abs(number))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    point = int(exponent) + len(digits)  # the value is 0.<digits> * 10**point
    sign = "-" if number < 0 else ""
    if len(digits) <= point <= 21:
        return sign + digits + "0" * (point - len(digits))
    if 0 < point <= 21:
        return f"{sign}{digits[:point]}.{digits[point:]}"
    if -6 < point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    mantissa = digits[0] + (f".{digits[1:]}" if len(digits) > 1 else "")
    return f"{sign}{mantissa}e{'+' if point > 0 else '-'}{abs(point - 1)}"


_INDEX_KEY: Final = re.compile(r"0|[1-9][0-9]{0,9}")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _json_stringify(value: Any) -> str:
    """``JSON.stringify(value)``: JavaScript's number forms and key order."""
    if value is None or isinstance(value, bool | str):
        quoted = json.dumps(value, ensure_ascii=False)
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)
    if isinstance(value, int | float):
        number = _js_number(value)
        return "null" if number.endswith("Infinity") else number
    if isinstance(value, list):
        return "[" + ",".join(_json_stringify(item) for item in value) + "]"
    # Objects list their array-index keys first, in numeric order.
    indices = sorted((k for k in value if _is_index(k)), key=int)
    keys = indices + [key for key in value if not _is_index(key)]
    return "{" + ",".join(f"{_json_stringify(k)}:{_json_stringify(value[k])}" for k in keys) + "}"


def _is_index(key: str) -> bool:
    return _INDEX_KEY.fullmatch(key) is not None and int(key) < 2**32 - 1


def _show(value: Any) -> str:
    shown = "undefined" if value is MISSING else repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def _error(message: Any, reason: str) -> MessageConversionError:
    message_id = message.get("id") if isinstance(message, dict) else None
    return MessageConversionError(
        reason, message_id=message_id if isinstance(message_id, str) else None
    )
