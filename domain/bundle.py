"""Verifiable export bundles: one conversation's events, their chain and a covering seal, in JSON Lines.

Format ``chatledger-export/1``: UTF-8, one JSON object per line (sorted keys,
no spaces, ASCII), each with a ``type``:

1. ``header``: ``format``, ``tenant``, ``chat_id``, ``conversation`` (its
   UUID), ``version`` (the last event exported), ``chain_start`` (the log
   position after which every event is chained) and ``exported_at``.
2. ``event``, one per version from 1: ``version``, ``topic`` (the event
   type), ``position`` (in the store-wide log), ``link`` (hex, or null for an
   event written before chains) and ``content``: the event's JSON text exactly
   as stored (the SHA-256 of its UTF-8 bytes is the digest its link commits
   to; a leading U+0001 marks ASCII-escaped JSON).
3. ``link``, for an export at an earlier version than the seal covers: the
   later events' ``version``, ``topic``, ``digest`` and ``link`` without
   their content, so the chain can be followed to the sealed head.
4. ``seal``: the newest seal covering the conversation (``seal``: its signed
   fields and signature), the conversation's sealed ``head`` (``version``,
   ``link``) and the Merkle ``proof`` from that head to the seal's root.
5. ``end``: ``lines``, the SHA-256 (hex) of each line before it.

Verifying needs only the bundle and the seal key (an Ed25519 public key
suffices): the chain is recomputed from the contents, the sealed head found
on it, the proof followed to the signed root, the signature checked, and
each line compared with its digest. A changed byte anywhere is named by its
line. ``exported_at`` and ``position`` are covered only by the line digests,
which anyone can recompute: they are information, not evidence.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from chatledger.domain.aggregate import conversation_id
from chatledger.domain.chain import GENESIS, content_digest, link_hash
from chatledger.domain.errors import InvalidInputError
from chatledger.domain.seal import Head, Seal, SealKey, root_from_proof

__all__ = ["BUNDLE_FORMAT", "BundleReport", "encode_line", "end_line", "verify_bundle"]

BUNDLE_FORMAT = "chatledger-export/1"


def encode_line(value: dict[str, Any]) -> str:
    """One bundle line (without its newline), in the canonical JSON form."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def end_line(lines: Sequence[str]) -> str:
    """The closing line: the digest of every line before it."""
    digests = [hashlib.sha256(line.encode("ascii")).hexdigest() for line in lines]
    return encode_line({"type": "end", "lines": digests})


@dataclass
class BundleReport:
    """What ``verify_bundle`` found: the first problem (line number, from 1) or a summary."""

    problem: tuple[int, str] | None = None
    tenant: str = ""
    chat_id: str = ""
    version: int = 0
    sealed: int = 0
    """Events 1..sealed are pinned by the seal."""
    unchained: int = 0
    """Events 1..unchained were written before chains (not covered)."""
    seal: Seal | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the bundle verifies."""
        return self.problem is None

    def __str__(self) -> str:
        if self.problem is not None:
            line, what = self.problem
            return f"line {line}: {what}"
        return (
            f"chat {self.chat_id!r} (tenant {self.tenant!r}) up to version {self.version}: "
            f"verified; events 1-{self.sealed} sealed by seal {self.seal.seq if self.seal else '?'}"
            + (f"; events 1-{self.unchained} predate chains" if self.unchained else "")
        )


class _Bad(Exception):
    def __init__(self, line: int, what: str) -> None:
        super().__init__(what)
        self.line = line
        self.what = what


def verify_bundle(raw: bytes, key: SealKey) -> BundleReport:
    """Check a bundle offline with the seal key; the report names the first bad line."""
    report = BundleReport()
    try:
        _verify(raw, key, report)
    except _Bad as bad:
        report.problem = (bad.line, bad.what)
    return report


def _parse(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    parsed = []
    for number, line in enumerate(lines, start=1):
        try:
            text = line.decode("ascii")
            value = json.loads(text)
        except (UnicodeDecodeError, ValueError) as error:
            raise _Bad(number, f"not a JSON line: {error}") from None
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            raise _Bad(number, "not a bundle line (a JSON object with a 'type')")
        parsed.append((text, value))
    if not parsed:
        raise _Bad(1, "the bundle is empty")
    return parsed


def _field(value: dict[str, Any], name: str, kind: type, line: int) -> Any:
    found = value.get(name)
    if not isinstance(found, kind) or (kind is int and isinstance(found, bool)):
        raise _Bad(line, f"field {name!r} is missing or not a {kind.__name__}")
    return found


def _verify(raw: bytes, key: SealKey, report: BundleReport) -> None:
    lines = _parse(raw)
    conversation, chain_start = _header(lines[0][1], report)
    links: dict[int, bytes] = {}
    previous: bytes | None = None
    seal_at = len(lines) + 1
    for number, (_, value) in enumerate(lines[1:], start=2):
        kind = value["type"]
        if kind not in ("event", "link"):
            seal_at = number
            break
        version = _field(value, "version", int, number)
        expected = max(links, default=report.unchained) + 1
        if version != expected:
            raise _Bad(number, f"version {version} where version {expected} was due")
        if (kind == "event") != (version <= report.version):
            raise _Bad(
                number, f"a {kind} line for version {version} (exported up to {report.version})"
            )
        link = _link_of(value, number, conversation, version, previous, chain_start)
        if link is None:
            report.unchained = version
            continue
        links[version] = previous = link
    last = max(links, default=report.unchained)
    if last < report.version:
        raise _Bad(
            seal_at,
            f"an event line for version {last + 1} was due (the header says {report.version})",
        )
    if seal_at > len(lines) or lines[seal_at - 1][1]["type"] != "seal":
        raise _Bad(seal_at, "no seal line: nothing signed pins this conversation")
    _check_seal(lines[seal_at - 1][1], seal_at, key, conversation, links, report)
    _check_end(lines, seal_at + 1)


def _header(value: dict[str, Any], report: BundleReport) -> tuple[UUID, int]:
    if value["type"] != "header" or value.get("format") != BUNDLE_FORMAT:
        raise _Bad(1, f"not a {BUNDLE_FORMAT} header")
    report.tenant = _field(value, "tenant", str, 1)
    report.chat_id = _field(value, "chat_id", str, 1)
    report.version = _field(value, "version", int, 1)
    chain_start = _field(value, "chain_start", int, 1)
    _field(value, "exported_at", str, 1)
    conversation = conversation_id(report.tenant, report.chat_id)
    if value.get("conversation") != str(conversation):
        raise _Bad(1, "the conversation id does not belong to this tenant and chat id")
    return conversation, chain_start


def _link_of(
    value: dict[str, Any],
    number: int,
    conversation: UUID,
    version: int,
    previous: bytes | None,
    chain_start: int,
) -> bytes | None:
    topic = _field(value, "topic", str, number)
    stored = value.get("link")
    if value["type"] == "event":
        content = _field(value, "content", str, number)
        digest = content_digest(content.encode("utf-8"))
        position = _field(value, "position", int, number)
        if stored is None:
            if previous is not None or position > chain_start:
                raise _Bad(number, f"event {version} has no link although the chain covers it")
            return None
    else:
        digest = _hex(value, "digest", number, 32)
    link = _hex(value, "link", number, 16)
    if link_hash(conversation, version, topic, digest, previous or GENESIS) != link:
        raise _Bad(number, f"event {version}: its content, type or version does not match its link")
    return link


def _hex(value: dict[str, Any], name: str, number: int, size: int) -> bytes:
    text = value.get(name)
    try:
        data = bytes.fromhex(text) if isinstance(text, str) and text == text.lower() else b""
    except ValueError:
        data = b""
    if len(data) != size:
        raise _Bad(number, f"field {name!r} is not {size} bytes of lowercase hex")
    return data


def _check_seal(
    value: dict[str, Any],
    number: int,
    key: SealKey,
    conversation: UUID,
    links: dict[int, bytes],
    report: BundleReport,
) -> None:
    try:
        seal = Seal.from_json(_field(value, "seal", dict, number))
    except InvalidInputError as error:
        raise _Bad(number, str(error)) from None
    if seal.key_id != key.key_id:
        raise _Bad(number, f"the seal was made with key {seal.key_id}, not {key.key_id}")
    if not key.verifies(seal.body_bytes(), seal.signature):
        raise _Bad(number, "the seal's signature does not verify: it was edited or forged")
    head = _field(value, "head", dict, number)
    version = _field(head, "version", int, number)
    link = _hex(head, "link", number, 16)
    if links.get(version) != link:
        raise _Bad(number, f"the sealed head (version {version}) is not on the bundle's chain")
    proof = _field(value, "proof", list, number)
    try:
        root = root_from_proof(Head(conversation, version, link), proof)
    except (TypeError, ValueError):
        raise _Bad(number, "the Merkle proof is malformed") from None
    if root.hex() != seal.root:
        raise _Bad(number, "the Merkle proof does not lead to the seal's root")
    report.seal = seal
    report.sealed = min(version, report.version)


def _check_end(lines: list[tuple[str, dict[str, Any]]], number: int) -> None:
    if len(lines) < number:
        raise _Bad(number, "the end line is missing (the bundle was cut short)")
    if len(lines) > number:
        raise _Bad(number + 1, "lines after the end line")
    value = lines[number - 1][1]
    if value["type"] != "end":
        raise _Bad(number, "an end line was due here")
    digests = _field(value, "lines", list, number)
    if len(digests) != number - 1:
        raise _Bad(number, f"lists {len(digests)} line digests for {number - 1} lines")
    for index, (text, _) in enumerate(lines[: number - 1], start=1):
        if hashlib.sha256(text.encode("ascii")).hexdigest() != digests[index - 1]:
            raise _Bad(index, f"line {index} differs from its digest on line {number}")
