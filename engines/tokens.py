"""The server's bearer token, as every client and command finds it when none is given.

In order: the `token` argument; the environment variable `HUDI_SHIM_TOKEN`; the file named by
`HUDI_SHIM_TOKEN_FILE` (its content, surrounding white space removed: a mounted secret). A token
given as a command-line argument shows in the process list, so both variables are preferred.
"""

from __future__ import annotations

import os

from shim.errors import InvalidArgumentError

TOKEN_VARIABLE = "HUDI_SHIM_TOKEN"
TOKEN_FILE_VARIABLE = "HUDI_SHIM_TOKEN_FILE"


def read_token_file(path: str) -> str:
    """The token held in the file at `path`.

    Raises:
        InvalidArgumentError: the file cannot be read, or holds no token.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            token = handle.read(64 * 1024).strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidArgumentError(f"cannot read the token file {path}: {exc}") from None
    if not token:
        raise InvalidArgumentError(f"the token file {path} is empty")
    return token


def resolve_token(token: str | None = None, token_file: str | None = None) -> str | None:
    """`token`, else the token in `token_file`, else the environment's (see the module); None
    when there is none."""
    if token:
        return token
    if token_file:
        return read_token_file(token_file)
    if os.environ.get(TOKEN_VARIABLE):
        return os.environ[TOKEN_VARIABLE]
    if os.environ.get(TOKEN_FILE_VARIABLE):
        return read_token_file(os.environ[TOKEN_FILE_VARIABLE])
    return None
