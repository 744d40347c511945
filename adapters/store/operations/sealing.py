"""Sealing: a signed checkpoint over every conversation's chain head, stored beside the chain (and witnessed outside).

See ``chatledger.domain.seal`` for the seal and ``chatledger.domain.witness`` for witnesses.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

from chatledger.adapters.persistence.chain import chain_tables
from chatledger.adapters.store.operations.witness import witnessing
from chatledger.domain.errors import InvalidInputError
from chatledger.domain.seal import Seal, SealKey, merkle_root

__all__ = ["make_seal"]


def make_seal(
    log: Any, backend: str, key: SealKey, witness: str | os.PathLike[str] | None = None
) -> Seal:
    """Sign and store a seal over every conversation's current chain head (and append it to ``witness``)."""
    tables = chain_tables(log.recorder, backend)
    if tables is None:
        raise InvalidInputError("a memory:// store keeps no chain: there is nothing to seal")
    if not key.can_sign:
        raise InvalidInputError("sealing needs the private key (this is an Ed25519 public key)")
    heads = tables.heads()
    seals = tables.seals()
    last = seals[-1] if seals else None
    seal = Seal(
        seq=(last.seq + 1) if last else 1,
        sealed_at=datetime.now(UTC).isoformat(timespec="microseconds"),
        algorithm=key.algorithm,
        key_id=key.key_id,
        previous=last.digest if last else None,
        chain_start=tables.chain_start()[0],
        conversations=len(heads),
        root=merkle_root(heads).hex(),
    )
    signed = Seal(**{**seal.__dict__, "signature": key.sign(seal.body_bytes())})
    with witnessing(witness) as record:
        tables.add_seal(signed, heads)
        record(signed)
    return signed
