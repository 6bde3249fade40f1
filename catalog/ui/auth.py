"""The UI's access check: the server's token, as a bearer header (API clients) or as a session
cookie a browser gets from the login form.

The cookie holds an HMAC of the token, not the token: it opens the UI's pages and JSON
endpoints, and is HttpOnly and SameSite=Strict (other sites' pages cannot send it along).
"""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import parse_qs

from fastapi import Request

from catalog.errors import UnauthorizedError

COOKIE = "hudi_shim_ui"
COOKIE_PATH = "/ui"
LOGIN_PATH = "/ui/login"


def _token(request: Request) -> str | None:
    token: str | None = request.app.state.catalog.settings.token
    return token


def session_value(token: str) -> str:
    """The cookie value that stands for `token`."""
    return hmac.new(token.encode("utf-8"), b"hudi-shim ui session", hashlib.sha256).hexdigest()


def token_matches(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8"), token.encode("utf-8"))


def is_authorized(request: Request) -> bool:
    """Whether the request carries the token (bearer header) or the session cookie."""
    token = _token(request)
    if token is None:
        return True
    header = request.headers.get("authorization", "")
    scheme, _, given = header.partition(" ")
    if scheme.lower() == "bearer" and token_matches(given.strip(), token):
        return True
    cookie = request.cookies.get(COOKIE)
    return cookie is not None and hmac.compare_digest(cookie, session_value(token))


async def require_ui_token(request: Request) -> None:
    """Dependency of the UI's JSON endpoints: 401 (JSON) without the token or the cookie."""
    if not is_authorized(request):
        raise UnauthorizedError("missing or wrong token: log in at /ui/login, or send 'Authorization: Bearer <token>'")


def needs_token(request: Request) -> bool:
    return _token(request) is not None


async def login_form(request: Request) -> tuple[str, str]:
    """The `token` and `next` fields of the login form (urlencoded)."""
    fields = parse_qs((await request.body()).decode("utf-8", "replace"), max_num_fields=4)
    return (fields.get("token") or [""])[0], safe_next((fields.get("next") or [""])[0])


def safe_next(target: str) -> str:
    """Where to go after logging in: a UI path, never another site."""
    if target.startswith("/ui") and not target.startswith("//") and "\\" not in target:
        return target
    return "/ui"
