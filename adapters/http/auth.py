"""Who calls the app: the authentication hook gives each request a tenant and, if known, a user.

``Identity(tenant, user)`` is what the hook returns; its ``actor`` is who the
audit names for what the request records: the user when there is one, else
``http-client:<tenant>``. ``TokenTable`` is the default hook: bearer tokens,
each naming ``TENANT`` or ``TENANT:USER`` (``parse_token``). A custom hook is
any ``Callable[[Request], Identity]`` raising ``unauthorized()`` to refuse.

**Operators.** The tenant ``*`` (``TOKEN=*:USER``) names an operator: such a
token may call only the operator routes (erase, export, redact a chat of any
tenant, ``http/operator.py``), and no tenant route; a tenant token may call
no operator route (403 both ways).
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from starlette.requests import Request

from chatledger.adapters.http.errors import HTTPProblem

__all__ = [
    "OPERATOR",
    "Authenticate",
    "Identity",
    "TokenTable",
    "forbidden",
    "parse_token",
    "unauthorized",
]

OPERATOR = "*"
"""The tenant of an operator token (``TOKEN=*:USER``)."""


@dataclass(frozen=True)
class Identity:
    """The tenant a request acts in, and the user making it (None: unknown)."""

    tenant: str
    user: str | None = None

    @property
    def actor(self) -> str:
        """Who the audit names for what this request records."""
        if self.operator:
            return self.user or "operator"
        return self.user or f"http-client:{self.tenant}"

    @property
    def operator(self) -> bool:
        """Whether this is an operator (tenant ``*``): operator routes only, any tenant's chats."""
        return self.tenant == OPERATOR


Authenticate = Callable[[Request], Identity]
"""The authentication hook: the caller's identity, or ``unauthorized()`` raised."""


def unauthorized() -> HTTPProblem:
    """The 401 answer asking for a bearer token."""
    return HTTPProblem(
        401,
        "UnauthorizedError",
        "a valid bearer token is required (Authorization: Bearer <token>)",
        headers={"www-authenticate": 'Bearer realm="chatledger"'},
    )


def forbidden(message: str) -> HTTPProblem:
    """The 403 answer for a known caller that may not use this route."""
    return HTTPProblem(403, "ForbiddenError", message)


def parse_token(entry: str) -> tuple[str, Identity]:
    """``TOKEN=TENANT`` or ``TOKEN=TENANT:USER`` as (token, identity); ValueError if malformed."""
    token, equals, who = entry.strip().partition("=")
    tenant, _, user = who.partition(":")
    if not equals or not token.strip() or not tenant.strip():
        raise ValueError(f"a token entry is TOKEN=TENANT or TOKEN=TENANT:USER, got {entry!r}")
    return token.strip(), Identity(tenant.strip(), user.strip() or None)


class TokenTable:
    """The default hook: ``Authorization: Bearer <token>`` looked up in a table (constant time)."""

    def __init__(self, tokens: Mapping[str, str | Identity]) -> None:
        self.tokens: dict[bytes, Identity] = {}
        for token, who in tokens.items():
            if not isinstance(token, str) or not token:
                raise ValueError("tokens must be non-empty strings")
            self.tokens[token.encode()] = (
                who if isinstance(who, Identity) else parse_token(f"{token}={who}")[1]
            )

    @property
    def tenants(self) -> list[str]:
        """The tenants the tokens give access to."""
        return sorted({who.tenant for who in self.tokens.values() if not who.operator})

    def __call__(self, request: Request) -> Identity:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        given = token.strip().encode("utf-8", "surrogatepass")
        found = None
        if scheme.lower() == "bearer" and given:
            for known, who in self.tokens.items():
                if hmac.compare_digest(known, given):
                    found = who
        if found is None:
            raise unauthorized()
        return found
