"""Proving the log whole: ``verify`` (the store against its log), ``seal``, ``export`` and ``verify-export``.

Seal keys never come from the command line: ``--seal-key-file``, else the
environment (see ``common.seal_key``).
"""

from __future__ import annotations

import argparse
import contextlib
import threading
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from chatledger.adapters.cli import format_io
from chatledger.adapters.cli.common import (
    CommandError,
    advance,
    open_existing,
    progress_bar,
    seal_key,
    stop_on_sigterm,
)
from chatledger.adapters.cli.options import (
    AT_VERSION,
    CHAT,
    PROGRESS,
    SEAL_KEY_FILE,
    SUBJECT,
    Commands,
    flag,
    option,
)
from chatledger.adapters.cli.render import count
from chatledger.adapters.cli.values import parse_duration
from chatledger.domain.errors import InvalidInputError

if TYPE_CHECKING:
    from tqdm import tqdm

__all__ = ["add", "export", "seal", "verify", "verify_export"]


def add(commands: Commands) -> None:
    """Declare ``verify``, ``seal``, ``export`` and ``verify-export``."""
    commands.declare(
        "verify",
        verify,
        CHAT.but(nargs="?", help="only this conversation (default: all of them)"),
        SEAL_KEY_FILE,
        option(
            "--witness",
            metavar="FILE",
            help="seals recorded outside the store by 'chatledger seal --witness': each must "
            "still be in the store with the same digest (detects deleted seals and a store put "
            "back to an older copy)",
        ),
        option(
            "--expect-seal",
            action="append",
            default=[],
            metavar="N:DIGEST",
            help="a seal the store must hold, as 'chatledger seal' printed it (repeatable)",
        ),
        flag(
            "--signed-writes",
            "the store's writers sign their heads (CHATLEDGER_SIGN_WRITES=1; the default when "
            "it is set here too): every head after the newest seal must be signed with the "
            "seal key, which detects events appended without the key",
        ),
        PROGRESS,
        help="check the store against its event log (exit 1 on any disagreement)",
        description="Check every conversation's hash chain and the seals (the first bad event "
        "of each damaged conversation is named with the kind of damage), then re-derive "
        "everything from the event log and compare: each conversation's events are complete and "
        "decode, loading (snapshot plus events) equals folding every event, and the read models "
        "(messages, audit timeline, approvals inbox, continuation queue, conversation list) equal "
        "what the events give; the list holds no other row, the read models' tracking position is "
        "not past the log, and the tracking table and settings hold only what chatledger writes. "
        "Changes nothing. Exit status 0 when all agrees, 1 otherwise, with each problem on "
        "its own line and how to repair it.",
    )
    commands.declare(
        "seal",
        seal,
        SEAL_KEY_FILE,
        option(
            "--witness",
            metavar="FILE",
            help="also append each seal's number, time and digest (a JSON line) to FILE; keep "
            "it where the database's writers cannot reach, for 'chatledger verify --witness'",
        ),
        option(
            "--every",
            type=parse_duration,
            metavar="DURATION",
            help="keep sealing at this interval (30s, 10min, 1h, 1d) until interrupted",
        ),
        help="sign a checkpoint over every conversation's chain head",
        description="Record a seal: every conversation's current chain head (version and "
        "hash), under a Merkle root signed with the operator's key. 'chatledger verify' then "
        "detects whole conversations deleted, tails cut off and chains rewritten since. Prints "
        "the seal's digest: keep it somewhere else too. With --every, seals again at that "
        "interval until interrupted (Ctrl-C or SIGTERM).",
    )
    commands.declare(
        "export",
        export,
        CHAT.but(nargs="?", help="the conversation's chat id (or --subject)"),
        SUBJECT.but(help="export every conversation of the tenant this user id took part in"),
        AT_VERSION.but(type=int, help="export versions 1..N only"),
        option(
            "--output",
            "-o",
            metavar="FILE",
            help="write the bundle here (default: stdout); with --subject, a directory",
        ),
        PROGRESS,
        *format_io.EXPORT_OPTIONS,
        help="write a conversation as a verifiable bundle, or in another format (--format)",
        description="Write the conversation (or its state at --at-version) as a self-contained "
        "bundle: its events, their hash chain and the newest seal covering it (seal first). "
        "'chatledger verify-export' checks the bundle offline, with no store. With --subject "
        "USER (a data-access request): one bundle per conversation of --tenant in which USER is "
        "the actor of an event, written into the directory --output. With --format F, the "
        "conversation's messages in that format instead (JSON; what F cannot carry is listed on "
        "stderr).",
    )
    commands.declare(
        "verify-export",
        verify_export,
        option("file", metavar="FILE", help="the bundle"),
        SEAL_KEY_FILE,
        help="check an exported bundle offline (exit 1 if anything differs)",
        description="Check a bundle written by 'chatledger export' with the seal key alone (an "
        "Ed25519 public key is enough): the chain recomputed from the contents, the sealed head "
        "on it, the Merkle proof to the signed root, the signature, and every line's digest. "
        "The first problem is named by its line.",
        store=False,  # it reads a file, never a store
    )


def verify(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger verify``: every problem on a line, then a summary; exit 1 on any problem."""
    key = seal_key(args, required=False)
    with open_existing(args) as store:
        bars: dict[str, tqdm[Any]] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in bars:
                unit = " events" if stage == "log" else " conversations"
                bars[stage] = progress_bar(f"checking {stage}", unit, total, show=args.progress)
            advance(bars[stage], done, total)

        try:
            report = store.operations.verify(
                args.chat,
                progress=progress,
                seal_key=key,
                witness=args.witness,
                expect_seals=args.expect_seal,
                signed_writes=True if args.signed_writes else None,
            )
        finally:
            for bar in bars.values():
                bar.close()
    for problem in report.problems:
        print(problem, file=out)
    for line in report.coverage.lines() if report.coverage else ():
        print(line, file=out)
    checked = f"{count(report.conversations, 'conversation')}, {count(report.events, 'event')}"
    if report.erased:
        checked += f" (and the chains of {count(report.erased, 'erased conversation')})"
    if report.ok:
        print(f"verified {checked}: everything agrees with the event log", file=out)
        return 0
    print(
        f"verified {checked}: {count(len(report.problems), 'problem')}. {report.advice}",
        file=out,
    )
    return 1


def seal(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger seal``: record a seal and print its digest (again every ``--every``)."""
    key = seal_key(args, required=True)
    assert key is not None
    stop = stop_on_sigterm() if args.every else threading.Event()
    with open_existing(args) as store, contextlib.suppress(KeyboardInterrupt):
        while True:
            sealed = store.operations.seal(key, witness=args.witness)
            print(
                f"seal {sealed.seq}: {sealed.conversations:,} conversation(s) at "
                f"{sealed.sealed_at}, {sealed.algorithm} key {sealed.key_id}, "
                f"digest {sealed.digest}",
                file=out,
                flush=True,
            )
            if not args.every or stop.wait(args.every):
                break
    return 0


def export(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger export``: the bundle to ``--output`` or standard output (``--subject``: bundles)."""
    if args.format != format_io.BUNDLE:
        return format_io.export_as(args, out)
    if args.subject is not None:
        return _export_subject(args, out)
    if args.chat is None:
        raise CommandError("name what to export: a chat id, or --subject USER")
    with (
        open_existing(args) as store,
        progress_bar("exporting", " events", show=args.progress) as bar,
    ):
        bundle = partial(
            store.operations.export, args.chat, at_version=args.at_version,
            progress=partial(advance, bar),
        )  # fmt: skip
        if args.output is None:
            bundle(out)
            return 0
        with open(args.output, "w", encoding="ascii", newline="\n") as file:
            lines = bundle(file)
    print(f"wrote {lines} lines to {args.output}", file=out)
    return 0


def _export_subject(args: argparse.Namespace, out: TextIO) -> int:
    """``export --subject``: one bundle per conversation into ``--output`` (a directory)."""
    if args.chat is not None or args.at_version is not None:
        raise CommandError("export --subject takes neither a chat id nor --at-version")
    if args.output is None:
        raise CommandError("export --subject writes one bundle per conversation: give --output DIR")
    with (
        open_existing(args) as store,
        progress_bar("exporting", " conversations", show=args.progress) as bar,
    ):
        report = store.operations.export_subject(
            args.subject, Path(args.output), progress=partial(advance, bar)
        )
    for chat_id, path, lines in report.files:
        print(f"exported {chat_id!r}: {lines} lines to {path}", file=out)
    for key in report.erased:
        print(
            f"not exported: conversation {key} was erased (only its audit skeleton is left)",
            file=out,
        )
    print(
        f"exported {len(report.files):,} conversation(s) of {args.subject!r} "
        f"(tenant {report.tenant!r}) to {args.output}",
        file=out,
    )
    return 0


def verify_export(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger verify-export``: check a bundle with the key alone; exit 1 if anything differs."""
    key = seal_key(args, required=True)
    assert key is not None
    try:
        raw = Path(args.file).read_bytes()
    except OSError as error:
        raise InvalidInputError(
            f"cannot read the bundle {args.file!r}: {error.strerror or error}"
        ) from None
    from chatledger.domain.bundle import verify_bundle

    report = verify_bundle(raw, key)
    print(f"{args.file}: {report}", file=out)
    return 0 if report.ok else 1
