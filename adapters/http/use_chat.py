"""What a ``useChat`` request changes in the store (SPEC §9; ai-sdk-v6.md §g).

``DefaultChatTransport`` posts the whole conversation as the client holds it
(``{id, messages, trigger, messageId}``). ``ClientChanges.record`` finds what
is new in it and records it as the store's own actions, with the client as
the actor:

* ``submit-message`` ending on a user message: a new user message (appended),
  an edit of a stored one (``edit``: the later messages are cut), or the same
  last message again (a retry: nothing recorded);
* ``submit-message`` ending on the assistant message: approval answers and
  tool outputs the client added to it (``approval-responded`` /
  ``output-denied`` with ``approval: {id, approved, reason}``,
  ``output-available`` / ``output-error``), then a continuation of that
  message, if its turn can continue;
* ``regenerate-message``: the answer named by ``messageId`` (else the one
  after the client's last known message) is cut.

The store stays authoritative: parts it already answered keep their answer
(a contradicting approval is refused, 409) and tool calls it does not know
are ignored. The result says what the responder is to write next.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from chatledger.adapters.http.errors import HTTPProblem, invalid
from chatledger.adapters.store import ConversationStore
from chatledger.domain.errors import ConversationExistsError, StreamAlreadyOpenError
from chatledger.domain.tool_parts import is_terminal, is_tool_part

__all__ = ["TRIGGERS", "Answer", "ClientChanges"]

TRIGGERS = ("submit-message", "regenerate-message")
"""The ``trigger`` values ``DefaultChatTransport`` sends."""


@dataclass(frozen=True)
class Answer:
    """What the responder is to write once a request is recorded."""

    trigger: str
    """``submit-message``, ``regenerate-message`` or ``continuation``."""
    continuation: bool
    """Whether it continues the last assistant message (else: a new message)."""
    request_id: str | None
    """The pending continuation request the answer fulfils, if any."""


class ClientChanges:
    """Records what one ``useChat`` request adds to one conversation (call it in a worker thread)."""

    def __init__(self, store: ConversationStore, tenant: str, chat_id: str, actor: str) -> None:
        self.store = store
        self.tenant = tenant
        self.chat_id = chat_id
        self.actor = actor
        """Who the audit names for what the client records."""

    def record(
        self, messages: list[dict[str, Any]], trigger: str, message_id: str | None
    ) -> Answer:
        """Record what the request adds; what the responder is to write next."""
        store, actor, tenant, chat_id = self.store, self.actor, self.tenant, self.chat_id
        if trigger != "regenerate-message" and not messages:
            raise invalid("'messages' is empty: there is nothing to answer")
        with contextlib.suppress(ConversationExistsError):
            store.start_conversation(chat_id, tenant=tenant, actor=actor)
        status = store.status(chat_id, tenant=tenant)
        if status.stream_id is not None:
            raise StreamAlreadyOpenError(chat_id, status.stream_id)
        stored = store.messages(chat_id, tenant=tenant)
        continuation, request_id = False, None
        if trigger == "regenerate-message":
            self._regenerate(messages, message_id, stored)
        else:
            last = messages[-1]
            client_assistant = next(
                (m for m in reversed(messages) if m["role"] == "assistant"), None
            )
            if client_assistant is not None:
                self._record_answers(
                    client_assistant,
                    stored,
                    continuing=last["role"] == "assistant",
                )
            if last["role"] == "user":
                self._record_user_message(last, stored)
            elif last["role"] == "assistant":
                request_id = self._continuable(last)
                continuation = True
                trigger = "continuation"
            else:
                raise invalid(
                    f"the last message must be a user or an assistant message, not {last['role']!r}"
                )
        return Answer(trigger, continuation, request_id)

    def _regenerate(
        self,
        messages: list[dict[str, Any]],
        message_id: str | None,
        stored: list[dict[str, Any]],
    ) -> None:
        """Cut the answer to regenerate: ``messageId``, else whatever follows the client's last message."""
        store, actor, tenant, chat_id = self.store, self.actor, self.tenant, self.chat_id
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
            raise invalid("nothing to regenerate: the conversation has no message to answer")

    def _record_user_message(self, message: dict[str, Any], stored: list[dict[str, Any]]) -> None:
        """Append a new user message; an already stored one is an edit (or a retry if it is the last)."""
        store, actor, tenant, chat_id = self.store, self.actor, self.tenant, self.chat_id
        index = next((i for i, m in enumerate(stored) if m["id"] == message["id"]), None)
        if index is None:
            store.append_message(chat_id, message, tenant=tenant, actor=actor)
        elif index == len(stored) - 1 and stored[index] == message:
            return  # the same request again: answer it, record nothing new
        else:
            store.edit(chat_id, message["id"], message, tenant=tenant, actor=actor)

    def _record_answers(
        self,
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
        store, actor, tenant, chat_id = self.store, self.actor, self.tenant, self.chat_id
        for part in client_message.get("parts") or []:
            if not isinstance(part, dict) or not is_tool_part(part):
                continue
            call = part.get("toolCallId")
            mine = parts.get(call) if isinstance(call, str) else None
            if mine is None or mine == part:  # unknown, or nothing new
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

    def _continuable(self, message: dict[str, Any]) -> str | None:
        """Check the turn of ``message`` can continue now; returns its pending continuation request."""
        chat_id, tenant = self.chat_id, self.tenant
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
