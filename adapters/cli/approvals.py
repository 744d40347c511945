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
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from collections.abc import Callable

    from chatledger.adapters.store import ActionResult, ConversationStore
    from chatledger.domain.continuation import ConversationStatus

__all__ = ["add_approval_commands", "render_status"]

_PROG = "chatledger"


def add_approval_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    subparser: Callable[..., argparse.ArgumentParser],
    open_existing: Callable[[argparse.Namespace], ConversationStore],
) -> None:
    """Register the five commands (``subparser`` adds the store options; ``open_existing`` opens)."""
    status = subparser(
        commands,
        "status",
        "say where a conversation's turn stands and what it waits on",
        "Print the turn's status (idle, streaming, awaiting-approval, awaiting-tool-output, "
        "ready-to-continue), how the last stream ended, and each tool call it waits on with the "
        "command that answers it.",
    )
    status.add_argument("chat", metavar="CHAT", help="chat id")
    status.add_argument("--json", action="store_true", help="print the status as JSON")
    status.set_defaults(command=lambda args, out: _status(args, out, open_existing))

    inbox = subparser(
        commands,
        "inbox",
        "list the tool calls awaiting approval across conversations",
        "Print every tool call awaiting a human's approval in the tenant's conversations, "
        "oldest first: chat, call id, tool, input and how long it has waited.",
    )
    inbox.add_argument("--json", action="store_true", help="print the inbox as JSON")
    inbox.set_defaults(command=lambda args, out: _inbox(args, out, open_existing))

    for name, approved in (("approve", True), ("deny", False)):
        verb = "approve" if approved else "deny"
        parser = subparser(
            commands,
            name,
            f"{verb} a tool call awaiting approval",
            f"{verb.capitalize()} the tool call CALL of conversation CHAT (its id, as "
            f"'{_PROG} status CHAT' shows it). The same answer again records nothing; the "
            "other answer is refused."
            + (" A denial's --reason is what the model is told." if not approved else ""),
        )
        parser.add_argument("chat", metavar="CHAT", help="chat id")
        parser.add_argument("call", metavar="CALL", help="tool call id")
        parser.add_argument("--reason", help="why (recorded in the audit; told to the model)")
        _add_answer_options(parser)
        parser.set_defaults(
            command=lambda args, out, approved=approved: _respond(
                args, out, approved, open_existing
            )
        )

    output = subparser(
        commands,
        "tool-output",
        "give a tool call's result (or its error)",
        "Record the result of tool call CALL of conversation CHAT, as a client that ran the tool "
        "does: --json VALUE (any JSON), or --error TEXT for a failed call. A call that already has "
        "a result keeps it.",
        epilog=f"Example: {_PROG} tool-output chat-1 call_1 --json '{{\"temperature\": 21}}'",
    )
    output.add_argument("chat", metavar="CHAT", help="chat id")
    output.add_argument("call", metavar="CALL", help="tool call id")
    given = output.add_mutually_exclusive_group(required=True)
    given.add_argument("--json", dest="output_json", metavar="VALUE", help="the result, as JSON")
    given.add_argument("--error", metavar="TEXT", help="the call failed: this error text")
    _add_answer_options(output)
    output.set_defaults(command=lambda args, out: _tool_output(args, out, open_existing))


def _add_answer_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--actor",
        default="user:cli",
        help="who answers, as recorded in the audit (default: user:cli)",
    )
    parser.add_argument(
        "--no-continue",
        action="store_true",
        help="do not queue a continuation of the turn when this answer completes it",
    )


def _status(
    args: argparse.Namespace,
    out: TextIO,
    open_existing: Callable[[argparse.Namespace], ConversationStore],
) -> int:
    with open_existing(args) as store:
        status = store.status(args.chat)
    if args.json:
        print(json.dumps(status.to_json(), indent=2, ensure_ascii=False), file=out)
    else:
        print(render_status(args.chat, status), file=out)
    return 0


def render_status(chat: str, status: ConversationStatus) -> str:
    """The status as lines, with the command that answers each call waited on."""
    lines = [f"conversation {chat!r}: {status.status}"]
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
            lines.append(f"    answer: {_PROG} approve {chat} {call.tool_call_id}")
            lines.append(f"        or: {_PROG} deny {chat} {call.tool_call_id} --reason TEXT")
        else:
            lines.append(f"    answer: {_PROG} tool-output {chat} {call.tool_call_id} --json VALUE")
    if status.status == "ready-to-continue":
        request = status.continuation_request
        lines.append(
            "  every tool call is answered; the model's continuation is "
            + (f"queued (request {request})" if request else "not queued yet")
        )
    return "\n".join(lines)


def _inbox(
    args: argparse.Namespace,
    out: TextIO,
    open_existing: Callable[[argparse.Namespace], ConversationStore],
) -> int:
    with open_existing(args) as store:
        pending = store.pending_approvals()
    if args.json:
        listed = [
            {
                "chatId": item.chat_id,
                "toolCallId": item.tool_call_id,
                "toolName": item.tool_name,
                "input": item.input,
                "approvalId": item.approval_id,
                "messageId": item.message_id,
                "requestedAt": item.requested_at.isoformat(),
            }
            for item in pending
        ]
        print(json.dumps(listed, indent=2, ensure_ascii=False), file=out)
        return 0
    if not pending:
        print(f"no tool call awaits approval (tenant {args.tenant!r})", file=out)
        return 0
    for item in pending:
        print(
            f"{item.chat_id}  {item.tool_call_id}  {item.tool_name}({_short(item.input)})  "
            f"waiting {_age(item.age_seconds)}",
            file=out,
        )
    print(
        f"\n{len(pending)} awaiting approval; answer with: {_PROG} approve|deny CHAT CALL",
        file=out,
    )
    return 0


def _respond(
    args: argparse.Namespace,
    out: TextIO,
    approved: bool,
    open_existing: Callable[[argparse.Namespace], ConversationStore],
) -> int:
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


def _tool_output(
    args: argparse.Namespace,
    out: TextIO,
    open_existing: Callable[[argparse.Namespace], ConversationStore],
) -> int:
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
