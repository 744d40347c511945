"""``chatledger mcp``: the store as an MCP server, over stdio (default) or streamable HTTP (``--http``).

An MCP client (a desktop assistant, an IDE, an agent) lists and searches the
conversations, reads transcripts in any format and their audit, sees the
approvals waiting, and verifies a conversation's log. Approving and denying
are offered only with ``--allow-decisions``, and recorded under ``--actor``
(over HTTP: under the token's user when it names one). Over stdio, stdout
carries the protocol alone: everything else goes to stderr.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from chatledger.adapters.cli.common import PROG, CommandError, open_existing
from chatledger.adapters.cli.options import Commands, flag, option

__all__ = ["add", "run"]

DEFAULT_ACTOR = "mcp:client"


def add(commands: Commands) -> None:
    """Declare ``mcp``."""
    commands.declare(
        "mcp",
        run,
        flag(
            "--allow-decisions",
            "offer the approve and deny tools (off: the MCP client can only read)",
        ),
        option(
            "--actor",
            default=DEFAULT_ACTOR,
            help="who the MCP client's decisions are recorded as in the audit, e.g. "
            f"user:ann or agent:reviewer (default: {DEFAULT_ACTOR}; over --http a token's "
            "user comes first)",
        ),
        flag("--http", "serve streamable HTTP at http://HOST:PORT/mcp instead of stdio"),
        option("--host", default="127.0.0.1", help="with --http: interface (default: 127.0.0.1)"),
        option("--port", type=int, default=8001, help="with --http: port (default: 8001)"),
        option(
            "--token-file",
            metavar="PATH",
            help="with --http: the bearer tokens, as for 'serve' (TOKEN=TENANT[:USER] lines; "
            "also $CHATLEDGER_TOKENS and $CHATLEDGER_TOKEN_FILE)",
        ),
        flag("--no-auth", "with --http: serve --tenant to anyone, without a token"),
        option(
            "--allowed-host",
            action="append",
            metavar="NAME",
            help="with --http: a Host name to answer to besides --host (repeatable)",
        ),
        option(
            "--log-level",
            default="warning",
            choices=["critical", "error", "warning", "info", "debug"],
            help="with --http: server log level (default: warning)",
        ),
        help="serve the store to MCP clients (stdio, or streamable HTTP with --http)",
        description="Run an MCP server over the store until its client disconnects (stdio) "
        "or until interrupted (--http). Tools: list_conversations, search_conversations, "
        "read_transcript (ui or a model API's format), read_audit, list_pending_approvals, "
        "verify; approve and deny with --allow-decisions.",
        epilog=f"Example (an MCP client's server command): {PROG} mcp --url sqlite:///chat.db "
        "--allow-decisions --actor user:ann",
    )


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Serve the MCP tools over stdio, or over HTTP with ``--http``."""
    try:
        from chatledger.adapters.mcp.server import build_server
    except ImportError as error:
        raise CommandError(str(error)) from None
    from chatledger.adapters.mcp.tools import Caller

    if not args.http and (args.token_file or args.no_auth or args.allowed_host):
        raise CommandError("--token-file, --no-auth and --allowed-host go with --http")
    with open_existing(args) as store:
        if args.http:
            return _serve_http(args, store, out)
        caller = Caller(store.tenant, args.actor, whole_store=True)
        server = build_server(store, lambda _ctx: caller, allow_decisions=args.allow_decisions)
        decisions = f"decisions as {args.actor}" if args.allow_decisions else "read only"
        print(
            f"{PROG} mcp: {store.config.display} (tenant {store.tenant}, {decisions}) on stdio",
            file=sys.stderr,
            flush=True,
        )
        server.run("stdio")
    return 0


def _serve_http(args: argparse.Namespace, store: object, out: TextIO) -> int:
    import uvicorn

    from chatledger.adapters.cli.tokens import TokenError, serve_tokens
    from chatledger.adapters.mcp.http import MCP_PATH, mcp_http_app

    try:
        tokens = serve_tokens(
            args.token_file, no_auth=args.no_auth, tenant=args.tenant, out=out, err=sys.stderr
        )
    except TokenError as error:
        raise CommandError(str(error)) from None
    app = mcp_http_app(
        store,  # type: ignore[arg-type]
        tokens,
        actor=args.actor,
        allow_decisions=args.allow_decisions,
        host=args.host,
        allowed_hosts=args.allowed_host or (),
    )
    decisions = "approve/deny on" if args.allow_decisions else "read only"
    print(
        f"{PROG} mcp at http://{args.host}:{args.port}{MCP_PATH} ({decisions}); Ctrl-C to stop",
        file=out,
        flush=True,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0
