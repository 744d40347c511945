"""The ``chatledger`` command line: the parser, and demo, show, ingest, audit, convert, rebuild, project, verify.

The other commands live in modules named after them: ``serve`` (the HTTP
server), ``worker``, ``approvals`` (status, inbox, approve, deny,
tool-output), ``list_command``, ``integrity`` (seal, export, verify-export),
``otel``, ``redact`` and ``erasure`` (erase, retain); what they share (the
store options, opening the store, ``CommandError``, responders) is in
``common``. Commands that only read never create a store: they refuse a URL
where there is none.

Every command takes ``--url`` (default: ``$CHATLEDGER_URL``, else
``sqlite:///./chatledger.db``) and ``--tenant``, before or after the command
name. chatledger's own errors print one line on stderr and exit 1; bad usage
exits 2.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from chatledger.adapters.cli import erasure, integrity, otel
from chatledger.adapters.cli.approvals import add_approval_commands
from chatledger.adapters.cli.chunk_files import read_chunks
from chatledger.adapters.cli.common import (
    PROG,
    CommandError,
    add_store_options,
    open_existing,
    open_store,
    subparser,
)
from chatledger.adapters.cli.list_command import add_list
from chatledger.adapters.cli.messages import describe
from chatledger.adapters.cli.redact import add_redact
from chatledger.adapters.cli.render import render_ingest, render_messages
from chatledger.adapters.cli.serve import add_serve
from chatledger.adapters.cli.worker import add_worker
from chatledger.adapters.responders.demo import record_demo
from chatledger.domain.errors import (
    ChatLedgerError,
    ConversationExistsError,
    ConversationNotFoundError,
)

if TYPE_CHECKING:  # the store is imported when a command runs, so --help starts fast
    from chatledger.adapters.store import ConversationStore

__all__ = ["build_parser", "main"]

FORMATS = ("ai-sdk", "anthropic", "openai-chat", "openai-responses")
"""The converter's formats (``chatledger.domain.convert.FORMATS``, kept equal by a test)."""
T = TypeVar("T")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 error, 2 bad usage)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse exits on --help (0) and on bad usage (2)
        return exit_.code if isinstance(exit_.code, int) else 2
    command: Callable[[argparse.Namespace, TextIO], int] = args.command
    try:
        return command(args, sys.stdout)
    except (ChatLedgerError, CommandError) as error:
        print(f"{PROG}: error: {describe(error, args.url)}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `chatledger show c | head`
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the interpreter's final flush quiet
        return 1
    except KeyboardInterrupt:
        return 130


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="chatledger: an event-sourced store of AI chat conversations "
        "with tool calls and approvals.",
        epilog=f"Run '{PROG} COMMAND --help' for a command's options.",
    )
    add_store_options(parser, suppress=False)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    add_serve(commands)
    _add_demo(commands)
    _add_show(commands)
    _add_ingest(commands)
    _add_audit(commands)
    _add_convert(commands)
    _add_rebuild(commands)
    _add_project(commands)
    _add_verify(commands)
    add_worker(commands, subparser)
    add_approval_commands(commands, subparser, open_existing)
    add_list(commands, subparser, open_existing, _iso_time)
    integrity.add_seal(commands, subparser, open_existing)
    integrity.add_export(commands, subparser, open_existing)
    otel.add_export_otel(commands, subparser, open_existing)
    add_redact(commands, subparser, open_existing)
    erasure.add_erase(commands, subparser, open_existing)
    erasure.add_retain(commands, subparser, open_existing)
    return parser


# -- demo -------------------------------------------------------------------------


def _add_demo(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparser(
        commands,
        "demo",
        "record a demo conversation with a denied tool call and print it",
        "Record a realistic conversation (AI SDK v6 chunks as a streamText server sends them): "
        "a question, a delete_file call that needs approval, the user's denial, and a "
        "continuation in which the provider replays the earlier call. Then print it.",
    )
    parser.add_argument(
        "--chat", metavar="ID", help="chat id to create (default: a fresh demo-XXXXXXXX)"
    )
    parser.set_defaults(command=_demo)


def _demo(args: argparse.Namespace, out: TextIO) -> int:
    chat_id = args.chat or f"demo-{uuid.uuid4().hex[:8]}"
    with open_store(args) as store:
        result = record_demo(store, chat_id)
        messages = store.messages(chat_id)
        where = store.config.display
    print(f"Recorded demo conversation {chat_id!r} in {where}\n", file=out)
    print(render_messages(messages), file=out)
    summary = f"\nrecorded {result.events} events; {result.replays} replayed chunks ignored"
    if result.refused:
        summary += f"; {len(result.refused)} refused: " + "; ".join(result.refused)
    print(summary, file=out)
    print(f"Show it again with: {PROG} show {chat_id} --url {where}", file=out)
    return 0


# -- show -------------------------------------------------------------------------


def _add_show(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparser(
        commands,
        "show",
        "print a conversation's messages",
        "Print a conversation's UIMessages, readably or as JSON, now or as they stood earlier.",
    )
    parser.add_argument("chat", metavar="CHAT", help="chat id")
    parser.add_argument("--json", action="store_true", help="print the UIMessages as JSON")
    when = parser.add_mutually_exclusive_group()
    when.add_argument(
        "--at-version",
        type=_positive_int,
        metavar="N",
        help="as the conversation stood at event version N",
    )
    when.add_argument(
        "--at-time",
        type=_iso_time,
        metavar="ISO",
        help="as the conversation stood at this time (ISO 8601, e.g. 2025-01-31T12:00:00Z; "
        "no offset means UTC)",
    )
    parser.set_defaults(command=_show)


def _show(args: argparse.Namespace, out: TextIO) -> int:
    with open_existing(args) as store:
        version = _version_within(store, args.chat, args.at_version)
        messages = store.messages(args.chat, at_version=args.at_version, at_time=args.at_time)
    if args.json:
        print(json.dumps(messages, indent=2, ensure_ascii=False), file=out)
        return 0
    when = ""
    if args.at_version is not None:
        when = f" as of version {args.at_version}"
    elif args.at_time is not None:
        when = f" as of {args.at_time.isoformat()}"
    print(
        f"conversation {args.chat!r} (tenant {args.tenant!r}, now at version {version}){when}: "
        f"{len(messages)} message{'' if len(messages) == 1 else 's'}\n",
        file=out,
    )
    if messages:
        print(render_messages(messages), file=out)
    return 0


def _version_within(store: ConversationStore, chat: str, at_version: int | None) -> int:
    """The conversation's version; CommandError when ``--at-version`` is past it."""
    version = store.version(chat)
    if at_version is not None and at_version > version:
        raise CommandError(
            f"--at-version {at_version} is past the end: conversation {chat!r} is at version "
            f"{version}"
        )
    return version


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"versions start at 1, got {value}")
    return value


def _iso_time(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an ISO 8601 time: {text!r} (e.g. 2025-01-31T12:00:00Z)"
        ) from None


# -- ingest -----------------------------------------------------------------------


def _add_ingest(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparser(
        commands,
        "ingest",
        "write a recorded stream (JSON Lines or SSE) into a conversation",
        "Write a recorded UI message stream into a conversation as one model response. FILE holds "
        "one chunk per line (JSON Lines) or an SSE capture ('data: {...}' events; comments and "
        "'data: [DONE]' are ignored); the format is detected. Invalid lines are recorded as "
        "refused input and reported with their line number. A capture without a finish chunk "
        "closes the stream as interrupted. Exit status 1 when a chunk was refused or none was "
        "applied.",
    )
    parser.add_argument("chat", metavar="CHAT", help="chat id")
    parser.add_argument("file", metavar="FILE", help="the recorded stream, or - for standard input")
    parser.add_argument(
        "--continuation",
        action="store_true",
        help="continue the last assistant message instead of writing a new one",
    )
    parser.add_argument(
        "--actor",
        default="system",
        help="who the events are recorded as caused by (default: system)",
    )
    parser.add_argument(
        "--create", action="store_true", help="start the conversation if it does not exist"
    )
    parser.set_defaults(command=_ingest)


def _ingest(args: argparse.Namespace, out: TextIO) -> int:
    file_format, records = read_chunks(_read_text(args.file))
    if not records:
        raise CommandError(f"{args.file} holds no chunks")
    outcome = _capture_outcome(record.chunk for record in records)
    with open_store(args) as store:
        if args.create:
            with contextlib.suppress(ConversationExistsError):
                store.start_conversation(args.chat, actor=args.actor)
        try:
            report = store.ingest(
                args.chat,
                _progress((record.chunk for record in records), len(records), "ingesting"),
                actor=args.actor,
                continuation=args.continuation,
                outcome=outcome,
            )
        except ConversationNotFoundError as error:
            raise CommandError(
                f"conversation {error.chat_id!r} (tenant {error.tenant!r}) does not exist; "
                "pass --create to start it"
            ) from None
    print(render_ingest(args.chat, report.message_id, file_format, records, report), file=out)
    if outcome != "finished":
        print(f"the stream was closed as {outcome}: {_OUTCOME_WHY[outcome]}", file=out)
    if report.refused or not report.applied:
        what = (
            f"{_count(len(report.refused), 'chunk')} refused (listed above)"
            if report.refused
            else "no chunk was applied"
        )
        print(f"{PROG}: error: {args.file}: {what}; what was received is recorded", file=sys.stderr)
        return 1
    return 0


_OUTCOME_WHY = {
    "interrupted": "the capture ends without a finish chunk",
    "aborted": "the capture ends with an abort chunk",
    "errored": "the capture holds an error chunk and no finish chunk",
}


def _capture_outcome(chunks: Iterable[Any]) -> str:
    """How a recorded stream ended: finished, aborted, errored, or interrupted (cut short)."""
    kinds = {chunk.get("type") for chunk in chunks if isinstance(chunk, dict)}
    if "finish" in kinds:
        return "finished"
    if "abort" in kinds:
        return "aborted"
    if "error" in kinds:
        return "errored"
    return "interrupted"


def _progress(items: Iterable[T], total: int, what: str) -> Iterable[T]:
    """``items`` with a progress bar on stderr when there are many and stderr is a terminal."""
    from tqdm import tqdm

    if total < PROGRESS_FROM:
        return items
    return tqdm(items, total=total, desc=what, unit=" chunks", file=sys.stderr, disable=None)


PROGRESS_FROM = 1_000


def _read_text(name: str) -> str:
    try:
        data = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except OSError as error:
        raise CommandError(f"cannot read {name}: {error.strerror or error}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CommandError(f"{name} is not UTF-8 text (byte {error.start})") from None


# -- audit ------------------------------------------------------------------------


def _add_audit(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparser(
        commands,
        "audit",
        "print a conversation's audit timeline",
        "Print one line per event of a conversation: position, time, actor, kind and a summary. "
        "Batches holding replayed or refused chunks are marked. --jsonl prints every entry "
        "with its details as JSON Lines instead (for export).",
    )
    parser.add_argument("chat", metavar="CHAT", help="chat id")
    parser.add_argument(
        "--kind",
        action="append",
        metavar="KIND",
        help="only entries of this kind (repeatable), e.g. approval-responded, chunks",
    )
    parser.add_argument("--actor", help="only entries caused by this actor, e.g. user:alice")
    parser.add_argument(
        "--jsonl",
        action="store_true",
        help="print JSON Lines with full details (every chunk of each batch)",
    )
    parser.set_defaults(command=_audit)


def _audit(args: argparse.Namespace, out: TextIO) -> int:
    with open_existing(args) as store:
        try:
            entries = store.history(args.chat, kinds=args.kind, actor=args.actor, full=args.jsonl)
        except ValueError as error:
            raise CommandError(str(error)) from None
    if args.jsonl:
        from chatledger.adapters.store.audit import write_jsonl

        write_jsonl(entries, out)
        return 0
    width = max((len(entry.actor or "-") for entry in entries), default=1)
    for entry in entries:
        marks = f" [{', '.join(entry.marks)}]" if entry.marks else ""
        when = entry.time.strftime("%Y-%m-%d %H:%M:%S")
        print(
            f"{entry.position:>6}  {when}  {entry.actor or '-':<{width}}  {entry.kind:<22} "
            f"{entry.summary}{marks}",
            file=out,
        )
    return 0


# -- convert ----------------------------------------------------------------------


def _add_convert(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparser(
        commands,
        "convert",
        "print a conversation as a model API's messages",
        "Print the conversation as the messages a model API takes (JSON): ai-sdk (AI SDK "
        "ModelMessages), anthropic (Messages API system + messages), openai-chat (Chat "
        "Completions messages) or openai-responses (Responses input items). A turn paused on "
        "tool calls without results is refused unless --omit-unanswered.",
    )
    parser.add_argument("chat", metavar="CHAT", help="chat id")
    parser.add_argument(
        "--format", choices=FORMATS, default="ai-sdk", help="target format (default: ai-sdk)"
    )
    parser.add_argument(
        "--at-version", type=_positive_int, metavar="N", help="as of event version N"
    )
    parser.add_argument(
        "--omit-unanswered",
        action="store_true",
        help="leave out tool calls still waiting for a result (provider formats)",
    )
    parser.add_argument(
        "--ignore-incomplete-tool-calls",
        action="store_true",
        help="the AI SDK option of that name (ai-sdk format)",
    )
    parser.set_defaults(command=_convert)


def _convert(args: argparse.Namespace, out: TextIO) -> int:
    with open_existing(args) as store:
        _version_within(store, args.chat, args.at_version)
        converted = store.model_messages(
            args.chat,
            args.format,
            at_version=args.at_version,
            unanswered="omit" if args.omit_unanswered else "refuse",
            ignore_incomplete_tool_calls=args.ignore_incomplete_tool_calls,
        )
    print(json.dumps(converted, indent=2, ensure_ascii=False), file=out)
    return 0


# -- rebuild / project ------------------------------------------------------------


def _add_rebuild(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparser(
        commands,
        "rebuild",
        "drop the read models and rebuild them from the event log",
        "Empty the read models (current messages, audit timeline, approvals inbox, continuation "
        "queue) and apply the whole event log again, showing progress. The log itself is never "
        "changed. Readers see the read models fill up while it runs. A log whose hash chain "
        "fails is refused (exit 1), unless --accept-broken-chain is given.",
    )
    parser.add_argument(
        "--accept-broken-chain",
        action="store_true",
        help="rebuild even from a log whose hash chain fails (recorded beside the chain)",
    )
    parser.set_defaults(command=_rebuild)


def _rebuild(args: argparse.Namespace, out: TextIO) -> int:
    from tqdm import tqdm

    with open_store(args) as store:
        head = store.head()
        with tqdm(
            total=head, unit=" events", desc="rebuilding", file=sys.stderr, disable=None
        ) as bar:

            def progress(position: int, head: int) -> None:
                bar.total = head
                bar.update(position - bar.n)

            started = time.perf_counter()
            applied = store.rebuild(progress=progress, accept_broken_chain=args.accept_broken_chain)
            seconds = time.perf_counter() - started
        counts = store.read_model_counts()
    rate = f" ({applied / seconds:,.0f} events/s)" if seconds > 0 and applied else ""
    print(
        f"rebuilt the read models from {_count(applied, 'event')} in {seconds:.1f} s{rate}: "
        f"{_count(counts['conversations'], 'conversation')}, "
        f"{_count(counts['timeline'], 'timeline entry', 'timeline entries')}, "
        f"{_count(counts['approvals'], 'pending approval')}, "
        f"{_count(counts['continuations'], 'pending continuation')}",
        file=out,
    )
    return 0


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def _add_project(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparser(
        commands,
        "project",
        "keep the read models up to date (run it as a process of its own)",
        "Apply new events to the read models as they are recorded, until interrupted (Ctrl-C or "
        "SIGTERM). Restarted, it resumes where it stopped. On PostgreSQL it wakes on each write "
        "(LISTEN/NOTIFY); elsewhere it polls. Reads catch up by themselves, so this only keeps "
        "them fast.",
    )
    parser.add_argument(
        "--once", action="store_true", help="catch up once and exit instead of running on"
    )
    parser.add_argument(
        "--poll",
        type=float,
        default=0.5,
        metavar="SECONDS",
        help="how long to wait between checks for new events (default: 0.5)",
    )
    parser.set_defaults(command=_project)


def _project(args: argparse.Namespace, out: TextIO) -> int:
    with open_store(args) as store:
        if args.once:
            print(f"applied {_count(store.catch_up(), 'event')}", file=out)
            return 0
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        print(f"projecting {store.config.display}; Ctrl-C to stop", file=out, flush=True)

        def report(applied: int) -> None:
            print(f"applied {_count(applied, 'event')}", file=out, flush=True)

        from chatledger.adapters.store.projection_loop import project_forever

        with contextlib.suppress(KeyboardInterrupt):
            project_forever(store, stop, poll_seconds=args.poll, on_catch_up=report)
    return 0


# -- verify -----------------------------------------------------------------------


def _add_verify(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparser(
        commands,
        "verify",
        "check the store against its event log (exit 1 on any disagreement)",
        "Check every conversation's hash chain and the seals (the first bad event of each "
        "damaged conversation is named with the kind of damage), then re-derive everything "
        "from the event log and compare: each conversation's events are "
        "complete and decode, loading (snapshot plus events) equals folding every event, and "
        "the read models (messages, audit timeline, approvals inbox, continuation queue) equal "
        "what the events give. Changes nothing. Exit status 0 when all agrees, 1 otherwise, "
        "with each problem on its own line and how to repair it.",
    )
    parser.add_argument(
        "chat", metavar="CHAT", nargs="?", help="only this conversation (default: all of them)"
    )
    integrity.add_key_option(parser)
    parser.set_defaults(command=_verify)


def _verify(args: argparse.Namespace, out: TextIO) -> int:
    from tqdm import tqdm

    key = integrity.seal_key(args, required=False)
    with open_existing(args) as store:
        bars: dict[str, tqdm[Any]] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in bars:
                unit = " events" if stage == "log" else " conversations"
                bars[stage] = tqdm(
                    total=total,
                    unit=unit,
                    desc=f"checking {stage}",
                    file=sys.stderr,
                    disable=None,  # a bar on a terminal only
                )
            bar = bars[stage]
            bar.total = total
            bar.update(done - bar.n)

        try:
            report = store.verify(args.chat, progress=progress, seal_key=key)
        finally:
            for bar in bars.values():
                bar.close()
    for problem in report.problems:
        print(problem, file=out)
    for line in report.coverage.lines() if report.coverage else ():
        print(line, file=out)
    checked = f"{_count(report.conversations, 'conversation')}, {_count(report.events, 'event')}"
    if report.erased:
        checked += f" (and the chains of {_count(report.erased, 'erased conversation')})"
    if report.ok:
        print(f"verified {checked}: everything agrees with the event log", file=out)
        return 0
    print(
        f"verified {checked}: {_count(len(report.problems), 'problem')}. {report.advice}",
        file=out,
    )
    return 1
