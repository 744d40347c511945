"""The ``seal``, ``export`` and ``verify-export`` commands, and the seal key options.

Keys never come from the command line (it shows in ``ps`` and shell history):
``--seal-key-file PATH``, else ``$CHATLEDGER_SEAL_KEY_FILE``, else
``$CHATLEDGER_SEAL_KEY`` (the secret itself). An HMAC secret is any text of
16 bytes or more; a PEM Ed25519 private key seals, its public key verifies
(needs the ``cryptography`` package).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from chatledger.domain.errors import InvalidInputError

if TYPE_CHECKING:  # imported when a command runs, so --help starts fast
    from chatledger.domain.seal import SealKey

__all__ = ["add_export", "add_key_option", "add_seal", "parse_duration", "seal_key"]

KEY_FILE_ENV = "CHATLEDGER_SEAL_KEY_FILE"
KEY_ENV = "CHATLEDGER_SEAL_KEY"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> float:
    """Seconds in ``30s``, ``10m``, ``2h`` or ``90d`` (argparse type)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*", text)
    if match is None or float(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(
            f"not a duration: {text!r} (a positive number and a unit: 30s, 10m, 2h, 90d)"
        )
    return float(match.group(1)) * _UNITS[match.group(2)]


def add_key_option(parser: argparse.ArgumentParser) -> None:
    """``--seal-key-file`` (the key never goes on the command line itself)."""
    parser.add_argument(
        "--seal-key-file",
        metavar="PATH",
        help=f"file holding the seal key (default: ${KEY_FILE_ENV}, else the secret in "
        f"${KEY_ENV}); an HMAC secret of 16+ bytes or a PEM Ed25519 key",
    )


def seal_key(args: argparse.Namespace, *, required: bool) -> SealKey | None:
    """The seal key from ``--seal-key-file`` or the environment (None if none and not required)."""
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


def add_seal(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    subparser: Callable[..., argparse.ArgumentParser],
    open_store: Callable[[argparse.Namespace], Any],
) -> None:
    """Register ``chatledger seal``."""
    parser = subparser(
        commands,
        "seal",
        "sign a checkpoint over every conversation's chain head",
        "Record a seal: every conversation's current chain head (version and hash), under a "
        "Merkle root signed with the operator's key. 'chatledger verify' then detects whole "
        "conversations deleted, tails cut off and chains rewritten since. Prints the seal's "
        "digest: keep it somewhere else too. With --every, seals again at that interval until "
        "interrupted (Ctrl-C or SIGTERM).",
    )
    add_key_option(parser)
    parser.add_argument(
        "--every",
        type=parse_duration,
        metavar="DURATION",
        help="keep sealing at this interval (30s, 10m, 1h, 1d) until interrupted",
    )

    def run(args: argparse.Namespace, out: TextIO) -> int:
        key = seal_key(args, required=True)
        assert key is not None
        stop = threading.Event()
        if args.every:
            signal.signal(signal.SIGTERM, lambda *_: stop.set())
        with open_store(args) as store, contextlib.suppress(KeyboardInterrupt):
            while True:
                seal = store.seal(key)
                print(
                    f"seal {seal.seq}: {seal.conversations:,} conversation(s) at "
                    f"{seal.sealed_at}, {seal.algorithm} key {seal.key_id}, digest {seal.digest}",
                    file=out,
                    flush=True,
                )
                if not args.every or stop.wait(args.every):
                    break
        return 0

    parser.set_defaults(command=run)


def add_export(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    subparser: Callable[..., argparse.ArgumentParser],
    open_store: Callable[[argparse.Namespace], Any],
) -> None:
    """Register ``chatledger export`` and ``chatledger verify-export``."""
    parser = subparser(
        commands,
        "export",
        "write a conversation as a verifiable bundle (JSON Lines)",
        "Write the conversation (or its state at --at-version) as a self-contained bundle: "
        "its events, their hash chain and the newest seal covering it (seal first). "
        "'chatledger verify-export' checks the bundle offline, with no store.",
    )
    parser.add_argument("chat", metavar="CHAT", help="the conversation's chat id")
    parser.add_argument("--at-version", type=int, metavar="N", help="export versions 1..N only")
    parser.add_argument(
        "--output", "-o", metavar="FILE", help="write the bundle here (default: stdout)"
    )

    def export(args: argparse.Namespace, out: TextIO) -> int:
        with open_store(args) as store:
            if args.output is None:
                store.export(args.chat, out, at_version=args.at_version)
                return 0
            with open(args.output, "w", encoding="ascii", newline="\n") as file:
                lines = store.export(args.chat, file, at_version=args.at_version)
        print(f"wrote {lines} lines to {args.output}", file=out)
        return 0

    parser.set_defaults(command=export)

    checker = commands.add_parser(
        "verify-export",
        help="check an exported bundle offline (exit 1 if anything differs)",
        description="Check a bundle written by 'chatledger export' with the seal key alone "
        "(an Ed25519 public key is enough): the chain recomputed from the contents, the sealed "
        "head on it, the Merkle proof to the signed root, the signature, and every line's "
        "digest. The first problem is named by its line.",
    )
    checker.add_argument("file", metavar="FILE", help="the bundle")
    add_key_option(checker)

    def verify_export(args: argparse.Namespace, out: TextIO) -> int:
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

    checker.set_defaults(command=verify_export)
