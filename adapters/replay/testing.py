"""The pytest helper: replay a recorded conversation and fail the test on an unexpected divergence."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from chatledger.adapters.replay.runner import replay

if TYPE_CHECKING:
    from chatledger.adapters.replay.report import ReplayReport
    from chatledger.adapters.store.surface import Store
    from chatledger.adapters.store.turns.responder import Responder

__all__ = ["assert_replay"]


def assert_replay(
    store: Store,
    chat_id: str,
    responder: Responder,
    *,
    expect: Iterable[tuple[int, str]] = (),
    tenant: str | None = None,
    into: str | None = None,
) -> ReplayReport:
    """Replay ``chat_id`` against ``responder``; AssertionError unless it diverges exactly as ``expect`` says.

    ``expect`` lists the divergences the change is meant to make, as
    ``(turn, kind)`` pairs in any order (kinds: ``domain.replay_diff.KINDS``);
    the default, none, asserts the new responder does what the recording did.
    The assertion's message is the report's summary. Returns the report.
    """
    report = replay(store, chat_id, responder, tenant=tenant, into=into)
    if sorted(report.kinds()) != sorted(expect):
        raise AssertionError(
            f"the replay diverged otherwise than expected {sorted(expect)}:\n{report.summary()}"
        )
    return report
