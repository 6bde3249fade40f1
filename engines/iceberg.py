"""DuckDB reading the shim's tables through its Iceberg REST catalog, as Trino or Presto would.

    con = engines.iceberg.attach("http://127.0.0.1:8080")
    con.execute("SELECT city, sum(amount) FROM shim.default.trips GROUP BY city").fetchall()

The extensions come from the `duckdb-extension-iceberg`, `-avro` and `-httpfs` wheels
(`pip install 'hudi-shim[iceberg]'`), loaded from their files: nothing is downloaded.
"""

from __future__ import annotations

import glob
import importlib
import os

import duckdb

from engines.tokens import resolve_token
from shim.errors import InvalidArgumentError

#: Loaded in this order (Avro before Iceberg, which reads manifests with it).
EXTENSIONS = ("httpfs", "avro", "iceberg")
_ALIAS_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


def load_extensions(connection: duckdb.DuckDBPyConnection) -> None:
    """Load the Iceberg extension and what it needs from their wheels."""
    for name in EXTENSIONS:
        try:
            module = importlib.import_module(f"duckdb_extension_{name}")
        except ImportError as exc:
            raise ImportError(f"DuckDB's {name} extension is missing: pip install 'hudi-shim[iceberg]'") from exc
        files = glob.glob(os.path.join(os.path.dirname(module.__file__ or ""), "extensions", "*",
                                       f"{name}.duckdb_extension"))
        if not files:
            raise ImportError(f"the duckdb-extension-{name} wheel holds no {name}.duckdb_extension file")
        connection.execute(f"LOAD '{_quoted(files[0])}'")


def attach(url: str, token: str | None = None, *, credential: str | None = None,
           connection: duckdb.DuckDBPyConnection | None = None, alias: str = "shim") -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the shim server at `url` attached as Iceberg catalog `alias`:
    tables `alias.default.<table>` (snapshot) and `alias.default.<table>_ro` (read-optimized).
    `token`: the server's static token (without it, the environment's: `HUDI_SHIM_TOKEN`,
    `HUDI_SHIM_TOKEN_FILE`); or `credential` (`client_id:secret`): an OAuth2 client, for which
    DuckDB asks the server's token endpoint for tokens itself."""
    if not alias or set(alias.lower()) - _ALIAS_CHARS or alias[0].isdigit():
        raise InvalidArgumentError(f"invalid catalog alias {alias!r}: use letters, digits and '_'")
    con = connection if connection is not None else duckdb.connect()
    load_extensions(con)
    endpoint = url.rstrip("/") + "/iceberg"
    if credential is not None:
        client_id, _, client_secret = credential.partition(":")
        secret = f"{alias}_iceberg_client"
        con.execute(f"CREATE OR REPLACE SECRET {secret} (TYPE iceberg, CLIENT_ID '{_quoted(client_id)}', "
                    f"CLIENT_SECRET '{_quoted(client_secret)}', OAUTH2_SERVER_URI '{_quoted(endpoint)}/v1/oauth/tokens')")
        options = f"SECRET {secret}"
    elif (token := resolve_token(token)) is None:
        options = "AUTHORIZATION_TYPE 'none'"
    else:
        secret = f"{alias}_iceberg_token"
        con.execute(f"CREATE OR REPLACE SECRET {secret} (TYPE iceberg, TOKEN '{_quoted(token)}')")
        options = f"SECRET {secret}"
    con.execute(f"ATTACH '{alias}' AS {alias} (TYPE iceberg, ENDPOINT '{_quoted(endpoint)}', {options})")
    return con


def _quoted(text: str) -> str:
    return text.replace("'", "''")
