"""Standing approval grants: "don't ask again" for an exact input, a tool or a conversation (``store.grants``)."""

from chatledger.adapters.grants.service import Grants, automatic_reason
from chatledger.domain.grants import SCOPES, Grant, GrantNotFoundError

__all__ = ["SCOPES", "Grant", "GrantNotFoundError", "Grants", "automatic_reason"]
