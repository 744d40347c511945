"""Fixtures shared by every test folder: the AI SDK oracle and the storage backends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from tests.support.oracle import Oracle

settings.register_profile(
    "default",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("default")


@pytest.fixture(scope="session")
def oracle() -> Iterator[Oracle]:
    """The real AI SDK ``ai@6.0.326``, one Node process for the whole session."""
    node = Oracle()
    yield node
    node.close()


@pytest.fixture(scope="session")
def oracle_v7() -> Iterator[Oracle]:
    """The real AI SDK ``ai@7.0.173`` on its pinned Node 22, one process for the whole session."""
    node = Oracle(7)
    yield node
    node.close()
