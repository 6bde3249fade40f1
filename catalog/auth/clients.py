"""OAuth2 clients the server knows: ids, secret hashes and the tables each may read.

A clients file (JSON; `hudi-shim oauth-client` writes it) holds no secret, only its hash:

    {"clients": [{"client_id": "trino", "secret_hash": "pbkdf2-sha256$200000$<salt>$<hash>",
                  "tables": ["trips", "rides*"]}]}

`tables` are catalog table names or `fnmatch` patterns (`*`: every table; each table's `_ro`
view goes with it); a client without `tables` may read every table.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from catalog.auth.tokens import b64url, unb64url
from shim.errors import InvalidArgumentError

SCHEME = "pbkdf2-sha256"
ITERATIONS = 200_000


@dataclass(frozen=True, slots=True)
class OAuthClient:
    """A client that may ask for tokens: its id, its secret's hash, the tables it may read (None: all)."""

    client_id: str
    secret_hash: str
    tables: tuple[str, ...] | None = None

    def check(self, secret: str) -> bool:
        """Whether `secret` is this client's (in constant time for a secret of the right shape)."""
        return verify_secret(secret, self.secret_hash)


def hash_secret(secret: str, *, iterations: int = ITERATIONS) -> str:
    """`pbkdf2-sha256$<iterations>$<salt>$<hash>` of `secret` (salt and hash base64, unpadded)."""
    salt = secrets.token_bytes(16)
    digest = hashlib.pbkdf2_hmac("sha256", secret.encode("utf-8"), salt, iterations)
    return "$".join([SCHEME, str(iterations), b64url(salt), b64url(digest)])


def verify_secret(secret: str, hashed: str) -> bool:
    """Whether `secret` hashes to `hashed`."""
    try:
        scheme, iterations, salt, digest = hashed.split("$")
        if scheme != SCHEME:
            return False
        computed = hashlib.pbkdf2_hmac("sha256", secret.encode("utf-8"), unb64url(salt), int(iterations))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(computed, unb64url(digest))


def new_secret() -> str:
    """A random client secret (32 bytes, URL-safe text)."""
    return secrets.token_urlsafe(32)


def parse_clients(text: str, where: str) -> dict[str, OAuthClient]:
    """The clients of a clients document (`where`: what to name it in errors)."""
    try:
        document = json.loads(text)
        entries = document["clients"]
        clients = {}
        for entry in entries:
            tables = entry.get("tables")
            client = OAuthClient(str(entry["client_id"]), str(entry["secret_hash"]),
                                 None if tables is None else tuple(str(t) for t in tables))
            if not client.client_id or ":" in client.client_id:
                raise ValueError(f"client id {client.client_id!r} is empty or holds ':'")
            if not client.secret_hash.startswith(SCHEME + "$"):
                raise ValueError(f"client {client.client_id}: secret_hash is not {SCHEME}$...")
            clients[client.client_id] = client
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidArgumentError(f"the OAuth2 clients in {where} are not a clients document "
                                   f"({{\"clients\": [{{\"client_id\", \"secret_hash\", \"tables\"}}]}}): {exc}") from None
    return clients


def load_clients(source: str) -> dict[str, OAuthClient]:
    """The clients of `source`: a clients file's path, or the document itself (text starting with `{`)."""
    if source.lstrip().startswith("{"):
        return parse_clients(source, "the clients document given")
    try:
        text = Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidArgumentError(f"cannot read the OAuth2 clients file {source}: {exc.strerror}") from None
    return parse_clients(text, source)


def add_client(path: str | os.PathLike[str], client_id: str, tables: Iterable[str] | None = None) -> str:
    """Add (or replace) `client_id` in the clients file at `path` with a new random secret;
    returns the secret (shown once: only its hash is kept)."""
    target = Path(path)
    clients = load_clients(str(target)) if target.exists() else {}
    secret = new_secret()
    clients[client_id] = OAuthClient(client_id, hash_secret(secret), None if tables is None else tuple(tables))
    document = {"clients": [{"client_id": c.client_id, "secret_hash": c.secret_hash}
                            | ({"tables": list(c.tables)} if c.tables is not None else {})
                            for c in clients.values()]}
    scratch = target.with_name(f".{target.name}.tmp")
    scratch.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    os.chmod(scratch, 0o600)
    os.replace(scratch, target)
    return secret
