"""Conditional writes on object stores: create an object only where none is (`If-None-Match: *`;
on GCS a generation precondition), replace one only as it was read (`If-Match: <ETag>`, the
generation), through `obstore` (the `conditional` extra). pyarrow's file systems can ask for
neither; without them two writers on two machines can both "create" one name.

Not every S3-compatible store honours the headers: some ignore them and overwrite (s3proxy 2.6.0
does). `support` probes a store once per process: it creates a probe object twice and replaces it
on a made-up ETag; either write succeeding means the store ignores the precondition. The verdict
is remembered per store (scheme, bucket, endpoint and credentials).

The `conditional_writes` storage option (`shim.filesystems`) says what writers do with it:
`auto` (the default) uses conditional writes where the probe found them honoured and otherwise
falls back to one writer at a time (a check, then a write; local lock files), warning once per
store; `required` makes that fallback an error (`ConditionalWritesError`); `off` never uses them.
"""

from __future__ import annotations

import datetime
import logging
import posixpath
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from shim.filesystems import (
    GCS_SCHEMES,
    S3_SCHEMES,
    ConditionalWrites,
    conditional_writes_mode,
    s3_arguments,
    split,
)
from shim.object_store import StorageError

if TYPE_CHECKING:
    from obstore import UpdateVersion

log = logging.getLogger(__name__)
T = TypeVar("T")

EXTRA = "hudi-shim[conditional]"


class ConditionalWritesError(StorageError):
    """The store cannot make a write conditional, and the storage options require it."""


@dataclass(frozen=True, slots=True)
class Version:
    """Which version of an object a conditional replace expects (S3: ETag; GCS: generation)."""

    e_tag: str | None
    version: str | None

    def precondition(self) -> UpdateVersion:
        """obstore's `UpdateVersion` for this version."""
        wanted: UpdateVersion = {}
        if self.e_tag is not None:
            wanted["e_tag"] = self.e_tag
        if self.version is not None:
            wanted["version"] = self.version
        return wanted


@dataclass(frozen=True, slots=True)
class Support:
    """Whether a store honours conditional writes, and if not, why."""

    honoured: bool
    reason: str = ""


@dataclass(frozen=True, slots=True)
class _Store:
    key: tuple[str, str, frozenset[tuple[str, str]]]
    client: Any  # an obstore store
    path: str


_lock = threading.Lock()
_clients: dict[tuple[str, str, frozenset[tuple[str, str]]], Any] = {}
_verdicts: dict[tuple[str, str, frozenset[tuple[str, str]]], Support] = {}
_warned: set[tuple[str, str, frozenset[tuple[str, str]]]] = set()


def enabled(location: str) -> bool:
    """Whether writes to `location` use conditional writes (see the module's docstring).

    Raises:
        ConditionalWritesError: `conditional_writes=required` and the store does not honour them.
    """
    mode = conditional_writes_mode(location)
    if mode is ConditionalWrites.OFF:
        return False
    verdict = support(location)
    if verdict.honoured:
        return True
    if mode is ConditionalWrites.REQUIRED:
        raise ConditionalWritesError(
            f"{location}: the store cannot make writes conditional ({verdict.reason}), and the storage "
            "option conditional_writes=required asks for them: writers on several machines could both "
            "create one instant. Use a store that honours If-None-Match and If-Match (AWS S3, GCS, MinIO, "
            "moto), or conditional_writes=auto to write from one machine at a time",
            location=location)
    key = _store(location).key
    with _lock:
        first = key not in _warned
        _warned.add(key)
    if first:
        log.warning("%s: the store cannot make writes conditional (%s): instants are created with a check, "
                    "then a write, and the table's lock is a local file, so only one machine may write "
                    "its tables at a time (storage option conditional_writes=required makes this an error)",
                    split(location).root, verdict.reason)
    return False


def support(location: str) -> Support:
    """Whether the store holding `location` honours conditional writes (probed once per store)."""
    if split(location).scheme not in (*S3_SCHEMES, *GCS_SCHEMES):
        return Support(False, f"{split(location).scheme}:// has no conditional writes in this writer")
    try:
        store = _store(location)
    except ImportError:
        return Support(False, f"the obstore package is not installed (pip install '{EXTRA}')")
    with _lock:
        known = _verdicts.get(store.key)
    if known is not None:
        return known
    verdict = _probe(location, store)
    with _lock:
        _verdicts.setdefault(store.key, verdict)
        return _verdicts[store.key]


def _probe(location: str, store: _Store) -> Support:
    """Create a probe object twice, then replace it on a made-up version; remove it."""
    import obstore
    from obstore.exceptions import AlreadyExistsError, BaseError, PreconditionError

    key = split(location).key
    marker = key.find(".hoodie")
    folder = f"{key[:marker]}.hoodie/.aux" if marker >= 0 else posixpath.dirname(key)
    probe = posixpath.join(folder, f".hudi-shim-probe-{uuid.uuid4().hex}")
    try:
        obstore.put(store.client, probe, b"first", mode="create")
        try:
            obstore.put(store.client, probe, b"second", mode="create")
            return Support(False, "it overwrote an object on a create with If-None-Match: *")
        except AlreadyExistsError:
            pass
        try:
            obstore.put(store.client, probe, b"third", mode={"e_tag": '"0123456789abcdef0123456789abcdef"',
                                                                "version": "1"})
            return Support(False, "it overwrote an object on a replace with If-Match of another ETag")
        except PreconditionError:
            pass
        return Support(True)
    except BaseError as error:  # denied, unreachable, not implemented by the store
        return Support(False, f"probing it failed: {_reason(error)}")
    finally:
        try:
            obstore.delete(store.client, probe)
        except BaseError as error:  # a probe object left behind is harmless
            log.debug("%s: could not remove the probe object %s: %s", location, probe, error)


def create(location: str, data: bytes) -> Version | None:
    """Write `data` at `location` unless an object is there; its version, or None when one was."""
    import obstore
    from obstore.exceptions import AlreadyExistsError, PreconditionError

    store = _store(location)
    try:
        result = _guarded(location, "create", lambda: obstore.put(store.client, store.path, data, mode="create"))
    except (AlreadyExistsError, PreconditionError):
        return None
    return Version(result.get("e_tag"), result.get("version"))


def replace(location: str, data: bytes, expected: Version) -> Version | None:
    """Write `data` at `location` if the object there is still `expected`; its new version, or None
    when it changed or is gone."""
    import obstore
    from obstore.exceptions import AlreadyExistsError, PreconditionError

    store = _store(location)
    try:
        result = _guarded(location, "replace", lambda: obstore.put(store.client, store.path, data,
                                                                   mode=expected.precondition()))
    except (PreconditionError, FileNotFoundError, AlreadyExistsError):
        return None
    return Version(result.get("e_tag"), result.get("version"))


def read(location: str) -> tuple[bytes, Version] | None:
    """The object at `location` and its version; None when there is none."""
    import obstore

    store = _store(location)

    def get() -> tuple[bytes, Version]:
        result = obstore.get(store.client, store.path)
        meta = result.meta
        return bytes(result.bytes()), Version(meta.get("e_tag"), meta.get("version"))

    try:
        return _guarded(location, "read", get)
    except FileNotFoundError:  # obstore's "not found"
        return None


def _guarded(location: str, action: str, call: Callable[[], T]) -> T:
    """`call()`; obstore's failures other than the expected conditions as `StorageError`."""
    from obstore.exceptions import AlreadyExistsError, BaseError, PreconditionError

    try:
        return call()
    except (AlreadyExistsError, PreconditionError, FileNotFoundError):
        raise
    except BaseError as error:
        raise StorageError(f"cannot {action} {location}: {_reason(error)}", location=location) from None


def _reason(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:400]}"


def _store(location: str) -> _Store:
    """The obstore client of the store holding `location` (built once per settings) and the path in it."""
    parts = split(location)
    if parts.scheme in S3_SCHEMES:
        settings = s3_arguments(location)
    else:
        settings = {}
    key = (parts.scheme, parts.bucket, frozenset(settings.items()))
    with _lock:
        client = _clients.get(key)
    if client is None:
        client = _build(parts.scheme, parts.bucket, settings)
        with _lock:
            client = _clients.setdefault(key, client)
    return _Store(key, client, parts.key)


def _build(scheme: str, bucket: str, settings: dict[str, str]) -> Any:
    try:
        from obstore.store import GCSStore, S3Store
    except ImportError as error:
        raise ImportError(f"conditional writes need the obstore package: pip install '{EXTRA}'") from error
    if scheme in GCS_SCHEMES:
        return GCSStore(bucket)  # credentials from obstore's GOOGLE_* environment
    config: dict[str, Any] = {}
    client: dict[str, Any] = {}
    names = {"access_key": "access_key_id", "secret_key": "secret_access_key", "session_token": "session_token",
             "region": "region"}
    for name, value in settings.items():
        if name in names:
            config[names[name]] = value
    if "endpoint_override" in settings:
        config["endpoint"] = f"{settings.get('scheme', 'https')}://{settings['endpoint_override']}"
    if settings.get("scheme") == "http":
        client["allow_http"] = True
    if settings.get("force_virtual_addressing", "").lower() in ("1", "true", "yes"):
        config["virtual_hosted_style_request"] = True
    if settings.get("anonymous", "").lower() in ("1", "true", "yes"):
        config["skip_signature"] = True
    for name, option in (("connect_timeout", "connect_timeout"), ("request_timeout", "timeout")):
        if name in settings:
            client[option] = datetime.timedelta(seconds=float(settings[name]))
    return S3Store(bucket, config=config, client_options=client or None)  # type: ignore[arg-type]
