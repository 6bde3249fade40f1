"""`POST /iceberg/v1/oauth/tokens` (where Iceberg REST clients look for it) and `/v1/oauth/tokens`:
the OAuth2 token endpoint (`catalog.auth.oauth`). It takes no bearer token: it hands them out."""

from __future__ import annotations

from urllib.parse import parse_qsl

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from catalog.auth.oauth import ACCESS_TOKEN_TYPE, Authenticator, OAuthError

router = APIRouter(tags=["oauth"])
_RESPONSES = {200: {"description": "an access token: access_token, token_type, expires_in, issued_token_type, scope"},
              400: {"description": "OAuth2 error: invalid_request, invalid_scope, unsupported_grant_type"},
              401: {"description": "OAuth2 error: invalid_client (unknown client or wrong secret), invalid_grant"}}
MAX_FORM_BYTES = 64 * 1024


async def _tokens(request: Request) -> JSONResponse:
    authenticator: Authenticator = request.app.state.auth
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        return _error(OAuthError(400, "invalid_request", "the form is too large"))
    try:
        form = dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=32))
    except (UnicodeDecodeError, ValueError):
        return _error(OAuthError(400, "invalid_request", "the body is not an application/x-www-form-urlencoded form"))
    try:
        # the secret's hash takes a while on purpose: off the event loop
        issued, scope = await run_in_threadpool(authenticator.token, form, request.headers.get("authorization"))
    except OAuthError as exc:
        return _error(exc)
    return JSONResponse({"access_token": issued.access_token, "token_type": "bearer", "expires_in": issued.expires_in,
                         "issued_token_type": ACCESS_TOKEN_TYPE, "scope": scope},
                        headers={"Cache-Control": "no-store"})


def _error(error: OAuthError) -> JSONResponse:
    headers = {"Cache-Control": "no-store"} | ({"WWW-Authenticate": "Basic"} if error.status == 401 else {})
    return JSONResponse(error.body(), status_code=error.status, headers=headers)


router.add_api_route("/iceberg/v1/oauth/tokens", _tokens, methods=["POST"], responses=_RESPONSES,  # type: ignore[arg-type]
                     summary="OAuth2 token endpoint (client_credentials, token exchange), for Iceberg REST clients")
router.add_api_route("/v1/oauth/tokens", _tokens, methods=["POST"], responses=_RESPONSES,  # type: ignore[arg-type]
                     summary="OAuth2 token endpoint (the same)")
