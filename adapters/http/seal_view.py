"""What the verify page says about seals: the newest one and whether its signature checks out.

The server checks signatures only when it was given the seal key
(``chatledger serve --seal-key-file PATH``, ``$CHATLEDGER_SEAL_KEY_FILE`` or
``$CHATLEDGER_SEAL_KEY``; ``create_app(seal_key=)``); without it the page
shows the newest seal and says that no seal key was given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chatledger.adapters.store.operations.verify import VerifyReport
    from chatledger.domain.seal import SealKey

__all__ = ["SealView", "seal_view"]


@dataclass(frozen=True)
class SealView:
    """The seal status drawn by ``_verify.html``."""

    status: str
    """``verified``, ``failed``, ``unchecked`` (no key given), ``none`` (no seal yet) or
    ``unavailable`` (a store that keeps no chain, memory://)."""
    message: str
    """The status in words."""
    seq: int | None = None
    """The newest seal that checks out (its number in the store's seals)."""
    sealed_at: str | None = None
    heads: int | None = None
    """How many conversation heads it covers."""
    digest: str | None = None
    algorithm: str | None = None
    unsealed: int = 0
    """Conversations changed since it was made (their newest events are not sealed yet)."""


def seal_view(report: VerifyReport, key: SealKey | None) -> SealView:
    """The seal status of a ``store.operations.verify`` report checked with ``key`` (None: no key given)."""
    coverage = report.coverage
    if coverage is None:
        return SealView("unavailable", "this store keeps no hash chain or seals (memory://)")
    forged = [p for p in report.problems if p.kind == "forged"]
    seal = coverage.seal
    if coverage.seals == 0:
        return SealView("none", "no seal yet: 'chatledger seal' makes one")
    if key is None:
        status, message = (
            "unchecked",
            "no seal key given: the signature is not checked (start the server with "
            "--seal-key-file PATH or $CHATLEDGER_SEAL_KEY_FILE)",
        )
    elif forged or seal is None:
        status = "failed"
        message = "the seals do not check out with the server's seal key: " + (
            "; ".join(p.what for p in forged) or "no seal was signed with it"
        )
    else:
        status, message = "verified", "signature verified with the server's seal key"
    if seal is None:
        return SealView(status, message)
    return SealView(
        status,
        message,
        seq=seal.seq,
        sealed_at=seal.sealed_at,
        heads=seal.conversations,
        digest=seal.digest,
        algorithm=seal.algorithm,
        unsealed=coverage.unsealed,
    )
