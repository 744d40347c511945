"""Replaying a recorded conversation against another responder (a new model or prompt), for tests and CI.

``replay(store, chat_id, responder)`` re-runs the conversation turn by turn
into a new conversation and returns a ``ReplayReport`` of where the new run
diverges from the recording; ``assert_replay`` is the pytest helper.
"""

from chatledger.adapters.replay.report import ReplayReport
from chatledger.adapters.replay.runner import NO_RECORDED_RESULT, replay, replay_async
from chatledger.adapters.replay.testing import assert_replay

__all__ = ["NO_RECORDED_RESULT", "ReplayReport", "assert_replay", "replay", "replay_async"]
