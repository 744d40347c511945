"""``chatledger serve``: the HTTP server, in one process or several (``--workers``)."""

from __future__ import annotations

import argparse
import errno
import os
import socket
import sys
from typing import TYPE_CHECKING, Any, TextIO

from chatledger.adapters.cli import common
from chatledger.adapters.cli.common import (
    PROG,
    CommandError,
    cipher_key,
    load_responder,
    open_store,
)
from chatledger.adapters.cli.options import (
    DELAY,
    OWNER,
    RESPONDER,
    SEAL_KEY_FILE,
    STREAM_LEASE_SECONDS,
    Commands,
    flag,
    option,
)

if TYPE_CHECKING:
    from chatledger.adapters.http.auth import TokenTable
    from chatledger.adapters.http.settings import AppSettings
    from chatledger.domain.seal import SealKey

__all__ = ["add", "app_settings", "run", "serve_in_workers"]


def add(commands: Commands) -> None:
    """Declare ``serve``."""
    commands.declare(
        "serve",
        run,
        option("--host", default="127.0.0.1", help="interface to listen on (default: 127.0.0.1)"),
        option("--port", type=int, default=8000, help="port to listen on (default: 8000)"),
        option(
            "--token",
            action="append",
            metavar="TOKEN=TENANT",
            help="refused: a token on the command line is visible to every local user; "
            "use --token-file or $CHATLEDGER_TOKENS",
        ),
        option(
            "--token-file",
            metavar="PATH",
            help="bearer tokens, one a line: TOKEN=TENANT or TOKEN=TENANT:USER (the user is the "
            "recorded actor); also $CHATLEDGER_TOKENS, comma-separated. Default: "
            "$CHATLEDGER_TOKEN_FILE, else ./chatledger.tokens, generated with one token for "
            "--tenant at first start",
        ),
        flag(
            "--no-auth",
            "serve every request as --tenant without a token (anyone who can reach the "
            "server can use it)",
        ),
        option(
            "--cors-origin",
            action="append",
            metavar="ORIGIN",
            help="let browser pages from ORIGIN call the server, e.g. http://localhost:3000 "
            "(repeatable; '*' for any)",
        ),
        RESPONDER,
        OWNER,
        DELAY,
        option(
            "--log-level",
            default="info",
            choices=["critical", "error", "warning", "info", "debug"],
            help="server log level (default: info)",
        ),
        option(
            "--allowed-host",
            action="append",
            metavar="NAME",
            help="a Host name the server answers to besides localhost and --host, e.g. "
            "chat.example.com behind a proxy (repeatable; '*' for any)",
        ),
        flag(
            "--no-continuations",
            "run no continuations here: leave them to 'chatledger worker' processes",
        ),
        option(
            "--workers",
            type=int,
            default=1,
            metavar="N",
            help="server processes sharing the port, each with its own store on the database "
            "(default: 1; one process serves from one CPU core)",
        ),
        option(
            "--ai-sdk",
            type=int,
            choices=[6, 7],
            default=None,
            help="the AI SDK major new conversations speak (default: $CHATLEDGER_AI_SDK, else "
            "7); a conversation keeps the version it started with",
        ),
        STREAM_LEASE_SECONDS,
        SEAL_KEY_FILE,  # the verify page checks the newest seal with it
        MESSAGE_CONCURRENCY,
        help="serve the store over HTTP for AI SDK useChat clients (and JSON endpoints)",
        description="Run the HTTP server until interrupted: POST /api/chat streams answers the "
        "way the AI SDK's useChat expects (Server-Sent Events) while storing every chunk; GET "
        "/api/chat/ID/stream resumes an open answer from the log; JSON endpoints answer "
        "approvals and tool outputs and read messages, status, the audit history, the "
        "approvals inbox and model messages. /openapi.json describes them all. Several servers "
        "may share one PostgreSQL database.",
        epilog="Example: chatledger serve --port 8000 --token-file tokens.txt "
        "--responder myapp.bot:agent",
    )


MESSAGE_CONCURRENCY = option(
    "--message-concurrency",
    metavar="POLICY",
    help="what a user message sent while an answer streams does: queue (the default: AI SDK 7 "
    "steering, AI SDK 6 refuses), latest (stop the answer, answer the newest), merge (the "
    "queued messages answered as one turn), drop (refused: 409) or debounce[:SECONDS] (wait "
    "until the user stops sending); a conversation's metadata 'messageConcurrency' overrides "
    "it (default: $CHATLEDGER_MESSAGE_CONCURRENCY, else queue)",
)


def message_concurrency(args: argparse.Namespace) -> Any:
    """``--message-concurrency`` checked (CommandError naming it), or None; workers get it as
    ``$CHATLEDGER_MESSAGE_CONCURRENCY``."""
    from chatledger.adapters.store.turns.concurrency import ENV_SETTING
    from chatledger.domain.concurrency import parse_concurrency
    from chatledger.domain.errors import InvalidInputError

    if args.message_concurrency is None:
        return None
    try:
        policy = parse_concurrency(args.message_concurrency, "--message-concurrency")
    except InvalidInputError as error:
        raise CommandError(str(error)) from None
    if args.workers > 1:
        os.environ[ENV_SETTING] = str(policy)  # the worker processes inherit it
    return policy


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Check the options, then serve in this process or in ``--workers`` processes until stopped."""
    from chatledger.adapters.cli.tokens import TokenError, serve_tokens
    from chatledger.adapters.http.app import serve
    from chatledger.adapters.http.server_options import server_options

    if args.token:
        raise CommandError(
            "--token is refused: a token on the command line is visible to every local user "
            "in the process list; put TOKEN=TENANT[:USER] lines in a --token-file, or in "
            "$CHATLEDGER_TOKENS"
        )
    if args.workers < 1:
        raise CommandError(f"--workers takes a number of processes >= 1, not {args.workers}")
    concurrency = message_concurrency(args)
    responder = load_responder(args.responder, args.delay)
    # the verify page checks seals with the seal key
    settings = app_settings(args, common.seal_key(args, required=False))
    _check_port(args.host, args.port)  # before a token file or a database file is created
    try:
        tokens = serve_tokens(
            args.token_file, no_auth=args.no_auth, tenant=args.tenant, out=out, err=sys.stderr
        )
    except TokenError as error:
        raise CommandError(str(error)) from None
    with open_store(args) as store:
        if concurrency is not None:
            for one in getattr(store, "shards", None) or [store]:  # a sharded store: each
                one.turns.mid_answer.default = concurrency
        where = store.config.display
        base = f"http://{args.host}:{args.port}"
        tenants = ", ".join(tokens.tenants) if tokens is not None else args.tenant
        print(
            f"chatledger serving {where} at {base} (tenants: {tenants}); "
            f"API description at {base}/openapi.json; {server_options().describe()}; "
            "Ctrl-C to stop",
            file=out,
            flush=True,
        )
        if tokens is None and args.host not in ("127.0.0.1", "localhost", "::1"):
            print(
                f"{PROG}: warning: listening on {args.host} with --no-auth: anyone who can "
                f"reach it reads and writes tenant {args.tenant!r}",
                file=sys.stderr,
            )
        if args.workers > 1:
            print(f"chatledger: {args.workers} server processes", file=out, flush=True)
            store.close()  # each worker opens its own
            serve_in_workers(args, tokens, settings)
            return 0
        serve(
            store,
            args.host,
            args.port,
            responder=responder,
            authenticate=tokens,
            log_level=args.log_level,
            settings=settings,
        )
    return 0


def app_settings(args: argparse.Namespace, seal_key: SealKey | None) -> AppSettings:
    """The HTTP app's settings ``serve``'s options give (every server process gets these)."""
    from chatledger.adapters.http.guard import LOCAL_HOSTS
    from chatledger.adapters.http.settings import AppSettings

    return AppSettings(
        cors_origins=tuple(args.cors_origin or ()),
        allowed_hosts=tuple(dict.fromkeys([*LOCAL_HOSTS, args.host, *(args.allowed_host or ())])),
        run_continuations=not args.no_continuations,
        owner=args.owner,
        seal_key=seal_key,
    )


def _check_port(host: str, port: int) -> None:
    """Raise ``CommandError`` naming ``--port`` when ``host:port`` cannot be listened on.

    Binds and closes a socket as the server will (address reuse on, so a port
    in TIME_WAIT is not mistaken for a busy one): a busy port is said before
    "serving at ..." is printed and before anything is created.
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except socket.gaierror as error:
        raise CommandError(f"--host {host}: not an address to listen on ({error})") from None
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            raise CommandError(
                f"port {port} on {host} is already in use (another server?): stop it, or "
                f"choose another port with --port (e.g. --port {port + 1})"
            ) from None
        raise CommandError(
            f"cannot listen on {host}:{port} ({error.strerror or error}): choose another "
            "--port or --host"
        ) from None


def serve_in_workers(args: argparse.Namespace, tokens: TokenTable | None, app: AppSettings) -> None:
    """``serve --workers N``: the settings resolved here, N processes built from them."""
    from chatledger.adapters.cli.serve_workers import WorkerSettings, serve_workers, settings_json
    from chatledger.adapters.http.token_file import TokenFile

    settings = WorkerSettings(
        url=args.url,
        tenant=args.tenant,
        responder=args.responder,
        delay=args.delay,
        cipher_key=cipher_key(args),
        ai_sdk=args.ai_sdk,
        tokens=None
        if tokens is None
        else {token.decode(): [who.tenant, who.user] for token, who in tokens.tokens.items()},
        token_file=str(tokens.path) if isinstance(tokens, TokenFile) else None,
        app=settings_json(app),
        seal_key_file=args.seal_key_file,
    )
    serve_workers(settings, args.host, args.port, args.workers, args.log_level)
