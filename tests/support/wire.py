"""Hypothesis strategies for AI SDK v6 chunks and UIMessages, valid and mutated.

The field tables below are transcribed from the SDK's zod schemas
(``uiMessageChunkSchema`` and ``uiMessagesSchema`` in ``ai/dist/index.mjs``),
independently of chatledger's models, so that tests built on them can catch a
model that disagrees with the SDK.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

# -- field kinds --------------------------------------------------------------
# "str", "bool", "unknown" (any JSON value), "pm" (provider metadata),
# "tm" (tool metadata), ("enum", *values), ("approval", kind), "false", "never".

PM = "pm"
TM = "tm"
FINISH_REASONS = ("stop", "length", "content-filter", "tool-calls", "error", "other")


def req(kind: Any) -> tuple[Any, bool]:
    """A required field of this kind."""
    return (kind, True)


def opt(kind: Any) -> tuple[Any, bool]:
    """An optional field of this kind."""
    return (kind, False)


_TOOL_META = {
    "providerExecuted": opt("bool"),
    "providerMetadata": opt(PM),
    "toolMetadata": opt(TM),
    "dynamic": opt("bool"),
}

CHUNK_SPEC: dict[str, dict[str, tuple[Any, bool]]] = {
    "text-start": {"id": req("str"), "providerMetadata": opt(PM)},
    "text-delta": {"id": req("str"), "delta": req("str"), "providerMetadata": opt(PM)},
    "text-end": {"id": req("str"), "providerMetadata": opt(PM)},
    "error": {"errorText": req("str")},
    "tool-input-start": {
        "toolCallId": req("str"),
        "toolName": req("str"),
        "inputEncoding": opt(("enum", "json", "text")),
        **_TOOL_META,
        "title": opt("str"),
    },
    "tool-input-delta": {"toolCallId": req("str"), "inputTextDelta": req("str")},
    "tool-input-available": {
        "toolCallId": req("str"),
        "toolName": req("str"),
        "input": req("unknown"),
        **_TOOL_META,
        "title": opt("str"),
    },
    "tool-input-error": {
        "toolCallId": req("str"),
        "toolName": req("str"),
        "input": req("unknown"),
        **_TOOL_META,
        "errorText": req("str"),
        "title": opt("str"),
    },
    "tool-approval-request": {
        "approvalId": req("str"),
        "toolCallId": req("str"),
        "approvalDescriptor": opt("unknown"),
        "inputSchemaInput": opt("unknown"),
        "signature": opt("str"),
    },
    "tool-output-available": {
        "toolCallId": req("str"),
        "output": req("unknown"),
        **_TOOL_META,
        "preliminary": opt("bool"),
    },
    "tool-output-error": {"toolCallId": req("str"), "errorText": req("str"), **_TOOL_META},
    "tool-output-denied": {"toolCallId": req("str")},
    "reasoning-start": {"id": req("str"), "providerMetadata": opt(PM)},
    "reasoning-delta": {"id": req("str"), "delta": req("str"), "providerMetadata": opt(PM)},
    "reasoning-end": {"id": req("str"), "providerMetadata": opt(PM)},
    "source-url": {
        "sourceId": req("str"),
        "url": req("str"),
        "title": opt("str"),
        "providerMetadata": opt(PM),
    },
    "source-document": {
        "sourceId": req("str"),
        "mediaType": req("str"),
        "title": req("str"),
        "filename": opt("str"),
        "providerMetadata": opt(PM),
    },
    "file": {"url": req("str"), "mediaType": req("str"), "providerMetadata": opt(PM)},
    "data-*": {"id": opt("str"), "data": req("unknown"), "transient": opt("bool")},
    "start-step": {},
    "finish-step": {},
    "start": {"messageId": opt("str"), "messageMetadata": opt("unknown")},
    "finish": {"finishReason": opt(("enum", *FINISH_REASONS)), "messageMetadata": opt("unknown")},
    "abort": {"reason": opt("str")},
    "message-metadata": {"messageMetadata": req("unknown")},
}
FIXED_CHUNK_TYPES = frozenset(CHUNK_SPEC) - {"data-*"}

_NEVER = {"output": opt("never"), "errorText": opt("never"), "approval": opt("never")}
_TOOL_COMMON = {
    "toolCallId": req("str"),
    "toolMetadata": opt(TM),
    "providerExecuted": opt("bool"),
    "callProviderMetadata": opt(PM),
}
TOOL_STATE_SPEC: dict[str, dict[str, tuple[Any, bool]]] = {
    "input-streaming": {
        **_NEVER,
        "input": opt("unknown"),
        "rawInput": opt("str"),
        "inputEncoding": opt(("enum", "json", "text")),
    },
    "input-available": {**_NEVER, "input": req("unknown")},
    "approval-requested": {
        **_NEVER,
        "input": req("unknown"),
        "approval": req(("approval", "requested")),
    },
    "approval-responded": {
        **_NEVER,
        "input": req("unknown"),
        "approval": req(("approval", "responded")),
    },
    "output-available": {
        "errorText": opt("never"),
        "input": req("unknown"),
        "output": req("unknown"),
        "resultProviderMetadata": opt(PM),
        "preliminary": opt("bool"),
        "approval": opt(("approval", "granted")),
    },
    "output-error": {
        "output": opt("never"),
        "input": opt("unknown"),
        "rawInput": opt("unknown"),
        "errorText": req("str"),
        "resultProviderMetadata": opt(PM),
        "approval": opt(("approval", "granted")),
    },
    "output-denied": {
        "output": opt("never"),
        "errorText": opt("never"),
        "input": req("unknown"),
        "approval": req(("approval", "denied")),
    },
}
_APPROVAL_BASE = {
    "id": req("str"),
    "descriptor": opt("unknown"),
    "signature": opt("str"),
    "inputSchemaInput": opt("unknown"),
}
APPROVAL_SPEC: dict[str, dict[str, tuple[Any, bool]]] = {
    "requested": {**_APPROVAL_BASE, "approved": opt("never"), "reason": opt("never")},
    "responded": {**_APPROVAL_BASE, "approved": req("bool"), "reason": opt("str")},
    "granted": {**_APPROVAL_BASE, "approved": req(("enum", True)), "reason": opt("str")},
    "denied": {**_APPROVAL_BASE, "approved": req(("enum", False)), "reason": opt("str")},
}
_TEXT_STATE = ("enum", "streaming", "done")
PART_SPEC: dict[str, dict[str, tuple[Any, bool]]] = {
    "text": {"text": req("str"), "state": opt(_TEXT_STATE), "providerMetadata": opt(PM)},
    "reasoning": {
        "id": opt("str"),
        "text": req("str"),
        "state": opt(_TEXT_STATE),
        "providerMetadata": opt(PM),
    },
    "source-url": CHUNK_SPEC["source-url"],
    "source-document": CHUNK_SPEC["source-document"],
    "file": {
        "mediaType": req("str"),
        "filename": opt("str"),
        "url": req("str"),
        "providerMetadata": opt(PM),
    },
    "step-start": {},
    "data-*": {"id": opt("str"), "data": req("unknown")},
}

FIELD_NAMES = sorted(
    {name for spec in CHUNK_SPEC.values() for name in spec}
    | {name for spec in TOOL_STATE_SPEC.values() for name in spec}
    | {name for spec in APPROVAL_SPEC.values() for name in spec}
    | {name for spec in PART_SPEC.values() for name in spec}
    | set(_TOOL_COMMON)
    | {"type", "state", "toolName", "dynamic", "role", "parts", "metadata", "createdAt"}
)


def snake(name: str) -> str:
    """``toolCallId`` -> ``tool_call_id``."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


# -- JSON values -----------------------------------------------------------------

# No lone surrogates: the oracle harness writes UTF-8 text.
texts = st.text(st.characters(exclude_categories=["Cs"]), max_size=8)
names = st.text(st.characters(codec="ascii", categories=["L", "N", "Pd"]), max_size=6)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)
json_objects = st.dictionaries(texts, json_values, max_size=3)
provider_metadata = st.dictionaries(names, json_objects, max_size=2)
# Keys an extra or a mutation may use: real field names, their snake_case
# forms, names the SDK refuses ("__proto__"), and free text.
key_names = (
    st.sampled_from(FIELD_NAMES)
    | st.sampled_from(FIELD_NAMES).map(snake)
    | st.sampled_from(["__proto__", "constructor", "title", "prototype"])
    | names
)


def value_of(kind: Any) -> st.SearchStrategy[Any]:
    """Valid values for a field kind."""
    if kind == "str":
        return texts
    if kind == "bool":
        return st.booleans()
    if kind == "unknown":
        return json_values
    if kind == PM:
        return provider_metadata
    if kind == TM:
        return json_objects
    if isinstance(kind, tuple) and kind[0] == "enum":
        return st.sampled_from(kind[1:])
    if isinstance(kind, tuple) and kind[0] == "approval":
        return objects(APPROVAL_SPEC[kind[1]])
    raise ValueError(kind)


@st.composite
def objects(
    draw: st.DrawFn, spec: dict[str, tuple[Any, bool]], base: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A valid object for a field table: required fields, some optional ones."""
    out = dict(base or {})
    for name, (kind, required) in spec.items():
        if kind == "never":
            continue
        if required or draw(st.booleans()):
            out[name] = draw(value_of(kind))
    return out


@st.composite
def valid_chunks(draw: st.DrawFn, chunk_type: str | None = None) -> dict[str, Any]:
    """A chunk the SDK's schema accepts (extra keys stay clear of known names)."""
    kind = chunk_type or draw(st.sampled_from(sorted(CHUNK_SPEC)))
    wire_type = "data-" + draw(names) if kind == "data-*" else kind
    chunk = draw(objects(CHUNK_SPEC[kind], {"type": wire_type}))
    extras = draw(st.dictionaries(names.map(lambda n: "x-" + n), json_values, max_size=2))
    return {**chunk, **extras}


@st.composite
def tool_parts(
    draw: st.DrawFn, state: str | None = None, dynamic: bool | None = None
) -> dict[str, Any]:
    """A valid tool part, static or dynamic, in any state."""
    state = state or draw(st.sampled_from(sorted(TOOL_STATE_SPEC)))
    dynamic = draw(st.booleans()) if dynamic is None else dynamic
    base: dict[str, Any] = {"type": "dynamic-tool"} if dynamic else {"type": "tool-" + draw(names)}
    spec = {**_TOOL_COMMON, "state": req(("enum", state)), **TOOL_STATE_SPEC[state]}
    if dynamic:
        spec = {**spec, "toolName": req("str"), "dynamic": opt(("enum", False))}
    return draw(objects(spec, base))


@st.composite
def valid_parts(draw: st.DrawFn) -> dict[str, Any]:
    """Any valid part."""
    kind = draw(st.sampled_from([*sorted(PART_SPEC), "tool"]))
    if kind == "tool":
        part: dict[str, Any] = draw(tool_parts())
        return part
    wire_type = "data-" + draw(names) if kind == "data-*" else kind
    return draw(objects(PART_SPEC[kind], {"type": wire_type}))


@st.composite
def valid_messages(draw: st.DrawFn) -> dict[str, Any]:
    """A UIMessage the SDK's schema accepts."""
    role = draw(st.sampled_from(["system", "user", "assistant"]))
    parts = draw(st.lists(valid_parts(), min_size=0 if role == "assistant" else 1, max_size=4))
    message: dict[str, Any] = {"id": draw(texts), "role": role, "parts": parts}
    if draw(st.booleans()):
        message["metadata"] = draw(json_values)
    return message


# -- mutations ---------------------------------------------------------------------


def _slots(value: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) pair inside a JSON value, outermost first."""
    found: list[tuple[Any, Any]] = []
    todo = [value]
    while todo:
        node = todo.pop(0)
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, item in items:
            found.append((node, key))
            if isinstance(item, dict | list):
                todo.append(item)
    return found


def _dicts(value: Any) -> list[dict[str, Any]]:
    found = [value] if isinstance(value, dict) else []
    for container, key in _slots(value):
        if isinstance(container[key], dict):
            found.append(container[key])
    return found


@st.composite
def mutate(draw: st.DrawFn, value: dict[str, Any], keys: list[str] = FIELD_NAMES) -> dict[str, Any]:
    """``value`` with one to three random edits: delete, replace, null, insert, retype.

    Insertions favour ``keys`` (the fields the object's schema knows), with null
    or a value of the wrong kind.
    """
    value = copy.deepcopy(value)
    ops = ["delete", "replace", "null", "insert", "insert", "retype", "state"]
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(ops))
        slots = _slots(value)
        dict_slots = [(c, k) for c, k in slots if isinstance(c, dict)]
        if op == "delete" and dict_slots:
            container, key = draw(st.sampled_from(dict_slots))
            del container[key]
        elif op in ("replace", "null") and slots:
            container, key = draw(st.sampled_from(slots))
            container[key] = None if op == "null" else draw(json_values)
        elif op == "insert":
            target = draw(st.sampled_from(_dicts(value)))
            key = draw(st.sampled_from(keys) | st.sampled_from(keys) | key_names)
            target[key] = draw(st.none() | st.sampled_from([0, "s", True, [], {}]) | json_values)
        elif op == "retype":
            target = draw(st.sampled_from(_dicts(value)))
            target["type"] = draw(
                st.sampled_from([*sorted(FIXED_CHUNK_TYPES | set(PART_SPEC)), "dynamic-tool"])
                | st.tuples(st.sampled_from(["data-", "tool-", ""]), names).map("".join)
                | json_values
            )
        elif op == "state":
            target = draw(st.sampled_from(_dicts(value)))
            target["state"] = draw(st.sampled_from(sorted(TOOL_STATE_SPEC)) | json_values)
    return value


def _mutate_chunk(chunk: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    kind = chunk["type"] if chunk["type"] in CHUNK_SPEC else "data-*"
    return mutate(chunk, [*CHUNK_SPEC[kind], "type"])


def chunk_cases() -> st.SearchStrategy[Any]:
    """Chunks to compare with the SDK: valid ones, mutated ones, a few non-objects."""
    return (
        valid_chunks()
        | valid_chunks().flatmap(_mutate_chunk)
        | valid_chunks().flatmap(_mutate_chunk)
        | json_values.filter(lambda v: not isinstance(v, dict))
    )


def message_cases() -> st.SearchStrategy[Any]:
    """Messages to compare with the SDK: valid ones and mutated ones."""
    return valid_messages() | valid_messages().flatmap(mutate) | valid_messages().flatmap(mutate)


def sse_body(chunk: Any) -> str:
    """The SSE response body a chatledger server would send for one chunk."""
    return f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n"
