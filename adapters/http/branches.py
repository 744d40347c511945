"""The branch and fork endpoints: list a message's branches, switch the active path, fork a conversation.

``GET /api/chats/{id}/branches`` gives every message of the active path with its
siblings (``< index/total >``), or one message's (``?message=``);
``POST /api/chats/{id}/branches`` switches the active path (an audited
``BranchSwitched``) and answers the new path's messages, so a ``useChat``
client can ``setMessages`` them; ``POST /api/chats/{id}/forks`` starts a
conversation that shares this one's path up to a message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from chatledger.adapters.http.auth import Identity
from chatledger.adapters.http.errors import invalid
from chatledger.adapters.http.requests import BodyLimits, int_param, read_body, string_field
from chatledger.adapters.store import ConversationStore
from chatledger.domain.branches import siblings_in_view
from chatledger.domain.conversation import ConversationState
from chatledger.domain.errors import ConversationNotFoundError

__all__ = ["BranchEndpoints", "branch_navs", "branch_paths", "view_branches"]


def view_branches(store: ConversationStore, chat_id: str, tenant: str) -> list[dict[str, Any]]:
    """Each message of the active path with its siblings, as ``GET .../branches`` answers them."""
    state = store.reads.stored_state(chat_id, tenant=tenant)  # read your writes
    if state is None:
        raise ConversationNotFoundError(tenant, chat_id)
    return [s.to_json() for s in siblings_in_view(state.branches, state.messages)]


def branch_navs(state: ConversationState) -> dict[str, dict[str, Any]]:
    """Message id -> ``{index, total, prev, next}`` for each message of the view that has siblings.

    ``prev`` and ``next`` are the keys of the neighbouring siblings (None at either end):
    what the pages' ``< 2/3 >`` buttons switch to.
    """
    tree = state.branches
    if tree is None:
        return {}
    navs: dict[str, dict[str, Any]] = {}
    for key, message in zip(tree.path, state.messages, strict=True):
        siblings = tree.siblings(key)
        if siblings.total < 2:
            continue
        keys, at = [branch.key for branch in siblings.branches], siblings.index - 1
        navs[message["id"]] = {
            "index": siblings.index,
            "total": siblings.total,
            "prev": keys[at - 1] if at > 0 else None,
            "next": keys[at + 1] if at + 1 < len(keys) else None,
        }
    return navs


class BranchEndpoints:
    """The branch and fork endpoints on one store, for the identity ``identify`` gives each request."""

    def __init__(
        self, store: ConversationStore, identify: Callable[[Request], Identity], limits: BodyLimits
    ) -> None:
        self.store = store
        self.identify = identify
        self.limits = limits

    async def list(self, request: Request) -> Response:
        """``GET /api/chats/{id}/branches[?message=ID&atVersion=N]``: siblings of the path, or of one message."""
        who = self.identify(request)
        chat_id = request.path_params["chat_id"]
        message = request.query_params.get("message") or None
        at_version = int_param(request, "atVersion")
        if message is None:
            if at_version is not None:
                raise invalid("'atVersion' needs 'message' (the branches of one message then)")
            found = await run_in_threadpool(view_branches, self.store, chat_id, who.tenant)
            return JSONResponse({"id": chat_id, "messages": found})
        siblings = await run_in_threadpool(
            lambda: self.store.reads.branches(
                chat_id, message, tenant=who.tenant, at_version=at_version
            )
        )
        return JSONResponse({"id": chat_id, **siblings.to_json()})

    async def switch(self, request: Request) -> Response:
        """``POST /api/chats/{id}/branches`` ``{to, reason?}``: show the branch of message ``to``."""
        who = self.identify(request)
        chat_id = request.path_params["chat_id"]
        body = await read_body(request, self.limits)
        to = string_field(body, "to")
        assert to is not None
        reason = _reason(body)

        def switch() -> tuple[str | None, list[dict[str, Any]]]:
            leaf = self.store.chats.switch_branch(
                chat_id, to, reason=reason, actor=who.actor, tenant=who.tenant
            )
            return leaf, self.store.reads.messages(chat_id, tenant=who.tenant)

        leaf, messages = await run_in_threadpool(switch)
        return JSONResponse(
            {"id": chat_id, "switched": leaf is not None, "leaf": leaf, "messages": messages}
        )

    async def fork(self, request: Request) -> Response:
        """``POST /api/chats/{id}/forks`` ``{chatId, leaf?, atVersion?, reason?}``: a new conversation."""
        who = self.identify(request)
        chat_id = request.path_params["chat_id"]
        body = await read_body(request, self.limits)
        new_chat_id = string_field(body, "chatId")
        assert new_chat_id is not None
        leaf = string_field(body, "leaf", required=False)
        at_version = body.get("atVersion")
        if at_version is not None and (type(at_version) is not int or at_version < 1):
            raise invalid("'atVersion' must be a version of the conversation (an integer from 1)")
        reason = _reason(body)
        shared = await run_in_threadpool(
            lambda: self.store.chats.fork(
                chat_id,
                new_chat_id,
                leaf=leaf,
                at_version=at_version,
                reason=reason,
                actor=who.actor,
                tenant=who.tenant,
            )
        )
        return JSONResponse({"id": new_chat_id, "origin": chat_id, "leaf": shared}, status_code=201)


def _reason(body: dict[str, Any]) -> str | None:
    reason = body.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise invalid("'reason' must be a string")
    return reason


def branch_paths(limits: BodyLimits, error: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI paths of the branch and fork routes (``error``: the error response object)."""
    errors = {code: error for code in ("400", "401", "403", "404", "409", "413", "415", "422")}
    chat_id = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}

    def query(name: str, description: str, kind: str = "string") -> dict[str, Any]:
        schema = {"type": kind}
        where = {"name": name, "in": "query", "required": False}
        return {**where, "schema": schema, "description": description}

    def body(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
        schema = {"type": "object", "properties": properties, "required": required}
        return {
            "required": True,
            "description": f"JSON, at most {limits.max_bytes} bytes",
            "content": {"application/json": {"schema": schema}},
        }

    def ok(description: str) -> dict[str, Any]:
        return {"description": description, "content": {"application/json": {}}}

    text = {"type": "string", "minLength": 1}
    return {
        "/api/chats/{id}/branches": {
            "get": {
                "summary": "The sibling branches (edits, regenerations) of each message of the "
                "active path, or of one message",
                "parameters": [
                    chat_id,
                    query("message", "a message id or branch key: its siblings only"),
                    query("atVersion", "with message: as it stood at this version", "integer"),
                ],
                "responses": {
                    "200": ok(
                        "{messages: [{key, index, total, branches}]} or {key, index, total, branches}"
                    ),
                    **errors,
                },
            },
            "post": {
                "summary": "Switch the active path to the branch of a message (audited)",
                "parameters": [chat_id],
                "requestBody": body({"to": text, "reason": {"type": "string"}}, ["to"]),
                "responses": {"200": ok("{switched, leaf, messages}"), **errors},
            },
        },
        "/api/chats/{id}/forks": {
            "post": {
                "summary": "Fork the conversation into a new one sharing its path up to a message",
                "parameters": [chat_id],
                "requestBody": body(
                    {
                        "chatId": text,
                        "leaf": text,
                        "atVersion": {"type": "integer", "minimum": 1},
                        "reason": {"type": "string"},
                    },
                    ["chatId"],
                ),
                "responses": {"201": ok("{id, origin, leaf}"), **errors},
            }
        },
    }
