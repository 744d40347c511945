"""Erasing a conversation (``store.operations.erase``) and retention (``store.operations.retain``).

Erasure happens in one transaction, so a conversation's content becomes
unreadable everywhere at once:

1. each stored event is replaced by its tombstone (its chain link, the
   digest the link commits to, and the kind, actor and time of its audit
   entry: ``chatledger.domain.erasure``);
2. its snapshots and its attachments (``blobs``) are deleted;
3. its data key is deleted (crypto-shredding: any other copy of its
   ciphertext can no longer be decrypted) and the erasure is registered;
4. its read-model rows are deleted, and its timeline rows lose their
   summaries and details (kinds, actors and times stay);
5. a ``ConversationErased`` event (who, when, why) is appended, chained
   after the tombstones, so ``verify`` still passes and names nothing.

A conversation written meanwhile makes the append clash: everything is
read again and erased with the new events. Afterwards this process forgets
what it cached of the conversation, the read models catch up (other
processes purge their copies when they reach the ``ConversationErased``
event), and the files are cleaned (``compaction``): on SQLite the
full-text index is optimised and the WAL checkpointed and truncated; on
PostgreSQL the tables are vacuumed and the search index rebuilt. Readers
that still see the erased rows are waited for within a bound; past it the
report says "pending", what still holds the content and how to finish
(``finish_erasure``), never "done" while it is there.

Retention erases every conversation (of a tenant, or all) whose last event
is older than a cutoff, as found in the conversation list.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from eventsourcing.persistence import IntegrityError, StoredEvent

from chatledger.adapters.persistence.chain import MAGIC, chain_tables, split_link
from chatledger.adapters.persistence.compaction import (
    DEFAULT_WAIT_SECONDS,
    LOG_TABLES,
    PURGED_TABLES,
    Compaction,
    compact_postgres,
    compact_sqlite,
    outside_of,
)
from chatledger.adapters.persistence.data_keys import ENVELOPE, DataKeys, Erasure
from chatledger.adapters.persistence.purge import LogPurge
from chatledger.adapters.store.forks import forks_of
from chatledger.adapters.store.unit_of_work import attempts
from chatledger.domain.aggregate import conversation_id
from chatledger.domain.chain import content_digest
from chatledger.domain.conversation import ConversationState
from chatledger.domain.erasure import ConversationErased, tombstone_bytes
from chatledger.domain.errors import (
    ChatLedgerError,
    ConcurrentWriteError,
    ConversationErasedError,
    ConversationNotFoundError,
    InvalidInputError,
    StoreConfigurationError,
)
from chatledger.domain.events import ConversationStarted
from chatledger.domain.limits import check_name, check_text
from chatledger.domain.timeline import TimelineEntry, describe

__all__ = [
    "DEFAULT_WAIT_SECONDS",
    "Compaction",
    "Eraser",
    "ErasureReport",
    "IdleConversation",
    "RetentionReport",
]

_NOTHING = ConversationState(tenant="", chat_id="")


@dataclass(frozen=True)
class ErasureReport:
    """What ``erase`` did."""

    tenant: str
    chat_id: str | None
    """None when erased by retention in a store whose read models keep no readable chat id."""
    events: int
    """Events erased (versions 1 to ``events``); the ``ConversationErased`` event follows them."""
    erased_at: datetime
    actor: str
    reason: str
    unreadable: int = 0
    """Events that no longer decoded before the erasure (``verify`` keeps naming them as changed)."""
    compaction: Compaction | None = None
    """What the database's files keep afterwards: done, or pending and how to finish (None: not run yet)."""
    removed: tuple[str, ...] = ()
    """What was removed from the store (as the ``ConversationErased`` event records it)."""


@dataclass(frozen=True)
class IdleConversation:
    """A conversation retention found idle."""

    conversation: UUID
    tenant: str | None
    chat_id: str | None
    updated_at: datetime
    """Its last change."""


@dataclass
class RetentionReport:
    """What ``retain`` found and did."""

    cutoff: datetime
    """Conversations unchanged since before this moment were idle."""
    dry_run: bool
    idle: list[IdleConversation] = field(default_factory=list)
    """Every idle conversation found (erased unless ``dry_run``)."""
    erased: list[ErasureReport] = field(default_factory=list)
    failed: list[tuple[IdleConversation, str]] = field(default_factory=list)
    """Idle conversations that could not be erased, and why."""
    compaction: Compaction | None = None
    """What the database's files keep after the erasures (None: nothing was erased)."""


RetainProgress = Callable[[int, int], None]
"""Called after each conversation with (done, total)."""


class Eraser:
    """Erases conversations of one store (SQLite or PostgreSQL)."""

    def __init__(self, log: Any, view: Any, projector: Any, forget: Callable[[UUID], None]) -> None:
        self._log = log
        self._view = view
        self._projector = projector
        self._forget = forget
        self._purge = LogPurge(log)
        self._plain_log = False
        """Whether an event erased since the last compaction was readable without its data key."""
        self.on_erased: Callable[[str, str], object] | None = None
        """Called with (tenant, chat id) after each erasure, before compaction (the grant ledger's)."""

    def _parts(self) -> tuple[Any, DataKeys]:
        tables = chain_tables(self._log.recorder, self._log.config.backend)
        data_keys = getattr(self._log.mapper, "data_keys", None)
        if tables is None or data_keys is None:
            raise StoreConfigurationError(
                "erasure needs a SQLite or PostgreSQL store (a memory:// store keeps nothing to erase)"
            )
        return tables, data_keys

    def erase(
        self, tenant: str, chat_id: str, actor: str, reason: str, wait: float = DEFAULT_WAIT_SECONDS
    ) -> ErasureReport:
        """Erase one conversation, then clean the files (waiting ``wait`` s for readers); see the module docstring."""
        check_name("tenant", tenant)
        check_name("chat id", chat_id)
        report = self.erase_key(conversation_id(tenant, chat_id), actor, reason, (tenant, chat_id))
        return replace(report, compaction=self.compact(wait))

    def erase_key(
        self,
        key: UUID,
        actor: str,
        reason: str,
        names: tuple[str, str] | None = None,
        rename: tuple[str, str] | None = None,
    ) -> ErasureReport:
        """Erase the conversation ``key`` (``names``: its tenant and chat id, for errors).

        ``rename`` (actor, pseudonym): the audit skeleton names the pseudonym
        where it would name the actor (tombstones and timeline rows alike).
        """
        check_name("actor", actor)
        check_text("reason", reason)
        if not isinstance(reason, str) or not reason.strip():
            raise InvalidInputError(
                "reason must say why the conversation is erased (a request or ticket, a rule)"
            )
        tables, data_keys = self._parts()
        blobs = getattr(self._log.mapper, "blobs", None)
        tenant, chat_id = names if names is not None else (None, None)
        for fork in forks_of(self._log, key):  # first: they hold its messages by reference
            with suppress(ConversationErasedError):
                why = f"{reason} (erased with its origin {chat_id or str(key)!r})"
                self.erase_key(conversation_id(*fork), actor, why, fork, rename)
        for _ in attempts():
            erasure = data_keys.erasure(key)
            if erasure is not None:
                raise erasure.error(tenant, chat_id)
            rows = tables.events(key)
            if not rows:
                raise ConversationNotFoundError(tenant or "?", chat_id or str(key))
            plan = _plan(self._log.mapper, key, rows, rename)
            self._plain_log |= any(not split_link(r[2])[1].startswith(ENVELOPE) for r in rows)
            now = datetime.now(UTC)
            head = rows[-1][0]
            event = ConversationErased(
                originator_id=key,
                originator_version=head + 1,
                timestamp=now,
                actor=actor,
                reason=reason,
                events=head,
                tenant=plan.tenant or tenant or "",
                removed=_removed(head, bool(data_keys.enabled)),
                outside=outside_of(self._log.config.backend),
            )
            stored = self._log.mapper.to_stored_event(event)
            record = Erasure(key, event.tenant, head + 1, now.isoformat(), actor, reason)

            def purge(c: Any, plan: _Plan = plan, record: Erasure = record) -> None:
                before = self._purge.zero_deletes(c)
                try:
                    self._purge.replace(c, key, plan.states)
                    self._purge.drop_snapshots(c, key)
                    if blobs is not None:
                        blobs.purge(c, key)
                    data_keys.record_erasure(c, record)
                    self._view.purge(c, key)
                    if rename is not None:
                        self._view.rename_actor(c, key, *rename)
                finally:
                    self._purge.restore_deletes(c, before)

            try:
                self._log.recorder.insert_events([stored], also=purge)
            except IntegrityError:
                continue  # written meanwhile: read the new events and erase them too
            break
        else:
            raise ConcurrentWriteError(chat_id or str(key))
        data_keys.forget(key)
        if blobs is not None:
            blobs.forget(key)
        self._forget(key)
        self._projector.catch_up()
        named = plan.chat_id or chat_id
        if self.on_erased is not None and event.tenant and named:
            try:
                self.on_erased(event.tenant, named)
            except Exception as error:  # erased already: say what is left and how to finish
                raise ChatLedgerError(
                    f"conversation {named!r} is erased, but the grant ledger still names it: "
                    f"{str(error)[:200]}; run store.grants.forget_conversation({event.tenant!r}, "
                    f"{named!r}), then 'chatledger finish-erasure'"
                ) from error
        return ErasureReport(
            event.tenant, plan.chat_id or chat_id, head, now, actor, reason, plan.unreadable,
            removed=event.removed,
        )  # fmt: skip

    def idle(self, cutoff: datetime, tenant: str | None) -> list[IdleConversation]:
        """The conversations (of ``tenant``, or all) unchanged since ``cutoff``, oldest first."""
        if tenant is not None:
            check_name("tenant", tenant)
        self._projector.catch_up()
        found = []
        for key, updated_at in self._view.idle_conversations(cutoff, tenant):
            owner, chat = _names(self._log, key)
            found.append(IdleConversation(key, owner, chat, updated_at))
        return found

    def retain(
        self,
        older_than: timedelta,
        *,
        tenant: str | None,
        dry_run: bool,
        actor: str,
        reason: str | None,
        progress: RetainProgress | None = None,
        now: datetime | None = None,
        wait: float = DEFAULT_WAIT_SECONDS,
    ) -> RetentionReport:
        """Erase (or with ``dry_run`` only list) conversations idle for longer than ``older_than`` before ``now``."""
        if not isinstance(older_than, timedelta) or older_than <= timedelta(0):
            raise InvalidInputError(
                f"older_than must be a positive duration (e.g. 90d), not {older_than!r}"
            )
        cutoff = (now or datetime.now(UTC)) - older_than
        report = RetentionReport(cutoff, dry_run, self.idle(cutoff, tenant))
        why = reason or f"retention: idle for more than {_days(older_than)}"
        if not dry_run:
            self._parts()
            check_name("actor", actor)
        for done, idle in enumerate(report.idle, start=1):
            if not dry_run:
                try:
                    names = (idle.tenant, idle.chat_id) if idle.tenant and idle.chat_id else None
                    report.erased.append(self.erase_key(idle.conversation, actor, why, names))
                except ConversationErasedError:
                    pass  # erased meanwhile by someone else: nothing left to do
                except (ConversationNotFoundError, ConcurrentWriteError) as error:
                    report.failed.append((idle, str(error)))
            if progress is not None:
                progress(done, len(report.idle))
        if report.erased:
            report.compaction = self.compact(wait)
        return report

    def compact(
        self, wait: float = DEFAULT_WAIT_SECONDS, *, everything: bool = False
    ) -> Compaction:
        """Remove erased content from the database's files, waiting ``wait`` s for readers (``compaction``).

        PostgreSQL: the log's tables are rewritten only when an erased event was
        readable without its data key, or with ``everything`` (``finish_erasure``).
        """
        config = self._log.config
        self._parts()
        if config.backend == "sqlite":
            return compact_sqlite(self._log.recorder.datastore, config.sqlite_path, wait)
        tables = (*LOG_TABLES, *PURGED_TABLES) if everything or self._plain_log else PURGED_TABLES
        compaction = compact_postgres(config, wait, tables)
        self._plain_log = self._plain_log and not compaction.done
        return compaction


@dataclass
class _Plan:
    """The tombstones of a conversation's events, and the names its first event gives."""

    states: list[tuple[int, bytes]] = field(default_factory=list)
    tenant: str | None = None
    chat_id: str | None = None
    unreadable: int = 0


def _plan(
    mapper: Any,
    key: UUID,
    rows: list[tuple[int, str, bytes, int]],
    rename: tuple[str, str] | None = None,
) -> _Plan:
    """Each event's tombstone: its link, the digest the link commits to, its timeline skeleton."""
    plan = _Plan()
    conversation: Any = None
    for version, topic, state, _ in rows:
        link = split_link(state)[0]
        try:
            link, content = mapper.unpack(state, key)
            digest = content_digest(content)
            event = mapper.to_domain_event(StoredEvent(key, version, topic, state))
        except Exception:  # damaged before the erasure: erased anyway, verify still names it
            plan.unreadable += 1
            name = topic.rsplit(":", 1)[-1]
            entry = TimelineEntry(
                version, datetime.now(UTC), None, "unreadable", "", {"event": name}
            )
            digest = bytes(32)
        else:
            if isinstance(event, ConversationStarted):
                plan.tenant, plan.chat_id = event.tenant, event.chat_id
            entry = describe(event, conversation.state if conversation is not None else _NOTHING)
            with suppress(Exception):  # an event that no longer applies: the skeleton is enough
                conversation = event.mutate(conversation)
        if rename is not None and entry.actor == rename[0]:
            entry = replace(entry, actor=rename[1])
        prefix = MAGIC + link if link is not None else b""
        plan.states.append((version, prefix + tombstone_bytes(digest, entry)))
    return plan


def _names(log: Any, key: UUID) -> tuple[str | None, str | None]:
    """(tenant, chat id) from the conversation's first event, or (None, None) if it does not decode."""
    try:
        found = log.select_events(key, lte=1)
        started = log.decode(found[0]) if found else None
    except Exception:  # erased or damaged: named by its id
        return None, None
    if isinstance(started, ConversationStarted):
        return started.tenant, started.chat_id
    return None, None


def _removed(events: int, keyed: bool) -> tuple[str, ...]:
    """The receipt's list of what an erasure removes from the store."""
    return (
        f"the content of {events} event(s): tombstones keep each one's kind, actor, time and "
        "chain digest",
        "its snapshots",
        "its attachments (the files and large tool outputs kept once)",
        *(["its data key (crypto-shredding: every copy of its ciphertext is unreadable)"] * keyed),
        "its read-model rows (messages, conversation list and search, approvals, continuations); "
        "its timeline keeps kinds, actors and times",
        "dead copies in the database's files (see the report's compaction)",
    )


def _days(span: timedelta) -> str:
    days = span.total_seconds() / 86400
    return f"{days:g} days" if days >= 1 else f"{span.total_seconds():g} seconds"
