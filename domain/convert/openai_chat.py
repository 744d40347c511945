"""OpenAI Chat Completions ``messages`` from UIMessages (a renderer of ``turns``).

``convert(messages)`` returns the list for
``client.chat.completions.create(model=..., messages=...)``. The pairing rules
(results, denials, errors, interrupted and paused calls) are those of
``chatledger.domain.convert.turns``. The mapping:

- system messages → ``{"role": "system", "content": text}``, where they are;
- user messages → ``{"role": "user", "content": ...}``: a string when the
  message is one text, else a list of parts: ``text``; images (http(s) or
  ``data:`` URL) → ``image_url``; PDFs given as a ``data:`` URL → ``file``
  (``file_data`` + ``filename``, default ``document.pdf``); WAV/MP3 ``data:``
  URLs → ``input_audio``; ``text/*`` ``data:`` URLs → their text; any other
  file (a PDF by URL included: the API takes files only inline) → a short
  text saying it was left out;
- each assistant step → one ``{"role": "assistant"}`` message: ``content`` is
  the step's text (a string for one text part, a list of text parts for
  several, ``None`` when there is none) and ``tool_calls`` its client calls
  (``type: "function"``, ``arguments`` = the input as JSON text); reasoning
  and files the model made are dropped (Chat Completions takes neither back);
- then one ``{"role": "tool", "tool_call_id", "content"}`` message per call,
  in call order: the output as text (strings as they are, other JSON as JSON
  text), or the error text, denial reason or interruption notice (the format
  has no error flag);
- provider-executed calls: Chat Completions has no server-side tool items,
  so each one stays in its assistant message as a text part describing the
  call and its outcome (``turns.provider_call_text``).
"""

from __future__ import annotations

from typing import Any

from chatledger.domain.convert.turns import (
    AssistantTurn,
    File,
    ProviderToolCall,
    SystemTurn,
    Text,
    ToolCall,
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

_AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}


def convert(
    messages: list[dict[str, Any]], *, unanswered: Unanswered = "refuse"
) -> list[dict[str, Any]]:
    """Chat Completions messages for ``messages`` (UIMessages as JSON).

    Raises ``UnansweredToolCallError`` when the final assistant message has
    calls without a result (unless ``unanswered="omit"``: they are left out),
    ``MessageConversionError`` for a malformed message.
    """
    rendered: list[Json] = []
    for turn in build_turns(messages, unanswered=unanswered):
        if isinstance(turn, SystemTurn):
            rendered.append({"role": "system", "content": turn.text})
        elif isinstance(turn, UserTurn):
            rendered.append({"role": "user", "content": _user_content(turn)})
        elif isinstance(turn, AssistantTurn):
            rendered += _assistant_messages(turn)
    return rendered


def _user_content(turn: UserTurn) -> str | list[Json]:
    if len(turn.content) == 1 and isinstance(turn.content[0], Text):
        return turn.content[0].text
    return [
        {"type": "text", "text": block.text} if isinstance(block, Text) else _file(block)
        for block in turn.content
    ]


def _file(file: File) -> Json:
    media_type = file.media_type.lower()
    data_url = parse_data_url(file.url)
    if media_type.startswith("image/") and (
        data_url is not None or file.url.lower().startswith(("http://", "https://"))
    ):
        return {"type": "image_url", "image_url": {"url": file.url}}
    if data_url is not None:
        if media_type == "application/pdf":
            pdf = f"data:application/pdf;base64,{data_url.base64}"
            name = file.filename or "document.pdf"
            return {"type": "file", "file": {"filename": name, "file_data": pdf}}
        if media_type in _AUDIO_FORMATS:
            audio = {"data": data_url.base64, "format": _AUDIO_FORMATS[media_type]}
            return {"type": "input_audio", "input_audio": audio}
        if media_type.startswith("text/"):
            return {"type": "text", "text": data_url.text}
    return {"type": "text", "text": file_omitted_text(file)}


def _assistant_messages(turn: AssistantTurn) -> list[Json]:
    texts: list[str] = []
    calls: list[Json] = []
    for block in turn.content:
        if isinstance(block, Text):
            texts.append(block.text)
        elif isinstance(block, ProviderToolCall):
            texts.append(provider_call_text(block))
        elif isinstance(block, ToolCall):
            function = {"name": block.tool_name, "arguments": json_text(block.input)}
            calls.append({"id": block.call_id, "type": "function", "function": function})
        # reasoning and files: Chat Completions takes neither back
    if not texts and not calls:
        return []
    content: str | list[Json] | None
    if not texts:
        content = None
    elif len(texts) == 1:
        content = texts[0]
    else:
        content = [{"type": "text", "text": text} for text in texts]
    message: Json = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    results = [
        {"role": "tool", "tool_call_id": result.call_id, "content": result.content_text}
        for result in turn.results
    ]
    return [message, *results]
