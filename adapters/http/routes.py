"""Every route of the app, in one table: the useChat endpoints, the JSON API, operator routes, pages.

``create_app`` (``app.py``) builds the ``ChatApp`` and hands it here; each
route names the endpoint object of ``ChatApp`` that serves it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.routing import BaseRoute, Route, WebSocketRoute

from chatledger.adapters.http import docs_page
from chatledger.adapters.http.attachments import AttachmentRoutes
from chatledger.adapters.http.grants import GrantEndpoints
from chatledger.adapters.http.health import health_routes
from chatledger.adapters.http.ledger import ledger_routes
from chatledger.adapters.http.message_concurrency import MessageConcurrencyEndpoint
from chatledger.adapters.http.metrics import metrics_route
from chatledger.adapters.http.pages import page_routes
from chatledger.adapters.http.websocket import ChatSocket

if TYPE_CHECKING:
    from chatledger.adapters.http.app import ChatApp

__all__ = ["routes"]


def routes(chat: ChatApp) -> list[BaseRoute]:
    """Every route of the app: the useChat endpoints, the JSON API, operator routes, the pages."""
    reads, actions, chats = chat.reads, chat.actions, "/api/chats/{chat_id:path}"
    return [
        Route("/api/chat", chat.sends.post, methods=["POST"]),
        Route("/api/chat/{chat_id:path}/stream", chat.resume, methods=["GET"]),
        # The AI SDK 7 WebSocketChatTransport.
        WebSocketRoute(
            "/api/chat/ws",
            ChatSocket(
                chat.sends, chat.resumes, chat.settings.websocket_idle_seconds, chat.connections
            ).serve,
        ),
        Route(f"{chats}/messages", reads.messages, methods=["GET"]),
        Route(
            f"{chats}/attachments/{{sha256}}",
            AttachmentRoutes(chat.store, chat.identity).get,
            methods=["GET"],
        ),
        Route(f"{chats}/status", reads.status, methods=["GET"]),
        Route(f"{chats}/history", reads.history, methods=["GET"]),
        Route(f"{chats}/model-messages", reads.model_messages, methods=["GET"]),
        Route(f"{chats}/approvals", actions.respond_to_approval, methods=["POST"]),
        Route(f"{chats}/tool-outputs", actions.add_tool_output, methods=["POST"]),
        Route(f"{chats}/stop", actions.stop, methods=["POST"]),
        Route(f"{chats}/branches", chat.branches.list, methods=["GET"]),
        Route(f"{chats}/branches", chat.branches.switch, methods=["POST"]),
        Route(f"{chats}/forks", chat.branches.fork, methods=["POST"]),
        # A server that runs the model elsewhere (conversations.py, answers.py).
        Route("/api/chats", chat.conversations.start, methods=["POST"]),
        Route(f"{chats}/messages", chat.conversations.append_message, methods=["POST"]),
        Route(f"{chats}/answers", chat.answers.stream_in, methods=["POST"]),
        MessageConcurrencyEndpoint(chat.store, chat.identity, chat.limits["stop"]).route(),
        Route("/api/approvals", reads.approvals, methods=["GET"]),
        Route("/api/continuations/claim", chat.pulls.claim, methods=["POST"]),
        Route(f"{chats}/continuations/retire", chat.pulls.retire, methods=["POST"]),
        *chat.operators.routes(),  # erase, export, redact: operator tokens only
        *GrantEndpoints(
            chat.store, chat.identity, chat.limits["approvals"], chat.continuations
        ).routes(),  # standing approval grants (http/grants.py)
        *ledger_routes(chat.store, chat.identity, chat.limits),  # compactions, usage (ledger.py)
        Route("/openapi.json", chat.openapi, methods=["GET"]),
        docs_page.docs_route(chat.described),  # GET /docs: the API reference page
        *health_routes(chat.store),  # /health, /health/live: public (http/health.py)
        metrics_route(chat.store, chat.access, chat.requests, lambda: len(chat.runner.turns)),
        *page_routes(chat),  # GET /api/chats and the pages at /
    ]
