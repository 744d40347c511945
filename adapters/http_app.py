"""The HTTP adapter (SPEC §9): an ASGI app speaking the AI SDK ``useChat`` conventions.

``create_app(store_or_url, responder=..., tokens=...)`` gives a Starlette app:

* ``POST /api/chat`` takes the body ``DefaultChatTransport`` sends
  (``{id, messages, trigger, messageId}``, ai-sdk-v6.md §g). It starts the
  conversation if it is new; records what the client added: a new user
  message (or an edit of one), approval answers and tool outputs found in the
  last assistant message it sent (``approval-responded`` / ``output-denied``
  with ``approval: {id, approved, reason}``, ``output-available`` /
  ``output-error`` the store does not have yet), or a regenerate
  (``trigger: "regenerate-message"``). Then it runs the responder on the
  stored messages: a new assistant message for a user message, a
  continuation of the same assistant message once its tool calls are all
  answered. Every chunk is stored and streamed back as Server-Sent Events
  (``data: <json>`` ... ``data: [DONE]``). Chunks the store does not apply
  (replays of known tool calls, refused chunks) are recorded but not sent,
  so the client's messages stay equal to the store's; ``start`` chunks are
  sent with the stored message id. The responder runs to its end even when
  the client disconnects: the client resumes from the durable log.
* ``GET /api/chat/{id}/stream`` resumes: the open stream from its start (or
  after ``?after=<cursor>`` / ``Last-Event-ID``), live from the log
  (``store.follow``), each event with its cursor as SSE ``id``; 204 when
  nothing is streaming.
* JSON endpoints for messages, status, the audit history, model messages,
  the approvals inbox, approvals and tool outputs; ``GET /openapi.json``
  describes them all.

Errors are JSON ``{"error": {"type": <class name>, "message": ...}}``: 404
unknown conversation or tool call, 409 conflicts (a stream already open, an
answer that contradicts the recorded one, nothing to continue), 413 oversized
input, 422 invalid input, 401 without a known token, 503 database
unavailable.

**Tenancy.** With ``tokens`` (bearer token -> tenant) every request needs
``Authorization: Bearer <token>`` and sees only its tenant's conversations
(another tenant's chat id is simply unknown: 404). Without ``tokens`` every
request is the store's default tenant.

The store is synchronous; the app calls it from worker threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hmac
import json
import logging
import os
import socket
import threading
from collections.abc import AsyncIterator, Coroutine, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from chatledger.adapters.actions import ActionResult
from chatledger.adapters.follow import FollowedChunk
from chatledger.adapters.responders import Responder, ResponderRequest, demo_responder
from chatledger.adapters.store import ConversationStore
from chatledger.adapters.stream import StreamWriter
from chatledger.domain.continuation import ConversationStatus
from chatledger.domain.conversation import Verdict
from chatledger.domain.convert import FORMATS
from chatledger.domain.errors import (
    ApprovalConflictError,
    ChatLedgerError,
    ConcurrentWriteError,
    ContinuationNotPendingError,
    ConversationExistsError,
    ConversationNotFoundError,
    FollowTimeoutError,
    InvalidInputError,
    MessageConversionError,
    NoOpenStreamError,
    OversizedInputError,
    StoreUnavailableError,
    StreamAlreadyOpenError,
    ToolCallNotReadyError,
    UnansweredToolCallError,
    UnknownToolCallError,
)
from chatledger.domain.timeline import KINDS
from chatledger.domain.tool_parts import is_terminal, is_tool_part
from chatledger.projections.read_models import ContinuationRequest

__all__ = ["SSE_HEADERS", "HTTPProblem", "create_app", "openapi_document", "serve"]

log = logging.getLogger("chatledger.http")

SSE_HEADERS = {
    "cache-control": "no-cache",
    "connection": "keep-alive",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
}
"""The response headers of the AI SDK's UI message stream (ai-sdk-v6.md §g)."""

_DONE = "data: [DONE]\n\n"
_KEEP_ALIVE = ": keep-alive\n\n"
_TRIGGERS = ("submit-message", "regenerate-message")

_STATUS_OF_ERROR: tuple[tuple[type[Exception], int], ...] = (
    (ConversationNotFoundError, 404),
    (UnknownToolCallError, 404),
    (OversizedInputError, 413),
    (InvalidInputError, 422),
    (MessageConversionError, 422),
    (ConversationExistsError, 409),
    (StreamAlreadyOpenError, 409),
    (NoOpenStreamError, 409),
    (ConcurrentWriteError, 409),
    (ApprovalConflictError, 409),
    (ToolCallNotReadyError, 409),
    (ContinuationNotPendingError, 409),
    (UnansweredToolCallError, 409),
    (StoreUnavailableError, 503),
    (FollowTimeoutError, 504),
)
"""chatledger errors to HTTP statuses, most specific first (anything else: 500)."""


class HTTPProblem(Exception):
    """An error answered as JSON ``{"error": {"type", "message"}}`` with ``status``."""

    def __init__(
        self, status: int, type_name: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.type_name = type_name
        self.message = message
        self.headers = headers


def status_for(error: Exception) -> int:
    """The HTTP status a chatledger error is answered with."""
    for kind, status in _STATUS_OF_ERROR:
        if isinstance(error, kind):
            return status
    return 500


def _error_response(status: int, type_name: str, message: str, headers: Any = None) -> Response:
    return JSONResponse(
        {"error": {"type": type_name, "message": message}}, status_code=status, headers=headers
    )


async def _on_problem(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPProblem)
    return _error_response(error.status, error.type_name, error.message, error.headers)


async def _on_http_exception(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    names = {404: "NotFoundError", 405: "MethodNotAllowedError"}
    type_name = names.get(error.status_code, "HTTPError")
    return _error_response(error.status_code, type_name, str(error.detail), error.headers)


async def _on_unexpected(request: Request, error: Exception) -> Response:
    log.error("%s %s failed", request.method, request.url.path, exc_info=error)
    return _error_response(500, "InternalServerError", "the server failed; see its log")


async def _on_chatledger_error(request: Request, error: Exception) -> Response:
    status = status_for(error)
    if status >= 500:
        log.error("%s %s failed: %r", request.method, request.url.path, error)
    return _error_response(status, type(error).__name__, str(error))


# -- request helpers -------------------------------------------------------------


async def _body(request: Request, limit: int) -> dict[str, Any]:
    """The JSON object body (413 over ``limit`` bytes, 400 if it is not JSON, 422 if not an object)."""
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


def _invalid(message: str) -> HTTPProblem:
    return HTTPProblem(422, "InvalidRequestError", message)


def _string(body: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    value = body.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise _invalid(f"{key!r} must be a non-empty string")
    return value


def _int_param(request: Request, name: str) -> int | None:
    text = request.query_params.get(name)
    if text is None or text == "":
        return None
    try:
        return int(text)
    except ValueError:
        raise _invalid(f"query parameter {name!r} must be an integer, not {text!r}") from None


def _bool_param(request: Request, name: str) -> bool:
    text = request.query_params.get(name, "").lower()
    if text in ("", "0", "false", "no"):
        return False
    if text in ("1", "true", "yes"):
        return True
    raise _invalid(f"query parameter {name!r} must be true or false, not {text!r}")


def _sse(chunk: Any, event_id: str | None = None) -> str:
    """One SSE event carrying ``chunk`` as JSON (ASCII: any string survives)."""
    data = json.dumps(chunk, separators=(",", ":"))
    return f"id: {event_id}\ndata: {data}\n\n" if event_id else f"data: {data}\n\n"


def _with_message_id(chunk: Any, message_id: str) -> Any:
    """A ``start`` chunk as the client must see it: with the stored assistant message's id."""
    if isinstance(chunk, dict) and chunk.get("type") == "start":
        return {**chunk, "messageId": message_id}
    return chunk


_RESULT_CHUNKS = frozenset({"tool-output-available", "tool-output-error", "tool-output-denied"})


def _deliver(writer: StreamWriter, chunk: Any) -> str | None:
    """Store one chunk; the SSE event the client must get for it, if any (a worker thread).

    Applied chunks are sent (a ``start`` with the stored message id), except
    a result for a tool call of an earlier message: the store applies it there
    (SPEC §3.3) but the client's fold only looks in the message it streams.
    Replayed and refused chunks are not sent, as the SDK would regress its
    parts with them; a replayed result of a call of this message is sent as
    the result the store holds, so the client's part reaches the stored state
    (e.g. ``output-denied`` after a denial the client still shows as
    ``approval-responded``).
    """
    received = writer.append(chunk)
    if received.verdict is Verdict.REFUSED:
        log.warning("chunk refused on stream %s: %s", writer.stream_id, received.error)
        return None
    message_id = writer.message_id
    kind = chunk.get("type") if isinstance(chunk, dict) else None
    call = chunk.get("toolCallId") if isinstance(chunk, dict) else None
    if kind not in _RESULT_CHUNKS or not isinstance(call, str):
        return (
            _sse(_with_message_id(chunk, message_id))
            if received.verdict is Verdict.APPLIED
            else None
        )
    message = next(
        (m for m in reversed(writer.conversation.state.messages) if m["id"] == message_id), None
    )
    part = next((p for p in (message or {}).get("parts", []) if p.get("toolCallId") == call), None)
    if part is None:
        return None
    if received.verdict is Verdict.APPLIED:
        return _sse(chunk)
    stored = _result_chunk(part)
    return _sse(stored) if stored is not None else None


def _result_chunk(part: dict[str, Any]) -> dict[str, Any] | None:
    """The chunk that brings a client's tool part to the stored result (None when it has none)."""
    call, state = part["toolCallId"], part.get("state")
    if state == "output-denied":
        return {"type": "tool-output-denied", "toolCallId": call}
    if state == "output-error":
        return {"type": "tool-output-error", "toolCallId": call, "errorText": part.get("errorText")}
    if state == "output-available" and "output" in part:
        chunk = {"type": "tool-output-available", "toolCallId": call, "output": part["output"]}
        if part.get("preliminary"):
            chunk["preliminary"] = True
        return chunk
    return None


# -- JSON views ---------------------------------------------------------------------


def _status_json(status: ConversationStatus) -> dict[str, Any]:
    return {
        "status": status.status,
        "lastOutcome": status.last_outcome,
        "lastReason": status.last_reason,
        "waitingFor": [
            {
                "toolCallId": call.tool_call_id,
                "toolName": call.tool_name,
                "state": call.state,
                "input": call.input,
                "approvalId": call.approval_id,
            }
            for call in status.waiting_for
        ],
        "continuationRequest": status.continuation_request,
        "streamId": status.stream_id,
    }


def _action_json(result: ActionResult) -> dict[str, Any]:
    return {
        "toolCallId": result.tool_call_id,
        "changed": result.changed,
        "state": result.state,
        "continuationRequested": result.continuation_requested,
    }


@dataclass
class _Turn:
    """A stream opened for a responder: the writer, and what the responder is asked."""

    writer: StreamWriter
    request: ResponderRequest


class _ChatApp:
    """The endpoints, bound to one store, one responder and the token table."""

    def __init__(
        self,
        store: ConversationStore,
        responder: Responder,
        tokens: dict[str, str] | None,
        *,
        keepalive_seconds: float,
        max_body_bytes: int,
        continuation_poll_seconds: float | None,
        continuation_grace_seconds: float,
    ) -> None:
        self.store = store
        self.max_body_bytes = max_body_bytes
        self.responder = responder
        self.tokens = tokens
        self.keepalive_seconds = keepalive_seconds
        self.continuation_poll_seconds = continuation_poll_seconds
        self.continuation_grace_seconds = continuation_grace_seconds
        self.worker = f"http:{socket.gethostname()}:{os.getpid()}"
        """The name this process claims continuation requests under."""
        self.responder_actor = str(getattr(responder, "actor", "agent:responder"))
        self.tasks: set[asyncio.Task[None]] = set()
        """Responder runs in progress (they outlive their HTTP response)."""

    # -- tenancy ------------------------------------------------------------------

    def tenant(self, request: Request) -> str:
        """The caller's tenant, from its bearer token (401 when tokens are configured and it has none)."""
        if self.tokens is None:
            return self.store.tenant
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        token = token.strip()
        if scheme.lower() == "bearer" and token:
            for known, tenant in self.tokens.items():
                if hmac.compare_digest(known.encode(), token.encode()):
                    return tenant
        raise HTTPProblem(
            401,
            "UnauthorizedError",
            "a valid bearer token is required (Authorization: Bearer <token>)",
            headers={"www-authenticate": 'Bearer realm="chatledger"'},
        )

    @staticmethod
    def actor(tenant: str) -> str:
        """Who the audit names for what an HTTP client records."""
        return f"http-client:{tenant}"

    # -- POST /api/chat -------------------------------------------------------------

    async def chat(self, request: Request) -> Response:
        """The ``DefaultChatTransport`` send endpoint: record what the client added, stream the answer."""
        tenant = self.tenant(request)
        body = await _body(request, self.max_body_bytes)
        chat_id = _string(body, "id")
        assert chat_id is not None
        trigger = body.get("trigger", "submit-message")
        if trigger not in _TRIGGERS:
            raise _invalid(f"'trigger' must be one of {', '.join(_TRIGGERS)}, not {trigger!r}")
        message_id = _string(body, "messageId", required=False)
        messages = body.get("messages")
        if not isinstance(messages, list) or not all(
            isinstance(m, dict) and isinstance(m.get("id"), str) and isinstance(m.get("role"), str)
            for m in messages
        ):
            raise _invalid("'messages' must be a list of UI messages, each with an id and a role")
        turn = await run_in_threadpool(
            self._prepare, tenant, chat_id, messages, trigger, message_id, body
        )
        return self._stream_turn(turn)

    def _prepare(
        self,
        tenant: str,
        chat_id: str,
        messages: list[dict[str, Any]],
        trigger: str,
        message_id: str | None,
        body: dict[str, Any],
    ) -> _Turn:
        """Record the client's additions and open the stream the responder will write (a worker thread)."""
        store, actor = self.store, self.actor(tenant)
        if trigger != "regenerate-message" and not messages:
            raise _invalid("'messages' is empty: there is nothing to answer")
        with contextlib.suppress(ConversationExistsError):
            store.start_conversation(chat_id, tenant=tenant, actor=actor)
        status = store.status(chat_id, tenant=tenant)
        if status.stream_id is not None:
            raise StreamAlreadyOpenError(chat_id, status.stream_id)
        stored = store.messages(chat_id, tenant=tenant)
        continuation, request_id = False, None
        if trigger == "regenerate-message":
            self._regenerate(tenant, chat_id, messages, message_id, stored)
        else:
            last = messages[-1]
            client_assistant = next(
                (m for m in reversed(messages) if m["role"] == "assistant"), None
            )
            if client_assistant is not None:
                self._record_answers(
                    tenant,
                    chat_id,
                    client_assistant,
                    stored,
                    continuing=last["role"] == "assistant",
                )
            if last["role"] == "user":
                self._record_user_message(tenant, chat_id, last, stored)
            elif last["role"] == "assistant":
                request_id = self._continuable(tenant, chat_id, last)
                continuation = True
                trigger = "continuation"
            else:
                raise _invalid(
                    f"the last message must be a user or an assistant message, not {last['role']!r}"
                )
        context = store.messages(chat_id, tenant=tenant)
        writer = store.open_stream(
            chat_id,
            tenant=tenant,
            actor=self.responder_actor,
            continuation=continuation,
            trigger=trigger,
            request_id=request_id,
        )
        return _Turn(
            writer,
            ResponderRequest(chat_id, tenant, context, trigger, writer.message_id, body),
        )

    def _regenerate(
        self,
        tenant: str,
        chat_id: str,
        messages: list[dict[str, Any]],
        message_id: str | None,
        stored: list[dict[str, Any]],
    ) -> None:
        """Cut the answer to regenerate: ``messageId``, else whatever follows the client's last message."""
        store, actor = self.store, self.actor(tenant)
        if message_id is not None:
            store.regenerate(chat_id, message_id, actor=actor, tenant=tenant)
            return
        stored_ids = {m["id"] for m in stored}
        last_known = next((m["id"] for m in reversed(messages) if m["id"] in stored_ids), None)
        if last_known is not None:
            store.regenerate(chat_id, last_known, actor=actor, tenant=tenant)
        elif stored and stored[-1]["role"] == "assistant":
            store.regenerate(chat_id, actor=actor, tenant=tenant)
        if not store.messages(chat_id, tenant=tenant):
            raise _invalid("nothing to regenerate: the conversation has no message to answer")

    def _record_user_message(
        self, tenant: str, chat_id: str, message: dict[str, Any], stored: list[dict[str, Any]]
    ) -> None:
        """Append a new user message; an already stored one is an edit (or a retry if it is the last)."""
        store, actor = self.store, self.actor(tenant)
        index = next((i for i, m in enumerate(stored) if m["id"] == message["id"]), None)
        if index is None:
            store.append_message(chat_id, message, tenant=tenant, actor=actor)
        elif index == len(stored) - 1 and stored[index] == message:
            return  # the same request again: answer it, record nothing new
        else:
            store.edit(chat_id, message["id"], message, tenant=tenant, actor=actor)

    def _record_answers(
        self,
        tenant: str,
        chat_id: str,
        client_message: dict[str, Any],
        stored: list[dict[str, Any]],
        *,
        continuing: bool,
    ) -> None:
        """Record approval answers and tool outputs the client's assistant message has and the store lacks.

        The store stays authoritative: parts it already answered keep their
        answer (a contradicting approval is refused with 409); tool calls it
        does not know are ignored. When the client asks to continue, the
        answers may request the continuation (SPEC §4.3); otherwise they do not.
        """
        known = next((m for m in stored if m["id"] == client_message["id"]), None)
        if known is None:
            return
        parts = {
            p["toolCallId"]: p
            for p in known.get("parts", [])
            if isinstance(p, dict) and is_tool_part(p) and "toolCallId" in p
        }
        store, actor = self.store, self.actor(tenant)
        for part in client_message.get("parts") or []:
            if not isinstance(part, dict) or not is_tool_part(part):
                continue
            call = part.get("toolCallId")
            mine = parts.get(call) if isinstance(call, str) else None
            if mine is None:
                continue
            assert isinstance(call, str)
            state, before = part.get("state"), mine.get("state")
            given = part.get("approval")
            approval: dict[str, Any] = given if isinstance(given, dict) else {}
            approved = approval.get("approved")
            if state in ("approval-responded", "output-denied") and isinstance(approved, bool):
                recorded = (mine.get("approval") or {}).get("approved")
                if before == "approval-requested" or (
                    before in ("approval-responded", "output-denied") and recorded != approved
                ):
                    approval_id = (
                        approval.get("id") if isinstance(approval.get("id"), str) else None
                    )
                    reason = approval.get("reason")
                    store.respond_to_approval(
                        chat_id,
                        approved=approved,
                        approval_id=approval_id,
                        tool_call_id=None if approval_id else call,
                        reason=reason if isinstance(reason, str) else None,
                        actor=actor,
                        auto_continue=continuing,
                        tenant=tenant,
                    )
            elif state in ("output-available", "output-error") and not is_terminal(mine):
                if state == "output-available":
                    store.add_tool_output(
                        chat_id,
                        call,
                        output=part.get("output"),
                        actor=actor,
                        auto_continue=continuing,
                        tenant=tenant,
                    )
                else:
                    error_text = part.get("errorText")
                    store.add_tool_output(
                        chat_id,
                        call,
                        state="output-error",
                        error_text=error_text if isinstance(error_text, str) else None,
                        actor=actor,
                        auto_continue=continuing,
                        tenant=tenant,
                    )

    def _continuable(self, tenant: str, chat_id: str, message: dict[str, Any]) -> str | None:
        """Check the turn of ``message`` can continue now; returns its pending continuation request."""
        stored = self.store.messages(chat_id, tenant=tenant)
        if not stored or stored[-1]["id"] != message["id"]:
            raise HTTPProblem(
                409,
                "OutOfDateError",
                f"message {message['id']!r} is not the conversation's last message; "
                "reload the messages (GET /api/chats/{id}/messages)",
            )
        status = self.store.status(chat_id, tenant=tenant)
        if status.status != "ready-to-continue":
            waiting = ", ".join(call.tool_call_id for call in status.waiting_for)
            detail = f" (waiting for {waiting})" if waiting else ""
            raise HTTPProblem(
                409,
                "NothingToContinueError",
                f"the turn cannot continue: the conversation is {status.status}{detail}",
            )
        return status.continuation_request

    # -- running the responder ----------------------------------------------------------

    def _stream_turn(self, turn: _Turn) -> Response:
        """Start the responder (it runs to its end on its own) and stream what it writes."""
        queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._spawn(self._produce(turn, queue))
        return StreamingResponse(
            self._drain(queue), media_type="text/event-stream", headers=SSE_HEADERS
        )

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` as a task the app waits for at shutdown."""
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    # -- continuations requested outside POST /api/chat ----------------------------------

    def tenants(self) -> list[str]:
        """The tenants this app serves (whose continuation requests it runs)."""
        return sorted(set(self.tokens.values())) if self.tokens else [self.store.tenant]

    async def _claim(
        self, tenant: str, *, chat_id: str | None = None, min_age_seconds: float = 0.0
    ) -> ContinuationRequest | None:
        """Claim one pending continuation request (with a lease: one process of many wins it)."""
        return await run_in_threadpool(
            lambda: self.store.claim_continuation(
                self.worker,
                lease_seconds=max(60.0, 4 * self.keepalive_seconds),
                tenant=tenant,
                chat_id=chat_id,
                min_age_seconds=min_age_seconds,
            )
        )

    async def _continue(self, claimed: ContinuationRequest) -> None:
        """Open the claimed request's stream and start the responder on it; clients follow the log."""
        try:
            turn = await run_in_threadpool(self._open_claimed, claimed)
        except ChatLedgerError as error:  # its lease lapses and the sweep tries again
            log.warning("could not continue chat %r: %s", claimed.chat_id, error)
            return
        # Nobody reads this answer's queue: clients follow it with GET /api/chat/{id}/stream.
        self._spawn(self._produce(turn, asyncio.Queue()))

    def _open_claimed(self, claimed: ContinuationRequest) -> _Turn:
        context = self.store.messages(claimed.chat_id, tenant=claimed.tenant)
        writer = self.store.open_stream(
            claimed.chat_id,
            tenant=claimed.tenant,
            actor=self.responder_actor,
            request_id=claimed.request_id,
        )
        request = ResponderRequest(
            claimed.chat_id, claimed.tenant, context, "continuation", writer.message_id
        )
        return _Turn(writer, request)

    async def sweep_continuations(self) -> None:
        """Run the continuation requests nobody took, every ``continuation_poll_seconds``.

        Requests younger than ``continuation_grace_seconds`` are left to the
        process that recorded them (a ``POST /api/chat`` continuing its own
        turn, or the endpoint that started one already); older ones were left
        by a process that stopped, or recorded by another program.
        """
        assert self.continuation_poll_seconds is not None
        grace = self.continuation_grace_seconds
        while True:
            for tenant in self.tenants():
                try:
                    while claimed := await self._claim(tenant, min_age_seconds=grace):
                        await self._continue(claimed)
                except (StoreUnavailableError, ConcurrentWriteError) as error:
                    log.warning("continuation sweep for tenant %r: %s", tenant, error)
            await asyncio.sleep(self.continuation_poll_seconds)

    async def _produce(self, turn: _Turn, queue: asyncio.Queue[str | None]) -> None:
        """Store every chunk of the responder's answer; queue the applied ones as SSE events."""
        writer = turn.writer
        outcome, reason = "finished", None
        started = False
        try:
            async for chunk in _iterate(self.responder.respond(turn.request)):
                if not started:
                    started = True
                    if await self._start(turn, chunk, queue):
                        continue
                await self._forward(writer, chunk, queue)
        except asyncio.CancelledError:
            outcome, reason = "aborted", "the server stopped the response"
            raise
        except Exception as error:
            log.exception("responder failed on chat %r", turn.request.chat_id)
            outcome, reason = "errored", f"{type(error).__name__}: {error}"
            with contextlib.suppress(Exception):
                if not started:  # the client must still learn the message's id
                    await self._forward(writer, {"type": "start"}, queue)
                await self._forward(
                    writer, {"type": "error", "errorText": "The responder failed."}, queue
                )
        finally:
            try:
                await asyncio.to_thread(writer.close, outcome, reason)
            except Exception:
                log.exception("could not close stream %s", writer.stream_id)
            queue.put_nowait(None)

    async def _start(self, turn: _Turn, chunk: Any, queue: asyncio.Queue[str | None]) -> bool:
        """Begin the answer with a ``start`` the client gets; True if that used up ``chunk``.

        The client must learn the stored message id first (it names the message
        in its next request). A responder's ``start`` is used when it is one,
        without a ``messageId`` that another message of the conversation has
        already (a new message cannot take an existing id); otherwise a plain
        ``start`` is stored and sent before ``chunk``.
        """
        writer = turn.writer
        if isinstance(chunk, dict) and chunk.get("type") == "start":
            taken = {m["id"] for m in turn.request.messages}
            if turn.request.trigger != "continuation" and chunk.get("messageId") in taken:
                log.warning("ignoring start.messageId %r: the id is taken", chunk["messageId"])
                chunk = {key: value for key, value in chunk.items() if key != "messageId"}
            if await self._forward(writer, chunk, queue):
                return True
            await self._forward(writer, {"type": "start"}, queue)
            return True
        await self._forward(writer, {"type": "start"}, queue)
        return False

    @staticmethod
    async def _forward(writer: StreamWriter, chunk: Any, queue: asyncio.Queue[str | None]) -> bool:
        """Store ``chunk``; queue the event the client gets for it. True if there was one."""
        event = await asyncio.to_thread(_deliver, writer, chunk)
        if event is None:
            return False
        queue.put_nowait(event)
        return True

    async def _drain(self, queue: asyncio.Queue[str | None]) -> AsyncIterator[str]:
        while True:
            try:
                event = await asyncio.wait_for(queue.get(), self.keepalive_seconds)
            except TimeoutError:
                yield _KEEP_ALIVE
                continue
            if event is None:
                yield _DONE
                return
            yield event

    # -- GET /api/chat/{id}/stream ---------------------------------------------------------

    async def resume(self, request: Request) -> Response:
        """Replay the open stream from its start (or after a cursor), live; 204 when none is open."""
        tenant = self.tenant(request)
        chat_id = request.path_params["chat_id"]
        after = request.query_params.get("after") or request.headers.get("last-event-id") or None
        status = await run_in_threadpool(self.store.status, chat_id, tenant=tenant)
        if status.stream_id is None and after is None:
            return Response(status_code=204)
        follower = await run_in_threadpool(
            self.store.follow, chat_id, after=after, tenant=tenant, timeout=self.keepalive_seconds
        )
        return StreamingResponse(
            self._follow_events(follower, chat_id, tenant),
            media_type="text/event-stream",
            headers=SSE_HEADERS,
        )

    async def _follow_events(
        self,
        follower: Iterator[FollowedChunk],
        chat_id: str,
        tenant: str,
    ) -> AsyncIterator[str]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        stop = threading.Event()
        thread = threading.Thread(
            target=self._pump,
            args=(follower, chat_id, tenant, loop, queue, stop),
            name="chatledger-resume",
            daemon=True,
        )
        thread.start()
        try:
            while True:
                item = await queue.get()
                if item is None:
                    yield _DONE
                    return
                if item is _KEEP_ALIVE:
                    yield _KEEP_ALIVE
                elif isinstance(item, FollowedChunk):
                    yield _sse(item.chunk, item.cursor)
                else:
                    yield _sse({"type": "error", "errorText": str(item)})
        finally:
            stop.set()

    def _pump(
        self,
        follower: Iterator[FollowedChunk],
        chat_id: str,
        tenant: str,
        loop: asyncio.AbstractEventLoop,
        queue: asyncio.Queue[Any],
        stop: threading.Event,
    ) -> None:
        """Follow the log in one thread (as ``follow`` asks), handing chunks to the event loop."""

        def put(item: Any) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody listens
                loop.call_soon_threadsafe(queue.put_nowait, item)

        try:
            while not stop.is_set():
                try:
                    for item in follower:
                        sent = self._as_sent(item, chat_id, tenant)
                        if sent is not None:
                            put(sent)
                        if stop.is_set():
                            return
                    return
                except FollowTimeoutError as idle:
                    put(_KEEP_ALIVE)
                    follower = self.store.follow(
                        chat_id, after=idle.cursor, tenant=tenant, timeout=self.keepalive_seconds
                    )
        except ChatLedgerError as error:
            log.warning("resume of chat %r stopped: %s", chat_id, error)
            put(error)
        finally:
            close = getattr(follower, "close", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    close()
            put(None)

    def _as_sent(self, item: FollowedChunk, chat_id: str, tenant: str) -> FollowedChunk | None:
        """A followed chunk as the client must get it (see ``_deliver``), or None to leave it out.

        A ``start`` gets the id of the message its stream writes (committed by
        now); a tool result for a call of an earlier message is left out.
        """
        chunk = item.chunk
        kind = chunk.get("type") if isinstance(chunk, dict) else None
        if kind != "start" and kind not in _RESULT_CHUNKS:
            return item
        stored = self.store.messages(chat_id, tenant=tenant)
        message = next((m for m in reversed(stored) if m["role"] == "assistant"), None)
        if message is None:
            return item
        if kind == "start":
            return dataclasses.replace(item, chunk=_with_message_id(chunk, message["id"]))
        call = chunk.get("toolCallId")
        if any(p.get("toolCallId") == call for p in message.get("parts", [])):
            return item
        return None

    # -- JSON endpoints -------------------------------------------------------------------

    async def messages(self, request: Request) -> Response:
        """``GET /api/chats/{id}/messages[?atVersion=N]``: the UIMessages."""
        tenant = self.tenant(request)
        chat_id = request.path_params["chat_id"]
        at_version = _int_param(request, "atVersion")
        found = await run_in_threadpool(
            self.store.messages, chat_id, tenant=tenant, at_version=at_version
        )
        return JSONResponse({"id": chat_id, "messages": found})

    async def status(self, request: Request) -> Response:
        """``GET /api/chats/{id}/status``: where the turn stands."""
        tenant = self.tenant(request)
        found = await run_in_threadpool(
            self.store.status, request.path_params["chat_id"], tenant=tenant
        )
        return JSONResponse(_status_json(found))

    async def history(self, request: Request) -> Response:
        """``GET /api/chats/{id}/history[?kind=K&actor=A&after=N&limit=N&full=true]``: the audit timeline."""
        tenant = self.tenant(request)
        kinds = request.query_params.getlist("kind") or None
        unknown = sorted(set(kinds or ()) - set(KINDS))
        if unknown:
            raise _invalid(f"unknown kind(s) {unknown}; the kinds are {', '.join(KINDS)}")
        entries = await run_in_threadpool(
            self.store.history,
            request.path_params["chat_id"],
            tenant=tenant,
            kinds=kinds,
            actor=request.query_params.get("actor") or None,
            after=_int_param(request, "after") or 0,
            limit=_int_param(request, "limit"),
            full=_bool_param(request, "full"),
        )
        return JSONResponse({"entries": [entry.to_json() for entry in entries]})

    async def model_messages(self, request: Request) -> Response:
        """``GET /api/chats/{id}/model-messages?format=F[&unanswered=omit&ignoreIncompleteToolCalls=true]``."""
        tenant = self.tenant(request)
        format_ = request.query_params.get("format", "ai-sdk")
        if format_ not in FORMATS:
            raise _invalid(f"unknown format {format_!r}; use one of {', '.join(FORMATS)}")
        unanswered = request.query_params.get("unanswered", "refuse")
        if unanswered not in ("refuse", "omit"):
            raise _invalid(f"'unanswered' must be refuse or omit, not {unanswered!r}")
        converted = await run_in_threadpool(
            self.store.model_messages,
            request.path_params["chat_id"],
            format_,
            tenant=tenant,
            at_version=_int_param(request, "atVersion"),
            ignore_incomplete_tool_calls=_bool_param(request, "ignoreIncompleteToolCalls"),
            unanswered=unanswered,  # type: ignore[arg-type]
        )
        return JSONResponse({"format": format_, "messages": converted})

    async def approvals(self, request: Request) -> Response:
        """``GET /api/approvals``: every tool call of the tenant awaiting approval, oldest first."""
        tenant = self.tenant(request)
        pending = await run_in_threadpool(self.store.pending_approvals, tenant=tenant)
        return JSONResponse(
            {
                "approvals": [
                    {
                        "chatId": item.chat_id,
                        "messageId": item.message_id,
                        "toolCallId": item.tool_call_id,
                        "toolName": item.tool_name,
                        "input": item.input,
                        "approvalId": item.approval_id,
                        "requestedAt": item.requested_at.isoformat(),
                        "ageSeconds": item.age_seconds,
                    }
                    for item in pending
                ]
            }
        )

    async def respond_to_approval(self, request: Request) -> Response:
        """``POST /api/chats/{id}/approvals`` ``{approvalId | toolCallId, approved, reason?, autoContinue?}``."""
        tenant = self.tenant(request)
        body = await _body(request, self.max_body_bytes)
        approved = body.get("approved")
        if not isinstance(approved, bool):
            raise _invalid("'approved' must be true or false")
        approval_id = _string(body, "approvalId", required=False)
        tool_call_id = _string(body, "toolCallId", required=False)
        if (approval_id is None) == (tool_call_id is None):
            raise _invalid("give exactly one of 'approvalId' and 'toolCallId'")
        reason = body.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise _invalid("'reason' must be a string")
        result = await run_in_threadpool(
            lambda: self.store.respond_to_approval(
                request.path_params["chat_id"],
                approved=approved,
                approval_id=approval_id,
                tool_call_id=tool_call_id,
                reason=reason,
                actor=self.actor(tenant),
                auto_continue=_auto_continue(body),
                tenant=tenant,
            )
        )
        return await self._answered(tenant, request.path_params["chat_id"], result)

    async def add_tool_output(self, request: Request) -> Response:
        """``POST /api/chats/{id}/tool-outputs`` ``{toolCallId, output | errorText, autoContinue?}``."""
        tenant = self.tenant(request)
        body = await _body(request, self.max_body_bytes)
        tool_call_id = _string(body, "toolCallId")
        assert tool_call_id is not None
        has_output, error_text = "output" in body, body.get("errorText")
        if has_output == (error_text is not None):
            raise _invalid("give exactly one of 'output' and 'errorText'")
        if error_text is not None and not isinstance(error_text, str):
            raise _invalid("'errorText' must be a string")
        result = await run_in_threadpool(
            lambda: self.store.add_tool_output(
                request.path_params["chat_id"],
                tool_call_id,
                output=body.get("output"),
                state="output-available" if has_output else "output-error",
                error_text=error_text,
                actor=self.actor(tenant),
                auto_continue=_auto_continue(body),
                tenant=tenant,
            )
        )
        return await self._answered(tenant, request.path_params["chat_id"], result)

    async def _answered(self, tenant: str, chat_id: str, result: ActionResult) -> Response:
        """The action's JSON answer, once the continuation it requested (if any) is streaming.

        So a client that resumes (``GET /api/chat/{id}/stream``) right after
        the answer finds the continuation open.
        """
        if result.continuation_requested:
            try:
                claimed = await self._claim(tenant, chat_id=chat_id)
            except ChatLedgerError as error:  # the sweep takes it once it is old enough
                log.warning("could not claim the continuation of chat %r: %s", chat_id, error)
            else:
                if claimed is not None:
                    await self._continue(claimed)
        return JSONResponse(_action_json(result))

    async def openapi(self, request: Request) -> Response:
        """``GET /openapi.json`` (public)."""
        return JSONResponse(openapi_document())


def _auto_continue(body: dict[str, Any]) -> bool | None:
    value = body.get("autoContinue")
    if value is not None and not isinstance(value, bool):
        raise _invalid("'autoContinue' must be true or false")
    return value


async def _iterate(answer: Any) -> AsyncIterator[Any]:
    """A responder's answer as an async iterator (a plain iterator is advanced in a worker thread)."""
    if hasattr(answer, "__aiter__"):
        async for chunk in answer:
            yield chunk
        return
    iterator = iter(answer)
    done = object()
    while True:
        chunk = await asyncio.to_thread(next, iterator, done)
        if chunk is done:
            return
        yield chunk


# -- the app ----------------------------------------------------------------------------


def create_app(
    store_or_url: ConversationStore | str | None,
    *,
    responder: Responder,
    tokens: dict[str, str] | None = None,
    keepalive_seconds: float = 15.0,
    max_body_bytes: int = 32_000_000,
    continuation_poll_seconds: float | None = 2.0,
    continuation_grace_seconds: float = 5.0,
    cors_origins: Sequence[str] = (),
) -> Starlette:
    """The chatledger HTTP app (see the module docstring) on a store, or on a store URL it opens.

    ``tokens`` maps bearer tokens to tenants; None serves everything as the
    store's default tenant. A store given by URL (or None: ``$CHATLEDGER_URL``,
    else ``sqlite:///./chatledger.db``) is opened now and closed at shutdown;
    a store object stays the caller's. ``keepalive_seconds`` is how long a
    stream stays quiet before an SSE comment is sent; a request body over
    ``max_body_bytes`` is refused (413). ``app.state.chatledger``
    holds the store and the responder runs in progress (``tasks``).

    Continuations: an approval or tool output given through the JSON
    endpoints runs its continuation at once; besides, every
    ``continuation_poll_seconds`` (None: never) the app claims and runs the
    requests older than ``continuation_grace_seconds`` that nobody took (left
    by a stopped process, or recorded by another program). Several processes
    may serve one database: a claim goes to exactly one of them.

    ``cors_origins`` lets browser pages of those origins (``"*"``: any) call
    the app, e.g. a ``useChat`` front end served from another port.
    """
    if tokens is not None and not all(isinstance(t, str) and t for t in tokens):
        raise ValueError("tokens must be non-empty strings")
    if isinstance(store_or_url, ConversationStore):
        store, owned = store_or_url, False
    else:
        store, owned = ConversationStore.open(store_or_url), True
    chat = _ChatApp(
        store,
        responder,
        tokens,
        keepalive_seconds=keepalive_seconds,
        max_body_bytes=max_body_bytes,
        continuation_poll_seconds=continuation_poll_seconds,
        continuation_grace_seconds=continuation_grace_seconds,
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        sweep = None
        if continuation_poll_seconds is not None:
            sweep = asyncio.create_task(chat.sweep_continuations())
        try:
            yield
        finally:
            if sweep is not None:
                sweep.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await sweep
            if chat.tasks:  # let running answers finish into the log, briefly
                await asyncio.wait(set(chat.tasks), timeout=10)
                for task in list(chat.tasks):
                    task.cancel()
            if owned:
                store.close()

    routes = [
        Route("/api/chat", chat.chat, methods=["POST"]),
        Route("/api/chat/{chat_id:path}/stream", chat.resume, methods=["GET"]),
        Route("/api/chats/{chat_id:path}/messages", chat.messages, methods=["GET"]),
        Route("/api/chats/{chat_id:path}/status", chat.status, methods=["GET"]),
        Route("/api/chats/{chat_id:path}/history", chat.history, methods=["GET"]),
        Route("/api/chats/{chat_id:path}/model-messages", chat.model_messages, methods=["GET"]),
        Route("/api/chats/{chat_id:path}/approvals", chat.respond_to_approval, methods=["POST"]),
        Route("/api/chats/{chat_id:path}/tool-outputs", chat.add_tool_output, methods=["POST"]),
        Route("/api/approvals", chat.approvals, methods=["GET"]),
        Route("/openapi.json", chat.openapi, methods=["GET"]),
    ]
    middleware = []
    if cors_origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(cors_origins),
                allow_methods=["GET", "POST"],
                allow_headers=["authorization", "content-type", "last-event-id"],
                expose_headers=["x-vercel-ai-ui-message-stream"],
            )
        )
    app = Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={
            HTTPProblem: _on_problem,
            HTTPException: _on_http_exception,
            ChatLedgerError: _on_chatledger_error,
            Exception: _on_unexpected,
        },
        lifespan=lifespan,
    )
    app.state.chatledger = chat
    return app


def serve(
    store_or_url: ConversationStore | str | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    responder: Responder | None = None,
    tokens: dict[str, str] | None = None,
    cors_origins: Sequence[str] = (),
    log_level: str = "info",
) -> None:
    """Serve a store (or the store at a URL) over HTTP with uvicorn until interrupted (``chatledger serve``).

    Without a ``responder`` the demo responder answers (the recorded demo turn
    and its continuation, in a loop): enough to try a client against.
    """
    import uvicorn

    app = create_app(
        store_or_url,
        responder=responder or demo_responder(delay=0.05),
        tokens=tokens,
        cors_origins=cors_origins,
    )
    uvicorn.run(app, host=host, port=port, log_level=log_level)


# -- OpenAPI ----------------------------------------------------------------------------------


def _chat_id_param() -> dict[str, Any]:
    return {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}


def _query(name: str, description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": description,
        "schema": schema or {"type": "string"},
    }


def _json_body(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "required": True,
        "content": {
            "application/json": {
                "schema": {"type": "object", "properties": properties, "required": required}
            }
        },
    }


def _ok(description: str, ref: str | None = None) -> dict[str, Any]:
    schema = {"$ref": f"#/components/schemas/{ref}"} if ref else {"type": "object"}
    return {"description": description, "content": {"application/json": {"schema": schema}}}


_ERROR = {"$ref": "#/components/responses/Error"}
_SSE = {
    "description": "Server-Sent Events: `data: <UI message chunk JSON>` ... `data: [DONE]`",
    "headers": {"x-vercel-ai-ui-message-stream": {"schema": {"type": "string", "enum": ["v1"]}}},
    "content": {"text/event-stream": {"schema": {"type": "string"}}},
}


def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 description of every route of the app."""
    errors = {code: _ERROR for code in ("401", "404", "409", "413", "422", "503")}
    chat_id = _chat_id_param()
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "chatledger",
            "version": "0.1.0",
            "description": "An event-sourced conversation store speaking the AI SDK useChat "
            "conventions. With tokens configured, every route but this document needs "
            "`Authorization: Bearer <token>`.",
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "responses": {
                "Error": {
                    "description": "A chatledger error",
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
                    },
                }
            },
            "schemas": {
                "Error": {
                    "type": "object",
                    "properties": {
                        "error": {
                            "type": "object",
                            "properties": {
                                "type": {"type": "string"},
                                "message": {"type": "string"},
                            },
                            "required": ["type", "message"],
                        }
                    },
                    "required": ["error"],
                },
                "ActionResult": {
                    "type": "object",
                    "properties": {
                        "toolCallId": {"type": "string"},
                        "changed": {"type": "boolean"},
                        "state": {"type": "string"},
                        "continuationRequested": {"type": "boolean"},
                    },
                },
            },
        },
        "security": [{"bearer": []}],
        "paths": {
            "/api/chat": {
                "post": {
                    "summary": "Send (AI SDK DefaultChatTransport): record the client's additions, "
                    "stream the answer",
                    "requestBody": _json_body(
                        {
                            "id": {"type": "string"},
                            "messages": {"type": "array", "items": {"type": "object"}},
                            "trigger": {
                                "type": "string",
                                "enum": list(_TRIGGERS),
                            },
                            "messageId": {"type": "string"},
                        },
                        ["id", "messages"],
                    ),
                    "responses": {"200": _SSE, "400": _ERROR, **errors},
                }
            },
            "/api/chat/{id}/stream": {
                "get": {
                    "summary": "Resume the open stream from its start (or after a cursor)",
                    "parameters": [
                        chat_id,
                        _query("after", "a cursor (SSE event id) to resume after"),
                    ],
                    "responses": {
                        "200": _SSE,
                        "204": {"description": "nothing is streaming"},
                        **errors,
                    },
                }
            },
            "/api/chats/{id}/messages": {
                "get": {
                    "summary": "The conversation's UIMessages",
                    "parameters": [
                        chat_id,
                        _query("atVersion", "as it stood at this version", {"type": "integer"}),
                    ],
                    "responses": {"200": _ok("{id, messages}"), **errors},
                }
            },
            "/api/chats/{id}/status": {
                "get": {
                    "summary": "Where the turn stands (idle, streaming, awaiting-approval, ...)",
                    "parameters": [chat_id],
                    "responses": {"200": _ok("the status"), **errors},
                }
            },
            "/api/chats/{id}/history": {
                "get": {
                    "summary": "The audit timeline",
                    "parameters": [
                        chat_id,
                        _query("kind", "keep entries of this kind (repeatable)"),
                        _query("actor", "keep entries of this actor"),
                        _query("after", "entries after this position", {"type": "integer"}),
                        _query("limit", "at most this many entries", {"type": "integer"}),
                        _query("full", "list every chunk of a batch", {"type": "boolean"}),
                    ],
                    "responses": {"200": _ok("{entries}"), **errors},
                }
            },
            "/api/chats/{id}/model-messages": {
                "get": {
                    "summary": "The conversation in a model API's format",
                    "parameters": [
                        chat_id,
                        _query("format", "the format", {"type": "string", "enum": list(FORMATS)}),
                        _query(
                            "unanswered",
                            "unanswered calls of a paused turn",
                            {"type": "string", "enum": ["refuse", "omit"]},
                        ),
                        _query("ignoreIncompleteToolCalls", "the SDK option", {"type": "boolean"}),
                        _query("atVersion", "as it stood at this version", {"type": "integer"}),
                    ],
                    "responses": {"200": _ok("{format, messages}"), **errors},
                }
            },
            "/api/chats/{id}/approvals": {
                "post": {
                    "summary": "Approve or deny a tool call",
                    "parameters": [chat_id],
                    "requestBody": _json_body(
                        {
                            "approvalId": {"type": "string"},
                            "toolCallId": {"type": "string"},
                            "approved": {"type": "boolean"},
                            "reason": {"type": "string"},
                            "autoContinue": {"type": "boolean"},
                        },
                        ["approved"],
                    ),
                    "responses": {"200": _ok("what was recorded", "ActionResult"), **errors},
                }
            },
            "/api/chats/{id}/tool-outputs": {
                "post": {
                    "summary": "Give a tool call's output (or error)",
                    "parameters": [chat_id],
                    "requestBody": _json_body(
                        {
                            "toolCallId": {"type": "string"},
                            "output": {},
                            "errorText": {"type": "string"},
                            "autoContinue": {"type": "boolean"},
                        },
                        ["toolCallId"],
                    ),
                    "responses": {"200": _ok("what was recorded", "ActionResult"), **errors},
                }
            },
            "/api/approvals": {
                "get": {
                    "summary": "Every tool call of the tenant awaiting approval, oldest first",
                    "responses": {"200": _ok("{approvals}"), "401": _ERROR},
                }
            },
            "/openapi.json": {
                "get": {
                    "summary": "This document",
                    "security": [],
                    "responses": {"200": _ok("OpenAPI 3.1")},
                }
            },
        },
    }
