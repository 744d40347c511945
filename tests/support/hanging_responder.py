"""A responder that starts its answer, then hangs forever when the user says "hang".

For ``chatledger serve --responder tests.support.hanging_responder:responder``:
the kill tests stop such a server (SIGKILL) while its answer is half written,
so the stream is left open by a writer that is gone. Any other user text gets
a short, finished answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from chatledger.adapters.responders.scripted import ResponderRequest

__all__ = ["PARTIAL", "responder"]

Chunk = dict[str, Any]
PARTIAL = "half an answer"


class _Hanging:
    def respond(self, request: ResponderRequest) -> AsyncIterator[Chunk]:
        last = request.messages[-1] if request.messages else {}
        texts = [p.get("text") for p in last.get("parts", []) if p.get("type") == "text"]
        return self._chunks(hang="hang" in texts)

    async def _chunks(self, *, hang: bool) -> AsyncIterator[Chunk]:
        yield {"type": "start"}
        yield {"type": "start-step"}
        yield {"type": "text-start", "id": "t"}
        yield {"type": "text-delta", "id": "t", "delta": PARTIAL if hang else "a whole answer"}
        if hang:
            await asyncio.Event().wait()  # never set: the process is killed meanwhile
        yield {"type": "text-end", "id": "t"}
        yield {"type": "finish-step"}
        yield {"type": "finish"}


def responder() -> _Hanging:
    """The responder (``--responder tests.support.hanging_responder:responder``)."""
    return _Hanging()
