"""The ``erase`` and ``retain`` commands: forget one conversation, or every one idle for too long.

Both are for operators: what they erase is gone for good (only the audit
timeline's kinds, actors and times stay). ``retain --dry-run`` lists what
would be erased and changes nothing. Both ask first (``confirm``): on a
terminal they show what would go; elsewhere they need ``--yes``.

``erase --subject USER`` answers a data-protection request about one person:
USER is a user id as the audit records it (the actor of their events:
``user:alice`` from the library, ``alice`` from an HTTP token
``TOKEN=acme:alice``), in the tenant of ``--tenant``. It is an option of
``erase`` (and ``export --subject`` of ``export``) rather than a command of
its own: an operator answering a request looks under those verbs, and what
happens to each conversation is exactly what they do to one.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, TextIO

from chatledger.adapters.cli.common import CommandError, advance, open_existing, progress_bar
from chatledger.adapters.cli.confirm import YES, confirmed
from chatledger.adapters.cli.options import (
    CHAT,
    OPERATOR,
    PROGRESS,
    REASON,
    SUBJECT,
    Commands,
    flag,
    option,
)
from chatledger.adapters.cli.values import parse_duration

if TYPE_CHECKING:
    from chatledger.adapters.store.operations.erasure import IdleConversation
    from chatledger.adapters.store.operations.subject import SubjectConversation

if TYPE_CHECKING:
    from chatledger.adapters.store.operations.erasure import Compaction

__all__ = ["add", "erase", "finish_erasure", "retain"]


def add(commands: Commands) -> None:
    """Declare ``erase`` and ``retain``."""
    commands.declare(
        "erase",
        erase,
        CHAT.but(nargs="?", help="the conversation's chat id (or --subject)"),
        SUBJECT.but(help="erase every conversation of the tenant this user id took part in"),
        OPERATOR.but(help="who erases it (e.g. operator:alice)"),
        REASON.but(help="why (e.g. the request or ticket it answers; not the user id)"),
        flag("--dry-run", "with --subject: list what would be erased; change nothing"),
        YES,
        PROGRESS,
        help="erase a conversation for good (its audit skeleton stays)",
        description="Destroy the conversation's content: its data key is deleted "
        "(crypto-shredding), its events become tombstones, its snapshots and read-model rows are "
        "deleted, and an erasure event records --actor, the time and --reason. Its audit "
        "timeline keeps each event's kind, actor and time; 'chatledger verify' still passes. "
        "With --subject USER instead of a chat id: every conversation of --tenant in which USER "
        "is the actor of an event (wrote a message, answered an approval...) is erased so, and "
        "the audit skeleton names a stable pseudonym (subject:...) instead of USER, also in "
        "conversations erased before; --dry-run lists them. "
        "This cannot be undone: on a terminal it shows what would go and asks; otherwise it "
        "erases nothing without --yes.",
    )
    commands.declare(
        "retain",
        retain,
        option(
            "--older-than",
            type=parse_duration,
            required=True,
            metavar="DURATION",
            help="retention period: erase conversations idle for longer "
            "(1y, 6mo, 2w, 90d, 12h, 30min, 45s; a bare 'm' is refused as ambiguous)",
        ),
        flag("--dry-run", "list what would be erased; change nothing"),
        YES,
        PROGRESS,
        option(
            "--actor",
            default="system:retention",
            help="who the erasures are recorded as (default: system:retention)",
        ),
        option("--reason", help="why (default: the retention period)"),
        option(
            "--as-of",
            type=_moment,
            metavar="TIME",
            help="measure idleness from this ISO 8601 time instead of now (e.g. with --dry-run: "
            "what retention will erase by then)",
        ),
        help="erase every conversation idle for longer than a retention period",
        description="Find the conversations with no event for longer than --older-than (of "
        "--tenant, or of every tenant when --tenant is not given) and erase each as 'chatledger "
        "erase' does, showing progress and a summary. --dry-run only lists them. On a terminal it "
        "lists them first and asks; otherwise it erases nothing without --yes.",
    )
    commands.declare(
        "finish-erasure",
        finish_erasure,
        help="remove erased content still held in the database's files (a pending erasure)",
        description="Complete what 'erase' or 'retain' reported as pending: SQLite: checkpoint "
        "and truncate the WAL; PostgreSQL: rewrite the tables (VACUUM FULL) and checkpoint. "
        "Run it once the readers they named have finished. Exit status 1 while still pending.",
    )


def erase(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger erase``: erase one conversation (or a subject's) and say what was erased, when and by whom."""
    if args.subject is not None:
        return _erase_subject(args, out)
    if args.chat is None:
        raise CommandError("name what to erase: a chat id, or --subject USER")
    if args.dry_run:
        raise CommandError("--dry-run goes with --subject (erase shows the chat and asks first)")
    with open_existing(args) as store:
        if not args.yes:
            events = store.version(args.chat)
            messages = len(store.messages(args.chat))
            what = [
                f"would erase: {args.chat!r} (tenant {store.tenant!r}), "
                f"{messages:,} message(s) in {events:,} event(s)"
            ]
            if not confirmed("erase", what, f"Erase {args.chat!r}?", yes=False):
                return 1
        report = store.operations.erase(args.chat, actor=args.actor, reason=args.reason)
    print(
        f"erased conversation {args.chat!r} (tenant {report.tenant!r}): "
        f"{report.events:,} event(s) at {report.erased_at.isoformat(timespec='seconds')} "
        f"by {report.actor}",
        file=out,
    )
    print("removed: " + "; ".join(report.removed), file=out)
    return _receipt(report.compaction, out)


def retain(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger retain``: erase (or list) every idle conversation; exit 1 if any failed."""
    tenant = args.tenant if getattr(args, "tenant_given", False) else None
    scope = f"tenant {tenant!r}" if tenant else "every tenant"
    period = timedelta(seconds=args.older_than)
    with open_existing(args) as store:
        now = args.as_of
        if not args.dry_run and not args.yes:
            # Ask about what a dry run finds, then erase by the same cutoff: only what was shown.
            found = store.operations.retain(period, tenant=tenant, dry_run=True, now=now)
            now = found.cutoff + period
            what = [_line(idle, "would erase") for idle in found.idle]
            question = f"Erase these {len(found.idle):,} conversation(s) of {scope}?"
            if found.idle and not confirmed("retain", what, question, yes=False):
                return 1
        what_bar = "checking" if args.dry_run else "erasing"
        with progress_bar(what_bar, " conversations", show=args.progress) as bar:
            report = store.operations.retain(
                period,
                tenant=tenant,
                dry_run=args.dry_run,
                actor=args.actor,
                reason=args.reason,
                progress=partial(advance, bar),
                now=now,
            )
    cutoff = report.cutoff.isoformat(timespec="seconds")
    for idle in report.idle:
        verb = "would erase" if args.dry_run else "erased"
        failed = next((why for f, why in report.failed if f is idle), None)
        shown = _line(idle, "not erased" if failed else verb)
        print(shown + (f": {failed}" if failed else ""), file=out)
    if args.dry_run:
        summary = (
            f"dry run: {len(report.idle):,} conversation(s) of {scope} idle since before "
            f"{cutoff} would be erased; nothing was changed"
        )
    else:
        summary = (
            f"erased {len(report.erased):,} conversation(s) of {scope} idle since before "
            f"{cutoff}" + (f"; {len(report.failed):,} failed" if report.failed else "")
        )
    print(summary, file=out)
    pending = _receipt(report.compaction, out) if not args.dry_run else 0
    return 1 if report.failed or pending else 0


def _erase_subject(args: argparse.Namespace, out: TextIO) -> int:
    """``erase --subject``: list (``--dry-run``), ask, erase with progress, print the combined receipt."""
    if args.chat is not None:
        raise CommandError("give a chat id or --subject USER, not both")
    with open_existing(args) as store:
        ops = store.operations
        found = ops.conversations_of(args.subject)
        scope = f"of {args.subject!r} in tenant {ops.tenant!r}"
        if not found:
            print(f"no conversation {scope}: nothing to erase", file=out)
            return 0
        if args.dry_run:
            for conversation in found:
                print(_subject_line(conversation, "would"), file=out)
            print(
                f"dry run: {len(found):,} conversation(s) {scope} would be erased or "
                "pseudonymised; nothing was changed",
                file=out,
            )
            return 0
        if not args.yes:
            what = [_subject_line(c, "would") for c in found]
            question = f"Erase these {len(found):,} conversation(s) {scope}?"
            if not confirmed("erase", what, question, yes=False):
                return 1
        with progress_bar("erasing", " conversations", show=args.progress) as bar:
            report = ops.erase_subject(
                args.subject, actor=args.actor, reason=args.reason,
                progress=partial(advance, bar),
            )  # fmt: skip
    for erased in report.erased:
        print(f"erased: {erased.chat_id!r}, {erased.events:,} event(s)", file=out)
    for key in report.pseudonymised:
        print(f"pseudonymised: erased conversation {key}", file=out)
    for conversation, why in report.failed:
        print(_subject_line(conversation, "could not") + f": {why}", file=out)
    print(
        f"erased {len(report.erased):,} conversation(s) {scope} by {args.actor}; the audit "
        f"names them {report.pseudonym} from now on"
        + (f"; {len(report.failed):,} failed" if report.failed else ""),
        file=out,
    )
    pending = _receipt(report.compaction, out)
    return 1 if report.failed or pending else 0


def finish_erasure(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger finish-erasure``: clean the files of erased content; exit 1 while still pending."""
    with open_existing(args) as store:
        return _receipt(store.operations.finish_erasure(), out)


def _receipt(compaction: Compaction | None, out: TextIO) -> int:
    """Print what the files keep after an erasure; 1 when some still hold erased content."""
    if compaction is None:
        return 0
    for line in compaction.lines():
        print(line, file=out)
    return 0 if compaction.done else 1


def _line(idle: IdleConversation, verb: str) -> str:
    """One idle conversation as ``retain`` lists it: what happens to it, its name, since when."""
    name = repr(idle.chat_id) if idle.chat_id else str(idle.conversation)
    owner = f" (tenant {idle.tenant!r})" if idle.tenant else ""
    return f"{verb}: {name}{owner}, idle since {idle.updated_at.isoformat(timespec='seconds')}"


def _subject_line(conversation: SubjectConversation, verb: str) -> str:
    """One conversation of a subject as ``erase --subject`` lists it: what happens to it."""
    if conversation.erased:
        return f"{verb} pseudonymise: erased conversation {conversation.conversation}"
    return f"{verb} erase: {conversation.chat_id!r}"


def _moment(text: str) -> datetime:
    """An ISO 8601 time (UTC when it names no zone), for argparse."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an ISO 8601 time: {text!r} (e.g. 2026-12-01 or 2026-12-01T08:00:00+00:00)"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
