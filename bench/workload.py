"""The fixed benchmark workload: seeded conversations of user messages and AI SDK v6 reply chunks.

Everything here is a pure function of ``(seed, conversation index)``, so any one
conversation can be regenerated alone (by the crash child, by the load check)
and is the same as in the full workload. Run ``python bench/workload.py`` to
print the workload's shape and fingerprint.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice, pairwise
from typing import Any

JSON = dict[str, Any]

DEFAULT_SEED = 20240601
DEFAULT_CONVERSATIONS = 100
DEFAULT_TURNS = 20
TEXT_DELTAS_PER_TURN = 150
TOOL_INPUT_DELTAS = 20
TOOL_EVERY = 4
"""Every 4th turn (the 4th, 8th, ...) calls a tool before its text."""

# Fingerprint of workload(100, 20, DEFAULT_SEED); run.py warns when it differs, which
# would mean the generator (or Python's seeded random) changed and results are not comparable.
EXPECTED_FINGERPRINT = "711389f454768e7bc9fa64e9e195d96314c26be48e31eef4281bdee6947810d1"

_WORD_TEXT = """
the of and to in is that it for as with was on be at by this are from or have an they
which one you had not but what all were when we there can more if out so said use each
she do how their will up other about many then them these some her would make like him
into time has look two write see number way could people than first water been call who
oil its now find long down day did get come made may part over new sound take only
little work know place year live me back give most very after thing our just name good
sentence man think say great where help through much before line right too mean old any
same tell boy follow came want show also around form three small set put end does
another well large must big even such because turn here why ask went men read need land
different home us move try kind hand picture again change off play spell air away animal
house point page letter mother answer found study still learn should world high every
near add food between own below country plant last school father keep tree never start
city earth eye light thought head under story saw left few while along might close
something seem next hard open example begin life always those both paper together got
group often run important until children side feet car mile night walk white sea began
grow took river four carry state once book hear stop without second later miss idea
enough eat face watch far really almost let above girl sometimes mountain cut young talk
soon list song being leave family database question stream message server request
response record
"""
_WORDS = _WORD_TEXT.split()

_TOOLS = ("search_docs", "lookup_order", "get_weather")


@dataclass(frozen=True)
class Turn:
    """One user message and the assistant reply streamed for it."""

    user_message: JSON
    message_id: str
    chunks: list[JSON]
    assistant_text: str
    tool_call_id: str | None = None


@dataclass(frozen=True)
class Conversation:
    """One chat: its id and its turns in order."""

    chat_id: str
    turns: list[Turn] = field(default_factory=list)

    @property
    def chunk_count(self) -> int:
        """Number of assistant stream chunks over all turns."""
        return sum(len(t.chunks) for t in self.turns)


@dataclass(frozen=True)
class WorkloadSpec:
    """Which workload to generate: ``conversations`` chats of ``turns`` turns each."""

    conversations: int = DEFAULT_CONVERSATIONS
    turns: int = DEFAULT_TURNS
    seed: int = DEFAULT_SEED

    def generate(self) -> Iterator[Conversation]:
        """Yield the conversations one at a time (the whole workload is ~100 MB as dicts)."""
        for index in range(self.conversations):
            yield conversation(index, self.turns, self.seed)

    @property
    def chunk_count(self) -> int:
        """Number of assistant stream chunks in the workload (cheap: the shape is fixed)."""
        return self.conversations * sum(_turn_chunk_count(t) for t in range(self.turns))


def _turn_chunk_count(turn_no: int) -> int:
    base = 6 + TEXT_DELTAS_PER_TURN  # start, start-step, text-start, text-end, finish-step, finish
    return base + (TOOL_INPUT_DELTAS + 5 if _has_tool(turn_no) else 0)


def _has_tool(turn_no: int) -> bool:
    return turn_no % TOOL_EVERY == TOOL_EVERY - 1


def _rng(seed: int, index: int, what: str = "") -> random.Random:
    # str seeds are hashed with SHA-512, so this does not depend on PYTHONHASHSEED.
    return random.Random(f"chatledger-bench:{seed}:{index}:{what}")


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 16))]
    if len(words) > 8 and rng.random() < 0.4:
        words[rng.randint(3, len(words) - 4)] += ","
    words[0] = words[0].capitalize()
    return " ".join(words) + rng.choice(".....?!")


def _prose(rng: random.Random, target: int) -> str:
    """English-like text of about ``target`` characters, cut at a word boundary."""
    text = ""
    while len(text) < target:
        text = f"{text} {_sentence(rng)}" if text else _sentence(rng)
    cut = text.rfind(" ", 0, target + 10)
    return text[:cut] if cut > target * 0.8 else text


def text_deltas(rng: random.Random) -> Iterator[str]:
    """Endless token-like deltas (~5 characters): words with a leading space, long ones split."""
    first = True
    while True:
        for word in _sentence(rng).split(" "):
            token = word if first else " " + word
            first = False
            while len(token) > 7:
                cut = rng.randint(3, 5)
                yield token[:cut]
                token = token[cut:]
            yield token


def _split(text: str, parts: int) -> list[str]:
    bounds = [round(i * len(text) / parts) for i in range(parts + 1)]
    return [text[a:b] for a, b in pairwise(bounds)]


def _tool_input(rng: random.Random) -> JSON:
    value: JSON = {
        "query": _prose(rng, 60).rstrip(".?!"),
        "filters": {"language": "en", "since": f"2024-{rng.randint(1, 12):02d}-01", "tags": []},
        "limit": rng.randint(3, 10),
    }
    while len(json.dumps(value)) < 190:
        value["filters"]["tags"].append(rng.choice(_WORDS))
    return value


def _tool_output(rng: random.Random) -> JSON:
    results: list[JSON] = []
    value: JSON = {"results": results, "total": 3}
    for n in range(1, 4):
        url = f"https://docs.example.com/p/{rng.randint(100, 999)}"
        results.append({"title": _prose(rng, 30), "url": url, "snippet": ""})
        # Leave room for the results still to come (~110 characters of title, url and keys).
        room = 495 - len(json.dumps(value)) - 110 * (3 - n)
        results[-1]["snippet"] = _prose(rng, max(20, room // (4 - n)))
    return value


def _tool_chunks(rng: random.Random, call_id: str) -> list[JSON]:
    name = rng.choice(_TOOLS)
    args = _tool_input(rng)
    pieces = _split(json.dumps(args), TOOL_INPUT_DELTAS)
    return [
        {"type": "tool-input-start", "toolCallId": call_id, "toolName": name},
        *({"type": "tool-input-delta", "toolCallId": call_id, "inputTextDelta": p} for p in pieces),
        {"type": "tool-input-available", "toolCallId": call_id, "toolName": name, "input": args},
        {"type": "tool-output-available", "toolCallId": call_id, "output": _tool_output(rng)},
        {"type": "finish-step"},
        {"type": "start-step"},
    ]


def reply_header(message_id: str) -> list[JSON]:
    """The chunks that open a reply, before any tool call or text."""
    return [{"type": "start", "messageId": message_id}, {"type": "start-step"}]


def _turn(rng: random.Random, index: int, turn_no: int) -> Turn:
    message_id = f"a-{index:04d}-{turn_no:03d}"
    user = {
        "id": f"u-{index:04d}-{turn_no:03d}",
        "role": "user",
        "parts": [{"type": "text", "text": _prose(rng, 200)}],
    }
    call_id = f"call_{index:04d}_{turn_no:03d}" if _has_tool(turn_no) else None
    tool = _tool_chunks(rng, call_id) if call_id else []
    text_id = f"txt-{turn_no}"
    deltas = list(islice(text_deltas(rng), TEXT_DELTAS_PER_TURN))
    chunks = [
        *reply_header(message_id),
        *tool,
        {"type": "text-start", "id": text_id},
        *({"type": "text-delta", "id": text_id, "delta": d} for d in deltas),
        {"type": "text-end", "id": text_id},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop"},
    ]
    return Turn(user, message_id, chunks, "".join(deltas), call_id)


def conversation(index: int, turns: int, seed: int = DEFAULT_SEED) -> Conversation:
    """Conversation number ``index`` of the workload, with ``turns`` turns."""
    rng = _rng(seed, index)
    return Conversation(f"chat-{index:04d}", [_turn(rng, index, t) for t in range(turns)])


def long_conversation(min_chunks: int, seed: int = DEFAULT_SEED) -> Conversation:
    """One conversation of the same shape with at least ``min_chunks`` chunks (~125 turns)."""
    index = 90_000 + min_chunks  # outside the range the main workload uses
    rng = _rng(seed, index)
    conv = Conversation(f"long-{min_chunks}")
    while conv.chunk_count < min_chunks:
        conv.turns.append(_turn(rng, index, len(conv.turns)))
    return conv


CRASH_INDEX = 80_000


def crash_conversation(earlier_turns: int, seed: int = DEFAULT_SEED) -> Conversation:
    """The crash test's chat: ``earlier_turns`` whole turns, then a last turn whose reply is cut.

    Only the last turn's user message and message id are used; its reply is
    :func:`endless_reply`.
    """
    return conversation(CRASH_INDEX, earlier_turns + 1, seed)


ENDLESS_HEADER = 3
"""Chunks before the first text delta of :func:`endless_reply`."""


def endless_reply(message_id: str, seed: int = DEFAULT_SEED) -> Iterator[JSON]:
    """A reply that never ends: ``start``, ``start-step``, ``text-start``, then text deltas."""
    yield from reply_header(message_id)
    yield {"type": "text-start", "id": "txt-crash"}
    for delta in text_deltas(_rng(seed, CRASH_INDEX, "endless")):
        yield {"type": "text-delta", "id": "txt-crash", "delta": delta}


def fingerprint(convs: Iterator[Conversation]) -> str:
    """SHA-256 over every user message and chunk, to show two runs used the same workload."""
    digest = hashlib.sha256()
    for conv in convs:
        digest.update(conv.chat_id.encode())
        for turn in conv.turns:
            for item in (turn.user_message, *turn.chunks):
                digest.update(json.dumps(item, sort_keys=True).encode())
    return digest.hexdigest()


def _describe(spec: WorkloadSpec) -> JSON:
    convs = list(spec.generate())
    turns = [t for c in convs for t in c.turns]
    deltas = [ch["delta"] for t in turns for ch in t.chunks if ch["type"] == "text-delta"]
    tool = [t for t in turns if t.tool_call_id]
    by_type = {
        kind: [ch for t in tool for ch in t.chunks if ch["type"] == kind]
        for kind in ("tool-input-available", "tool-output-available")
    }
    return {
        "conversations": len(convs),
        "turns": len(turns),
        "chunks": sum(c.chunk_count for c in convs),
        "tool_turns": len(tool),
        "mean_user_chars": sum(len(t.user_message["parts"][0]["text"]) for t in turns) / len(turns),
        "mean_delta_chars": sum(map(len, deltas)) / len(deltas),
        "mean_reply_chars": sum(len(t.assistant_text) for t in turns) / len(turns),
        "mean_tool_input_chars": sum(
            len(json.dumps(c["input"])) for c in by_type["tool-input-available"]
        )
        / max(1, len(tool)),
        "mean_tool_output_chars": sum(
            len(json.dumps(c["output"])) for c in by_type["tool-output-available"]
        )
        / max(1, len(tool)),
        "fingerprint": fingerprint(iter(convs)),
        "sample_reply": turns[0].assistant_text[:160],
    }


if __name__ == "__main__":
    json.dump(_describe(WorkloadSpec()), sys.stdout, indent=2)
    print()
