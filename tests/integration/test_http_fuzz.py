"""Schema-driven fuzzing of the HTTP app (schemathesis over ``/openapi.json``): no 5xx, no undeclared status.

Every operation the document describes is called with generated requests,
valid and invalid (schemathesis' positive and negative generation), on a real
SQLite file and on PostgreSQL, with and without tokens. The checks: the
server never answers 5xx, every status is declared for its route, and content
types and headers are the documented ones. ``CHATLEDGER_FUZZ_EXAMPLES`` sets
the examples per operation, mode and configuration (default 5: a short run in
the suite). The long run, over 10,000 cases per backend (it prints the count):

    CHATLEDGER_FUZZ_EXAMPLES=280 pytest -p no:cacheprovider -s --timeout 7200 \\
        tests/integration/test_http_fuzz.py
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis.errors import Unsatisfiable  # noqa: E402
from schemathesis import GenerationMode, checks  # noqa: E402

from chatledger.adapters.http.app import create_app  # noqa: E402
from chatledger.adapters.responders.scripted import demo_responder  # noqa: E402
from tests.integration.conftest import Backend  # noqa: E402

EXAMPLES = int(os.environ.get("CHATLEDGER_FUZZ_EXAMPLES", "5"))
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_headers_conformance,
]
TOKEN = "fuzz-token"


@pytest.mark.timeout(7200)
@pytest.mark.parametrize("with_tokens", [False, True], ids=["no-auth", "tokens"])
def test_no_5xx_and_every_status_declared(durable_backend: Backend, with_tokens: bool) -> None:
    """Whatever a client sends, the answer is a declared status, never a server error."""
    store = durable_backend.open()
    app = create_app(
        store,
        responder=demo_responder(),
        tokens={TOKEN: "fuzz:tester"} if with_tokens else None,
        allowed_hosts=["testserver", "localhost"],
        run_continuations=False,
        continuation_wait_seconds=0.05,  # a generated long poll must not hold the run up
    )
    headers = {"authorization": f"Bearer {TOKEN}"} if with_tokens else None
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    sent = 0
    operations = [result.ok() for result in schema.get_all_operations()]
    described = sum(
        len(item) for path, item in schema.raw_schema["paths"].items() if path != "/openapi.json"
    )
    assert len(operations) == described >= 20  # every route but /openapi.json itself
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def call(case: Any) -> None:
                nonlocal sent
                sent += 1
                case.call_and_validate(checks=CHECKS, headers=headers)

            with contextlib.suppress(Unsatisfiable):  # e.g. no invalid form of a path-only route
                call()
    print(
        f"\nschemathesis: {sent} cases on {durable_backend.name} ({'tokens' if with_tokens else 'no auth'})"
    )
