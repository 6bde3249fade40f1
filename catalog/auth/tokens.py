"""Expiring bearer tokens the server issues to OAuth2 clients, and who a request's token names.

A token is `hst1.<payload>.<signature>`: the payload (base64url JSON) names the client, the tables
it may read and when it expires; the signature is an HMAC-SHA256 of it under the server's key.
Nothing is stored: a token is valid while its signature checks and it has not expired (a key
given in `HUDI_SHIM_OAUTH_KEY` keeps tokens valid across restarts; else each start makes one).
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import hmac
import json
import time
from dataclasses import dataclass

from catalog.iceberg.names import RO_SUFFIX

PREFIX = "hst1"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request is from, and the tables it may read.

    Attributes:
        name: the OAuth2 client id (or `token` for the server's static token, `anonymous`
            when the server asks for none).
        tables: table names or `fnmatch` patterns; None: every table.
    """

    name: str
    tables: tuple[str, ...] | None = None

    @property
    def unrestricted(self) -> bool:
        return self.tables is None

    def may_read(self, table: str) -> bool:
        """Whether the principal may read the catalog table `table` (its `_ro` view follows it)."""
        if self.tables is None:
            return True
        names = [table] + ([table[: -len(RO_SUFFIX)]] if table.endswith(RO_SUFFIX) else [])
        return any(fnmatch.fnmatchcase(name, pattern) for name in names for pattern in self.tables)


EVERYTHING = Principal("token")
ANONYMOUS = Principal("anonymous")


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """An access token and how many seconds it lives."""

    access_token: str
    expires_in: int


class TokenInvalid(Exception):
    """A token that is not one of this server's, or has expired (`expired`)."""

    def __init__(self, message: str, *, expired: bool = False) -> None:
        super().__init__(message)
        self.expired = expired


class TokenAuthority:
    """Issues and checks tokens under one key."""

    def __init__(self, key: bytes, lifetime_seconds: float) -> None:
        if len(key) < 16:
            raise ValueError("the token signing key must be at least 16 bytes")
        self._key = key
        self.lifetime_seconds = lifetime_seconds

    def issue(self, principal: Principal, *, now: float | None = None) -> IssuedToken:
        """A token for `principal`, valid for the authority's lifetime from `now`."""
        issued = time.time() if now is None else now
        payload = {"sub": principal.name, "tables": None if principal.tables is None else list(principal.tables),
                   "exp": int(issued + self.lifetime_seconds)}
        body = b64url(json.dumps(payload, separators=(",", ":"), sort_keys=True).encode("utf-8"))
        return IssuedToken(f"{PREFIX}.{body}.{self._sign(body)}", int(self.lifetime_seconds))

    def check(self, token: str, *, now: float | None = None) -> Principal:
        """The principal `token` names.

        Raises:
            TokenInvalid: the token is not this server's (bad shape or signature), or expired.
        """
        parts = token.split(".")
        if len(parts) != 3 or parts[0] != PREFIX or not hmac.compare_digest(self._sign(parts[1]), parts[2]):
            raise TokenInvalid("not a token of this server")
        try:
            payload = json.loads(unb64url(parts[1]))
            name, tables, expires = str(payload["sub"]), payload["tables"], int(payload["exp"])
        except (ValueError, KeyError, TypeError):
            raise TokenInvalid("not a token of this server") from None
        if (time.time() if now is None else now) >= expires:
            raise TokenInvalid("the token expired: ask the token endpoint for a new one", expired=True)
        return Principal(name, None if tables is None else tuple(str(t) for t in tables))

    def _sign(self, body: str) -> str:
        return b64url(hmac.new(self._key, f"{PREFIX}.{body}".encode("ascii"), hashlib.sha256).digest())


def b64url(data: bytes) -> str:
    """Unpadded URL-safe base64."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    """The bytes of unpadded URL-safe base64."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
