"""Reading the HTTP app's requests: a JSON object body within a size limit, fields and query parameters.

Each helper refuses bad input with an ``HTTPProblem`` naming the field and
what it must be (413 over the limit, 400 not JSON, 422 otherwise).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from chatledger.adapters.http.deadlines import read_within
from chatledger.adapters.http.errors import HTTPProblem, invalid

__all__ = [
    "BodyLimits",
    "auto_continue_field",
    "bool_param",
    "int_param",
    "parse_body",
    "read_body",
    "string_field",
]


@dataclass(frozen=True)
class BodyLimits:
    """How much work one route's JSON body may ask for (413 over a size, 422 over a shape)."""

    max_bytes: int
    """The body's size in bytes."""
    max_items: int = 2_000_000
    """JSON values, counted as ``{``, ``[`` and ``,`` characters before parsing (so a body of
    millions of tiny items is refused before it takes memory; those characters inside strings
    count too)."""
    max_depth: int = 128
    """How deep objects and arrays nest."""
    max_messages: int = 100_000
    """Items of a ``messages`` list."""
    max_parts: int = 10_000
    """Items of one message's ``parts`` list."""

    def describe(self) -> dict[str, int]:
        """The limits as the OpenAPI document states them."""
        return {
            "maxBytes": self.max_bytes,
            "maxItems": self.max_items,
            "maxDepth": self.max_depth,
            "maxMessages": self.max_messages,
            "maxParts": self.max_parts,
        }


async def read_body(
    request: Request, limits: BodyLimits | int, *, optional: bool = False
) -> dict[str, Any]:
    """The JSON object body within ``limits`` (413 too large, 400 not JSON, 415 not JSON-typed, 422 otherwise).

    With ``optional``, a request with no body at all (and no content type) reads
    as ``{}``: the Origin check still keeps other sites' pages out.

    The request must say ``Content-Type: application/json`` (415 otherwise):
    a cross-site HTML form or ``text/plain`` fetch cannot, so a page of
    another site cannot post to the app without a CORS preflight. The body
    is parsed in a worker thread: a large one never stalls the event loop.
    """
    if isinstance(limits, int):
        limits = BodyLimits(limits)
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    no_body = request.headers.get("content-length", "0") == "0"
    if optional and not media_type and no_body and not await request.body():
        return {}
    if media_type != "application/json":
        raise HTTPProblem(
            415,
            "UnsupportedMediaTypeError",
            f"the body must be JSON sent with 'Content-Type: application/json', "
            f"not {media_type or 'no content type'!r}",
        )
    limit = limits.max_bytes
    too_large = HTTPProblem(
        413, "RequestTooLargeError", f"the request body is over the limit of {limit} bytes"
    )
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large
    received = await read_within(request, limit, too_large)  # 408 past the read deadline
    return await run_in_threadpool(parse_body, received, limits)


def parse_body(received: bytes, limits: BodyLimits) -> dict[str, Any]:
    """Parse and check a JSON object body against ``limits`` (call it off the event loop)."""
    items = received.count(b"{") + received.count(b"[") + received.count(b",")
    if items > limits.max_items:
        raise HTTPProblem(
            413,
            "RequestTooLargeError",
            f"the body holds about {items} JSON values, over the limit of {limits.max_items}",
        )
    try:
        body = json.loads(received)
    except RecursionError:
        raise _too_deep(limits) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise HTTPProblem(400, "InvalidJSONError", f"the body is not JSON: {error}") from None
    except ValueError as error:  # e.g. an integer of more than 4,300 digits
        raise invalid(f"the body holds a value Python cannot read: {error}") from None
    if not isinstance(body, dict):
        raise HTTPProblem(422, "InvalidRequestError", "the body must be a JSON object")
    if not _shallow_enough(body, limits.max_depth):
        raise _too_deep(limits)
    messages = body.get("messages")
    if isinstance(messages, list):
        if len(messages) > limits.max_messages:
            raise invalid(
                f"'messages' has {len(messages)} items, over the limit of {limits.max_messages}"
            )
        for message in messages:
            parts = message.get("parts") if isinstance(message, dict) else None
            if isinstance(parts, list) and len(parts) > limits.max_parts:
                raise invalid(
                    f"message {message.get('id')!r} has {len(parts)} parts, over the limit of "
                    f"{limits.max_parts}"
                )
    return body


def _too_deep(limits: BodyLimits) -> HTTPProblem:
    return invalid(f"the body nests objects and arrays more than {limits.max_depth} levels deep")


def _shallow_enough(value: Any, max_depth: int) -> bool:
    """Whether containers nest at most ``max_depth`` deep (iterative: deep input cannot crash it)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if depth >= max_depth:
            return False
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return True


def string_field(body: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    """A non-empty string field (None when absent and not ``required``)."""
    value = body.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise invalid(f"{key!r} must be a non-empty string")
    return value


MAX_INT_PARAM = 2**63 - 1
"""The largest integer a query parameter may be (what a database column holds)."""


def int_param(request: Request, name: str, *, minimum: int = 0) -> int | None:
    """An integer query parameter from ``minimum`` to ``MAX_INT_PARAM`` (None when absent or empty)."""
    text = request.query_params.get(name)
    if text is None or text == "":
        return None
    problem = invalid(
        f"query parameter {name!r} must be an integer from {minimum} to {MAX_INT_PARAM}, "
        f"not {text[:40]!r}"
    )
    if len(text) > 20:
        raise problem
    try:
        value = int(text)
    except ValueError:
        raise problem from None
    if not minimum <= value <= MAX_INT_PARAM:
        raise problem
    return value


def bool_param(request: Request, name: str) -> bool:
    """A boolean query parameter: true/1/yes or false/0/no (absent: false)."""
    text = request.query_params.get(name, "").lower()
    if text in ("", "0", "false", "no"):
        return False
    if text in ("1", "true", "yes"):
        return True
    raise invalid(f"query parameter {name!r} must be true or false, not {text!r}")


def auto_continue_field(body: dict[str, Any]) -> bool | None:
    """The optional ``autoContinue`` flag of an action (None: the store's default)."""
    value = body.get("autoContinue")
    if value is not None and not isinstance(value, bool):
        raise invalid("'autoContinue' must be true or false")
    return value
