"""AI SDK majors are dialects: looked up once by their number, each one's rules held as data."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from chatledger.domain.conversation import ConversationState
from chatledger.domain.convert import to_model_messages
from chatledger.domain.dialects import (
    DIALECTS,
    IMPLICIT_MAJOR,
    SDK_VERSIONS,
    V6,
    V7,
    Dialect,
    dialect_for,
)
from chatledger.domain.errors import InvalidAiSdkVersionError, InvalidInputError

ROOT = Path(__file__).resolve().parents[2]

V7_ONLY_CHUNKS = {
    "custom",
    "reasoning-file",
    "steering-message",
    "reset-step",
    "tool-approval-response",
}
RULES = (
    "partial_json_strict",
    "steers",
    "supersedes_approvals",
    "halts_on_interrupted",
    "replays_message_on_resume",
)


@pytest.mark.parametrize("major", [6, 7])
def test_each_major_chatledger_speaks_has_its_dialect(major: int) -> None:
    """``dialect_for`` gives the dialect of 6 and of 7, the same object each time."""
    dialect = dialect_for(major)
    assert dialect.major == major
    assert dialect is DIALECTS[major] is dialect_for(major)
    assert SDK_VERSIONS == (6, 7) == tuple(DIALECTS)


@pytest.mark.parametrize("major", [5, 8, 0, -7, "7", 7.5, None, True, [7]])
def test_an_unknown_major_is_refused_by_name(major: Any) -> None:
    """Anything but 6 or 7 raises the existing error, a kind of ``InvalidInputError``."""
    with pytest.raises(InvalidAiSdkVersionError, match="ai_sdk must be 6 or 7") as refused:
        dialect_for(major)
    assert refused.value.version == major
    assert isinstance(refused.value, InvalidInputError)


def test_the_refusal_names_the_setting_it_came_from() -> None:
    """``where`` names the flag or field in the message."""
    with pytest.raises(InvalidAiSdkVersionError, match="--ai-sdk must be 6 or 7"):
        dialect_for(9, where="--ai-sdk")


def test_v6_follows_none_of_the_v7_turn_rules_and_v7_all() -> None:
    """The rules that differ are flags: all off for v6, all on for v7."""
    assert {rule: getattr(V6, rule) for rule in RULES} == dict.fromkeys(RULES, False)
    assert {rule: getattr(V7, rule) for rule in RULES} == dict.fromkeys(RULES, True)
    assert (V6.stream_encoding, V7.stream_encoding) == (6, 7)


def test_the_converter_rules_are_data() -> None:
    """v7's ``convertToModelMessages`` differences are named fields; v6 has none."""
    v6, v7 = V6.model_messages, V7.model_messages
    assert v6.content_part_types == frozenset()
    assert v7.content_part_types == {"custom", "reasoning-file"}
    assert not (v6.file_data_as_url or v6.approval_request_details or v6.denial_result)
    assert v7.file_data_as_url and v7.approval_request_details and v7.denial_result


def test_v7_chunks_are_v6_chunks_plus_its_own() -> None:
    """v7 keeps every v6 chunk type, changes three models and adds five types."""
    assert set(V7.chunk_models) == set(V6.chunk_models) | V7_ONLY_CHUNKS
    changed = {
        kind for kind in V6.chunk_models if V7.chunk_models[kind] is not V6.chunk_models[kind]
    }
    assert changed == {"text-end", "tool-approval-request", "finish"}


@pytest.mark.parametrize("dialect", [V6, V7], ids=["v6", "v7"])
def test_every_chunk_type_has_a_fold_handler(dialect: Dialect) -> None:
    """The fold table and the chunk table name the same types (``data-*`` apart)."""
    assert set(dialect.fold_handlers) == set(dialect.chunk_models)


def test_v7_folds_like_v6_except_where_it_says() -> None:
    """v7's table overlays v6's: its own types, and a handful it folds differently."""
    overridden = {
        kind for kind, handler in V6.fold_handlers.items() if V7.fold_handlers[kind] is not handler
    }
    assert overridden == {"text-end", "finish-step", "tool-approval-request", "tool-input-error"}


def test_only_v7_adds_part_types() -> None:
    """v7 validates three part types v6 does not know."""
    assert dict(V6.part_models) == {}
    assert set(V7.part_models) == {"custom", "reasoning-file", "steering-message"}


@pytest.mark.parametrize("dialect", [V6, V7], ids=["v6", "v7"])
def test_a_dialect_cannot_be_changed(dialect: Dialect) -> None:
    """Dialects are shared by every conversation: the value and its tables are read-only."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        dialect.steers = not dialect.steers  # type: ignore[misc]
    for table in (dialect.chunk_models, dialect.fold_handlers, dialect.part_models):
        with pytest.raises(TypeError):
            table["text-start"] = None  # type: ignore[index]


def test_a_conversation_speaks_the_dialect_of_its_recorded_major() -> None:
    """``ConversationState.dialect`` follows ``ai_sdk``; snapshots keep storing the number only."""
    assert ConversationState("t", "c").dialect is V6
    v7 = ConversationState("t", "c", ai_sdk=7)
    assert v7.dialect is V7
    assert v7.to_json()["aiSdk"] == 7
    assert ConversationState.from_json(v7.to_json()).dialect is V7
    old = ConversationState("t", "c").to_json()
    assert "aiSdk" not in old
    assert ConversationState.from_json(old).dialect is V6
    assert IMPLICIT_MAJOR == 6


def test_a_conversation_of_an_unknown_major_cannot_be_built() -> None:
    """The state checks its major once, when it is made."""
    with pytest.raises(InvalidAiSdkVersionError):
        ConversationState("t", "c", ai_sdk=8)


def test_the_converter_refuses_an_unknown_major() -> None:
    """``to_model_messages(..., ai_sdk=)`` looks the dialect up, so 8 is refused, not read as 6."""
    assert to_model_messages([], ai_sdk=7) == []
    with pytest.raises(InvalidAiSdkVersionError):
        to_model_messages([], ai_sdk=8)


_VERSION_TEST = re.compile(r"(ai_sdk|major)\s*[!=]=\s*\d|\b(v7|v6)\b\s*=\s*ai_sdk")


def test_the_domain_asks_the_dialect_instead_of_comparing_majors() -> None:
    """No domain module outside ``dialects/`` branches on the AI SDK major's number."""
    found = []
    for path in sorted((ROOT / "domain").rglob("*.py")):
        if "dialects" in path.relative_to(ROOT).parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _VERSION_TEST.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []


def _imported(module: str) -> set[str]:
    """Every ``chatledger.domain`` module a domain module imports, lazily or not."""
    path = ROOT / "domain" / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = ROOT / "domain" / module.replace(".", "/") / "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module.removeprefix("chatledger.domain.").split(".")[0])
    return found


def test_the_fold_sits_below_the_dialects_and_the_conversation() -> None:
    """The fold imports neither its dialects nor the conversation; the dialects not the conversation."""
    assert {"dialects", "conversation", "whole_stream"}.isdisjoint(_imported("fold"))
    for module in ("dialects", "dialects.dialect", "dialects.v6", "dialects.v6.fold",
                   "dialects.v6.fold_tools", "dialects.v7", "dialects.v7.fold",
                   "dialects.v7.parts", "dialects.v7.chunk_models"):  # fmt: skip
        assert {"conversation", "chunks", "parts", "aggregate"}.isdisjoint(_imported(module))
