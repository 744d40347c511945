"""OpenAI Responses API ``input`` items from UIMessages (a renderer of ``turns``).

``convert(messages)`` returns the list for
``client.responses.create(model=..., input=...)``. The pairing rules (results,
denials, errors, interrupted and paused calls) are those of
``chatledger.domain.convert.turns``. The mapping:

- system messages → ``{"type": "message", "role": "system", "content": text}``,
  where they are;
- user messages → ``{"type": "message", "role": "user", "content": [...]}``:
  ``input_text``; images (http(s) or ``data:`` URL) → ``input_image``
  (``detail: "auto"``); PDFs → ``input_file`` (``file_data`` + ``filename``,
  default ``document.pdf``, from a ``data:`` URL; ``file_url`` from an http(s)
  URL); ``text/*`` ``data:`` URLs → ``input_text`` with their text; any other
  file → an ``input_text`` saying it was left out;
- each assistant step, in part order: text → ``{"type": "message", "role":
  "assistant", "content": text}`` (with ``phase`` when
  ``providerMetadata.openai.phase`` has one); reasoning → a ``reasoning`` item
  only when ``providerMetadata.openai.itemId`` names the OpenAI item (parts of
  one item are merged into its ``summary``; ``reasoningEncryptedContent`` goes
  to ``encrypted_content``), else dropped; client calls → ``function_call``
  (``arguments`` = the input as JSON text); files the model made are dropped;
- results → ``function_call_output`` (the output as text: strings as they
  are, other JSON as JSON text; or the error text, denial reason or
  interruption notice — the format has no error flag). Each run of
  consecutive ``function_call`` items is followed at once by the outputs of
  those calls, in call order, before any other item of the step;
- provider-executed calls (OpenAI's web search, file search, ...) → an
  ``item_reference`` to the stored OpenAI item when the part's provider
  metadata has ``openai.itemId`` (this needs the response to have been stored,
  the API's default ``store: true``, as the AI SDK assumes); otherwise (another
  provider's tool, a denied call) an assistant message describing the call
  and its outcome (``turns.provider_call_text``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

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
    json_text,
    parse_data_url,
    provider_call_text,
)

__all__ = ["convert"]

Json = dict[str, Any]

_PHASES = ("commentary", "final_answer")


def convert(
    messages: list[dict[str, Any]], *, unanswered: Unanswered = "refuse"
) -> list[dict[str, Any]]:
    """Responses API input items for ``messages`` (UIMessages as JSON).

    Raises ``UnansweredToolCallError`` when the final assistant message has
    calls without a result (unless ``unanswered="omit"``: they are left out),
    ``MessageConversionError`` for a malformed message.
    """
    items: list[Json] = []
    for turn in build_turns(messages, unanswered=unanswered):
        if isinstance(turn, SystemTurn):
            items.append({"type": "message", "role": "system", "content": turn.text})
        elif isinstance(turn, UserTurn):
            content = [
                {"type": "input_text", "text": block.text}
                if isinstance(block, Text)
                else _file(block)
                for block in turn.content
            ]
            items.append({"type": "message", "role": "user", "content": content})
        elif isinstance(turn, AssistantTurn):
            items += _StepItems(turn).items()
    return items


def _file(file: File) -> Json:
    media_type = file.media_type.lower()
    data_url = parse_data_url(file.url)
    is_http = file.url.lower().startswith(("http://", "https://"))
    if media_type.startswith("image/") and (is_http or data_url is not None):
        return {"type": "input_image", "image_url": file.url, "detail": "auto"}
    if media_type == "application/pdf" and is_http:
        return {"type": "input_file", "file_url": file.url}
    if media_type == "application/pdf" and data_url is not None:
        pdf = f"data:application/pdf;base64,{data_url.base64}"
        return {"type": "input_file", "filename": file.filename or "document.pdf", "file_data": pdf}
    if media_type.startswith("text/") and data_url is not None:
        return {"type": "input_text", "text": data_url.text}
    return {"type": "input_text", "text": file_omitted_text(file)}


class _StepItems:
    """The items of one assistant step, each run of calls followed by its outputs."""

    def __init__(self, turn: AssistantTurn) -> None:
        self.turn = turn
        self.rendered: list[Json] = []
        self.results: Iterator[ToolResult] = iter(turn.results)
        self.open_calls = 0
        self.reasoning: dict[str, Json] = {}

    def items(self) -> list[Json]:
        for block in self.turn.content:
            if isinstance(block, ToolCall):
                self.rendered.append(_function_call(block))
                self.open_calls += 1
                continue
            self._flush()
            if isinstance(block, Text):
                self.rendered.append(_text(block))
            elif isinstance(block, Reasoning):
                self._reasoning(block)
            elif isinstance(block, ProviderToolCall):
                self.rendered.append(_provider_tool(block))
            # files the model made: not taken back
        self._flush()
        return self.rendered

    def _flush(self) -> None:
        """The outputs of the calls just rendered, in call order."""
        for _ in range(self.open_calls):
            result = next(self.results)
            output = {"call_id": result.call_id, "output": result.content_text}
            self.rendered.append({"type": "function_call_output", **output})
        self.open_calls = 0

    def _reasoning(self, block: Reasoning) -> None:
        openai = (block.provider_metadata or {}).get("openai")
        item_id = openai.get("itemId") if isinstance(openai, dict) else None
        if not isinstance(openai, dict) or not isinstance(item_id, str):
            return  # not OpenAI reasoning: the API cannot take it back
        item = self.reasoning.get(item_id)
        if item is None:
            item = {"type": "reasoning", "id": item_id, "summary": []}
            self.reasoning[item_id] = item
            self.rendered.append(item)
        if block.text:
            item["summary"].append({"type": "summary_text", "text": block.text})
        encrypted = openai.get("reasoningEncryptedContent")
        if isinstance(encrypted, str):
            item["encrypted_content"] = encrypted


def _text(block: Text) -> Json:
    item: Json = {"type": "message", "role": "assistant", "content": block.text}
    openai = (block.provider_metadata or {}).get("openai")
    phase = openai.get("phase") if isinstance(openai, dict) else None
    if phase in _PHASES:
        item["phase"] = phase
    return item


def _function_call(call: ToolCall) -> Json:
    return {
        "type": "function_call",
        "call_id": call.call_id,
        "name": call.tool_name,
        "arguments": json_text(call.input),
    }


def _provider_tool(block: ProviderToolCall) -> Json:
    if block.result.kind != "denied":
        for metadata in (block.call.provider_metadata, block.result_provider_metadata):
            openai = (metadata or {}).get("openai")
            item_id = openai.get("itemId") if isinstance(openai, dict) else None
            if isinstance(item_id, str):
                return {"type": "item_reference", "id": item_id}
    return {"type": "message", "role": "assistant", "content": provider_call_text(block)}
