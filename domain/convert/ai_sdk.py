"""AI SDK ``ModelMessage`` JSON from UIMessages: a port of ``convertToModelMessages``.

``ai_sdk=6`` follows ``ai@6.0.326``; ``ai_sdk=7`` follows ``ai@7.0.173``, which
drops approval requests a later user message superseded, answers a denied
``approval-responded`` call with an ``execution-denied`` result, sends file data
as ``{type: 'url', url}`` (the WHATWG href) or a provider reference, converts
``custom`` and ``reasoning-file`` parts, and turns a ``steering-message`` part
into a user message between two steps.

The result is what the SDK's result serialises to: a key the SDK leaves
``undefined`` is absent, a ``null`` stays ``null``. The SDK is matched as
called with no ``tools`` and no ``convertDataPart``, so data parts are dropped.
Where the SDK throws (an unsupported role, or a ``TypeError`` on a malformed
message), ``MessageConversionError`` is raised instead.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from chatledger.domain.convert._js import js_string, json_stringify, spread
from chatledger.domain.convert._url import href
from chatledger.domain.dialects import IMPLICIT_MAJOR, Dialect, dialect_for
from chatledger.domain.errors import MessageConversionError
from chatledger.domain.tool_parts import MISSING, is_tool_part, static_tool_name

__all__ = ["convert"]

Json = dict[str, Any]

_DENIED: Final = "Tool call execution denied."
_UNAVAILABLE_TOOL: Final = "Tool output omitted because the tool is no longer available."
_BLOCK_KINDS: Final = ("text", "reasoning", "file")


def convert(
    messages: list[dict[str, Any]],
    *,
    ignore_incomplete_tool_calls: bool = False,
    ai_sdk: int = IMPLICIT_MAJOR,
) -> list[dict[str, Any]]:
    """The SDK's ``convertToModelMessages(messages, {ignoreIncompleteToolCalls})`` as JSON.

    ``ai_sdk`` is the SDK major to follow (6 or 7; any other raises
    ``InvalidAiSdkVersionError``). Pure: ``messages`` is not changed and shares
    nothing with the result. Raises ``MessageConversionError`` where the SDK throws.
    """
    dialect = dialect_for(ai_sdk)
    if dialect.supersedes_approvals:
        messages = _without_superseded(messages, ignore_incomplete_tool_calls)
    elif ignore_incomplete_tool_calls:
        messages = [_without_incomplete_tool_calls(message) for message in messages]
    converted: list[Json] = []
    for message in messages:
        converted += _convert_message(message, dialect)
    return converted


def _convert_message(message: Any, dialect: Dialect) -> list[Json]:
    if not isinstance(message, dict):
        raise _error(message, f"a message is not an object: {_show(message)}")
    role = message.get("role", MISSING)
    if role == "system":
        return [_system_message(message)]
    if role == "user":
        return [_user_message(message, dialect)]
    if role == "assistant":
        return _assistant_messages(message, dialect)
    raise _error(message, f"unsupported role {_show(role)}")


# -- the ignoreIncompleteToolCalls pre-filter ---------------------------------------------------


def _without_incomplete_tool_calls(message: Any) -> Any:
    """The message without tool parts that have no answer yet (a shallow copy)."""
    parts = _parts(message)
    kept = [part for part in parts if not _is_tool(part, message) or _is_complete(part)]
    return {**message, "parts": kept}


def _without_superseded(messages: list[Any], ignore_incomplete: bool) -> list[Any]:
    """Approval requests before the last user message are dropped (and incomplete calls)."""
    last_user = -1
    for index, message in enumerate(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            last_user = index
    if not ignore_incomplete and last_user <= 0:
        return messages
    kept_messages = []
    for index, message in enumerate(messages):
        kept = [
            part
            for part in _parts(message)
            if not _is_tool(part, message)
            or (
                (part.get("state") != "approval-requested" or index >= last_user)
                and (not ignore_incomplete or _is_complete(part))
            )
        ]
        kept_messages.append({**message, "parts": kept})
    return kept_messages


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
            merged |= spread(part["providerMetadata"])
    system: Json = {"role": "system", "content": "".join(js_string(p.get("text")) for p in texts)}
    # Emitted even with no text at all (content "").
    return system | ({"providerOptions": copy.deepcopy(merged)} if merged else {})


def _is_system_text(part: Any, message: Json) -> bool:
    if part is None:
        raise _error(message, "a part is null")
    return isinstance(part, dict) and part.get("type") == "text"


def _user_message(message: Json, dialect: Dialect) -> Json:
    """Text and file parts in order; everything else (data, reasoning, tools, ...) dropped."""
    content: list[Json] = []
    for part in _parts(message):
        kind = _kind(part, message)
        if kind == "text":
            content.append(_text(part))
        elif kind == "file":
            content.append(_file(part, dialect.model_messages.file_data_as_url, message))
    # Emitted even when no part is left.
    return {"role": "user", "content": content}


# -- assistant messages: one block per step ------------------------------------------------------


def _assistant_messages(message: Json, dialect: Dialect) -> list[Json]:
    """An assistant message, then a tool message, for each non-empty step."""
    parts = message.get("parts")
    if parts is None:
        return []  # the SDK skips an assistant message without parts
    if parts == "":
        return []  # the SDK iterates a string's characters: there are none
    if not isinstance(parts, list):
        raise _error(message, f"parts is not a list: {_show(parts)}")
    converted: list[Json] = []
    block: list[Json] = []
    for part in parts:
        kind = _kind(part, message)
        in_block = kind in _BLOCK_KINDS or is_tool_part(part) or kind.startswith("data-")
        if in_block or kind in dialect.model_messages.content_part_types:
            block.append(part)
        elif kind == "step-start":
            converted += _block_messages(block, dialect, message)
            block = []
        elif dialect.steers and kind == "steering-message":
            # Steering came in between two steps: it ends the block and speaks as the user.
            converted += _block_messages(block, dialect, message)
            block = []
            converted.append(_steering_message(part, message))
    return converted + _block_messages(block, dialect, message)


def _steering_message(part: Json, message: Json) -> Json:
    content = [
        _text(item) if _kind(item, message) == "text" else _file(item, True, message)
        for item in _parts(part)
    ]
    return {"role": "user", "content": content}


def _block_messages(block: list[Json], dialect: Dialect, message: Any) -> list[Json]:
    if not block:
        return []
    messages: list[Json] = []
    content = [item for part in block for item in _assistant_content(part, dialect, message)]
    if content:
        messages.append({"role": "assistant", "content": content})
    answers = [
        item for part in block if _in_tool_message(part) for item in _tool_content(part, dialect)
    ]
    if answers:
        messages.append({"role": "tool", "content": answers})
    return messages


def _assistant_content(part: Json, dialect: Dialect, message: Any) -> list[Json]:
    kind = part["type"]
    if kind == "text":
        return [_text(part)]
    if kind == "file":
        return [_file(part, dialect.model_messages.file_data_as_url, message)]
    if kind == "custom":
        return [
            {"type": "custom", "kind": _get(part, "kind")}
            | _provider_options(part.get("providerMetadata"))
        ]
    if kind == "reasoning-file":
        data = {"type": "url", "url": _url(part.get("url"), message)}
        fields = {
            "mediaType": _get(part, "mediaType"),
            "providerOptions": _get(part, "providerMetadata"),
        }
        return [_defined({"type": "reasoning-file", "data": data, **fields})]
    if kind == "reasoning":
        # Unlike text and files, reasoning passes its metadata on as it is, null included.
        reasoning = {"type": "reasoning", "text": _get(part, "text")}
        return [_defined(reasoning | {"providerOptions": _get(part, "providerMetadata")})]
    if is_tool_part(part):
        return _tool_call_content(part, dialect)
    return []  # a data part: dropped, as the SDK does without convertDataPart


def _text(part: Json) -> Json:
    text = _defined({"type": "text", "text": _get(part, "text")})
    return text | _provider_options(part.get("providerMetadata"))


def _file(part: Json, as_url: bool, message: Any) -> Json:
    """A file part as content; ``as_url``: its data as a URL object or a provider reference."""
    fields = {"mediaType": _get(part, "mediaType"), "filename": _get(part, "filename")}
    if not as_url:
        data: Any = _get(part, "url")
    elif part.get("providerReference") is not None:
        data = {"type": "reference", "reference": copy.deepcopy(part["providerReference"])}
    else:
        data = {"type": "url", "url": _url(part.get("url"), message)}
    file = _defined({"type": "file", **fields, "data": data})
    return file | _provider_options(part.get("providerMetadata"))


def _url(url: Any, message: Any) -> str:
    """``new URL(url)`` serialised (v7 file data)."""
    try:
        return href(url) if isinstance(url, str) else href(js_string(url))
    except ValueError:
        raise _error(message, f"Invalid URL: {_show(url)}") from None


# -- tool parts in the assistant message ---------------------------------------------------------


def _tool_call_content(part: Json, dialect: Dialect) -> list[Json]:
    """The call, its approval request, and a provider-executed tool's result."""
    state = part.get("state")
    if state == "input-streaming":
        return []
    content = [_tool_call(part)]
    # Any part with an approval object gets a request, whatever its state.
    if part.get("approval") is not None:
        details = dialect.model_messages.approval_request_details
        content.append(_approval_request(part, part["approval"], details))
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


def _approval_request(part: Json, approval: Any, details: bool) -> Json:
    request = _defined(
        {
            "type": "tool-approval-request",
            "approvalId": _get(approval, "id"),
            "toolCallId": _get(part, "toolCallId"),
        }
    )
    if details:
        request |= _defined({"isAutomatic": _get(approval, "isAutomatic")})
        reason = _get(approval, "requestReason")
        if not _nullish(reason):
            request["reason"] = reason
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


def _tool_content(part: Json, dialect: Dialect) -> list[Json]:
    """The approval answer (if any), then the result of a finished, client-executed call."""
    content: list[Json] = []
    if _approved(part) is not None:
        content.append(_approval_response(part, part["approval"]))
    denial = dialect.model_messages.denial_result
    if denial and part.get("state") == "approval-responded" and _approved(part) is False:
        # v7 tells the model the call was denied (v6 sent only the approval response).
        denied = _defined({"type": "execution-denied", "reason": _get(part["approval"], "reason")})
        content.append(_tool_result(part, denied, part.get("callProviderMetadata")))
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
    return error if isinstance(error, str) else json_stringify(error)


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


def _show(value: Any) -> str:
    shown = "undefined" if value is MISSING else repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def _error(message: Any, reason: str) -> MessageConversionError:
    message_id = message.get("id") if isinstance(message, dict) else None
    return MessageConversionError(
        reason, message_id=message_id if isinstance(message_id, str) else None
    )
