"""How the audit timeline (``timeline``) describes a chunk batch, and a message's parts, in one line."""

from __future__ import annotations

from typing import Any, Final

from chatledger.domain._timeline_text import (
    SUMMARY_LIMIT,
    _call,
    _clip,
    _Described,
    _id,
    _listed,
    _name,
    _named_call,
    _quote,
    _stream_matches,
    _stream_message_id,
    _tool,
)
from chatledger.domain.conversation import ConversationState
from chatledger.domain.events import ChunksReceived
from chatledger.domain.tool_parts import is_tool_part

# -- chunk batches ----------------------------------------------------------------


def _chunks(event: ChunksReceived, before: ConversationState) -> _Described:
    verdicts = _verdicts(event)
    retractions = dict(event.retractions)
    rows: list[dict[str, Any]] = []
    applied: list[Any] = []
    for index, chunk in enumerate(event.chunks):
        verdict, reason = verdicts.get(index, ("applied", None))
        age = event.ages_ms[index] if index < len(event.ages_ms) else None
        row = {"position": event.first_seq + index, "verdict": verdict, "ageMs": age}
        if verdict == "refused":
            row["reason"] = reason
        if index in retractions:
            row["retracts"] = retractions[index]
        row["chunk"] = chunk
        rows.append(row)
        if verdict == "applied":
            applied.append(chunk)
    replays = [row for row in rows if row["verdict"] == "replay"]
    refused = [row for row in rows if row["verdict"] == "refused"]
    digest = _chunk_digest(applied, before, event.stream_id)
    summary = _batch_summary(len(rows), digest, replays, refused)
    matches = _stream_matches(before, event.stream_id)
    details = {
        "streamId": event.stream_id,
        "messageId": _stream_message_id(before) if matches else None,
        "firstSeq": event.first_seq,
        "count": len(rows),
        "replays": len(replays),
        "refused": len(refused),
        "chunks": rows,
    }
    marks = (("replay",) if replays else ()) + (("refused",) if refused else ())
    if retractions:
        details["retracted"] = sorted({at for found in retractions.values() for at in found})
        marks += ("retracted",)
    decisions = [c for c in applied if isinstance(c, dict) and c.get("type") == _DECISION]
    if decisions:
        # An approval decided on the stream (a policy, or a durable run) is the stream actor's.
        details["approvalDecisions"] = [_decision(before, applied, c) for c in decisions]
        if any(chunk.get("approved") is False for chunk in decisions):
            marks += ("denied",)
    return summary, details, marks


_DECISION: Final = "tool-approval-response"


def _decision(
    before: ConversationState, applied: list[Any], chunk: dict[str, Any]
) -> dict[str, Any]:
    """Who decided what: the call, the answer, its reason, and whether a policy decided."""
    approval_id = chunk["approvalId"]
    requests = [
        c
        for c in applied
        if isinstance(c, dict)
        and c.get("type") == "tool-approval-request"
        and c.get("approvalId") == approval_id
    ]
    if requests:  # requested in this very batch
        call, automatic = requests[-1].get("toolCallId"), requests[-1].get("isAutomatic") is True
    else:
        call = before.approval_calls.get(approval_id)
        part = before.tool_part(call) if call is not None else None
        automatic = ((part or {}).get("approval") or {}).get("isAutomatic") is True
    return {
        "approvalId": approval_id,
        "toolCallId": call,
        "approved": chunk["approved"],
        "reason": chunk.get("reason"),
        "automatic": automatic,
    }


def _verdicts(event: ChunksReceived) -> dict[int, tuple[str, str | None]]:
    """Batch index -> (verdict, refusal reason) of each chunk that was not applied."""
    found: dict[int, tuple[str, str | None]] = {index: ("replay", None) for index in event.replays}
    for index, reason in event.refusals:  # refused wins, as in ChunksReceived.verdicts()
        found[index] = ("refused", reason)
    return found


def _batch_summary(
    count: int,
    digest: list[tuple[int, str]],
    replays: list[dict[str, Any]],
    refused: list[dict[str, Any]],
) -> str:
    head = f"{count} chunk" if count == 1 else f"{count} chunks"
    tails = []
    if replays:
        noun = "replay" if len(replays) == 1 else "replays"
        calls = list(dict.fromkeys(_chunk_field(row, "toolCallId") for row in replays))
        named = f" ({_listed(calls, 2)})" if None not in calls else ""
        tails.append(f"{len(replays)} {noun} ignored{named}")
    if refused:
        first = _clip(_refusal(refused[0]), 60)
        more = f"; +{len(refused) - 1} more" if len(refused) > 1 else ""
        tails.append(f"{len(refused)} refused ({first}{more})")
    tail = "".join(f"; {text}" for text in tails)
    body = _fit(digest, SUMMARY_LIMIT - len(head) - len(tail) - 2)
    return f"{head}: {body}{tail}" if body else f"{head}{tail}"


def _fit(items: list[tuple[int, str]], budget: int) -> str:
    """The items that fit in ``budget`` characters, most important (lowest rank) first, in order.

    Items left out are shown as "…"; a first item too long on its own is clipped.
    """
    if not items:
        return ""
    chosen: set[int] = set()
    used = 0
    for index in sorted(range(len(items)), key=lambda i: items[i][0]):
        cost = len(items[index][1]) + (2 if chosen else 0)
        if used + cost <= budget - (3 if len(chosen) + 1 < len(items) else 0):
            chosen.add(index)
            used += cost
    if not chosen:
        return _clip(items[0][1], budget)
    shown = [text for index, (_, text) in enumerate(items) if index in chosen]
    return ", ".join(shown + (["…"] if len(chosen) < len(items) else []))


def _chunk_field(row: dict[str, Any], key: str) -> Any:
    chunk = row["chunk"]
    return chunk.get(key) if isinstance(chunk, dict) else None


def _refusal(row: dict[str, Any]) -> str:
    reason = str(row.get("reason") or "no reason given")
    kind = _chunk_field(row, "type")
    return f"{kind}: {reason}" if isinstance(kind, str) else reason


class _Digest:
    """What a run of applied chunks did, item by item in order of first appearance."""

    def __init__(self, before: ConversationState, message_id: Any) -> None:
        self.before = before
        self.message_id = message_id
        """The message the stream writes, when a ``start`` may still rename it (else None)."""
        self.silent: dict[str, None] = {}
        """Kinds of the chunks not worth a mention (listed when nothing else happened)."""
        self.texts: dict[str, list[str]] = {}
        """``text``/``reasoning`` -> the deltas."""
        self.calls: dict[str, list[str]] = {}
        """toolCallId -> milestones."""
        self.names: dict[str, str] = {}
        """toolCallId -> tool name, from the batch's own chunks."""
        self.others: dict[str, int] = {}
        """label -> how many."""
        self.order: list[tuple[str, str]] = []

    def add(self, chunk: Any) -> None:
        kind = chunk.get("type") if isinstance(chunk, dict) else None
        if not isinstance(kind, str):
            return
        if kind == "start" and self.message_id is not None:
            # The audit names a new message once, with the id it keeps (the chunk's, if any).
            named = chunk.get("messageId")
            self.message_id = named if isinstance(named, str) else self.message_id
            self._other(f"start of message {_id(self.message_id)}")
        elif kind in _SILENT:
            self.silent[_id(kind)] = None
        elif kind in ("text-delta", "reasoning-delta"):
            self._text(kind.split("-")[0], chunk.get("delta"))
        elif kind in _MILESTONES and isinstance(chunk.get("toolCallId"), str):
            self._milestone(chunk, kind)
        else:
            self._other(_label(chunk, kind))

    def _text(self, key: str, delta: Any) -> None:
        if key not in self.texts:
            self.texts[key] = []
            self.order.append(("text", key))
        self.texts[key].append(delta if isinstance(delta, str) else "")

    def _milestone(self, chunk: dict[str, Any], kind: str) -> None:
        call: str = chunk["toolCallId"]
        if isinstance(chunk.get("toolName"), str):
            self.names.setdefault(call, chunk["toolName"])
        milestone = _MILESTONES[kind]
        if kind == "tool-output-available" and chunk.get("preliminary") is True:
            milestone = "preliminary output"
        if call not in self.calls:
            self.calls[call] = []
            self.order.append(("call", call))
        if milestone not in self.calls[call][-1:]:
            self.calls[call].append(milestone)

    def _other(self, label: str) -> None:
        if label not in self.others:
            self.others[label] = 0
            self.order.append(("other", label))
        self.others[label] += 1

    def items(self) -> list[tuple[int, str]]:
        """(rank, text) of each item: tool calls first, then errors, texts, the rest."""
        if not self.order:
            return [(3, ", ".join(self.silent))] if self.silent else []
        return [(self._rank(what, key), self._render(what, key)) for what, key in self.order]

    @staticmethod
    def _rank(what: str, key: str) -> int:
        if what == "call":
            return 0
        return 1 if key.startswith("error") else 2 if what == "text" else 3

    def _render(self, what: str, key: str) -> str:
        if what == "text":
            return f"{key} {_quote(''.join(self.texts[key]), 30)}"
        if what == "call":
            steps = self.calls[key]
            if len(steps) > 1:
                steps = [step for step in steps if step != "input streaming"]
            part, _ = _tool(self.before, key)
            name = self.names.get(key) or _name(part)
            return f"tool call {_named_call(name, key)} {' → '.join(steps)}"
        count = self.others[key]
        return key if count == 1 else f"{key} x{count}"


def _chunk_digest(
    applied: list[Any], before: ConversationState, stream_id: str
) -> list[tuple[int, str]]:
    stream = before.stream if _stream_matches(before, stream_id) else None
    renamable = stream is not None and not stream.continuation
    digest = _Digest(before, _stream_message_id(before) if renamable else None)
    for chunk in applied:
        digest.add(chunk)
    return digest.items()


_SILENT: Final = frozenset(
    {
        "start",
        "text-start",
        "text-end",
        "reasoning-start",
        "reasoning-end",
        "start-step",
        "finish-step",
    }
)
_MILESTONES: Final = {
    "tool-input-start": "input streaming",
    "tool-input-delta": "input streaming",
    "tool-input-available": "input ready",
    "tool-input-error": "input error",
    "tool-approval-request": "approval requested",
    "tool-output-available": "output",
    "tool-output-error": "output error",
    "tool-output-denied": "denied",
}


def _label(chunk: dict[str, Any], kind: str) -> str:
    """A short label for a chunk that is neither text nor a tool call's."""
    if kind == "finish" and isinstance(chunk.get("finishReason"), str):
        return f"finish ({_id(chunk['finishReason'])})"
    if kind == "error":
        return f"error {_quote(str(chunk.get('errorText', '')), 40)}"
    if kind in ("source-url", "source-document"):
        return "source"
    if kind == "message-metadata":
        return "metadata"
    if kind == "reset-step":
        return "step retried (its chunks retracted)"
    if kind == _DECISION:
        verb = "approved" if chunk.get("approved") is True else "denied"
        return f"approval {_id(str(chunk.get('approvalId')))} {verb} on the stream"
    return _id(kind)


# -- message parts ----------------------------------------------------------------


def _parts_digest(parts: list[Any]) -> str:
    """``"text…", file x2, tool call `x` (id) state`` for a whole message's parts."""
    texts = [p["text"] for p in parts if _is_part(p, "text") and isinstance(p.get("text"), str)]
    items = [_quote(" ".join(texts), 60)] if texts else []
    others: dict[str, int] = {}
    for part in parts:
        if not isinstance(part, dict) or part.get("type") in ("text", "step-start"):
            continue
        if is_tool_part(part):
            call = part.get("toolCallId")
            items.append(f"tool call {_call(part, call)} {_id(part.get('state'))}")
        else:
            label = _id(part.get("type"))
            others[label] = others.get(label, 0) + 1
    items += [label if n == 1 else f"{label} x{n}" for label, n in others.items()]
    return ", ".join(items)


def _is_part(part: Any, kind: str) -> bool:
    return isinstance(part, dict) and part.get("type") == kind
