"""What standing grants add to a turn that ends on a call awaiting approval, on SQLite.

Each round records 150 such turns with ``ingest`` (a conversation each) and
prints milliseconds per turn: without the close hook, then with it and five
live grants that cover none of the calls (the lookup runs, approves nothing).
Three rounds each; run on a quiet machine and read the spread.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from typing import Any

from chatledger import ConversationStore


def turn(call: str) -> list[dict[str, Any]]:
    """A turn that ends on ``search`` awaiting approval."""
    return [
        {"type": "start"},
        {"type": "start-step"},
        {"type": "tool-input-start", "toolCallId": call, "toolName": "search"},
        {
            "type": "tool-input-available",
            "toolCallId": call,
            "toolName": "search",
            "input": {"q": call},
        },
        {"type": "tool-approval-request", "approvalId": "a" + call, "toolCallId": call},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "tool-calls"},
    ]


def one_round(hook: bool, turns: int = 150) -> float:
    """Milliseconds per turn in a fresh SQLite store."""
    folder = tempfile.mkdtemp()
    store = ConversationStore.open(f"sqlite:///{folder}/bench.db")
    if not hook:
        store._services.streams.after_close = None
    else:
        for i in range(5):
            store.grants.give(
                scope="input", tool_name="search", input={"q": f"other{i}"}, actor="user:a"
            )
    user = {"id": "u", "role": "user", "parts": [{"type": "text", "text": "x"}]}
    start = time.perf_counter()
    for i in range(turns):
        chat = f"c{i}"
        store.start_conversation(chat, actor="user:a")
        store.append_message(chat, user, actor="user:a")
        store.ingest(chat, turn(chat), actor="agent:b")
    elapsed = (time.perf_counter() - start) / turns * 1000
    store.close()
    return elapsed


if __name__ == "__main__":
    for label, hook in (("without the hook", False), ("with the hook", True)):
        rounds = [one_round(hook) for _ in range(3)]
        shown = ", ".join(f"{r:.2f}" for r in rounds)
        print(f"{label}: {shown} ms/turn (median {statistics.median(rounds):.2f})")
    print("load average", ", ".join(f"{x:.1f}" for x in os.getloadavg()))
