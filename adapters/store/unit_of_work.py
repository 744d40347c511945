"""Load, decide, save: how every change to a conversation is committed.

``UnitOfWork.act`` loads the conversation (the cached one, trusted without
a query), lets a decision record events on it, and saves them; on a version
clash with another writer (or a cached state found stale after a decision
that recorded nothing) it loads again and re-decides against the new state.
``commit`` applies the snapshot rule (``chatledger.domain.snapshot_cadence``),
with the sizes the log reports; the stream writer commits through the same
unit of work.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from eventsourcing.persistence import StoredEvent

from chatledger.adapters.persistence.log import ConversationLog
from chatledger.adapters.store.cache import ConversationCache
from chatledger.adapters.store.meter import METER
from chatledger.domain.aggregate import Conversation, conversation_id
from chatledger.domain.errors import ConcurrentWriteError
from chatledger.domain.limits import check_moment, check_position
from chatledger.domain.snapshot_cadence import LastSnapshot, snapshot_due

__all__ = [
    "RETRY_SECONDS",
    "SNAPSHOT_MEMORY",
    "UnitOfWork",
    "attempts",
    "back_off",
]

RETRY_SECONDS = 10.0
"""How long a write that keeps losing version clashes tries again before ConcurrentWriteError.

A deadline, not a count: a competing writer (a stream committing every
chunk) holds the conversation for as long as it writes, and under load that
lasts longer; a fixed number of attempts then runs out while a deadline
outlasts it (retries are cheap: load, decide, one insert)."""
SNAPSHOT_MEMORY = 10_000
"""Conversations whose last snapshot a unit of work remembers (forgetting all of them past
this only means the rule starts again as after a restart: an earlier snapshot)."""


def back_off(attempt: int) -> None:
    """Sleep a little, randomly, longer each attempt: concurrent writers of one conversation take turns."""
    time.sleep(random.uniform(0, min(0.002 * 2**attempt, 0.1)))


def attempts(seconds: float = RETRY_SECONDS) -> Iterator[int]:
    """Attempt numbers (0, 1, ...) with a back-off before each retry, until ``seconds`` have passed."""
    deadline = time.monotonic() + seconds
    attempt = 0
    while True:
        yield attempt
        attempt += 1
        if time.monotonic() >= deadline:
            return
        back_off(attempt)


def _nothing_to_settle(key: UUID) -> None:
    """No open streams to settle (a unit of work used without a store)."""


class UnitOfWork:
    """Loads and saves conversations for the use cases; keeps the recently saved ones in a cache."""

    def __init__(
        self,
        log: ConversationLog,
        cache: ConversationCache | None = None,
        *,
        settle_writers: Callable[[UUID], None] = _nothing_to_settle,
    ) -> None:
        """``settle_writers`` commits what this process's open streams of a conversation hold
        back (a batch a boundary chunk ended, a pending open): the store passes its flusher's
        ``Flusher.settle``. It is called before every decision (``act``,
        ``decide_uncommitted``), and the store's reads call it too, so a decision or a read sees
        what this process's writers appended before (read-your-writes) although they commit in
        batches. Those writers commit through this unit of work, so the call goes up to them
        and comes back down here: a loop, made visible by passing it in at construction."""
        self.log = log
        self.cache = cache or ConversationCache()
        self._snapshotted: dict[UUID, LastSnapshot] = {}
        """The last snapshot this process wrote, per conversation, and the bytes written since
        (at most ``SNAPSHOT_MEMORY`` conversations)."""
        self.settle_writers = settle_writers
        """Commits what this process's writers of a conversation hold back (see ``__init__``)."""

    def load(self, tenant: str, chat_id: str, version: int | None = None) -> Conversation:
        """The conversation as stored (at ``version``); ConversationNotFoundError if there is none."""
        check_position("version", version, optional=True)
        return self.log.load(conversation_id(tenant, chat_id), tenant, chat_id, version)

    def current(self, tenant: str, chat_id: str) -> Conversation:
        """The conversation as it is now: the cached one if nothing was written since, else loaded.

        The caller owns it; ``give_back`` returns it to the cache once saved.
        """
        key = conversation_id(tenant, chat_id)
        cached = self.cache.take(key)
        if cached is not None and not self.log.has_events_after(key, cached.version):
            return cached
        return self.load(tenant, chat_id)

    def give_back(self, conversation: Conversation) -> None:
        """Keep a saved conversation for the next ``current``."""
        state = conversation.state
        self.cache.give(conversation_id(state.tenant, state.chat_id), conversation)

    def commit(self, conversation: Conversation) -> None:
        """Save pending events; snapshot every so often within a stream, and after a closed one.

        When is ``snapshot_due``'s rule (``chatledger.domain.snapshot_cadence``):
        the first close this process writes of the conversation snapshots it,
        later ones once ``SNAPSHOT_CLOSE_AFTER`` events came since its last
        snapshot. Loading a conversation at rest then reads one snapshot plus
        at most that many events; only the newest snapshot is kept.
        ConcurrentWriteError when another writer got there first (nothing was
        written).
        """
        state = conversation.state
        key = conversation_id(state.tenant, state.chat_id)
        due = self.snapshot_due(conversation)
        events, started = list(conversation.pending_events), time.perf_counter()
        written, size = self.log.record(conversation, snapshot=due)
        METER.committed(time.perf_counter() - started, events)
        if due:
            self._remember(key, LastSnapshot(conversation.version, size))
        else:
            self._written(key, written)

    def snapshot_due(self, conversation: Conversation) -> bool:
        """Whether committing the conversation's pending events takes a snapshot (see ``commit``).

        Within a stream, once the events written since this process's last
        snapshot of the conversation reach ``SNAPSHOT_GROWTH`` times its
        stored bytes, one every ``SNAPSHOT_EVERY`` events counted from it (at
        multiples of it while there is none): a long conversation's live
        answer does not re-encode the whole conversation every few batches,
        and loading an open stream replays at most about ``SNAPSHOT_GROWTH``
        times the snapshot's bytes, or fewer than ``SNAPSHOT_EVERY`` events.
        """
        state = conversation.state
        last = self._snapshotted.get(conversation_id(state.tenant, state.chat_id))
        return snapshot_due(last, conversation.pending_events)

    def encoded_snapshot(self, conversation: Conversation) -> StoredEvent | None:
        """A snapshot of the conversation as it is now, for ``commit_many``; None in memory
        (no database: commit such a conversation with ``commit``)."""
        return self.log.encoded_snapshot(conversation)

    def commit_many(self, events: list[Any], snapshots: list[Any] | None = None) -> None:
        """Save pending events taken off several conversations, and snapshots, in one transaction.

        ``snapshots`` are the ``encoded_snapshot`` of the conversations
        ``snapshot_due`` said need one. Either all is recorded or nothing
        (ConcurrentWriteError if any conversation was written elsewhere
        meanwhile); after a failure reload each conversation.
        """
        started = time.perf_counter()
        written = self.log.record_many(events, snapshots)
        METER.committed(time.perf_counter() - started, events)
        for key, size in written.items():
            self._written(key, size)
        for snapshot in snapshots or ():
            self._remember(
                snapshot.originator_id,
                LastSnapshot(snapshot.originator_version, len(snapshot.state)),
            )

    def _remember(self, key: UUID, last: LastSnapshot) -> None:
        """Keep what this process knows of the conversation's newest snapshot."""
        if len(self._snapshotted) >= SNAPSHOT_MEMORY:
            self._snapshotted.clear()  # forgetting only means an earlier snapshot
        self._snapshotted[key] = last

    def _written(self, key: UUID, size: int) -> None:
        """Count ``size`` stored bytes of events committed after the conversation's last snapshot.

        Not locked: two threads committing one conversation at once (one of them then
        clashes) can only lose a count, which delays a snapshot a little."""
        last = self._snapshotted.get(key)
        if last is not None:
            last.written += size

    def create(self, conversation: Conversation) -> None:
        """Save a new conversation and keep it (its first turn needs no load); ConcurrentWriteError
        if its id is taken."""
        self.log.record(conversation)
        self.give_back(conversation)

    def act(
        self,
        tenant: str,
        chat_id: str,
        decide: Callable[[Conversation], Any],
        *,
        keep: bool = True,
    ) -> tuple[Conversation, list[Any], Any]:
        """Load, decide, save; on a concurrent write, re-decide against the new state.

        Returns the saved conversation, the events the decision recorded (none
        for a duplicate action) and what ``decide`` returned. With ``keep``
        the conversation goes back to the cache afterwards; otherwise the
        caller owns it.
        """
        key = conversation_id(tenant, chat_id)
        self.settle_writers(key)
        for _ in attempts():
            # The cached conversation is trusted without a query: a decision that records
            # events is checked by the commit itself (it clashes if anyone wrote since); one
            # that records nothing or refuses is checked afterwards, and re-decided if stale.
            conversation = self.cache.take(key)
            checked = conversation is None
            if conversation is None:
                conversation = self.load(tenant, chat_id)
            base = conversation.version
            try:
                decided = decide(conversation)
            except Exception:
                if not checked and self.log.has_events_after(key, base):
                    continue  # refused on a stale state: decide again on the stored one
                raise
            events = list(conversation.pending_events)
            if events:
                try:
                    self.commit(conversation)
                except ConcurrentWriteError:
                    continue
            elif not checked and self.log.has_events_after(key, base):
                continue
            if keep:
                self.give_back(conversation)
            return conversation, events, decided
        raise ConcurrentWriteError(chat_id)

    def decide_uncommitted(
        self, tenant: str, chat_id: str, decide: Callable[[Conversation], Any]
    ) -> Conversation:
        """Decide on the conversation as it is now and leave its events pending: the caller
        commits them later (a stream's open, with its first batch).

        Unlike ``act``, the cached conversation is checked against the log
        first (one query): a decision whose commit comes later must not be
        made on a stale state. The caller owns the conversation returned.
        """
        self.settle_writers(conversation_id(tenant, chat_id))
        conversation = self.current(tenant, chat_id)
        decide(conversation)  # a refusal drops the conversation: the next action loads it
        return conversation

    def events_after(self, conversation: Conversation, version: int) -> list[Any]:
        """The conversation's stored events after ``version``, oldest first."""
        state = conversation.state
        key = conversation_id(state.tenant, state.chat_id)
        return list(self.log.events.get(key, gt=version))

    def version_at(self, tenant: str, chat_id: str, moment: datetime) -> int:
        """The conversation's version as it stood at ``moment`` (0 before it started)."""
        check_moment("at_time", moment)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        self.load(tenant, chat_id)  # raises ConversationNotFoundError
        version = 0
        event: Any
        key: UUID = conversation_id(tenant, chat_id)
        for event in self.log.events.get(key):
            if event.timestamp > moment:
                break
            version = event.originator_version
        return version
