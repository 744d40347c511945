"""A conversation's own policy for user messages sent while an answer streams, over HTTP.

``PUT /api/chats/{id}/message-concurrency`` ``{"messageConcurrency": POLICY | null}``
sets the ``messageConcurrency`` key of the conversation's metadata (the other
keys are kept; ``null`` removes it: the server's default applies again). The
value is checked as ``chatledger serve --message-concurrency`` checks its own
(``chatledger.domain.concurrency.parse_concurrency``): anything else is 422
naming the allowed values. The change is recorded as the request's actor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from chatledger.adapters.http.auth import Identity
from chatledger.adapters.http.errors import invalid
from chatledger.adapters.http.requests import BodyLimits, read_body
from chatledger.domain.concurrency import METADATA_KEY, POLICIES, parse_concurrency
from chatledger.domain.errors import InvalidInputError

if TYPE_CHECKING:
    from chatledger.adapters.store import ConversationStore

__all__ = ["MessageConcurrencyEndpoint", "message_concurrency_paths"]

PATH = "/api/chats/{chat_id:path}/message-concurrency"


class MessageConcurrencyEndpoint:
    """The route setting one conversation's mid-answer policy, for the identity ``identify`` gives."""

    def __init__(
        self,
        store: ConversationStore,
        identify: Callable[[Request], Identity],
        limits: BodyLimits,
    ) -> None:
        self.store, self.identify, self.limits = store, identify, limits

    def route(self) -> Route:
        """The route, to list in the app before the pages."""
        return Route(PATH, self.put, methods=["PUT"])

    async def put(self, request: Request) -> Response:
        """``PUT /api/chats/{id}/message-concurrency``: ``{id, messageConcurrency, changed}``."""
        who = self.identify(request)
        chat_id = request.path_params["chat_id"]
        body = await read_body(request, self.limits)
        if METADATA_KEY not in body:
            raise invalid(f"'{METADATA_KEY}' is required: a policy, or null for the default")
        value = body[METADATA_KEY]
        if value is not None:
            try:
                parse_concurrency(value, f"'{METADATA_KEY}'")
            except InvalidInputError as error:
                raise invalid(str(error)) from None
            value = value.strip()
        changed = await run_in_threadpool(
            lambda: self.store.chats.set_metadata_key(
                chat_id, METADATA_KEY, value, tenant=who.tenant, actor=who.actor
            )
        )
        return JSONResponse({"id": chat_id, METADATA_KEY: value, "changed": changed})


def message_concurrency_paths(limits: BodyLimits, error: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI path of the route (``error``: the error response object)."""
    policy = {
        "type": ["string", "null"],
        "description": f"one of {', '.join(POLICIES)}, or debounce:SECONDS; "
        "null: the server's default",
        "examples": ["drop", "debounce:2"],
    }
    ok = {
        "description": "{id, messageConcurrency, changed}",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
    return {
        "/api/chats/{id}/message-concurrency": {
            "put": {
                "summary": "Set what a user message sent while an answer streams does in this "
                "conversation (its metadata's messageConcurrency)",
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "requestBody": {
                    "required": True,
                    "description": f"JSON, at most {limits.max_bytes} bytes",
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {METADATA_KEY: policy},
                                "required": [METADATA_KEY],
                            }
                        }
                    },
                },
                "responses": {
                    "200": ok,
                    **{c: error for c in ("400", "401", "403", "404", "413", "415", "422", "503")},
                },
            }
        }
    }
