"""The error hierarchy: every refusal is an InvalidInputError, each under the parent that says what it is about."""

from __future__ import annotations

import pytest

import chatledger
from chatledger.domain import errors
from chatledger.domain.aggregate import Conversation
from chatledger.domain.convert import to_model_messages
from chatledger.domain.limits import Limits, NotStorableError


def test_unknown_calls_and_oversized_inputs_are_invalid_input_not_chunk_errors() -> None:
    """An action naming an unknown call, or an oversized message, is not about a stream chunk."""
    for cls in (errors.UnknownToolCallError, errors.OversizedInputError):
        assert issubclass(cls, errors.InvalidInputError)
        assert not issubclass(cls, errors.InvalidChunkError)
    for cls, parent in (
        (errors.UnknownToolCallChunkError, errors.UnknownToolCallError),
        (errors.OversizedChunkError, errors.OversizedInputError),
    ):  # a refused stream chunk is always an InvalidChunkError
        assert issubclass(cls, errors.InvalidChunkError) and issubclass(cls, parent)
    unknown = errors.UnknownToolCallError(tool_call_id="call_1")
    assert str(unknown) == "refused: no tool call with id 'call_1' exists in this conversation"
    located = unknown.at(4)
    assert (type(located), located.position, located.tool_call_id) == (
        errors.UnknownToolCallError,
        4,
        "call_1",
    )
    assert str(located).startswith("chunk at position 4 refused: ")
    big = errors.OversizedInputError("message", 10, 5)
    assert str(big).startswith("message refused: message is 10 bytes")
    assert big.at(2).what == "message" and "position 2" in str(big.at(2))


def test_store_errors_are_chatledger_errors_and_exported() -> None:
    """Every error class of chatledger.domain.errors is exported from chatledger."""
    for name in errors.__all__:
        value = getattr(errors, name)
        if isinstance(value, type):
            assert issubclass(value, errors.ChatLedgerError), name
            assert getattr(chatledger, name) is value, f"chatledger does not export {name}"
    assert issubclass(NotStorableError, errors.InvalidInputError)
    assert issubclass(errors.CipherKeyError, errors.StoreConfigurationError)


@pytest.mark.parametrize(
    "call",
    [
        lambda: Limits().check_value("metadata", {"x": float("nan")}),
        lambda: Conversation.start("t", "c", actor=7),  # type: ignore[arg-type]
        lambda: Conversation.start("t\x00", "c", actor="a"),
        lambda: Conversation.start("t", "c\ud800", actor="a"),
        lambda: to_model_messages([], "nonsense"),  # type: ignore[arg-type]
        lambda: to_model_messages([], "anthropic", unanswered="maybe"),  # type: ignore[arg-type]
    ],
    ids=["nan", "int-actor", "nul-tenant", "surrogate-chat", "format", "unanswered"],
)
def test_bad_input_is_an_invalid_input_error(call: object) -> None:
    """Bad values are InvalidInputError, never a plain ValueError or TypeError."""
    with pytest.raises(errors.InvalidInputError):
        call()  # type: ignore[operator]
