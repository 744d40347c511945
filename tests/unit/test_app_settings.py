"""``AppSettings``: the one list of the HTTP app's settings, checked when made."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

from chatledger.adapters.http import settings as settings_module
from chatledger.adapters.http.app import create_app, serve
from chatledger.adapters.http.settings import AppSettings, settings_with
from chatledger.domain.errors import InvalidInputError
from chatledger.domain.seal import SealKey

NAMES = [field.name for field in dataclasses.fields(AppSettings)]


def test_every_setting_has_a_docstring() -> None:
    """Each field is followed by its docstring (the settings' only documentation)."""
    source = Path(settings_module.__file__).read_text(encoding="utf-8")
    cls = next(
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.ClassDef) and node.name == "AppSettings"
    )
    documented = set()
    for field, after in zip(cls.body, cls.body[1:], strict=False):
        is_doc = isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
        if isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name) and is_doc:
            documented.add(field.target.id)
    assert documented == set(NAMES)


def test_create_app_and_serve_name_no_setting_a_second_time() -> None:
    """The settings reach ``create_app`` and ``serve`` as ``**overrides``, not as parameters."""
    for function in (create_app, serve):
        parameters = inspect.signature(function).parameters
        assert not set(parameters) & set(NAMES), function.__name__
        assert parameters["overrides"].kind is inspect.Parameter.VAR_KEYWORD


def test_keywords_replace_the_given_settings_and_lists_become_tuples() -> None:
    base = AppSettings(keepalive_seconds=3.0, owner="any")
    made = settings_with(base, {"cors_origins": ["http://localhost:3000"]}, caller="f()")
    assert made == AppSettings(
        keepalive_seconds=3.0, owner="any", cors_origins=("http://localhost:3000",)
    )
    assert settings_with(None, {}, caller="f()") == AppSettings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.owner = "none"  # type: ignore[misc]


def test_an_unknown_keyword_is_named_with_the_valid_ones() -> None:
    with pytest.raises(TypeError) as caught:
        settings_with(None, {"keepalive": 5}, caller="create_app()")
    message = str(caught.value)
    assert "create_app() got an unexpected keyword argument 'keepalive'" in message
    assert "did you mean 'keepalive_seconds'?" in message
    assert all(name in message for name in NAMES)


@pytest.mark.parametrize(
    ("given", "error", "says"),
    [
        ({"keepalive_seconds": 0}, ValueError, "keepalive_seconds must be above 0, not 0"),
        ({"body_read_seconds": -1.0}, ValueError, "such as 30.0 (the default)"),
        ({"websocket_idle_seconds": float("nan")}, ValueError, "websocket_idle_seconds"),
        ({"answer_idle_seconds": "300"}, TypeError, "answer_idle_seconds takes a number"),
        ({"continuation_grace_seconds": -0.5}, ValueError, "must be 0 or more"),
        ({"continuation_wait_seconds": True}, TypeError, "continuation_wait_seconds"),
        ({"continuation_poll_seconds": 0}, ValueError, "None: never"),
        ({"max_body_bytes": 0}, ValueError, "max_body_bytes must be 1 or more"),
        ({"max_body_bytes": 1e6}, TypeError, "whole number of bytes"),
        ({"run_continuations": "no"}, TypeError, "True or False"),
        ({"owner": ""}, InvalidInputError, "owner must be a non-empty name"),
        ({"cors_origins": "https://a.example"}, TypeError, "cors_origins takes a list"),
        ({"allowed_hosts": ["localhost", 7]}, TypeError, "allowed_hosts takes a list"),
        ({"allowed_hosts": None}, TypeError, "allowed_hosts takes a list"),
        ({"seal_key": "a secret of sixteen bytes"}, TypeError, "SealKey.from_text"),
    ],
)
def test_a_bad_value_is_refused_saying_what_to_give(
    given: dict[str, Any], error: type[Exception], says: str
) -> None:
    with pytest.raises(error, match=re.escape(says)):
        AppSettings(**given)


def test_good_values_pass() -> None:
    key = SealKey.from_text("an operator secret of thirty-two bytes")
    made = AppSettings(
        continuation_poll_seconds=None,
        continuation_grace_seconds=0,
        continuation_wait_seconds=0.0,
        allowed_hosts=iter(["*"]),
        seal_key=key,
        max_body_bytes=1,
    )
    assert made.allowed_hosts == ("*",) and made.seal_key is key
