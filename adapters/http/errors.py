"""How the HTTP app answers errors: JSON ``{"error": {"type", "message"}}`` with a fitting status.

chatledger's own errors map to statuses by ``STATUS_OF_ERROR`` (404 unknown
conversation or tool call, 410 erased conversation, 409 conflicts, 413 oversized input, 422 invalid
input, 503 database unavailable); ``HTTPProblem`` is what the app raises for
everything else it refuses (401, 400, ...). Anything unexpected is logged and
answered 500 without details.
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from chatledger.adapters.http.use_chat import OutOfDateError
from chatledger.domain.errors import (
    AnswerAlreadyWrittenError,
    ApprovalConflictError,
    ChatLedgerError,
    ConcurrentWriteError,
    ContinuationNotPendingError,
    ConversationErasedError,
    ConversationExistsError,
    ConversationNotFoundError,
    FollowTimeoutError,
    InvalidInputError,
    MessageConversionError,
    NoOpenStreamError,
    NothingToContinueError,
    OversizedInputError,
    StoreUnavailableError,
    StreamAlreadyOpenError,
    ToolCallNotReadyError,
    UnansweredToolCallError,
    UnknownToolCallError,
)
from chatledger.domain.grants import GrantNotFoundError

__all__ = ["EXCEPTION_HANDLERS", "STATUS_OF_ERROR", "HTTPProblem", "invalid", "status_for"]

log = logging.getLogger("chatledger.http")

STATUS_OF_ERROR: tuple[tuple[type[Exception], int], ...] = (
    (ConversationNotFoundError, 404),
    (GrantNotFoundError, 404),
    (ConversationErasedError, 410),
    (UnknownToolCallError, 404),
    (OversizedInputError, 413),
    (InvalidInputError, 422),
    (MessageConversionError, 422),
    (ConversationExistsError, 409),
    (OutOfDateError, 409),
    (NothingToContinueError, 409),
    (StreamAlreadyOpenError, 409),
    (AnswerAlreadyWrittenError, 409),
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
    for kind, status in STATUS_OF_ERROR:
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


def invalid(message: str) -> HTTPProblem:
    """A 422 ``InvalidRequestError`` saying what is wrong with the request."""
    return HTTPProblem(422, "InvalidRequestError", message)


EXCEPTION_HANDLERS = {
    HTTPProblem: _on_problem,
    HTTPException: _on_http_exception,
    ChatLedgerError: _on_chatledger_error,
    Exception: _on_unexpected,
}
"""Starlette's ``exception_handlers`` for the app."""
