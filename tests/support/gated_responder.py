"""A demo responder whose continuation stops after its first words until a gate file exists.

The browser tests serve with ``--responder tests.support.gated_responder:responder``
and ``CHATLEDGER_TEST_GATE=<folder>``: a page can then be checked while the
answer is half written (streaming, live), and the test opens the gate (creates
the file ``<folder>/<chat id>``) to let it finish. The interleaving is forced,
not timed.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from chatledger.adapters.responders.scripted import DemoResponder, ResponderRequest

GATE_ENV = "CHATLEDGER_TEST_GATE"


class GatedDemoResponder(DemoResponder):
    """The demo turn; the continuation waits for the gate after its first text delta."""

    def __init__(self, gates: Path) -> None:
        super().__init__(delay=0.0)
        self.gates = gates

    def respond(self, request: ResponderRequest) -> AsyncIterator[Any]:
        """The demo answer; a continuation waits for ``<gates>/<chat id>`` after its first words."""
        answer = super().respond(request)
        if request.trigger != "continuation":
            return answer
        return self._gated(answer, self.gates / request.chat_id)

    @staticmethod
    async def _gated(answer: AsyncIterator[Any], gate: Path) -> AsyncIterator[Any]:
        texts = 0
        async for chunk in answer:
            if chunk.get("type") == "text-delta":
                texts += 1
                if texts == 2:
                    while not gate.exists():
                        await asyncio.sleep(0.05)  # waiting on the test's signal
            yield chunk


def responder() -> GatedDemoResponder:
    """The responder, gated by the file named in ``CHATLEDGER_TEST_GATE``."""
    return GatedDemoResponder(Path(os.environ[GATE_ENV]))
