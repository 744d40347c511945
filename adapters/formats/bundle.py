"""The chatledger export bundle (``chatledger-export/1``, see ``chatledger.domain.bundle``) as an import.

Writing a bundle needs the store (its chain and seal): ``service`` calls
``store.operations.export``. Reading one folds its events, exactly as the
store folds them, into the conversation's messages as they stood at the
bundle's version (redactions applied, as every view shows them); those
messages are imported. The bundle's history itself (each stream's chunks,
each decision with its actor and time) is not re-recorded: the new
conversation's log starts with the import, and the report says so. Give a
seal key to check the bundle first (``verify_bundle``).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from eventsourcing.persistence import StoredEvent

from chatledger.adapters.formats.format import Format, Imported, Step
from chatledger.adapters.formats.losses import LossReport
from chatledger.adapters.formats.registry import BUNDLE
from chatledger.adapters.persistence.codec import PydanticMapper
from chatledger.adapters.store.reads.shown import shown_messages
from chatledger.domain.bundle import BUNDLE_FORMAT, verify_bundle
from chatledger.domain.errors import InvalidInputError, StoredDataError
from chatledger.domain.seal import SealKey

__all__ = ["CHATLEDGER_BUNDLE", "NAME", "read_bundle"]

NAME = BUNDLE


def read_bundle(value: Any, seal_key: SealKey | None = None) -> Imported:
    """The messages a bundle's events fold to (``seal_key``: verify the bundle first)."""
    raw = value.encode("utf-8") if isinstance(value, str) else value
    if not isinstance(raw, bytes):
        raise InvalidInputError("a chatledger bundle is JSON Lines text")
    if seal_key is not None:
        checked = verify_bundle(raw, seal_key)
        if not checked.ok:
            raise InvalidInputError(f"the bundle does not verify: {checked}")
    lines = _lines(raw)
    header = lines[0] if lines else {}
    if header.get("type") != "header" or header.get("format") != BUNDLE_FORMAT:
        raise InvalidInputError(
            f"not a chatledger bundle: the first line is no {BUNDLE_FORMAT} header"
        )
    mapper = PydanticMapper(transcoder=None)  # type: ignore[arg-type]  # contents are plain JSON
    try:
        key = uuid.UUID(str(header.get("conversation")))
    except ValueError:
        raise InvalidInputError("the bundle's header names no conversation UUID") from None
    aggregate: Any = None
    events = [line for line in lines if line.get("type") == "event"]
    for line in events:
        stored = StoredEvent(
            originator_id=key,
            originator_version=int(line.get("version") or 0),
            topic=str(line.get("topic")),
            state=str(line.get("content")).encode("utf-8"),
        )
        try:
            aggregate = mapper.to_domain_event(stored).mutate(aggregate)
        except (StoredDataError, ValueError, TypeError, AttributeError) as error:
            raise InvalidInputError(f"bundle event {line.get('version')}: {error}") from None
    if aggregate is None:
        raise InvalidInputError("the bundle holds no events")
    messages: list[Step] = list(shown_messages(aggregate.state))
    report = LossReport(NAME, "import", len(messages))
    report.add(
        "history",
        f"the bundle's {len(events):,} events (streams, decisions, actors, times) are imported "
        "as the messages they fold to; the bundle itself keeps them",
    )
    return Imported(messages, report, ai_sdk=aggregate.state.dialect.major)


def _lines(raw: bytes) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for number, text in enumerate(raw.decode("utf-8", "replace").splitlines(), 1):
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except ValueError:
            raise InvalidInputError(f"bundle line {number} is not JSON") from None
        if not isinstance(value, dict):
            raise InvalidInputError(f"bundle line {number} is not a JSON object")
        found.append(value)
    return found


CHATLEDGER_BUNDLE = Format(NAME, "a verifiable chatledger bundle (JSON Lines)", read_bundle, None)
"""Its ``write`` is None: a bundle is written by the store (``store.operations.export``)."""
