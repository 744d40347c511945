"""The human-in-the-loop commands: ``status``, ``inbox``, ``approve``, ``deny``, ``tool-output``.

A turn paused on tool calls is answered from the shell as an app would over
HTTP: ``chatledger inbox`` lists every call awaiting approval, ``chatledger
status CHAT`` says what one conversation waits on, ``approve``/``deny`` answer
an approval (with the actor recorded in the audit) and ``tool-output`` gives
a call's result. An answer that completes the tool batch queues a
continuation, as the store does by default; ``--no-continue`` leaves it to
the caller.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from chatledger.adapters.cli.common import PROG, open_existing
from chatledger.adapters.cli.options import CALL, CHAT, Commands, OneOf, as_json, flag, option

if TYPE_CHECKING:
    from chatledger.adapters.store import ActionResult
    from chatledger.domain.continuation import ConversationStatus

__all__ = ["add", "approve", "deny", "inbox", "render_status", "status", "tool_output"]

_ANSWER_OPTIONS = (
    option(
        "--actor",
        default="user:cli",
        help="who answers, as recorded in the audit (default: user:cli)",
    ),
    flag(
        "--no-continue",
        "do not queue a continuation of the turn when this answer completes it",
    ),
)
"""What every answer takes: who answers, and whether a completed turn continues."""


def add(commands: Commands) -> None:
    """Declare ``status``, ``inbox``, ``approve``, ``deny`` and ``tool-output``."""
    commands.declare(
        "status",
        status,
        CHAT,
        as_json("the status"),
        help="say where a conversation's turn stands and what it waits on",
        description="Print the turn's status (idle, streaming, awaiting-approval, "
        "awaiting-tool-output, ready-to-continue), how the last stream ended, and each tool "
        "call it waits on with the command that answers it.",
    )
    commands.declare(
        "inbox",
        inbox,
        as_json("the inbox"),
        flag(
            "--automatic",
            "with --json: print {approvals, automatic} (as GET /api/approvals), automatic "
            "being the calls standing grants approved lately",
        ),
        help="list the tool calls awaiting approval across conversations",
        description="Print every tool call awaiting a human's approval in the tenant's "
        "conversations, oldest first: chat, call id, tool, input and how long it has waited; "
        "then the calls standing grants approved lately (newest first, each naming its grant, "
        "who gave it and why); then the continuation requests not yet taken, with their owner "
        "and age.",
    )
    for name, run in (("approve", approve), ("deny", deny)):
        commands.declare(
            name,
            run,
            CHAT,
            CALL,
            option("--reason", help="why (recorded in the audit; told to the model)"),
            *_ANSWER_OPTIONS,
            help=f"{name} a tool call awaiting approval",
            description=f"{name.capitalize()} the tool call CALL of conversation CHAT (its id, "
            f"as '{PROG} status CHAT' shows it). The same answer again records nothing; the "
            "other answer is refused."
            + (" A denial's --reason is what the model is told." if name == "deny" else ""),
        )
    commands.declare(
        "tool-output",
        tool_output,
        CHAT,
        CALL,
        OneOf(
            (
                option("--json", dest="output_json", metavar="VALUE", help="the result, as JSON"),
                option("--error", metavar="TEXT", help="the call failed: this error text"),
            ),
            required=True,
        ),
        *_ANSWER_OPTIONS,
        help="give a tool call's result (or its error)",
        description="Record the result of tool call CALL of conversation CHAT, as a client that "
        "ran the tool does: --json VALUE (any JSON), or --error TEXT for a failed call. A call "
        "that already has a result keeps it.",
        epilog=f"Example: {PROG} tool-output chat-1 call_1 --json '{{\"temperature\": 21}}'",
    )


def status(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger status``: the turn's status, as lines or JSON."""
    with open_existing(args) as store:
        found = store.status(args.chat)
    if args.json:
        print(json.dumps(found.to_json(), indent=2, ensure_ascii=False), file=out)
    else:
        print(render_status(args.chat, found), file=out)
    return 0


def render_status(chat: str, status: ConversationStatus) -> str:
    """The status as lines, with the command that answers each call waited on."""
    lines = [f"conversation {chat!r}: {status.status}", f"  owner: {status.owner}"]
    if status.last_outcome is not None:
        reason = f" ({status.last_reason})" if status.last_reason else ""
        lines.append(f"  last stream: {status.last_outcome}{reason}")
    if status.stream_id is not None:
        lines.append(f"  open stream: {status.stream_id}")
    for call in status.waiting_for:
        lines.append(
            f"  waiting on {call.tool_call_id}: {call.tool_name}({_short(call.input)}) "
            f"[{call.state}]"
        )
        if call.state == "approval-requested":
            lines.append(f"    answer: {PROG} approve {chat} {call.tool_call_id}")
            lines.append(f"        or: {PROG} deny {chat} {call.tool_call_id} --reason TEXT")
        else:
            lines.append(f"    answer: {PROG} tool-output {chat} {call.tool_call_id} --json VALUE")
    if status.status == "ready-to-continue":
        request = status.continuation_request
        lines.append(
            "  every tool call is answered; the model's continuation is "
            + (f"queued (request {request})" if request else "not queued yet")
        )
        if request and status.continuation_requested_at:
            waited = datetime.now(UTC) - datetime.fromisoformat(status.continuation_requested_at)
            lines.append(
                f"    for owner {status.owner}, waiting {_age(waited.total_seconds())}: only a "
                f"worker of that owner continues it ({PROG} owner {chat} NAME hands it over)"
            )
            if status.overdue:
                lines.append(
                    f"    OVERDUE: no worker of {status.owner} claimed it within the claim limit; "
                    "is that runtime running?"
                )
    return "\n".join(lines)


def inbox(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger inbox``: every tool call awaiting approval, oldest first."""
    with open_existing(args) as store:
        pending = store.pending_approvals()
        automatic = store.inbox.automatic_approvals()
        queued = [] if args.json else store.pending_continuations()
    if args.json:
        listed = [item.to_json() for item in pending]
        document: Any = listed
        if args.automatic:
            document = {"approvals": listed, "automatic": [a.to_json() for a in automatic]}
        print(json.dumps(document, indent=2, ensure_ascii=False), file=out)
        return 0
    if not pending:
        print(f"no tool call awaits approval (tenant {args.tenant!r})", file=out)
    for item in pending:
        print(
            f"{item.chat_id}  {item.tool_call_id}  {item.tool_name}({_short(item.input)})  "
            f"waiting {_age(item.age_seconds)}",
            file=out,
        )
    if pending:
        print(
            f"\n{len(pending)} awaiting approval; answer with: {PROG} approve|deny CHAT CALL",
            file=out,
        )
    if automatic:
        print("\napproved automatically by a standing grant (latest first):", file=out)
    for done in automatic:
        print(
            f"{done.chat_id}  {done.tool_call_id}  {done.tool_name or 'a tool'}  "
            f"by {done.actor} (given by {done.given_by})  {done.at:%Y-%m-%d %H:%M:%S} UTC",
            file=out,
        )
    if queued:
        print("\ncontinuations waiting for their owner:", file=out)
    for request in queued:
        claimed = f", claimed by {request.claimed_by}" if request.claimed_by else ""
        overdue = "  OVERDUE (its owner has not claimed it)" if request.overdue else ""
        print(
            f"{request.chat_id}  {request.request_id}  owner {request.owner}  "
            f"waiting {_age(request.age_seconds)}{claimed}{overdue}",
            file=out,
        )
    return 0


def approve(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger approve``: approve a tool call awaiting approval."""
    return _respond(args, out, approved=True)


def deny(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger deny``: deny a tool call awaiting approval (``--reason`` is told to the model)."""
    return _respond(args, out, approved=False)


def _respond(args: argparse.Namespace, out: TextIO, *, approved: bool) -> int:
    with open_existing(args) as store:
        result = store.respond_to_approval(
            args.chat,
            tool_call_id=args.call,
            approved=approved,
            reason=args.reason,
            actor=args.actor,
            auto_continue=False if args.no_continue else None,
        )
    print(_answered(args.chat, "approved" if approved else "denied", result), file=out)
    return 0


def tool_output(args: argparse.Namespace, out: TextIO) -> int:
    """``chatledger tool-output``: record a tool call's result or error."""
    from chatledger.domain.errors import InvalidInputError

    output: Any = None
    if args.output_json is not None:
        try:
            output = json.loads(args.output_json)
        except ValueError as error:
            raise InvalidInputError(f"--json is not JSON: {error}") from None
    with open_existing(args) as store:
        result = store.add_tool_output(
            args.chat,
            args.call,
            output=output,
            state="output-error" if args.error is not None else "output-available",
            error_text=args.error,
            actor=args.actor,
            auto_continue=False if args.no_continue else None,
        )
    what = "failed" if args.error is not None else "answered"
    print(_answered(args.chat, what, result), file=out)
    return 0


def _answered(chat: str, what: str, result: ActionResult) -> str:
    if not result.changed:
        return (
            f"tool call {result.tool_call_id} of {chat!r} was already answered "
            f"({result.state}); nothing recorded"
        )
    line = f"{what} tool call {result.tool_call_id} of {chat!r} (now {result.state})"
    if result.continuation_requested:
        line += "; the model's continuation is queued"
    return line


def _short(value: Any, width: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
