"""The ``chatledger`` command line: serve, demo, show, ingest, audit, convert, rebuild, project, verify, seal.

The approvals commands (status, inbox, approve, deny, tool-output) are in
``approvals``; ``erase`` and ``retain`` in ``erasure``. Commands that only read never create a store: they refuse a
URL where there is none.

Every command takes ``--url`` (default: ``$CHATLEDGER_URL``, else
``sqlite:///./chatledger.db``) and ``--tenant``, before or after the command
name. chatledger's own errors print one line on stderr and exit 1; bad usage
exits 2.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
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
from chatledger.adapters.cli.list_command import add_list
from chatledger.adapters.cli.messages import describe
from chatledger.adapters.cli.redact import add_redact
from chatledger.adapters.cli.render import render_ingest, render_messages
from chatledger.adapters.responders.demo import record_demo
from chatledger.adapters.responders.scripted import Responder, demo_responder
from chatledger.domain.errors import (
    ChatLedgerError,
    ConversationExistsError,
    ConversationNotFoundError,
)

if TYPE_CHECKING:  # the store is imported when a command runs, so --help starts fast
    from chatledger.adapters.store import ConversationStore

__all__ = ["build_parser", "main"]

_PROG = "chatledger"
DEFAULT_TENANT = "default"
"""The store's default tenant (``chatledger.adapters.store.DEFAULT_TENANT``, kept equal by a test)."""
FORMATS = ("ai-sdk", "anthropic", "openai-chat", "openai-responses")
"""The converter's formats (``chatledger.domain.convert.FORMATS``, kept equal by a test)."""
T = TypeVar("T")


class CommandError(Exception):
    """A command cannot run as asked (unreadable file, empty input): one line, exit 1."""


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
        print(f"{_PROG}: error: {describe(error, args.url)}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `chatledger show c | head`
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the interpreter's final flush quiet
        return 1
    except KeyboardInterrupt:
        return 130


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command."""
    parser = argparse.ArgumentParser(
        prog=_PROG,
        description="chatledger: an event-sourced store of AI chat conversations "
        "with tool calls and approvals.",
        epilog=f"Run '{_PROG} COMMAND --help' for a command's options.",
    )
    _add_store_options(parser, suppress=False)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    _add_serve(commands)
    _add_demo(commands)
    _add_show(commands)
    _add_ingest(commands)
    _add_audit(commands)
    _add_convert(commands)
    _add_rebuild(commands)
    _add_project(commands)
    _add_verify(commands)
    from chatledger.adapters.cli.worker import add_worker  # it uses this module's helpers

    add_worker(commands, _subparser)
    add_approval_commands(commands, _subparser, _open_existing)
    add_list(commands, _subparser, _open_existing, _iso_time)
    integrity.add_seal(commands, _subparser, _open_existing)
    integrity.add_export(commands, _subparser, _open_existing)
    otel.add_export_otel(commands, _subparser, _open_existing)
    add_redact(commands, _subparser, _open_existing)
    erasure.add_erase(commands, _subparser, _open_existing)
    erasure.add_retain(commands, _subparser, _open_existing)
    return parser


def _add_store_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    # The options are accepted before and after the command name; on the
    # command they default to SUPPRESS so they do not erase the global value.
    parser.add_argument(
        "--url",
        default=argparse.SUPPRESS if suppress else None,
        help="store URL: sqlite:///path/file.db, postgresql://user@host:5432/db or memory:// "
        "(default: $CHATLEDGER_URL, else sqlite:///./chatledger.db)",
    )
    parser.add_argument(
        "--tenant",
        action=erasure.TenantAction,  # also records that it was given (retain scopes by it)
        default=argparse.SUPPRESS if suppress else DEFAULT_TENANT,
        help=f"tenant the conversations belong to (default: {DEFAULT_TENANT})",
    )
    parser.add_argument(
        "--cipher-key-file",
        metavar="FILE",
        default=argparse.SUPPRESS if suppress else None,
        help="file holding the store's encryption key (default: $CHATLEDGER_CIPHER_KEY, else "
        "the file $CHATLEDGER_CIPHER_KEY_FILE names; never give the key itself on the command "
        "line, where every local user can read it)",
    )


def _subparser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    help_: str,
    description: str,
    epilog: str | None = None,
) -> argparse.ArgumentParser:
    parser = commands.add_parser(name, help=help_, description=description, epilog=epilog)
    _add_store_options(parser, suppress=True)
    return parser


def _open(args: argparse.Namespace) -> ConversationStore:
    from chatledger.adapters.store import ConversationStore

    ai_sdk = getattr(args, "ai_sdk", None)  # serve --ai-sdk; else $CHATLEDGER_AI_SDK, else 7
    lease = getattr(args, "stream_lease_seconds", None)  # serve/worker; else the environment
    if lease is not None:
        from chatledger.domain.lease import check_lease_seconds

        check_lease_seconds(lease, "--stream-lease-seconds")
    return ConversationStore.open(
        args.url,
        tenant=args.tenant,
        cipher_key=_cipher_key(args),
        ai_sdk=ai_sdk,
        stream_lease_seconds=lease,
    )


def add_stream_lease_option(parser: argparse.ArgumentParser) -> None:
    """``--stream-lease-seconds``, for the commands that write answers (serve, worker)."""
    parser.add_argument(
        "--stream-lease-seconds",
        type=float,
        default=None,
        metavar="SECONDS",
        help="how long an answer's stream stays open with nothing written to it: a live "
        "writer renews it, and the stream of a writer that died (a killed server) is closed "
        "as 'interrupted' once it runs out, so resumes end and new turns are accepted "
        "(default: $CHATLEDGER_STREAM_LEASE_SECONDS, else 30)",
    )


def _cipher_key(args: argparse.Namespace) -> str | None:
    """The key in ``--cipher-key-file``, if given (the store falls back to the environment)."""
    path = getattr(args, "cipher_key_file", None)
    if not path:
        return None
    try:
        return Path(path).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise CommandError(f"cannot read the cipher key file {path!r}: {error}") from None


def _open_existing(args: argparse.Namespace) -> ConversationStore:
    """The store for a command that only reads: refused, creating nothing, when it is not there."""
    from chatledger.adapters.store.existing import open_existing

    return open_existing(args.url, tenant=args.tenant, cipher_key=_cipher_key(args))


# -- serve ------------------------------------------------------------------------


def _add_serve(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = _subparser(
        commands,
        "serve",
        "serve the store over HTTP for AI SDK useChat clients (and JSON endpoints)",
        "Run the HTTP server until interrupted: POST /api/chat streams answers the way the AI "
        "SDK's useChat expects (Server-Sent Events) while storing every chunk; GET "
        "/api/chat/ID/stream resumes an open answer from the log; JSON endpoints answer "
        "approvals and tool outputs and read messages, status, the audit history, the approvals "
        "inbox and model messages. /openapi.json describes them all. Several servers may share "
        "one PostgreSQL database.",
        epilog="Example: chatledger serve --port 8000 --token-file tokens.txt "
        "--responder myapp.bot:agent",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="interface to listen on (default: 127.0.0.1)"
    )
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000)")
    parser.add_argument(
        "--token",
        action="append",
        metavar="TOKEN=TENANT",
        help="refused: a token on the command line is visible to every local user; "
        "use --token-file or $CHATLEDGER_TOKENS",
    )
    parser.add_argument(
        "--token-file",
        metavar="PATH",
        help="bearer tokens, one a line: TOKEN=TENANT or TOKEN=TENANT:USER (the user is the "
        "recorded actor); also $CHATLEDGER_TOKENS, comma-separated. Default: "
        "$CHATLEDGER_TOKEN_FILE, else ./chatledger.tokens, generated with one token for "
        "--tenant at first start",
    )
    parser.add_argument(
        "--no-auth",
        action="store_true",
        help="serve every request as --tenant without a token (anyone who can reach the "
        "server can use it)",
    )
    parser.add_argument(
        "--cors-origin",
        action="append",
        metavar="ORIGIN",
        help="let browser pages from ORIGIN call the server, e.g. http://localhost:3000 "
        "(repeatable; '*' for any)",
    )
    parser.add_argument(
        "--responder",
        default="demo",
        metavar="demo|MODULE:NAME",
        help="what answers: 'demo' (the recorded demo turn; the default), or a Python object "
        "MODULE:NAME that is a responder, a pydantic_ai.Agent, or a function returning one",
    )
    parser.add_argument(
        "--delay",
        type=float,
        default=0.05,
        metavar="SECONDS",
        help="pause between the demo responder's chunks, to look like a model (default: 0.05)",
    )
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="server log level (default: info)",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        metavar="NAME",
        help="a Host name the server answers to besides localhost and --host, e.g. "
        "chat.example.com behind a proxy (repeatable; '*' for any)",
    )
    parser.add_argument(
        "--no-continuations",
        action="store_true",
        help="run no continuations here: leave them to 'chatledger worker' processes",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="server processes sharing the port, each with its own store on the database "
        "(default: 1; one process serves from one CPU core)",
    )
    parser.add_argument(
        "--ai-sdk",
        type=int,
        choices=[6, 7],
        default=None,
        help="the AI SDK major new conversations speak (default: $CHATLEDGER_AI_SDK, else 7); "
        "a conversation keeps the version it started with",
    )
    add_stream_lease_option(parser)
    integrity.add_key_option(parser)  # the verify page checks the newest seal with it
    parser.set_defaults(command=_serve)


def _serve(args: argparse.Namespace, out: TextIO) -> int:
    from chatledger.adapters.cli.tokens import TokenError, serve_tokens
    from chatledger.adapters.http.app import serve

    if args.token:
        raise CommandError(
            "--token is refused: a token on the command line is visible to every local user "
            "in the process list; put TOKEN=TENANT[:USER] lines in a --token-file, or in "
            "$CHATLEDGER_TOKENS"
        )
    if args.workers < 1:
        raise CommandError(f"--workers takes a number of processes >= 1, not {args.workers}")
    responder = _responder(args.responder, args.delay)
    seal_key = integrity.seal_key(args, required=False)  # the verify page checks seals with it
    try:
        tokens = serve_tokens(
            args.token_file, no_auth=args.no_auth, tenant=args.tenant, out=out, err=sys.stderr
        )
    except TokenError as error:
        raise CommandError(str(error)) from None
    with _open(args) as store:
        where = store.config.display
        base = f"http://{args.host}:{args.port}"
        tenants = ", ".join(sorted({t.tenant for t in tokens.values()})) if tokens else args.tenant
        print(
            f"chatledger serving {where} at {base} (tenants: {tenants}); "
            f"API description at {base}/openapi.json; Ctrl-C to stop",
            file=out,
            flush=True,
        )
        if tokens is None and args.host not in ("127.0.0.1", "localhost", "::1"):
            print(
                f"{_PROG}: warning: listening on {args.host} with --no-auth: anyone who can "
                f"reach it reads and writes tenant {args.tenant!r}",
                file=sys.stderr,
            )
        if args.workers > 1:
            print(f"chatledger: {args.workers} server processes", file=out, flush=True)
            store.close()  # each worker opens its own
            _serve_workers(args, tokens)
            return 0
        serve(
            store,
            args.host,
            args.port,
            responder=responder,
            tokens=tokens,
            cors_origins=args.cors_origin or (),
            log_level=args.log_level,
            run_continuations=not args.no_continuations,
            allowed_hosts=args.allowed_host or (),
            seal_key=seal_key,
        )
    return 0


def _serve_workers(args: argparse.Namespace, tokens: dict[str, Any] | None) -> None:
    """``serve --workers N``: the settings resolved here, N processes built from them."""
    from chatledger.adapters.cli.serve_workers import WorkerSettings, serve_workers

    settings = WorkerSettings(
        url=args.url,
        tenant=args.tenant,
        responder=args.responder,
        delay=args.delay,
        cipher_key=_cipher_key(args),
        ai_sdk=args.ai_sdk,
        tokens=None
        if tokens is None
        else {token: [who.tenant, who.user] for token, who in tokens.items()},
        cors_origins=args.cors_origin or [],
        allowed_hosts=[args.host, *(args.allowed_host or ())],
        run_continuations=not args.no_continuations,
    )
    serve_workers(settings, args.host, args.port, args.workers, args.log_level)


def _responder(spec: str, delay: float) -> Responder:
    """The responder named by ``--responder``: ``demo`` or ``MODULE:NAME``."""
    if spec == "demo":
        return demo_responder(delay=delay)
    module_name, colon, name = spec.partition(":")
    if not colon or not module_name or not name:
        raise CommandError(f"--responder takes 'demo' or MODULE:NAME, got {spec!r}")
    try:
        found: object = importlib.import_module(module_name)
        for attribute in name.split("."):
            found = getattr(found, attribute)
    except (ImportError, AttributeError) as error:
        raise CommandError(f"--responder {spec}: cannot import it ({error})") from error
    if not hasattr(found, "respond") and callable(found) and not _is_agent(found):
        try:
            found = found()
        except Exception as error:
            raise CommandError(
                f"--responder {spec}: calling it to make the responder failed: "
                f"{type(error).__name__}: {error}"
            ) from error
    if _is_agent(found):
        from chatledger.adapters.responders.pydantic_ai import PydanticAIResponder

        found = PydanticAIResponder(found)  # type: ignore[arg-type]
    if not isinstance(found, Responder):
        raise CommandError(
            f"--responder {spec}: {type(found).__name__} is not a responder (it needs a "
            "respond(request) method yielding UI message chunks) nor a pydantic_ai.Agent"
        )
    return found


def _is_agent(value: object) -> bool:
    """Whether ``value`` is a ``pydantic_ai.Agent`` (without importing Pydantic AI if it is absent)."""
    module = sys.modules.get("pydantic_ai")
    return module is not None and isinstance(value, module.Agent)


# -- demo -------------------------------------------------------------------------


def _add_demo(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = _subparser(
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
    with _open(args) as store:
        result = record_demo(store, chat_id)
        messages = store.messages(chat_id)
        where = store.config.display
    print(f"Recorded demo conversation {chat_id!r} in {where}\n", file=out)
    print(render_messages(messages), file=out)
    summary = f"\nrecorded {result.events} events; {result.replays} replayed chunks ignored"
    if result.refused:
        summary += f"; {len(result.refused)} refused: " + "; ".join(result.refused)
    print(summary, file=out)
    print(f"Show it again with: {_PROG} show {chat_id} --url {where}", file=out)
    return 0


# -- show -------------------------------------------------------------------------


def _add_show(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = _subparser(
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
    with _open_existing(args) as store:
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
    parser = _subparser(
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
    with _open(args) as store:
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
        print(
            f"{_PROG}: error: {args.file}: {what}; what was received is recorded", file=sys.stderr
        )
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

    if total < _PROGRESS_FROM:
        return items
    return tqdm(items, total=total, desc=what, unit=" chunks", file=sys.stderr, disable=None)


_PROGRESS_FROM = 1_000


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
    parser = _subparser(
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
    with _open_existing(args) as store:
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
    parser = _subparser(
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
    with _open_existing(args) as store:
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
    parser = _subparser(
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

    with _open(args) as store:
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
    parser = _subparser(
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
    with _open(args) as store:
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
    parser = _subparser(
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
    with _open_existing(args) as store:
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
