"""The command line as data: each command, its options, and the options many commands share.

An ``Option`` is an argument's names and ``add_argument`` settings. Each
command module declares its commands in ``Commands`` with their options,
taking the shared ones from here (``CHAT``, ``AT_VERSION``,
``SEAL_KEY_FILE``, ...) and changing only what differs with ``Option.but``.
Every command takes the store options (``--url``, ``--tenant``,
``--cipher-key-file``), before or after its name. The argparse value types
are here too.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from chatledger.adapters.cli.common import DEFAULT_TENANT, KEY_ENV, KEY_FILE_ENV
from chatledger.adapters.cli.values import positive_int

if TYPE_CHECKING:
    from typing import TypeAlias

    Adder: TypeAlias = argparse.ArgumentParser | argparse._MutuallyExclusiveGroup

__all__ = [
    "AT_VERSION",
    "CALL",
    "CHAT",
    "DELAY",
    "OPERATOR",
    "OWNER",
    "POLL",
    "PROGRESS",
    "REASON",
    "RESPONDER",
    "SEAL_KEY_FILE",
    "STORE_OPTIONS",
    "STREAM_LEASE_SECONDS",
    "Command",
    "Commands",
    "OneOf",
    "Option",
    "Run",
    "TenantAction",
    "add_store_options",
    "as_json",
    "flag",
    "option",
]

Run = Callable[[argparse.Namespace, TextIO], int]
"""What runs a command: the parsed arguments and standard output in, the exit status out."""


@dataclass(frozen=True)
class Option:
    """One argument of a command: its names (or positional name) and its ``add_argument`` settings."""

    names: tuple[str, ...]
    settings: Mapping[str, Any]

    def but(self, **changes: Any) -> Option:
        """The same option with some settings changed (a command's own help or default)."""
        return Option(self.names, {**self.settings, **changes})

    def add_to(self, parser: Adder) -> None:
        """Add the argument to ``parser``."""
        parser.add_argument(*self.names, **self.settings)


@dataclass(frozen=True)
class OneOf:
    """Options that exclude each other; with ``required``, exactly one of them is given."""

    options: Sequence[Option]
    required: bool = False

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        """Add the options to ``parser`` as a mutually exclusive group."""
        group = parser.add_mutually_exclusive_group(required=self.required)
        for spec in self.options:
            spec.add_to(group)


def option(*names: str, **settings: Any) -> Option:
    """An option (or a positional argument) with ``add_argument``'s settings."""
    return Option(names, settings)


def flag(name: str, help: str) -> Option:
    """An on/off option (``store_true``)."""
    return option(name, action="store_true", help=help)


def as_json(what: str) -> Option:
    """``--json``: print ``what`` as JSON instead of lines for people."""
    return flag("--json", f"print {what} as JSON")


@dataclass(frozen=True)
class Command:
    """One command as data: its name, what runs it, its options and its help."""

    name: str
    run: Run
    options: Sequence[Option | OneOf]
    help: str
    description: str
    epilog: str | None = None
    store: bool = True
    """Whether it takes the store options (a command that reads a file only does not)."""

    def add_to(self, commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        """Add the command's parser to ``commands``: the store options first, then its own."""
        parser = commands.add_parser(
            self.name, help=self.help, description=self.description, epilog=self.epilog
        )
        if self.store:
            add_store_options(parser, suppress=True)
        for spec in self.options:
            spec.add_to(parser)
        parser.set_defaults(command=self.run)


class Commands:
    """The commands the command modules declare, added to the parser in the order it lists them."""

    def __init__(self) -> None:
        self._declared: dict[str, Command] = {}

    def declare(
        self,
        name: str,
        run: Run,
        *options: Option | OneOf,
        help: str,
        description: str,
        epilog: str | None = None,
        store: bool = True,
    ) -> None:
        """Declare the command ``name``, run by ``run``, with ``options`` after the store options."""
        if name in self._declared:
            raise ValueError(f"the command {name!r} is declared twice")
        self._declared[name] = Command(name, run, options, help, description, epilog, store)

    def add_to(self, parser: argparse.ArgumentParser, listed: Sequence[str]) -> None:
        """Add every command to ``parser``, in the order of ``listed`` (which names each once)."""
        if sorted(listed) != sorted(self._declared):
            raise ValueError(f"listed {sorted(listed)}, declared {sorted(self._declared)}")
        commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
        for name in listed:
            self._declared[name].add_to(commands)


class TenantAction(argparse.Action):
    """``--tenant``: stores the value and notes that it was given (``tenant_given``)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        namespace.tenant_given = True  # retain scopes by the tenant only when it was given


# -- the store options, which every command takes -------------------------------------------

STORE_OPTIONS = (
    option(
        "--url",
        help="store URL: sqlite:///path/file.db, postgresql://user@host:5432/db or memory:// "
        "(default: $CHATLEDGER_URL, else sqlite:///./chatledger.db)",
    ),
    option(
        "--tenant",
        action=TenantAction,
        default=DEFAULT_TENANT,
        help=f"tenant the conversations belong to (default: {DEFAULT_TENANT})",
    ),
    option(
        "--cipher-key-file",
        metavar="FILE",
        help="file holding the store's encryption key (default: $CHATLEDGER_CIPHER_KEY, else "
        "the file $CHATLEDGER_CIPHER_KEY_FILE names; never give the key itself on the command "
        "line, where every local user can read it)",
    ),
)


def add_store_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """The store options on the main parser, or (``suppress``) on a command's."""
    # On the command they default to SUPPRESS so they do not erase the value
    # given before the command name.
    for spec in STORE_OPTIONS:
        (spec.but(default=argparse.SUPPRESS) if suppress else spec).add_to(parser)


# -- options several commands take ----------------------------------------------------------

CHAT = option("chat", metavar="CHAT", help="chat id")
CALL = option("call", metavar="CALL", help="tool call id")
AT_VERSION = option("--at-version", type=positive_int, metavar="N", help="as of event version N")
OPERATOR = option("--actor", required=True, help="who acts, as recorded in the audit")
"""``--actor`` of the operator commands that change what is kept (erase, redact)."""
REASON = option("--reason", required=True, help="why (recorded in the audit)")
SUBJECT = option("--subject", metavar="USER", help="a user id, as the audit names them")
"""``--subject`` of ``erase`` and ``export``: a data subject (the actor of their events)."""
PROGRESS = flag(
    "--progress", "show progress on stderr even when it is not a terminal (on one it always shows)"
)
"""``--progress`` of the long operations (rebuild, verify, export, retain, stats)."""
POLL = option(
    "--poll",
    type=float,
    default=0.5,
    metavar="SECONDS",
    help="how long to wait between checks for new events (default: 0.5)",
)
SEAL_KEY_FILE = option(
    "--seal-key-file",
    metavar="PATH",
    help=f"file holding the seal key (default: ${KEY_FILE_ENV}, else the secret in "
    f"${KEY_ENV}); an HMAC secret of 16+ bytes or a PEM Ed25519 key",
)
RESPONDER = option(
    "--responder",
    default="demo",
    metavar="demo|MODULE:NAME",
    help="what answers: 'demo' (the recorded demo turn; the default), or a Python object "
    "MODULE:NAME that is a responder, a pydantic_ai.Agent, or a function returning one",
)
OWNER = option(
    "--owner",
    default=None,
    metavar="NAME",
    help="the owner name it works as: it starts conversations owned by NAME and continues only "
    "those and the conversations owned by 'any' (default: responder:<the responder's actor>, "
    "e.g. responder:agent:ops-assistant for the demo)",
)
DELAY = option(
    "--delay",
    type=float,
    default=0.05,
    metavar="SECONDS",
    help="pause between the demo responder's chunks, to look like a model (default: 0.05)",
)
STREAM_LEASE_SECONDS = option(
    "--stream-lease-seconds",
    type=float,
    default=None,
    metavar="SECONDS",
    help="how long an answer's stream stays open with nothing written to it: a live "
    "writer renews it, and the stream of a writer that died (a killed server) is closed "
    "as 'interrupted' once it runs out, so resumes end and new turns are accepted "
    "(default: $CHATLEDGER_STREAM_LEASE_SECONDS, else 30)",
)
"""For the commands that write answers (serve, worker)."""
