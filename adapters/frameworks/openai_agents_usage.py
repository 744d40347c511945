"""An OpenAI Agents run's token usage recorded on its session's conversation, for the usage ledger.

The Runner hands a session items, never usage: the run's usage is on its
result (``result.context_wrapper.usage``, the SDK's ``Usage``). After a run,
``record_run_usage(session, result)`` records it as ``UsageRecorded`` events
(source ``openai-agents``): one per model request when the SDK lists them
(``request_usage_entries``: the steps), else one for the whole run. Either way
the run is counted once in the ledger (``chatledger.adapters.store.usage``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chatledger.domain.usage import Tokens

if TYPE_CHECKING:
    from chatledger.adapters.frameworks.openai_agents import ChatLedgerSession

__all__ = ["record_run_usage"]


def record_run_usage(session: ChatLedgerSession, result: Any, *, model: str | None = None) -> int:
    """Record the usage of ``result`` (a ``RunResult``, or its ``Usage``) on ``session``'s conversation.

    ``model`` names the model (default: the last agent's ``model`` when it is a
    name). Returns how many usages were recorded (0 when the run reported none).
    """
    wrapper = getattr(result, "context_wrapper", None)
    usage = wrapper.usage if wrapper is not None else result
    if model is None:
        named = getattr(getattr(result, "last_agent", None), "model", None)
        model = named if isinstance(named, str) else None
    listed = [_tokens(entry) for entry in getattr(usage, "request_usage_entries", None) or []]
    steps = [tokens for tokens in listed if tokens is not None]
    whole = _tokens(usage)
    if not steps and whole is None:
        return 0
    store, chat = session.store, session.session_id
    if steps:
        for step, tokens in enumerate(steps, start=1):
            store.record_usage(
                chat, tokens, model=model, step=step, source="openai-agents",
                actor=session.actor, tenant=session.tenant,
            )  # fmt: skip
        return len(steps)
    assert whole is not None
    store.record_usage(
        chat, whole, model=model, source="openai-agents", actor=session.actor, tenant=session.tenant
    )
    return 1


def _tokens(usage: Any) -> Tokens | None:
    """The counts of an SDK ``Usage`` or ``RequestUsage`` (None: nothing reported)."""
    input_tokens = int(getattr(usage, "input_tokens", 0) or 0)
    output_tokens = int(getattr(usage, "output_tokens", 0) or 0)
    total = int(getattr(usage, "total_tokens", 0) or 0)
    if not (input_tokens or output_tokens or total):
        return None
    cached = getattr(getattr(usage, "input_tokens_details", None), "cached_tokens", 0) or 0
    reasoning = getattr(getattr(usage, "output_tokens_details", None), "reasoning_tokens", 0) or 0
    return Tokens(input_tokens, output_tokens, total or None, reasoning or None, cached or None)
