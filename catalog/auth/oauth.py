"""Who may call the server, and the OAuth2 token endpoint Iceberg REST clients use.

Requests carry `Authorization: Bearer <token>`: the server's static token (every table), or a
token the endpoint issued to a client (`client_credentials`, the client's tables, expiring). With
neither a static token nor clients configured, the server asks for nothing.

The endpoint (`POST /iceberg/v1/oauth/tokens`, also `/v1/oauth/tokens`) takes a form, as the
Iceberg REST specification and OAuth2 (RFC 6749, RFC 8693) say:
- `grant_type=client_credentials`, `client_id` and `client_secret` (or HTTP Basic), optional
  `scope`: `catalog` (every table the client may read) or `table:<name>` entries narrowing it;
- `grant_type=urn:ietf:params:oauth:grant-type:token-exchange` with `subject_token` (a valid
  token of this server): a fresh token for the same client and tables (Iceberg's Java client
  refreshes so).
Errors are OAuth2's: `{"error": "invalid_client" | "invalid_request" | "invalid_scope" |
"unsupported_grant_type", "error_description"}` with 400 or 401.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import logging
import os
import secrets
from collections.abc import Mapping

from catalog.auth.clients import OAuthClient, load_clients
from catalog.auth.tokens import ANONYMOUS, EVERYTHING, IssuedToken, Principal, TokenAuthority, TokenInvalid
from catalog.errors import UnauthorizedError
from catalog.settings import Settings

log = logging.getLogger(__name__)

CLIENT_CREDENTIALS = "client_credentials"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
KEY_VARIABLE = "HUDI_SHIM_OAUTH_KEY"


class OAuthError(Exception):
    """An error of the token endpoint, as OAuth2 words it."""

    def __init__(self, status: int, error: str, description: str) -> None:
        super().__init__(f"{error}: {description}")
        self.status = status
        self.error = error
        self.description = description

    def body(self) -> dict[str, str]:
        return {"error": self.error, "error_description": self.description}


class Authenticator:
    """The server's static token, its OAuth2 clients and the authority that signs their tokens."""

    def __init__(self, static_token: str | None, clients: Mapping[str, OAuthClient],
                 authority: TokenAuthority | None) -> None:
        self.static_token = static_token
        self.clients = dict(clients)
        self.authority = authority

    @classmethod
    def from_settings(cls, settings: Settings) -> Authenticator:
        """The authenticator `settings` describe (clients read now: a bad clients file fails here)."""
        clients = load_clients(settings.oauth_clients) if settings.oauth_clients else {}
        authority = None
        if clients:
            given = settings.oauth_key or os.environ.get(KEY_VARIABLE)
            key = given.encode("utf-8") if given else secrets.token_bytes(32)
            authority = TokenAuthority(key, settings.oauth_token_seconds)
        return cls(settings.token, clients, authority)

    @property
    def required(self) -> bool:
        """Whether requests must carry a token."""
        return self.static_token is not None or self.authority is not None

    def principal(self, bearer: str | None) -> Principal:
        """Who the bearer token names.

        Raises:
            UnauthorizedError: a token is required and this one is missing, wrong or expired.
        """
        if not self.required:
            return ANONYMOUS
        given = bearer or ""
        if self.static_token is not None and hmac.compare_digest(given.encode("utf-8"),
                                                                 self.static_token.encode("utf-8")):
            return EVERYTHING
        if self.authority is not None and given:
            try:
                return self.authority.check(given)
            except TokenInvalid as exc:
                if exc.expired:
                    raise UnauthorizedError("the bearer token expired: ask /v1/oauth/tokens for a new one") from None
        raise UnauthorizedError("missing or wrong bearer token (send 'Authorization: Bearer <token>')")

    def token(self, form: Mapping[str, str], authorization: str | None) -> tuple[IssuedToken, str]:
        """Answer a token request: the token and the scope granted.

        Raises:
            OAuthError: the request is malformed, the client unknown or its secret wrong, the
                scope asks for a table the client may not read, or the grant is not supported.
        """
        if self.authority is None:
            raise OAuthError(400, "unsupported_grant_type", "this server has no OAuth2 clients: use its static token")
        grant = form.get("grant_type", "")
        if grant == CLIENT_CREDENTIALS:
            principal = self._client(form, authorization)
        elif grant == TOKEN_EXCHANGE:
            subject = form.get("subject_token", "")
            try:
                principal = self.authority.check(subject)
            except TokenInvalid as exc:
                raise OAuthError(401, "invalid_grant", f"subject_token: {exc}") from None
        else:
            raise OAuthError(400, "unsupported_grant_type",
                             f"grant_type {grant!r}: use {CLIENT_CREDENTIALS} or {TOKEN_EXCHANGE}")
        principal, scope = _narrowed(principal, form.get("scope", ""))
        return self.authority.issue(principal), scope

    def _client(self, form: Mapping[str, str], authorization: str | None) -> Principal:
        client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
        if authorization and authorization.lower().startswith("basic "):
            try:
                client_id, _, secret = base64.b64decode(authorization[6:], validate=True).decode("utf-8").partition(":")
            except (binascii.Error, UnicodeDecodeError):
                raise OAuthError(400, "invalid_request", "the Basic authorization header is not base64 id:secret") from None
        if not client_id or not secret:
            raise OAuthError(400, "invalid_request", "client_id and client_secret are required")
        client = self.clients.get(client_id)
        if client is None or not client.check(secret):
            log.warning("token refused: unknown client or wrong secret (client id %r)", client_id[:64])
            raise OAuthError(401, "invalid_client", "unknown client or wrong secret")
        return Principal(client.client_id, client.tables)


def _narrowed(principal: Principal, scope: str) -> tuple[Principal, str]:
    """The principal limited to the tables `scope` names (`table:<name>` entries; other entries,
    such as Iceberg's default `catalog`, leave it as it is), and the scope granted."""
    asked = [item[len("table:"):] for item in scope.split() if item.startswith("table:")]
    if not asked:
        return principal, scope or "catalog"
    refused = [name for name in asked if not principal.may_read(name)]
    if refused:
        raise OAuthError(400, "invalid_scope", f"client {principal.name!r} may not read table {refused[0]!r}")
    return Principal(principal.name, tuple(asked)), " ".join(f"table:{name}" for name in asked)
