"""A paused OpenAI Agents run kept in chatledger, so its approvals show in the inbox.

The Runner keeps a pending approval in its ``RunState``, never in the
session: the session only holds the ``function_call`` items, whose parts stay
``input-available``. ``ChatLedgerSession.save_run_state(state)`` records the
pause: the calls the run waits on become ``approval-requested`` (so
``store.status(chat)`` says ``awaiting-approval`` and
``store.pending_approvals()``, the HTTP inbox and ``chatledger inbox`` list
them) and the state's JSON is kept in the metadata of the first of them
(``{"openaiRunState": {"state": ..., "calls": [...]}}``). The session's items
stay exactly as the Runner added them.

Any process can then answer (``store.respond_to_approval``, ``chatledger
approve|deny``, the HTTP route) and resume: ``load_run_state(agent)`` rebuilds
the ``RunState`` and applies the decisions recorded in chatledger (an
approval → ``state.approve``, a denial → ``state.reject`` with its reason as
the rejection message), ready for ``Runner.run(agent, state, session=...)``.
It gives None once the run has resumed (the paused calls have their outputs).

The Runner drives the turn. The session's conversations are owned by
``openai-agents``, so a continuation request an approval queues (``chatledger
approve`` without ``--no-continue``, the HTTP route, the inbox page) is never
claimed by a ``serve``/``worker`` responder: it waits, visible in ``status``,
until ``load_run_state`` retires it as the run resumes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

__all__ = ["RUN_STATE_KEY", "Decision", "apply_decisions", "mark_paused", "paused_run"]

RUN_STATE_KEY = "openaiRunState"
"""The message metadata key holding a paused run's state."""

_AWAITING = ("approval-requested", "approval-responded")


@dataclass(frozen=True)
class Decision:
    """What chatledger recorded for a call a paused run waits on."""

    approved: bool
    reason: str | None = None


def mark_paused(message: dict[str, Any], calls: list[str], record: dict[str, Any] | None) -> None:
    """Put the message's parts for ``calls`` in ``approval-requested``; keep ``record`` in its metadata."""
    for part in message["parts"]:
        if (
            part.get("type") == "dynamic-tool"
            and part.get("toolCallId") in calls
            and part.get("state") == "input-available"
        ):
            part["state"] = "approval-requested"
            part["approval"] = {"id": f"approval_{part['toolCallId']}"}
    if record is not None:
        message.setdefault("metadata", {})[RUN_STATE_KEY] = copy.deepcopy(record)


def paused_run(
    messages: list[dict[str, Any]], item_of: Any
) -> tuple[dict[str, Any], dict[str, Decision]] | None:
    """The last saved run state still waiting, with the decisions recorded for its calls.

    ``item_of`` gives the session item a message holds (or None). A run is
    still waiting while one of its calls awaits approval, is approved but has
    no output yet, or was denied and the Runner has not added its rejection
    output since.
    """
    found = None
    for index, message in enumerate(messages):
        metadata = message.get("metadata")
        if isinstance(metadata, dict) and isinstance(metadata.get(RUN_STATE_KEY), dict):
            found = (index, metadata[RUN_STATE_KEY])
    if found is None:
        return None
    start, record = found
    calls = [str(call) for call in record.get("calls", [])]
    parts = {
        part["toolCallId"]: part
        for message in messages[start:]
        for part in message["parts"]
        if part.get("type") == "dynamic-tool" and part.get("toolCallId") in calls
    }
    answered_later = {
        str(item.get("call_id"))
        for message in messages[start:]
        if (item := item_of(message)) is not None and item.get("type") == "function_call_output"
    }
    decisions: dict[str, Decision] = {}
    waiting = False
    for call in calls:
        part = parts.get(call)
        if part is None:
            continue
        state = part.get("state")
        approval = part.get("approval") if isinstance(part.get("approval"), dict) else {}
        if state in _AWAITING:
            waiting = True
            if approval.get("approved") is True:
                decisions[call] = Decision(True, approval.get("reason"))
        elif state == "output-denied" and call not in answered_later:
            waiting = True
            decisions[call] = Decision(False, approval.get("reason"))
    if not waiting:
        return None
    return record["state"], decisions


def apply_decisions(state: Any, decisions: dict[str, Decision]) -> None:
    """Apply chatledger's decisions to a rebuilt ``RunState``: approve, or reject with the reason.

    Calls with no decision yet stay interruptions.
    """
    for item in state.get_interruptions():
        decision = decisions.get(str(item.call_id))
        if decision is not None and decision.approved:
            state.approve(item)
        elif decision is not None:
            state.reject(item, rejection_message=decision.reason)
