"""What the ``chatledger`` commands share when they run: opening the store, keys, responders, progress.

The command modules import from here (and their options from ``options``);
nothing here imports a command module, so the import order is one way:
``common`` <- ``options`` <- the command modules <- ``commands`` (the parser).
Heavy imports (the store, tqdm) happen inside the functions, so
``chatledger --help`` starts fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chatledger.adapters.responders.scripted import Responder, demo_responder
from chatledger.domain.errors import InvalidInputError

if TYPE_CHECKING:  # the store is imported when a command runs, so --help starts fast
    from tqdm import tqdm

    from chatledger.adapters.store import ConversationStore
    from chatledger.domain.seal import SealKey

__all__ = [
    "DEFAULT_TENANT",
    "KEY_ENV",
    "KEY_FILE_ENV",
    "PROG",
    "CommandError",
    "advance",
    "cipher_key",
    "is_agent",
    "is_graph",
    "load_responder",
    "open_existing",
    "open_store",
    "progress_bar",
    "read_text",
    "seal_key",
    "stop_on_sigterm",
]

PROG = "chatledger"
DEFAULT_TENANT = "default"
"""The store's default tenant (``chatledger.adapters.store.DEFAULT_TENANT``, kept equal by a test)."""
KEY_FILE_ENV = "CHATLEDGER_SEAL_KEY_FILE"
KEY_ENV = "CHATLEDGER_SEAL_KEY"


class CommandError(Exception):
    """A command cannot run as asked (unreadable file, empty input): one line, exit 1."""


def open_store(args: argparse.Namespace) -> ConversationStore:
    """The store the store options name, created if it is not there (for commands that write)."""
    from chatledger.adapters.bootstrap import StoreOptions
    from chatledger.adapters.store.store import open_store as opened

    ai_sdk = getattr(args, "ai_sdk", None)  # serve --ai-sdk; else $CHATLEDGER_AI_SDK, else 7
    lease = getattr(args, "stream_lease_seconds", None)  # serve/worker; else the environment
    if lease is not None:
        from chatledger.domain.lease import check_lease_seconds

        check_lease_seconds(lease, "--stream-lease-seconds")
    options = StoreOptions(
        tenant=args.tenant, cipher_key=cipher_key(args), ai_sdk=ai_sdk, stream_lease_seconds=lease
    )
    return opened(args.url, options)


def open_existing(args: argparse.Namespace) -> ConversationStore:
    """The store for a command that only reads: refused, creating nothing, when it is not there."""
    from chatledger.adapters.store.existing import open_existing

    return open_existing(args.url, tenant=args.tenant, cipher_key=cipher_key(args))


def cipher_key(args: argparse.Namespace) -> str | None:
    """The key in ``--cipher-key-file``, if given (the store falls back to the environment)."""
    path = getattr(args, "cipher_key_file", None)
    if not path:
        return None
    try:
        return Path(path).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise CommandError(f"cannot read the cipher key file {path!r}: {error}") from None


def seal_key(args: argparse.Namespace, *, required: bool) -> SealKey | None:
    """The seal key from ``--seal-key-file`` or the environment (None if none and not required).

    Keys never come from the command line (it shows in ``ps`` and shell
    history): ``--seal-key-file PATH``, else ``$CHATLEDGER_SEAL_KEY_FILE``, else
    ``$CHATLEDGER_SEAL_KEY`` (the secret itself). An HMAC secret is any text of
    16 bytes or more; a PEM Ed25519 private key seals, its public key verifies
    (needs the ``cryptography`` package).
    """
    from chatledger.domain.seal import SealKey

    path = getattr(args, "seal_key_file", None) or os.environ.get(KEY_FILE_ENV)
    if path:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as error:
            raise InvalidInputError(
                f"cannot read the seal key file {path!r} (--seal-key-file / ${KEY_FILE_ENV}): "
                f"{error.strerror or error}"
            ) from None
        return SealKey.from_text(text, where=f"the seal key file {path!r}")
    secret = os.environ.get(KEY_ENV)
    if secret:
        return SealKey.from_text(secret, where=f"${KEY_ENV}")
    if required:
        raise InvalidInputError(
            f"no seal key: pass --seal-key-file PATH, or set ${KEY_FILE_ENV} or ${KEY_ENV}"
        )
    return None


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
    elif is_graph(found):
        from chatledger.adapters.responders.langgraph import LangGraphResponder

        try:
            found = LangGraphResponder(found)
        except ValueError as error:
            raise CommandError(f"--responder {spec}: {error}") from None
    if not isinstance(found, Responder):
        raise CommandError(
            f"--responder {spec}: {type(found).__name__} is not a responder (it needs a "
            "respond(request) method yielding UI message chunks), a pydantic_ai.Agent nor a "
            "compiled LangGraph graph"
        )
    return found


def is_graph(value: object) -> bool:
    """Whether ``value`` is a compiled LangGraph graph (without importing LangGraph if it is absent)."""
    module = sys.modules.get("langgraph.pregel")
    return module is not None and isinstance(value, module.Pregel)


def is_agent(value: object) -> bool:
    """Whether ``value`` is a ``pydantic_ai.Agent`` (without importing Pydantic AI if it is absent)."""
    module = sys.modules.get("pydantic_ai")
    return module is not None and isinstance(value, module.Agent)


def progress_bar(
    what: str,
    unit: str,
    total: int | None = None,
    items: Iterable[Any] | None = None,
    *,
    show: bool = False,
) -> tqdm[Any]:
    """A progress bar on stderr (over ``items``, if given), shown when stderr is a terminal or ``show``.

    ``show`` is the commands' ``--progress`` (e.g. a log file, a CI job, ``2>&1 | tee``).
    """
    from tqdm import tqdm

    hide = False if show else None  # None: tqdm hides itself when stderr is not a terminal
    return tqdm(items, total=total, desc=what, unit=unit, file=sys.stderr, disable=hide)


def advance(bar: tqdm[Any], done: int, total: int) -> None:
    """Move ``bar`` to ``done`` of ``total`` (the store's progress callbacks report both)."""
    bar.total = total
    bar.update(done - bar.n)


def stop_on_sigterm() -> threading.Event:
    """An event set on SIGTERM, for the commands that run until stopped (Ctrl-C or SIGTERM)."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    return stop


def read_text(name: str) -> str:
    """A file's UTF-8 text (``-``: standard input)."""
    try:
        data = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except OSError as error:
        raise CommandError(f"cannot read {name}: {error.strerror or error}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CommandError(f"{name} is not UTF-8 text (byte {error.start})") from None
