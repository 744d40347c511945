"""``GET /docs``: the API reference for people, rendered on the server from the OpenAPI document.

The same document as ``GET /openapi.json`` (one source), laid out as a page:
every route with its method, summary, who may call it, parameters, request
body fields (nested fields as ``a.b``), responses and the shared schemas. No
script and nothing from another site (servers often have no internet, and the
page must not load code from elsewhere); public like ``/openapi.json``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from chatledger.adapters.http.pages import render_page

__all__ = ["Field", "Operation", "Section", "docs_route", "reference"]

METHODS = ("get", "post", "put", "patch", "delete")
_MAX_DEPTH = 4


@dataclass(frozen=True)
class Field:
    """A parameter or a body field: its (dotted) name, type, whether required, and what it is."""

    name: str
    type: str
    required: bool
    description: str = ""


@dataclass(frozen=True)
class Operation:
    """One method on one path."""

    method: str
    path: str
    summary: str
    access: str
    """Who may call it: a token, an operator token, or anyone."""
    parameters: list[Field]
    body: list[Field] | None
    """The JSON body's fields (None: no body)."""
    body_note: str
    responses: list[tuple[str, str]]
    """(status, description)."""
    result: list[Field] = field(default_factory=list)
    """The fields of the 200 answer's JSON body (empty when it names none)."""

    @property
    def anchor(self) -> str:
        """The element id of its entry."""
        return re.sub(r"[^a-z0-9]+", "-", f"{self.method}{self.path}".lower()).strip("-")


@dataclass
class Section:
    """Routes of one kind (the API, health, pages ...)."""

    title: str
    operations: list[Operation] = field(default_factory=list)


_SECTIONS: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("Chat and conversations API", lambda path: path.startswith("/api/")),
    ("Health and metrics", lambda path: path.startswith(("/health", "/metrics"))),
    ("Page fragments", lambda path: path.startswith("/ui/")),
    ("Pages", lambda path: not path.endswith(".json")),
    ("This document", lambda path: True),
)


def reference(document: dict[str, Any]) -> tuple[list[Section], list[tuple[str, list[Field]]]]:
    """The document's operations in sections, and its shared schemas with their fields."""
    sections = [Section(title) for title, _ in _SECTIONS]
    default_security = document.get("security") or []
    for path, item in document.get("paths", {}).items():
        for method in METHODS:
            if method in item:
                index = next(i for i, (_, fits) in enumerate(_SECTIONS) if fits(path))
                sections[index].operations.append(
                    _operation(document, path, method, item[method], default_security)
                )
    schemas = document.get("components", {}).get("schemas", {})
    shared = [(name, _fields(document, schema, "")) for name, schema in schemas.items()]
    return [s for s in sections if s.operations], shared


def _operation(
    document: dict[str, Any], path: str, method: str, op: dict[str, Any], security: list[Any]
) -> Operation:
    summary = str(op.get("summary", ""))
    if "operator" in summary.lower():  # the operator routes and /metrics say so in their summary
        access = "an operator token (a TOKEN=*:USER line)"
    elif op.get("security", security) == []:
        access = "anyone (no token)"
    else:
        access = "a bearer token (Authorization: Bearer TOKEN)"
    parameters = [
        Field(f"{p['name']} ({p.get('in', 'query')})", _type(document, p.get("schema", {})),
              bool(p.get("required")), str(p.get("description", "")))
        for p in (_resolve(document, p) for p in op.get("parameters", []))
    ]  # fmt: skip
    body, note = None, ""
    if "requestBody" in op:
        request = _resolve(document, op["requestBody"])
        content: dict[str, Any] = request.get("content", {})
        kind, media = next(iter(content.items()), ("", {}))
        schema: dict[str, Any] = media.get("schema", {}) if isinstance(media, dict) else {}
        body = _fields(document, schema, "")
        required = "required" if request.get("required") else "optional"
        note = f"{kind}, {required}. {request.get('description', '')}".strip()
    responses = [
        (status, str(_resolve(document, answer).get("description", "")))
        for status, answer in op.get("responses", {}).items()
    ]
    ok = _resolve(document, op.get("responses", {}).get("200", {}))
    answer: dict[str, Any] = ok.get("content", {}).get("application/json", {})
    result = _fields(document, answer.get("schema", {}), "") if isinstance(answer, dict) else []
    return Operation(
        method.upper(), path, summary, access, parameters, body, note, responses, result
    )


def _resolve(document: dict[str, Any], node: Any) -> dict[str, Any]:
    """``node`` with a local ``$ref`` followed (once or more)."""
    seen = 0
    while isinstance(node, dict) and "$ref" in node and seen < 8:
        target: Any = document
        for step in str(node["$ref"]).removeprefix("#/").split("/"):
            target = target.get(step, {}) if isinstance(target, dict) else {}
        node, seen = target, seen + 1
    return node if isinstance(node, dict) else {}


def _type(document: dict[str, Any], schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    kind = schema.get("type", "any")
    text = " or ".join(kind) if isinstance(kind, list) else str(kind)
    if text == "array":
        text = f"array of {_type(document, schema.get('items', {}))}"
    if "enum" in schema:
        text += ": " + " | ".join(str(value) for value in schema["enum"])
    bounds = [f"{word} {schema[key]}" for key, word in (("minimum", "min"), ("maximum", "max"),
              ("minLength", "min length")) if key in schema]  # fmt: skip
    return text + (f" ({', '.join(bounds)})" if bounds else "")


def _fields(
    document: dict[str, Any], schema: dict[str, Any], prefix: str, depth: int = 0
) -> list[Field]:
    """Every property of an object schema, nested ones as ``parent.child`` (``parent[].child`` in
    arrays, ``parent.NAME.child`` in maps), a few levels deep."""
    if "$ref" in schema and depth > 0:
        return []  # named schemas are listed once, at the end of the page
    schema = _resolve(document, schema)
    required = set(schema.get("required", []))
    found: list[Field] = []
    for name, sub in schema.get("properties", {}).items():
        sub = sub if isinstance(sub, dict) else {}
        dotted = f"{prefix}{name}"
        found.append(
            Field(dotted, _type(document, sub), name in required, str(sub.get("description", "")))
        )
        if depth < _MAX_DEPTH and (sub.get("properties") or "$ref" in sub):
            found += _fields(document, sub, f"{dotted}.", depth + 1)
        for nested, where in (
            (sub.get("additionalProperties"), ".NAME."),
            (sub.get("items"), "[]."),
        ):
            if isinstance(nested, dict) and depth < _MAX_DEPTH:
                found += _fields(document, nested, f"{dotted}{where}", depth + 1)
    return found


def docs_route(document: Callable[[], dict[str, Any]]) -> Route:
    """``GET /docs`` rendering ``document()`` (the app's OpenAPI document)."""

    async def docs(request: Request) -> Response:
        described = document()
        sections, schemas = reference(described)
        return render_page(
            "docs.html",
            title="API reference",
            info=described.get("info", {}),
            sections=sections,
            schemas=schemas,
        )

    return Route("/docs", docs, methods=["GET"])
