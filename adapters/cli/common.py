"""What every ``chatledger`` command shares: the store options, opening the store, errors, responders.

Command modules take ``subparser`` and ``open_existing`` from here (or as
arguments); nothing here imports a command module, so the import order is
one way: ``common`` <- the command modules <- ``commands`` (the parser).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from chatledger.adapters.cli.erasure import TenantAction
from chatledger.adapters.responders.scripted import Responder, demo_responder

if TYPE_CHECKING:  # the store is imported when a command runs, so --help starts fast
    from chatledger.adapters.store import ConversationStore

PROG = "chatledger"
DEFAULT_TENANT = "default"
"""The store's default tenant (``chatledger.adapters.store.DEFAULT_TENANT``, kept equal by a test)."""


class CommandError(Exception):
    """A command cannot run as asked (unreadable file, empty input): one line, exit 1."""


def add_store_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
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
        action=TenantAction,  # also records that it was given (retain scopes by it)
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


def subparser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    help_: str,
    description: str,
    epilog: str | None = None,
) -> argparse.ArgumentParser:
    parser = commands.add_parser(name, help=help_, description=description, epilog=epilog)
    add_store_options(parser, suppress=True)
    return parser


def open_store(args: argparse.Namespace) -> ConversationStore:
    from chatledger.adapters.store import ConversationStore

    ai_sdk = getattr(args, "ai_sdk", None)  # serve --ai-sdk; else $CHATLEDGER_AI_SDK, else 7
    lease = getattr(args, "stream_lease_seconds", None)  # serve/worker; else the environment
    if lease is not None:
        from chatledger.domain.lease import check_lease_seconds

        check_lease_seconds(lease, "--stream-lease-seconds")
    return ConversationStore.open(
        args.url,
        tenant=args.tenant,
        cipher_key=cipher_key(args),
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


def cipher_key(args: argparse.Namespace) -> str | None:
    """The key in ``--cipher-key-file``, if given (the store falls back to the environment)."""
    path = getattr(args, "cipher_key_file", None)
    if not path:
        return None
    try:
        return Path(path).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise CommandError(f"cannot read the cipher key file {path!r}: {error}") from None


def open_existing(args: argparse.Namespace) -> ConversationStore:
    """The store for a command that only reads: refused, creating nothing, when it is not there."""
    from chatledger.adapters.store.existing import open_existing

    return open_existing(args.url, tenant=args.tenant, cipher_key=cipher_key(args))


def load_responder(spec: str, delay: float) -> Responder:
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
    if not hasattr(found, "respond") and callable(found) and not is_agent(found):
        try:
            found = found()
        except Exception as error:
            raise CommandError(
                f"--responder {spec}: calling it to make the responder failed: "
                f"{type(error).__name__}: {error}"
            ) from error
    if is_agent(found):
        from chatledger.adapters.responders.pydantic_ai import PydanticAIResponder

        found = PydanticAIResponder(found)  # type: ignore[arg-type]
    if not isinstance(found, Responder):
        raise CommandError(
            f"--responder {spec}: {type(found).__name__} is not a responder (it needs a "
            "respond(request) method yielding UI message chunks) nor a pydantic_ai.Agent"
        )
    return found


def is_agent(value: object) -> bool:
    """Whether ``value`` is a ``pydantic_ai.Agent`` (without importing Pydantic AI if it is absent)."""
    module = sys.modules.get("pydantic_ai")
    return module is not None and isinstance(value, module.Agent)
