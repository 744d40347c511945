"""Anthropic Messages API ``system`` + ``messages`` from UIMessages (a renderer of ``turns``).

``convert(messages)`` returns ``{"system": [text blocks], "messages": [...]}``
(``system`` only when there is system text), ready for
``client.messages.create(model=..., max_tokens=..., **payload)``. The pairing
rules (results, denials, errors, interrupted and paused calls) are those of
``chatledger.domain.convert.turns``. The mapping:

- system messages, wherever they are: one ``text`` block each in ``system``;
- user text → ``text``; files → ``image`` (``base64`` source from a ``data:``
  URL of a JPEG/PNG/GIF/WebP image, ``url`` source from an http(s) URL),
  ``document`` for PDFs (base64 or url source, ``title`` = filename) and for
  ``text/*`` data URLs (plain-text source); any other file becomes a short
  text saying it was left out;
- each assistant step → an assistant message: ``text``; reasoning as
  ``thinking`` when ``providerMetadata.anthropic.signature`` is there, as
  ``redacted_thinking`` for ``providerMetadata.anthropic.redactedData``, else
  dropped; client tool calls → ``tool_use`` (``input`` must be an object: an
  input that is not one is wrapped as ``{"value": <input>}``); files the model
  made are dropped (the API takes no files in assistant turns);
- the step's results → the next user message, first, in call order:
  ``tool_result`` with the output as text (strings as they are, other JSON as
  JSON text) and ``is_error: true`` for errors, denials and interruptions;
- provider-executed calls stay in the assistant message: a ``web_search`` run
  by Anthropic (id ``srvtoolu_...``, output the AI SDK's list of results, or
  an error with a known ``errorCode``) → ``server_tool_use`` +
  ``web_search_tool_result``; any other one (other server tools, other
  providers' ids) → a ``text`` block describing the call and its outcome
  (``turns.provider_call_text``), since a ``server_tool_use`` must have an
  Anthropic id, a known name and a result of its own kind;
- consecutive messages of one role are merged (the API wants alternating
  roles); empty and whitespace-only text blocks are dropped (the API refuses
  them); when the last message is the assistant's, its trailing whitespace is
  removed (the API refuses it in a final assistant turn).
"""

from __future__ import annotations

import json
from typing import Any, Final

from chatledger.domain.convert.turns import (
    AssistantTurn,
    File,
    ProviderToolCall,
    Reasoning,
    SystemTurn,
    Text,
    ToolCall,
    ToolResult,
    Unanswered,
    UserTurn,
    build_turns,
    file_omitted_text,
    parse_data_url,
    provider_call_text,
)

__all__ = ["convert"]

Json = dict[str, Any]

_IMAGE_TYPES: Final = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_WEB_SEARCH_ERRORS: Final = frozenset(
    {
        "invalid_tool_input",
        "unavailable",
        "max_uses_exceeded",
        "too_many_requests",
        "query_too_long",
        "request_too_large",
    }
)


def convert(messages: list[dict[str, Any]], *, unanswered: Unanswered = "refuse") -> dict[str, Any]:
    """``{"system"?: [...], "messages": [...]}`` for the Messages API.

    Raises ``UnansweredToolCallError`` when the final assistant message has
    calls without a result (unless ``unanswered="omit"``: they are left out),
    ``MessageConversionError`` for a malformed message.
    """
    turns = build_turns(messages, unanswered=unanswered)
    system: list[Json] = []
    rendered: list[Json] = []
    for turn in turns:
        if isinstance(turn, SystemTurn):
            if turn.text.strip():
                system.append({"type": "text", "text": turn.text})
        elif isinstance(turn, UserTurn):
            _append(rendered, "user", [_user_block(block) for block in turn.content])
        elif isinstance(turn, AssistantTurn):
            content = [rendered_block for b in turn.content for rendered_block in _assistant(b)]
            _append(rendered, "assistant", content)
            _append(rendered, "user", [_tool_result(result) for result in turn.results])
    _trim_final_assistant(rendered)
    payload: Json = {"system": system} if system else {}
    payload["messages"] = rendered
    return payload


def _append(messages: list[Json], role: str, content: list[Json]) -> None:
    """Add content as a message of ``role``, merged into the last message if it has that role."""
    content = [block for block in content if not _blank_text(block)]
    if not content:
        return
    if messages and messages[-1]["role"] == role:
        messages[-1]["content"].extend(content)
    else:
        messages.append({"role": role, "content": content})


def _blank_text(block: Json) -> bool:
    return block["type"] == "text" and not block["text"].strip()


def _trim_final_assistant(messages: list[Json]) -> None:
    if not messages or messages[-1]["role"] != "assistant":
        return
    content = messages[-1]["content"]
    if content[-1]["type"] == "text":
        content[-1]["text"] = content[-1]["text"].rstrip()  # never blank: _append dropped those


# -- user content ---------------------------------------------------------------------------------


def _user_block(block: Text | File) -> Json:
    if isinstance(block, Text):
        return {"type": "text", "text": block.text}
    return _file(block)


def _file(file: File) -> Json:
    media_type = file.media_type.lower()
    data_url = parse_data_url(file.url)
    is_http = file.url.lower().startswith(("http://", "https://"))
    if media_type.startswith("image/"):
        if is_http:
            return {"type": "image", "source": {"type": "url", "url": file.url}}
        if data_url is not None:
            image_type = media_type if media_type in _IMAGE_TYPES else data_url.media_type
            if image_type in _IMAGE_TYPES:
                source = {"type": "base64", "media_type": image_type, "data": data_url.base64}
                return {"type": "image", "source": source}
    elif media_type == "application/pdf" and (is_http or data_url is not None):
        if data_url is not None:
            pdf: Json = {"type": "base64", "media_type": "application/pdf", "data": data_url.base64}
        else:
            pdf = {"type": "url", "url": file.url}
        return _document(pdf, file)
    elif media_type.startswith("text/") and data_url is not None:
        text = {"type": "text", "media_type": "text/plain", "data": data_url.text}
        return _document(text, file)
    return {"type": "text", "text": file_omitted_text(file)}


def _document(source: Json, file: File) -> Json:
    document: Json = {"type": "document", "source": source}
    if file.filename:
        document["title"] = file.filename
    return document


# -- assistant content ----------------------------------------------------------------------------


def _assistant(block: Text | Reasoning | File | ToolCall | ProviderToolCall) -> list[Json]:
    if isinstance(block, Text):
        return [{"type": "text", "text": block.text}]
    if isinstance(block, Reasoning):
        return _reasoning(block)
    if isinstance(block, ToolCall):
        return [_tool_use("tool_use", block)]
    if isinstance(block, ProviderToolCall):
        return _provider_tool(block)
    return []  # a file the model made: the API takes no files in assistant turns


def _reasoning(block: Reasoning) -> list[Json]:
    anthropic = (block.provider_metadata or {}).get("anthropic")
    if not isinstance(anthropic, dict):
        return []
    signature, redacted = anthropic.get("signature"), anthropic.get("redactedData")
    if isinstance(signature, str):
        return [{"type": "thinking", "thinking": block.text, "signature": signature}]
    if isinstance(redacted, str):
        return [{"type": "redacted_thinking", "data": redacted}]
    return []


def _tool_use(kind: str, call: ToolCall) -> Json:
    return {"type": kind, "id": call.call_id, "name": call.tool_name, "input": _input(call.input)}


def _input(value: Any) -> Json:
    """``input`` must be an object: any other JSON value is wrapped as ``{"value": ...}``."""
    return value if isinstance(value, dict) else {"value": value}


def _tool_result(result: ToolResult) -> Json:
    block: Json = {
        "type": "tool_result",
        "tool_use_id": result.call_id,
        "content": result.content_text,
    }
    if result.is_error:
        block["is_error"] = True
    return block


def _provider_tool(block: ProviderToolCall) -> list[Json]:
    call, result = block.call, block.result
    native = call.tool_name == "web_search" and call.call_id.startswith("srvtoolu_")
    content = _web_search_content(result) if native else None
    if content is None:
        return [{"type": "text", "text": provider_call_text(block)}]
    return [
        _tool_use("server_tool_use", call),
        {"type": "web_search_tool_result", "tool_use_id": call.call_id, "content": content},
    ]


def _web_search_content(result: ToolResult) -> Any:
    """The ``web_search_tool_result`` content, or None when the outcome has no such form."""
    if result.kind == "error":
        code = _error_code(result.text)
        return {"type": "web_search_tool_result_error", "error_code": code} if code else None
    if result.kind != "output" or not isinstance(result.output, list):
        return None
    found: list[Json] = []
    for item in result.output:
        if not isinstance(item, dict):
            return None
        encrypted = item.get("encryptedContent", item.get("encrypted_content"))
        url, title = item.get("url"), item.get("title")
        if not (isinstance(url, str) and isinstance(encrypted, str)):
            return None
        entry: Json = {
            "type": "web_search_result",
            "url": url,
            "title": title if isinstance(title, str) else "",
            "encrypted_content": encrypted,
        }
        page_age = item.get("pageAge", item.get("page_age"))
        if isinstance(page_age, str):
            entry["page_age"] = page_age
        found.append(entry)
    return found


def _error_code(text: str) -> str | None:
    """A known web search error code from an error text (a bare code, or JSON with ``errorCode``)."""
    if text in _WEB_SEARCH_ERRORS:
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return None
    code = value.get("errorCode", value.get("error_code")) if isinstance(value, dict) else None
    return code if code in _WEB_SEARCH_ERRORS else None
