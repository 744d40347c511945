"""Standing approval grants, as a store service: give, list, revoke, expire, and answer calls they cover.

``store.grants`` (a ``Grants``). A person who approves a call may give a
grant with it (``approve``); a call that later asks for approval and is
covered by a live grant (``domain.grants``) is approved automatically when
its stream closes (any entry point: serve, worker, ingest, HTTP): recorded
as an ordinary ``ToolApprovalResponded``, whose actor is ``grant:<id>`` and
whose reason names the grant, who gave it and why; the ledger records the
use (``GrantUsed``). The answer then continues the turn as a person's
approval would. Expiry is an event too, recorded when the grant is next
looked at (or by ``expire_due``). The clock is ``clock`` (set it in tests).
"""

from __future__ import annotations

import builtins
import copy
import logging
import secrets
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import IntegrityError

from chatledger.adapters.grants.check import grant_findings
from chatledger.adapters.grants.erasure import scrub_conversation
from chatledger.domain.errors import ChatLedgerError, InvalidInputError
from chatledger.domain.grant_ledger import GrantLedger, ledger_id
from chatledger.domain.grants import (
    RECENT,
    AutomaticApproval,
    Grant,
    GrantNotFoundError,
    automatic_approvals,
    automatic_reason,
    check_grant,
    covering,
    expires_at,
    input_digest,
)
from chatledger.domain.limits import check_names, check_text

if TYPE_CHECKING:
    from chatledger.adapters.grants.log import GrantLog
    from chatledger.adapters.store.chats import Chats
    from chatledger.adapters.store.reads.reader import Reader

__all__ = ["Grants", "automatic_reason", "sharded_grants"]

log = logging.getLogger("chatledger.grants")

_RETRIES = 8


def _now() -> datetime:
    return datetime.now(UTC)


class Grants:
    """The standing approval grants of one store (``tenant=None``: the store's default tenant)."""

    def __init__(self, log: GrantLog, chats: Chats, reads: Reader, *, tenant: str) -> None:
        self._log, self._chats, self._reads, self.tenant = log, chats, reads, tenant
        self.clock: Callable[[], datetime] = _now
        self.ledger_log = log
        """Where the ledgers are kept (a sharded store's shards share the first database's)."""
        self._cache: dict[str, GrantLedger] = {}
        self._lock = threading.Lock()
        """The time grants are given, used and expire by (UTC)."""

    # -- giving and taking back ------------------------------------------------------------

    def give(
        self,
        *,
        scope: str,
        tool_name: str | None = None,
        input: Any = None,
        chat_id: str | None = None,
        actor: str,
        reason: str | None = None,
        for_seconds: float | None = None,
        tenant: str | None = None,
        source: dict[str, Any] | None = None,
    ) -> Grant:
        """Give a grant: ``scope`` ``input`` (``tool_name`` with exactly ``input``), ``tool`` or ``conversation``.

        ``chat_id`` limits it to one conversation (required for
        ``conversation``); ``for_seconds`` ends it (default: until revoked).
        Calls already waiting in ``chat_id`` that it covers are approved at once.
        """
        tenant = tenant or self.tenant
        check_grant(scope, tool_name, chat_id)
        check_names(actor=actor)
        check_names(tool_name=tool_name, chat_id=chat_id, optional=True)
        check_text("reason", reason)
        now = self.clock()
        ends = expires_at(now, for_seconds)
        grant_id = f"grant_{secrets.token_hex(8)}"
        digest = input_digest(input) if scope == "input" else None  # never the input itself
        self._change(tenant, lambda ledger: ledger.issue(
            grant_id, scope, tool_name, None, chat_id, actor, reason, now, ends, source, digest
        ))  # fmt: skip
        if chat_id is not None:
            self.settle(chat_id, tenant=tenant)
        return self.get(grant_id, tenant=tenant)

    def approve(
        self,
        chat_id: str,
        *,
        approval_id: str | None = None,
        tool_call_id: str | None = None,
        scope: str = "input",
        for_seconds: float | None = None,
        actor: str,
        reason: str | None = None,
        any_conversation: bool = True,
        auto_continue: bool | None = None,
        tenant: str | None = None,
    ) -> Grant:
        """Approve a call awaiting approval and give a grant for what it names: "don't ask again".

        ``scope`` ``input`` (default) covers this tool with exactly this
        call's input, ``tool`` this tool, ``conversation`` every call here.
        ``any_conversation=False`` keeps an ``input`` or ``tool`` grant to
        this conversation. The approval is recorded first, as ``approve``
        would (``ToolCallNotReadyError`` if the call awaits none).
        """
        tenant = tenant or self.tenant
        check_grant(scope, "the call's tool", chat_id)
        call = self._waiting(chat_id, tenant, approval_id, tool_call_id)
        expires_at(self.clock(), for_seconds)  # refused before the approval is recorded
        self._chats.respond_to_approval(
            chat_id, tenant=tenant, approval_id=call.approval_id, approved=True, reason=reason,
            actor=actor, auto_continue=auto_continue,
        )  # fmt: skip
        limited = scope == "conversation" or not any_conversation
        return self.give(
            scope=scope, tool_name=None if scope == "conversation" else call.tool_name,
            input=call.input,
            chat_id=chat_id if limited else None, actor=actor, reason=reason,
            for_seconds=for_seconds, tenant=tenant,
            source={"chatId": chat_id, "toolCallId": call.tool_call_id, "approvalId": call.approval_id},
        )  # fmt: skip

    def revoke(
        self, grant_id: str, *, actor: str, reason: str | None = None, tenant: str | None = None
    ) -> Grant:
        """Revoke a grant: it covers nothing from now on (revoking an ended grant changes nothing)."""
        tenant = tenant or self.tenant
        check_names(actor=actor)
        check_text("reason", reason)
        grant = self.get(grant_id, tenant=tenant)
        if grant.revoked_at is None and grant.expired_at is None:
            now = self.clock()
            self._change(tenant, lambda ledger: ledger.revoke(grant_id, actor, reason, now))
        return self.get(grant_id, tenant=tenant)

    def expire_due(self, *, tenant: str | None = None) -> builtins.list[Grant]:
        """Record the expiry of every grant whose time ran out; those grants."""
        tenant = tenant or self.tenant
        now = self.clock()
        due = [grant.grant_id for grant in self._grants(tenant) if grant.is_due(now)]
        if due:

            def expire(ledger: GrantLedger) -> None:
                for grant_id in due:
                    if ledger.book[grant_id].is_due(now):
                        ledger.expire(grant_id, now)

            self._change(tenant, expire)
        return [self.get(grant_id, tenant=tenant) for grant_id in due]

    # -- reading ---------------------------------------------------------------------------

    def list(
        self, *, tenant: str | None = None, include_ended: bool = False
    ) -> builtins.list[Grant]:
        """The tenant's grants, oldest first: the live ones (``include_ended``: all of them)."""
        tenant = tenant or self.tenant
        grants, now = self._current(tenant)
        return grants if include_ended else [grant for grant in grants if grant.is_live(now)]

    def get(self, grant_id: str, *, tenant: str | None = None) -> Grant:
        """One grant; GrantNotFoundError if the tenant has none by that id."""
        for grant in self._grants(tenant or self.tenant):
            if grant.grant_id == grant_id:
                return grant
        raise GrantNotFoundError(grant_id)

    def covering(
        self, chat_id: str, tool_name: str, input: Any, *, tenant: str | None = None
    ) -> Grant | None:
        """The live grant that would approve ``tool_name(input)`` in ``chat_id`` now, if any."""
        return covering(
            self._grants(tenant or self.tenant), chat_id, tool_name, input, self.clock()
        )

    def automatic_approvals(
        self, *, tenant: str | None = None, limit: int = RECENT
    ) -> builtins.list[AutomaticApproval]:
        """The calls standing grants approved lately, newest first: the call, the grant, who gave it, why.

        Each grant lists its last ``RECENT`` uses (``Grant.recent``); a use in
        an erased conversation is left out.
        """
        return automatic_approvals(self._grants(tenant or self.tenant), limit)

    # -- answering -------------------------------------------------------------------------

    def settle(
        self, chat_id: str, *, tenant: str | None = None
    ) -> builtins.list[tuple[str, Grant]]:
        """Approve every call of ``chat_id`` awaiting approval that a live grant covers.

        Returns (tool call id, grant) per call approved. A call someone
        answered meanwhile is left as they answered it.
        """
        tenant = tenant or self.tenant
        status = self._reads.status(chat_id, tenant=tenant)
        asking = [call for call in status.waiting_for if call.state == "approval-requested"]
        if not asking:
            return []
        grants, now = self._current(tenant)
        covered = [
            (call, grant)
            for call in asking
            if call.approval_id is not None
            and (grant := covering(grants, chat_id, call.tool_name, call.input, now)) is not None
        ]
        if not covered or self._is_replay(chat_id, tenant):
            return []
        approved: builtins.list[tuple[str, Grant]] = []
        for call, grant in covered:
            try:
                self._chats.respond_to_approval(
                    chat_id, tenant=tenant, approval_id=call.approval_id, approved=True,
                    reason=automatic_reason(grant), actor=f"grant:{grant.grant_id}",
                )  # fmt: skip
            except ChatLedgerError as error:  # answered by someone else meanwhile
                log.info("grant %s left call %s: %s", grant.grant_id, call.tool_call_id, error)
                continue
            approval_id, call_id, at = str(call.approval_id), call.tool_call_id, self.clock()
            self._record_use(tenant, grant.grant_id, chat_id, call_id, approval_id, at)
            approved.append((call.tool_call_id, grant))
        return approved

    def _is_replay(self, chat_id: str, tenant: str) -> bool:
        """A replay's approvals are the recording's decisions: grants leave them alone."""
        state = self._reads.stored_state(chat_id, tenant=tenant)
        metadata = state.metadata if state is not None else None
        return isinstance(metadata, dict) and "replayOf" in metadata

    def _record_use(
        self, tenant: str, grant_id: str, chat_id: str, call_id: str, approval_id: str, at: datetime
    ) -> None:
        self._change(tenant, lambda ledger: ledger.use(grant_id, chat_id, call_id, approval_id, at))

    def forget_conversation(self, tenant: str, chat_id: str) -> int:
        """After ``chat_id`` was erased: the ledger stops naming it (``adapters.grants.erasure``).

        The grants limited to it are revoked first (they cover nothing any
        more); then every event naming it is rewritten in place. Returns how
        many events were rewritten.
        """
        now = self.clock()
        limited = [g.grant_id for g in self._grants(tenant) if g.chat_id == chat_id]
        if limited:

            def revoke(ledger: GrantLedger) -> None:
                for grant_id in limited:
                    grant = ledger.book[grant_id]
                    if grant.revoked_at is None and grant.expired_at is None:
                        ledger.revoke(grant_id, "chatledger", "its conversation was erased", now)

            self._change(tenant, revoke)
        try:
            return scrub_conversation(self._log, tenant, chat_id)
        finally:
            with self._lock:
                self._cache.pop(tenant, None)  # what it folded still names the conversation

    def findings(self) -> builtins.list[tuple[str, str | None, str | None, str]]:
        """What ``verify`` finds wrong in the grant ledgers (``adapters.grants.check``)."""
        return grant_findings(self._log)

    def after_close(self, tenant: str, chat_id: str) -> None:
        """The stream writers' hook: settle the conversation; a failure is logged, never raised."""
        try:
            self.settle(chat_id, tenant=tenant)
        except Exception:
            log.exception("standing grants could not answer chat %r", chat_id)

    def close(self) -> None:
        """Release the ledger's database connections."""
        self._log.close()

    # -- the ledger --------------------------------------------------------------------------

    def _ledger(self, tenant: str) -> GrantLedger:
        """The tenant's ledger as stored now (shared: change a copy), read once, then only what is new.

        Every close on a call awaiting approval reads it: the events other
        processes added since the last read are fetched and folded, nothing more.
        """
        key = ledger_id(tenant)
        with self._lock:
            ledger = self._cache.get(tenant)
            if ledger is None:
                try:
                    ledger = self._log.repository.get(key)
                except AggregateNotFoundError:
                    return GrantLedger(tenant)
            else:
                for event in self._log.events.get(key, gt=ledger.version):
                    ledger = event.mutate(ledger)  # type: ignore[attr-defined]
            self._cache[tenant] = ledger
            return ledger

    def _current(self, tenant: str) -> tuple[builtins.list[Grant], datetime]:
        """The grants with every due expiry recorded (one ledger read when none is due), and now."""
        grants, now = self._grants(tenant), self.clock()
        if any(grant.is_due(now) for grant in grants):
            self.expire_due(tenant=tenant)
            grants = self._grants(tenant)
        return grants, now

    def _grants(self, tenant: str) -> builtins.list[Grant]:
        return self._ledger(tenant).grants()

    def _change(self, tenant: str, change: Callable[[GrantLedger], None]) -> None:
        """Apply ``change`` to the latest ledger and save it; a concurrent save is retried."""
        for _ in range(_RETRIES):
            ledger = copy.deepcopy(self._ledger(tenant))  # the cached one changes only once saved
            change(ledger)
            try:
                self._log.save(ledger)
                return
            except IntegrityError:
                continue
        raise ChatLedgerError(f"the grant ledger of tenant {tenant!r} kept changing; try again")

    def _waiting(
        self, chat_id: str, tenant: str, approval_id: str | None, tool_call_id: str | None
    ) -> Any:
        if not approval_id and not tool_call_id:
            raise InvalidInputError("name the call to approve: approval_id or tool_call_id")
        for call in self._reads.status(chat_id, tenant=tenant).waiting_for:
            if call.state == "approval-requested" and (
                call.approval_id == approval_id or call.tool_call_id == tool_call_id
            ):
                return call
        named = f"approval {approval_id!r}" if approval_id else f"tool call {tool_call_id!r}"
        raise InvalidInputError(
            f"{named} of conversation {chat_id!r} is not awaiting approval; "
            "its status (chatledger status CHAT) lists the calls that are"
        )


def sharded_grants(shards: Sequence[Any], chats: Chats, reads: Reader) -> Grants:
    """The grants of a sharded store: one ledger (the first database's) for every shard.

    ``chats`` and ``reads`` route each conversation to its database; every
    shard's stream writers answer through these grants, so a grant given
    anywhere covers the calls of every shard.
    """
    first = shards[0]
    grants = Grants(first.grants.ledger_log, chats, reads, tenant=first.tenant)
    for shard in shards:
        shard.streams.after_close = grants.after_close
        shard.operations.notify_erasures(grants.forget_conversation)
    return grants
