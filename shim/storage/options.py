"""Storage options and locations: which file system holds a location (the local one for paths and
`file://` URIs, pyarrow's for object stores, `s3://`, `s3a://`, `gs://`, and HDFS, `hdfs://`, where
libhdfs is present) and with which settings.

Options for a store come, in this order, from the `storage_options` a table is opened with (a
table's `Storage` keeps them: there is no process-wide registry), from the usual environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
`AWS_SESSION_TOKEN`, `AWS_REGION`, `AWS_ENDPOINT_URL`; pyarrow's own credential chain for the rest).
Keys may be spelled as pyarrow spells them (`access_key`, `endpoint_override`) or as object_store
and hudi-rs do (`aws_access_key_id`, `aws_endpoint_url`, `aws_allow_http`). Secrets are never
logged nor put in error messages. One option is the shim's own, not the file system's:
`conditional_writes` (`auto`, `required`, `off`; see `shim.storage.conditional`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from urllib.parse import urlparse

import pyarrow.fs as pafs

from shim.errors import InvalidArgumentError

S3_SCHEMES = ("s3", "s3a", "s3n")
GCS_SCHEMES = ("gs", "gcs")
HDFS_SCHEMES = ("hdfs", "viewfs")
REMOTE_SCHEMES = (*S3_SCHEMES, *GCS_SCHEMES, *HDFS_SCHEMES)

_S3_ALIASES = {
    "aws_access_key_id": "access_key", "access_key_id": "access_key", "access_key": "access_key",
    "aws_secret_access_key": "secret_key", "secret_access_key": "secret_key", "secret_key": "secret_key",
    "aws_session_token": "session_token", "session_token": "session_token",
    "aws_region": "region", "region": "region",
    "aws_endpoint_url": "endpoint_override", "aws_endpoint": "endpoint_override", "endpoint_url": "endpoint_override",
    "endpoint": "endpoint_override", "endpoint_override": "endpoint_override",
    "scheme": "scheme", "aws_allow_http": "allow_http", "allow_http": "allow_http",
    "connect_timeout": "connect_timeout", "request_timeout": "request_timeout",
    "force_virtual_addressing": "force_virtual_addressing", "anonymous": "anonymous",
}
_SECRET_KEYS = ("secret_key", "session_token", "access_key")

CONDITIONAL_WRITES = "conditional_writes"
"""The storage option saying whether writers use the store's conditional writes."""


class ConditionalWrites(Enum):
    """Values of the `conditional_writes` storage option."""

    AUTO = "auto"
    """Use them where the store honours them (probed once per store); elsewhere one writer at a time."""
    REQUIRED = "required"
    """Use them; a store that does not honour them (or no `obstore`) fails the write, saying so."""
    OFF = "off"
    """Never: one writer at a time, as before conditional writes (a check, then a write)."""


@dataclass(frozen=True, slots=True)
class RemoteLocation:
    """A URI split into its scheme, its bucket (or HDFS authority) and the path inside it."""

    scheme: str
    bucket: str
    key: str

    @property
    def root(self) -> str:
        return f"{self.scheme}://{self.bucket}"


def scheme_of(location: str) -> str:
    """The URI scheme of `location` ('' for a plain local path)."""
    if "://" not in location:
        return "file" if location.startswith("file:") else ""
    return location.split("://", 1)[0].lower()


def is_remote(location: str) -> bool:
    """Whether `location` names an object store or HDFS rather than the local file system."""
    return scheme_of(location) in REMOTE_SCHEMES


def split(location: str) -> RemoteLocation:
    """The parts of a remote URI; the key has no leading or trailing slash."""
    parsed = urlparse(location)
    scheme = parsed.scheme.lower()
    if scheme not in REMOTE_SCHEMES:
        raise InvalidArgumentError(f"unsupported location {location!r}: use a local path, file://, "
                                   + ", ".join(f"{s}://" for s in REMOTE_SCHEMES))
    if not parsed.netloc:
        raise InvalidArgumentError(f"location {location!r} names no bucket")
    return RemoteLocation(scheme, parsed.netloc, parsed.path.strip("/"))


def normalize(location: str) -> str:
    """`scheme://bucket/key` with no trailing slash and no doubled slashes in the key."""
    parts = split(location)
    key = "/".join(p for p in parts.key.split("/") if p)
    return f"{parts.root}/{key}" if key else parts.root


STORAGE_OPTION_PREFIX = "storage."
"""Spark data source options under this prefix are storage options (`storage.aws_region`)."""


def split_storage_options(options: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(the other options, the storage options without their `storage.` prefix)."""
    rest = {k: v for k, v in options.items() if not k.startswith(STORAGE_OPTION_PREFIX)}
    given = {k[len(STORAGE_OPTION_PREFIX):]: v for k, v in options.items() if k.startswith(STORAGE_OPTION_PREFIX)}
    return rest, given


def file_system_options(options: Mapping[str, str]) -> dict[str, str]:
    """`options` without the shim's own (`conditional_writes`)."""
    return {k: v for k, v in options.items() if k != CONDITIONAL_WRITES}


def conditional_writes_mode(options: Mapping[str, str], location: str = "") -> ConditionalWrites:
    """The `conditional_writes` option of `options` (default `auto`)."""
    value = options.get(CONDITIONAL_WRITES, ConditionalWrites.AUTO.value)
    try:
        return ConditionalWrites(value.strip().lower())
    except ValueError:
        raise InvalidArgumentError(f"storage option {CONDITIONAL_WRITES}={value!r} for {location}: use "
                                   + ", ".join(mode.value for mode in ConditionalWrites)) from None


def normalized_options(options: Mapping[str, object] | None) -> dict[str, str]:
    """Storage options as given, keys lower-cased and values as text."""
    return {str(k).lower(): str(v) for k, v in (options or {}).items()}


def s3_arguments(options: Mapping[str, str]) -> dict[str, str]:
    """The S3 settings of `options` as pyarrow names them (`access_key`, `endpoint_override`,
    `scheme`...), then the AWS_* environment's."""
    return _s3_arguments(file_system_options(options))


def build_filesystem(parts: RemoteLocation, options: Mapping[str, str]) -> pafs.FileSystem:
    """The pyarrow file system of a store (`parts`: its scheme and bucket) with `options`."""
    settings = file_system_options(options)
    if parts.scheme in S3_SCHEMES:
        settings = _s3_arguments(settings)
    return _build(parts, settings)


def filesystem_path(parts: RemoteLocation) -> str:
    """The path pyarrow's file system wants for a location (`bucket/key`; `/key` on HDFS)."""
    if parts.scheme in HDFS_SCHEMES:
        return "/" + parts.key
    return f"{parts.bucket}/{parts.key}" if parts.key else parts.bucket


def redacted(options: Mapping[str, object]) -> dict[str, object]:
    """`options` with the values of credentials replaced, for logs and messages."""
    return {k: ("***" if _S3_ALIASES.get(str(k).lower(), str(k).lower()) in _SECRET_KEYS else v)
            for k, v in options.items()}


#: What the AWS SDK needs to reach S3-compatible servers that do not take its newer streamed
#: checksums (s3proxy, older MinIO and Ceph: `XAmzContentSHA256Mismatch`); set, unless set
#: already, when a store is reached through its own endpoint (AWS itself accepts both).
COMPATIBLE_CHECKSUMS = {"AWS_REQUEST_CHECKSUM_CALCULATION": "when_required",
                        "AWS_RESPONSE_CHECKSUM_VALIDATION": "when_required"}


def _build(parts: RemoteLocation, options: Mapping[str, str]) -> pafs.FileSystem:
    if parts.scheme in S3_SCHEMES:
        arguments = _typed_s3_arguments(options)
        if arguments.get("endpoint_override"):  # the SDK reads them when the client is made
            for name, value in COMPATIBLE_CHECKSUMS.items():
                os.environ.setdefault(name, value)
        return pafs.S3FileSystem(**arguments)
    if parts.scheme in GCS_SCHEMES:
        return pafs.GcsFileSystem(**{k: v for k, v in options.items()
                                     if k in ("access_token", "endpoint_override", "scheme", "project_id",
                                              "default_bucket_location")})
    port = int(options.get("port", 8020))
    host = parts.bucket.split(":")[0]
    if ":" in parts.bucket:
        port = int(parts.bucket.split(":")[1])
    return pafs.HadoopFileSystem(host, port, user=options.get("user"))


def _s3_arguments(options: Mapping[str, str]) -> dict[str, str]:
    """pyarrow's S3FileSystem arguments from `options` and the AWS_* environment."""
    given: dict[str, str] = {}
    for key, value in options.items():
        name = _S3_ALIASES.get(key)
        if name is None:
            raise InvalidArgumentError(f"unknown S3 storage option {key!r}; known: {', '.join(sorted(_S3_ALIASES))}")
        given[name] = value
    environment = {"access_key": "AWS_ACCESS_KEY_ID", "secret_key": "AWS_SECRET_ACCESS_KEY",
                   "session_token": "AWS_SESSION_TOKEN", "region": "AWS_REGION",
                   "endpoint_override": "AWS_ENDPOINT_URL"}
    for name, variable in environment.items():
        fallback = {"region": "AWS_DEFAULT_REGION", "endpoint_override": "AWS_ENDPOINT_URL_S3"}.get(name, variable)
        value = os.environ.get(variable) or os.environ.get(fallback, "")
        if name not in given and value:
            given[name] = value
    arguments: dict[str, str] = {}
    endpoint = given.pop("endpoint_override", "")
    allow_http = given.pop("allow_http", "").lower() in ("1", "true", "yes")
    if endpoint:
        if endpoint.startswith("http://"):
            arguments["scheme"] = "http"
            endpoint = endpoint[len("http://"):]
        elif endpoint.startswith("https://"):
            endpoint = endpoint[len("https://"):]
        arguments["endpoint_override"] = endpoint
    if allow_http and "scheme" not in given:
        arguments["scheme"] = "http"
    arguments.update(given)
    if ("access_key" in arguments) != ("secret_key" in arguments):
        raise InvalidArgumentError("S3 storage options need both an access key and a secret key, or neither")
    return arguments


def _typed_s3_arguments(arguments: Mapping[str, str]) -> dict[str, object]:
    """`_s3_arguments`'s text values as the types pyarrow's S3FileSystem takes."""
    typed: dict[str, object] = dict(arguments)
    for name in ("connect_timeout", "request_timeout"):
        if name in typed:
            typed[name] = float(arguments[name])
    for name in ("force_virtual_addressing", "anonymous"):
        if name in typed:
            typed[name] = arguments[name].lower() in ("1", "true", "yes")
    return typed
