"""Storage credentials vended in `loadTable` answers, so an Iceberg reader needs no keys of its own.

A client asking for them (`X-Iceberg-Access-Delegation: vended-credentials`, as Trino with
`iceberg.rest-catalog.vended-credentials-enabled=true`, PyIceberg and DuckDB send) gets the
table's storage configuration in the answer's `config`: `s3.access-key-id`,
`s3.secret-access-key`, `s3.session-token`, `s3.endpoint`, `s3.path-style-access`,
`client.region` (and `s3.region`). The keys are

- short-lived ones from STS `AssumeRole` of `vend_role_arn`, asked with the table's own storage
  credentials, with a session policy that allows reading the table's folder and the published
  files only (kept until 5 minutes before they expire); or
- without a role, the table's own storage credentials (its storage options, else the `AWS_*`
  environment) as they are.

Trino 476 takes vended keys only with a session token: give it a role. Credentials are never
logged (botocore's DEBUG records of requests and answers are dropped); an STS failure names the
role and STS's error code, not the keys.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from shim.errors import HudiShimError
from shim.storage import Storage
from shim.storage.options import is_remote, s3_arguments, split

#: How long before its expiry a cached STS credential is asked for anew.
RENEW_SECONDS = 300.0
#: botocore's loggers that write requests and answers (with the keys STS grants) at DEBUG level.
_TALKATIVE_LOGGERS = ("botocore.parsers", "botocore.endpoint", "botocore.httpsession", "urllib3.connectionpool")


class _NoDebug(logging.Filter):
    """Drops DEBUG records: botocore logs STS answers, keys included, at that level."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno > logging.DEBUG


_NO_DEBUG = _NoDebug()


def _silence_sdk_debug() -> None:
    """Keep botocore from logging what STS answers, whatever the application's log level."""
    for name in _TALKATIVE_LOGGERS:
        logger = logging.getLogger(name)
        if _NO_DEBUG not in logger.filters:
            logger.addFilter(_NO_DEBUG)


class CredentialVendingError(HudiShimError):
    """Credentials for a table could not be vended (STS refused, or the table is not on S3)."""


@dataclass(frozen=True, slots=True)
class VendedKeys:
    """Keys for a table's files, and when they expire (None: they do not)."""

    access_key: str
    secret_key: str
    session_token: str | None
    expires_at: float | None


class CredentialVendor:
    """Vends credentials for tables on S3 (see the module)."""

    def __init__(self, role_arn: str | None = None, *, duration_seconds: int = 3600,
                 sts_endpoint: str | None = None) -> None:
        self.role_arn = role_arn
        self.duration_seconds = duration_seconds
        self.sts_endpoint = sts_endpoint
        self._lock = threading.Lock()
        self._cached: dict[tuple[str, ...], VendedKeys] = {}

    def config(self, table: str, storage: Storage, readable: list[str]) -> dict[str, str]:
        """The `loadTable` config for table `table` on `storage`, whose reader reads the folders
        `readable` (the table's and the published files'); {} for a table not on S3."""
        if not storage.is_remote or split(storage.root).scheme not in ("s3", "s3a", "s3n"):
            return {}
        arguments = s3_arguments(storage.options)
        keys = self._assumed(table, arguments, readable) if self.role_arn else self._own(table, arguments)
        config = {"s3.access-key-id": keys.access_key, "s3.secret-access-key": keys.secret_key}
        if keys.session_token:
            config["s3.session-token"] = keys.session_token
        if keys.expires_at is not None:
            config["s3.session-token-expires-at-ms"] = str(int(keys.expires_at * 1000))
        endpoint = _endpoint(arguments)
        if endpoint:
            config |= {"s3.endpoint": endpoint, "s3.path-style-access": "true"}
        region = arguments.get("region")
        if region:
            config |= {"client.region": region, "s3.region": region}
        return config

    @staticmethod
    def _own(table: str, arguments: dict[str, str]) -> VendedKeys:
        if "access_key" not in arguments:
            raise CredentialVendingError(f"table {table!r} has no storage credentials to vend: give it storage "
                                         "options with keys, or the server a role to assume (--vend-role-arn)")
        return VendedKeys(arguments["access_key"], arguments["secret_key"], arguments.get("session_token"), None)

    def _assumed(self, table: str, arguments: dict[str, str], readable: list[str]) -> VendedKeys:
        key = (table, *sorted(readable))
        with self._lock:
            cached = self._cached.get(key)
            if cached is not None and cached.expires_at is not None \
                    and cached.expires_at - time.time() > RENEW_SECONDS:
                return cached
            keys = self._assume(table, arguments, readable)
            self._cached[key] = keys
            return keys

    def _assume(self, table: str, arguments: dict[str, str], readable: list[str]) -> VendedKeys:
        try:
            import boto3
            from botocore.exceptions import BotoCoreError, ClientError
        except ImportError as exc:  # pragma: no cover - depends on the installed extras
            raise ImportError("vending STS credentials needs boto3: pip install 'hudi-shim[vend]'") from exc
        _silence_sdk_debug()
        client = boto3.client(
            "sts", endpoint_url=self.sts_endpoint or _endpoint(arguments) or None,
            region_name=arguments.get("region") or "us-east-1",
            aws_access_key_id=arguments.get("access_key"), aws_secret_access_key=arguments.get("secret_key"),
            aws_session_token=arguments.get("session_token"))
        try:
            answer = client.assume_role(RoleArn=self.role_arn, RoleSessionName=f"hudi-shim-{table}"[:64],
                                        DurationSeconds=self.duration_seconds,
                                        Policy=json.dumps(read_policy(readable)))
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "error")
            raise CredentialVendingError(f"STS refused to assume {self.role_arn} for table {table!r}: {code}") from None
        except BotoCoreError as exc:
            raise CredentialVendingError(f"STS could not be asked to assume {self.role_arn} for table {table!r}: "
                                         f"{type(exc).__name__}") from None
        credentials: dict[str, Any] = answer["Credentials"]
        return VendedKeys(credentials["AccessKeyId"], credentials["SecretAccessKey"], credentials["SessionToken"],
                          credentials["Expiration"].timestamp())


def read_policy(locations: list[str]) -> dict[str, Any]:
    """A session policy allowing to read the objects under `locations` (S3 URIs) and list them."""
    objects, listings = [], []
    for location in locations:
        if not is_remote(location):
            continue
        parts = split(location)
        objects.append(f"arn:aws:s3:::{parts.bucket}/{parts.key}/*" if parts.key else f"arn:aws:s3:::{parts.bucket}/*")
        listings.append((parts.bucket, f"{parts.key}/*" if parts.key else "*"))
    statements: list[dict[str, Any]] = [{"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": objects}]
    for bucket in sorted({b for b, _ in listings}):
        prefixes = sorted({p for b, p in listings if b == bucket} | {p.removesuffix("/*") for b, p in listings if b == bucket})
        statements.append({"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": f"arn:aws:s3:::{bucket}",
                           "Condition": {"StringLike": {"s3:prefix": prefixes}}})
    return {"Version": "2012-10-17", "Statement": statements}


def _endpoint(arguments: dict[str, str]) -> str:
    """The S3 endpoint's URL of pyarrow's arguments (`endpoint_override` and `scheme`), '' for AWS."""
    host = arguments.get("endpoint_override", "")
    if not host:
        return ""
    return host if "://" in host else f"{arguments.get('scheme', 'https')}://{host}"
