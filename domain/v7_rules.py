"""The approval and interruption rules a conversation follows when it speaks AI SDK 7.

- A call awaits approval while it is ``approval-requested`` in an assistant
  message after the latest user message: a new user message supersedes older
  pending approvals (v7's converter drops them; answering them changes nothing).
- A stream that finished with ``finishReason: "interrupted"`` halts its
  message: no continuation is requested for it, and a late tool output or
  approval for one of its calls is recorded but changes nothing, until a later
  stream for the same message finishes normally (v7's ``AbstractChat`` does not
  send automatically for an interrupted message either).
"""

from __future__ import annotations

from chatledger.domain.conversation import ConversationState

__all__ = ["halts", "in_halted_message", "is_superseded", "last_user_index"]


def last_user_index(state: ConversationState) -> int:
    """Index of the latest user message (-1 when there is none)."""
    for index in range(len(state.messages) - 1, -1, -1):
        if state.messages[index]["role"] == "user":
            return index
    return -1


def is_superseded(state: ConversationState, tool_call_id: str) -> bool:
    """v7: the call's approval request was left behind by a later user message."""
    if state.ai_sdk != 7:
        return False
    where = state.tool_index.get(tool_call_id)
    return where is not None and where[0] < last_user_index(state)


def in_halted_message(state: ConversationState, tool_call_id: str) -> bool:
    """v7: the call belongs to a message whose last stream was interrupted."""
    if state.ai_sdk != 7 or state.halted_message is None:
        return False
    where = state.tool_index.get(tool_call_id)
    return where is not None and state.messages[where[0]]["id"] == state.halted_message


def halts(state: ConversationState) -> bool:
    """Whether the open stream ends its message interrupted (``finishReason: "interrupted"``)."""
    stream = state.stream
    return state.ai_sdk == 7 and stream is not None and stream.fold.finish_reason == "interrupted"
