"""Writing a conversation without the app's responder: start it, append a message.

For a server that runs the model elsewhere and uses chatledger as its store:
``POST /api/chats`` starts a conversation, ``POST /api/chats/{id}/messages``
appends a whole UIMessage (the user's), and the answer is streamed in with
``POST /api/chats/{id}/answers`` (``answers.py``). Both are safe to retry: a
conversation that exists is left as it is, and the same message (same id,
same content) appended again records nothing.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from chatledger.adapters.http.auth import Identity
from chatledger.adapters.http.errors import invalid
from chatledger.adapters.http.requests import BodyLimits, read_body, string_field
from chatledger.adapters.store import ConversationStore
from chatledger.domain.concurrency import METADATA_KEY, parse_concurrency
from chatledger.domain.errors import InvalidInputError, InvalidMessageError
from chatledger.domain.owners import ANY, check_owner

__all__ = ["ConversationEndpoints"]


class ConversationEndpoints:
    """Start and append routes on one store, for the identity ``identify`` gives each request."""

    def __init__(
        self,
        store: ConversationStore,
        identify: Callable[[Request], Identity],
        *,
        limits: dict[str, BodyLimits],
    ) -> None:
        self.store = store
        self.identify = identify
        self.limits = limits

    async def start(self, request: Request) -> Response:
        """``POST /api/chats`` ``{id?, aiSdk?, metadata?, owner?, messageConcurrency?}``: start (201; 200: it exists).

        ``owner`` names the runtime that continues it (e.g. ``client:my-app`` for
        a Node server using chatledger as its store): only that runtime's claims
        (``POST /api/continuations/claim``) take its continuation requests, so this
        server's responder never answers it. Default ``any``. ``messageConcurrency``
        is its policy for messages sent mid-answer (``PUT .../message-concurrency``
        changes it). A conversation that exists keeps its owner and policy.
        """
        who = self.identify(request)
        body = await read_body(request, self.limits["start"], optional=True)
        chat_id = string_field(body, "id", required=False) or f"chat_{uuid.uuid4().hex}"
        ai_sdk, metadata = body.get("aiSdk"), body.get("metadata")
        if ai_sdk is not None and (type(ai_sdk) is not int or ai_sdk not in (6, 7)):
            raise invalid(f"'aiSdk' must be 6 or 7, not {ai_sdk!r}")
        if metadata is not None and not isinstance(metadata, dict):
            raise invalid("'metadata' must be a JSON object")
        owner, policy = body.get("owner", ANY), body.get(METADATA_KEY)
        try:
            check_owner(owner)
        except InvalidInputError as error:
            raise invalid(f"'owner': {error}") from None
        if policy is not None:
            try:
                parse_concurrency(policy, f"'{METADATA_KEY}'")
            except InvalidInputError as error:
                raise invalid(str(error)) from None
        start = functools.partial(
            self.store.chats.start_conversation, chat_id, tenant=who.tenant, actor=who.actor,
            metadata=metadata, exist_ok=True, ai_sdk=ai_sdk, owner=owner,
            message_concurrency=policy,
        )  # fmt: skip
        created = await run_in_threadpool(start)
        return JSONResponse(
            {"id": chat_id, "created": created}, status_code=201 if created else 200
        )

    async def append_message(self, request: Request) -> Response:
        """``POST /api/chats/{id}/messages`` ``{message}``: append a whole UIMessage (the user's).

        The conversation must have been started (404 otherwise). The same
        message again (a retry) records nothing (``changed: false``); another
        message with a stored id is refused (422).
        """
        who = self.identify(request)
        chat_id = request.path_params["chat_id"]
        body = await read_body(request, self.limits["messages"])
        message = body.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("id"), str):
            raise invalid(
                "'message' must be a UI message: an object with an 'id', a 'role', 'parts'"
            )
        try:
            await run_in_threadpool(
                lambda: self.store.chats.append_message(
                    chat_id, message, tenant=who.tenant, actor=who.actor
                )
            )
        except InvalidMessageError:
            if not await self._stored(who, chat_id, message):
                raise
            return JSONResponse({"id": chat_id, "messageId": message["id"], "changed": False})
        return JSONResponse({"id": chat_id, "messageId": message["id"], "changed": True})

    async def _stored(self, who: Identity, chat_id: str, message: dict[str, Any]) -> bool:
        """Whether ``message`` is stored as it is (a retried append)."""
        messages = await run_in_threadpool(self.store.reads.messages, chat_id, tenant=who.tenant)
        return any(stored == message for stored in messages)
