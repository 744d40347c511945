"""Reading the HTTP app's requests: a JSON object body within a size limit, fields and query parameters.

Each helper refuses bad input with an ``HTTPProblem`` naming the field and
what it must be (413 over the limit, 400 not JSON, 422 otherwise).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from chatledger.adapters.http.errors import HTTPProblem, invalid

__all__ = ["auto_continue_field", "bool_param", "int_param", "read_body", "string_field"]


async def read_body(request: Request, limit: int) -> dict[str, Any]:
    """The JSON object body (413 over ``limit`` bytes, 400 if it is not JSON, 422 if not an object).

    The request must say ``Content-Type: application/json`` (415 otherwise):
    a cross-site HTML form or ``text/plain`` fetch cannot, so a page of
    another site cannot post to the app without a CORS preflight.
    """
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type != "application/json":
        raise HTTPProblem(
            415,
            "UnsupportedMediaTypeError",
            f"the body must be JSON sent with 'Content-Type: application/json', "
            f"not {media_type or 'no content type'!r}",
        )
    too_large = HTTPProblem(
        413, "RequestTooLargeError", f"the request body is over the limit of {limit} bytes"
    )
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large
    received = bytearray()
    async for piece in request.stream():
        received += piece
        if len(received) > limit:
            raise too_large
    try:
        body = json.loads(received)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise HTTPProblem(400, "InvalidJSONError", f"the body is not JSON: {error}") from None
    if not isinstance(body, dict):
        raise HTTPProblem(422, "InvalidRequestError", "the body must be a JSON object")
    return body


def string_field(body: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    """A non-empty string field (None when absent and not ``required``)."""
    value = body.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise invalid(f"{key!r} must be a non-empty string")
    return value


def int_param(request: Request, name: str) -> int | None:
    """An integer query parameter (None when absent or empty)."""
    text = request.query_params.get(name)
    if text is None or text == "":
        return None
    try:
        return int(text)
    except ValueError:
        raise invalid(f"query parameter {name!r} must be an integer, not {text!r}") from None


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
