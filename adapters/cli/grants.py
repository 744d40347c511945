"""Standing approval grants from the shell: ``grant`` (approve, and don't ask again), ``grants``, ``revoke-grant``.

``chatledger grant CHAT CALL`` approves the call as ``approve`` does and
gives a grant for what ``--scope`` names: ``input`` (the default: this tool
with exactly this input), ``tool`` or ``conversation``; later calls it
covers are approved automatically, recorded as ``grant:<id>``.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, TextIO

from chatledger.adapters.cli.common import PROG, open_existing
from chatledger.adapters.cli.options import CALL, CHAT, Commands, as_json, flag, option

if TYPE_CHECKING:
    from datetime import datetime

    from chatledger.domain.grants import Grant

__all__ = ["add", "grant", "grants", "revoke_grant"]

_ACTOR = option(
    "--actor", default="user:cli", help="who acts, as recorded with the grant (default: user:cli)"
)


def add(commands: Commands) -> None:
    """Declare ``grant``, ``grants`` and ``revoke-grant``."""
    commands.declare(
        "grant",
        grant,
        CHAT,
        CALL,
        option(
            "--scope",
            choices=("input", "tool", "conversation"),
            default="input",
            help="what later calls the grant approves: 'input' this tool with exactly this "
            "input (default), 'tool' this tool with any input, 'conversation' any call here",
        ),
        option(
            "--for",
            dest="for_seconds",
            type=float,
            metavar="SECONDS",
            help="how long the grant lasts (default: until revoked)",
        ),
        flag("--this-conversation", "keep an 'input' or 'tool' grant to this conversation"),
        option("--reason", help="why (recorded with the approval and the grant)"),
        _ACTOR,
        as_json("the grant"),
        help="approve a tool call and don't ask again for the same (a standing grant)",
        description="Approve tool call CALL of conversation CHAT, as 'approve' does, and give a "
        "standing grant: later calls it covers are approved automatically, recorded with the "
        "grant's id, who gave it and why.",
        epilog=f"Example: {PROG} grant chat-1 call_1 --scope tool --for 3600 --reason 'read-only'",
    )
    commands.declare(
        "grants",
        grants,
        flag("--all", "also list revoked and expired grants"),
        as_json("the grants"),
        help="list the standing approval grants",
        description="Print the tenant's live grants, oldest first (with --all, ended ones too): "
        "id, scope, what it covers, who gave it, until when, and how many calls it approved.",
    )
    commands.declare(
        "revoke-grant",
        revoke_grant,
        option("grant_id", metavar="GRANT", help="the grant's id, as 'chatledger grants' lists it"),
        option("--reason", help="why (recorded in the ledger)"),
        _ACTOR,
        as_json("the grant"),
        help="revoke a standing approval grant",
        description="Revoke grant GRANT: from now on it approves nothing.",
    )


def grant(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger grant``: approve the call and give the grant."""
    with open_existing(args) as store:
        given = store.grants.approve(
            args.chat, tool_call_id=args.call, scope=args.scope, for_seconds=args.for_seconds,
            actor=args.actor, reason=args.reason, any_conversation=not args.this_conversation,
        )  # fmt: skip
        _print([given], store.grants.clock(), args.json, out, one=True)
    return 0


def grants(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger grants``: the grants, as lines or JSON."""
    with open_existing(args) as store:
        _print(store.grants.list(include_ended=args.all), store.grants.clock(), args.json, out)
    return 0


def revoke_grant(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger revoke-grant``: the grant, revoked."""
    with open_existing(args) as store:
        revoked = store.grants.revoke(args.grant_id, actor=args.actor, reason=args.reason)
        _print([revoked], store.grants.clock(), args.json, out, one=True)
    return 0


def _print(
    found: list[Grant], now: datetime, as_json: bool, out: TextIO, *, one: bool = False
) -> None:
    if as_json:
        document = [g.to_json(now) for g in found]
        print(json.dumps(document[0] if one else document, indent=2, ensure_ascii=False), file=out)
        return
    if not found:
        print("no grants", file=out)
    for g in found:
        covers = {
            "input": f"{g.tool_name}(the input of digest {g.input_digest[:23]}…)"
            if g.input_digest
            else f"{g.tool_name}({json.dumps(g.input, ensure_ascii=False)[:80]})",
            "tool": f"{g.tool_name}(any input)",
            "conversation": f"{g.tool_name or 'any tool'}",
        }[g.scope]
        where = f" in {g.chat_id}" if g.chat_id else ""
        until = g.expires_at.isoformat() if g.expires_at else "revoked"
        print(
            f"{g.grant_id} [{g.status(now)}] {g.scope}: {covers}{where}; by {g.actor}"
            f"{f' ({g.reason})' if g.reason else ''}; until {until}; used {g.uses}x",
            file=out,
        )
        for chat_id, call_id, at in g.recent:
            print(f"  approved {call_id} in {chat_id} at {at.isoformat()}", file=out)
