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
    "Access",
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


def unauthorized(where: str | None = None) -> HTTPProblem:
    """The 401 answer asking for a bearer token; ``where`` says where the server's tokens are."""
    hint = f"; this server's tokens are in {where}" if where else ""
    return HTTPProblem(
        401,
        "UnauthorizedError",
        f"a valid bearer token is required (Authorization: Bearer <token>){hint}",
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

    def __init__(self, tokens: Mapping[str, str | Identity], *, where: str | None = None) -> None:
        self.where = where
        """Where the tokens come from, said in the 401 and on the pages' token prompt (or None)."""
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
            raise unauthorized(self.where)
        return found


class Access:
    """Who may call which route of one app: tenant routes, operator routes, and the tenants served."""

    def __init__(self, authenticate: Authenticate | None, default_tenant: str) -> None:
        self.authenticate = authenticate
        """The authentication hook (None: every request is the store's default tenant)."""
        self.default_tenant = default_tenant

    def identity(self, request: Request) -> Identity:
        """The caller's tenant and user (the store's default tenant when no hook is configured).

        An operator token is refused here (403): it may call the operator routes only.
        """
        if self.authenticate is None:
            return Identity(self.default_tenant)
        who = self.authenticate(request)
        if who.operator:
            raise forbidden(
                "an operator token may call the operator routes only (erase, export, redact); "
                "use a tenant's token for this route"
            )
        return who

    def operator(self, request: Request) -> Identity:
        """The caller, who must hold an operator token (else 403; 401 without a known token)."""
        who = self.authenticate(request) if self.authenticate is not None else None
        if who is None or not who.operator:
            raise forbidden(
                "this route needs an operator token (a token whose tenant is '*': TOKEN=*:USER "
                "in the token file); tenant tokens may not call it"
            )
        return who

    def tenants(self) -> list[str]:
        """The tenants the app serves (whose continuation requests it runs)."""
        tenants = getattr(self.authenticate, "tenants", None)
        return list(tenants) if tenants else [self.default_tenant]
