"""Erasure and export by data subject: everything one user id took part in, in one tenant.

The **subject** is a user id matched, exactly, as the ``actor`` of recorded
events: what the library was given (``actor="user:alice"``) or, over HTTP, the
user of the caller's token (a ``TOKEN=acme:alice`` token records ``alice``).
A message's author is the actor of the event that recorded it, so this finds
the conversations in which the subject wrote a message, answered an approval,
added a tool output, opened a stream or did anything else recorded. It does
not look inside content: a user id written in a message text or in message
metadata by someone else is not a match (erase such a conversation by its
chat id).

``conversations_of`` lists the matches (a dry run: the timeline read model,
caught up first). ``erase_subject`` erases each live one as ``erase`` does and,
in the same transaction, names the subject's pseudonym
(``chatledger.domain.erasure.pseudonym``) in the audit skeleton that erasure
keeps, both in the tombstones and in the timeline rows; conversations erased
earlier get their skeleton pseudonymised too. The chain links commit to the
erased content's digest, which the tombstones keep, so ``verify`` still
passes. The files are cleaned once, at the end (the receipt's ``compaction``).
``export_subject`` writes each live conversation as a verifiable bundle.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from uuid import UUID

from chatledger.adapters.persistence.chain import MAGIC, chain_tables, split_link
from chatledger.adapters.persistence.purge import LogPurge
from chatledger.adapters.store.operations.erasure import (
    DEFAULT_WAIT_SECONDS,
    Compaction,
    Eraser,
    ErasureReport,
    _names,
)
from chatledger.adapters.store.operations.export import export_bundle
from chatledger.domain.erasure import is_tombstone, pseudonym, read_tombstone, tombstone_bytes
from chatledger.domain.errors import (
    ConcurrentWriteError,
    ConversationErasedError,
    ConversationNotFoundError,
    InvalidInputError,
    StoreConfigurationError,
)
from chatledger.domain.limits import check_name

__all__ = ["SubjectConversation", "SubjectErasure", "SubjectExport", "Subjects"]

SECRET_SETTING = "subject-pseudonym-secret"
"""The store setting holding the HMAC secret of pseudonyms (made on first use)."""

SubjectProgress = Callable[[int, int], None]
"""Called after each conversation with (done, total)."""


@dataclass(frozen=True)
class SubjectConversation:
    """A conversation the subject took part in."""

    conversation: UUID
    chat_id: str | None
    """None once erased (the store keeps no readable chat id of an erased conversation)."""
    erased: bool
    """Erased already: only its audit skeleton is left (and will be pseudonymised)."""


@dataclass
class SubjectErasure:
    """What ``erase_subject`` found and did: the combined receipt."""

    subject: str
    tenant: str
    pseudonym: str
    """The name the audit skeleton gives the subject from now on."""
    found: list[SubjectConversation] = field(default_factory=list)
    erased: list[ErasureReport] = field(default_factory=list)
    """Each conversation erased now, with its own receipt (``removed``)."""
    pseudonymised: list[UUID] = field(default_factory=list)
    """Conversations erased before whose skeleton now names the pseudonym."""
    failed: list[tuple[SubjectConversation, str]] = field(default_factory=list)
    """Conversations that could not be erased (written meanwhile past the retries...), and why."""
    compaction: Compaction | None = None
    """What the database's files keep afterwards (None: nothing was found)."""


@dataclass
class SubjectExport:
    """What ``export_subject`` wrote."""

    subject: str
    tenant: str
    files: list[tuple[str, Path, int]] = field(default_factory=list)
    """(chat id, bundle file, lines) of each conversation."""
    erased: list[UUID] = field(default_factory=list)
    """The subject's conversations already erased: nothing of them is left to export."""


class Subjects:
    """Finds, erases and exports what one data subject has in a store."""

    def __init__(self, log: Any, view: Any, projector: Any, eraser: Eraser) -> None:
        self._log = log
        self._view = view
        self._projector = projector
        self._eraser = eraser

    def conversations_of(self, subject: str, tenant: str) -> list[SubjectConversation]:
        """The tenant's conversations with an event whose actor is ``subject``, live ones first."""
        check_name("subject", subject)
        check_name("tenant", tenant)
        self._projector.catch_up()
        data_keys = getattr(self._log.mapper, "data_keys", None)
        found = []
        for key in sorted(self._view.conversations_of(subject), key=str):
            erasure = data_keys.erasure(key) if data_keys is not None else None
            if erasure is not None:
                if erasure.tenant == tenant:
                    found.append(SubjectConversation(key, None, True))
                continue
            owner, chat_id = _names(self._log, key)
            if owner == tenant:
                found.append(SubjectConversation(key, chat_id, False))
        found.sort(key=lambda c: (c.erased, c.chat_id or "", str(c.conversation)))
        return found

    def erase_subject(
        self,
        subject: str,
        tenant: str,
        *,
        actor: str,
        reason: str,
        progress: SubjectProgress | None = None,
        wait: float = DEFAULT_WAIT_SECONDS,
    ) -> SubjectErasure:
        """Erase every conversation of ``subject`` and pseudonymise them in the skeleton (module docstring)."""
        check_name("actor", actor)
        if isinstance(reason, str) and subject in reason:
            raise InvalidInputError(
                f"reason names the subject {subject!r}: the audit keeps the reason, so it would "
                "name them after their erasure; give a ticket or request number instead"
            )
        self._eraser._parts()  # a store that can erase, before anything is changed
        found = self.conversations_of(subject, tenant)
        name = pseudonym(self._secret(), tenant, subject)
        report = SubjectErasure(subject, tenant, name, found)
        rename = (subject, name)
        for done, conversation in enumerate(found, start=1):
            key = conversation.conversation
            if not conversation.erased:
                names = (tenant, conversation.chat_id) if conversation.chat_id else None
                try:
                    report.erased.append(
                        self._eraser.erase_key(key, actor, reason, names, rename=rename)
                    )
                except ConversationErasedError:
                    pass  # erased meanwhile by someone else: pseudonymise its skeleton below
                except (ConversationNotFoundError, ConcurrentWriteError) as error:
                    report.failed.append((conversation, str(error)))
                    if progress is not None:
                        progress(done, len(found))
                    continue
                else:
                    if progress is not None:
                        progress(done, len(found))
                    continue
            if self._rename_erased(key, rename):
                report.pseudonymised.append(key)
            if progress is not None:
                progress(done, len(found))
        if found:  # renamed tombstones leave dead rows naming the subject in the log's tables too
            report.compaction = self._eraser.compact(wait, everything=bool(report.pseudonymised))
        return report

    def export_subject(
        self,
        subject: str,
        tenant: str,
        directory: Path,
        progress: SubjectProgress | None = None,
    ) -> SubjectExport:
        """Write a bundle (``export``) of each live conversation of ``subject`` into ``directory``."""
        found = self.conversations_of(subject, tenant)
        directory.mkdir(parents=True, exist_ok=True)
        report = SubjectExport(subject, tenant)
        for done, conversation in enumerate(found, start=1):
            if conversation.erased or conversation.chat_id is None:
                report.erased.append(conversation.conversation)
            else:
                path = directory / f"{conversation.conversation}.jsonl"
                with path.open("w", encoding="ascii", newline="\n") as out:
                    lines = export_bundle(self._log, tenant, conversation.chat_id, out)
                report.files.append((conversation.chat_id, path, lines))
            if progress is not None:
                progress(done, len(found))
        return report

    def _secret(self) -> bytes:
        """The store's pseudonym secret (recorded on first use; the first writer wins)."""
        return bytes.fromhex(self._view.setting(SECRET_SETTING, secrets.token_hex(32)))

    def _rename_erased(self, key: UUID, rename: tuple[str, str]) -> bool:
        """Name the pseudonym instead of the subject in an erased conversation's skeleton."""
        tables = chain_tables(self._log.recorder, self._log.config.backend)
        if tables is None:
            raise StoreConfigurationError("erasure needs a SQLite or PostgreSQL store")
        states = []
        for version, _, state, _ in tables.events(key):
            link, inner = split_link(state)
            if not is_tombstone(inner):
                continue
            tombstone = read_tombstone(inner)
            if tombstone.actor == rename[0]:
                entry = replace(tombstone.entry(version), actor=rename[1])
                prefix = MAGIC + link if link is not None else b""
                states.append((version, prefix + tombstone_bytes(tombstone.digest, entry)))
        purge = LogPurge(self._log)
        with self._log.recorder.datastore.transaction(commit=True) as c:
            before = purge.zero_deletes(c)
            try:
                purge.replace(c, key, states)
                self._view.rename_actor(c, key, *rename)
            finally:
                purge.restore_deletes(c, before)
        return True
