"""Conditional writes on object stores: create an object only where none is (`If-None-Match: *`;
on GCS a generation precondition), replace one only as it was read (`If-Match: <ETag>`, the
generation), through `obstore` (the `conditional` extra). pyarrow's file systems can ask for
neither; without them two writers on two machines can both "create" one name.

Not every S3-compatible store honours the headers: some ignore them and overwrite (s3proxy 2.6.0
does). `support` probes a store once per process: it creates a probe object twice and replaces it
on a made-up ETag; either write succeeding means the store ignores the precondition. The verdict
is remembered by the table's storage that probed it.

The `conditional_writes` storage option (`shim.storage.options`) says what writers do with it:
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from shim.errors import StorageError
from shim.storage.options import (
    GCS_SCHEMES,
    S3_SCHEMES,
    ConditionalWrites,
    conditional_writes_mode,
    s3_arguments,
    split,
)

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


_KNOWN: dict[tuple[str, str, frozenset[tuple[str, str]]], Support] = {}
"""Verdicts of the stores probed, by store and the options they were reached with (a cache of
what a store does, never consulted for another store or other options)."""
_WARNED: set[tuple[str, str, frozenset[tuple[str, str]]]] = set()
_KNOWN_LOCK = threading.Lock()


class Conditional:
    """A store's conditional writes, for the locations of one table's storage (its own client,
    built from its options). A store reached with the same options is probed once per process."""

    def __init__(self, scheme: str, bucket: str, options: Mapping[str, str],
                 remove: Callable[[str], object] | None = None) -> None:
        """`remove` deletes one object by its location (the probe's; default: through obstore,
        whose bulk delete some stores do not implement)."""
        self.scheme, self.bucket, self.options = scheme, bucket, dict(options)
        self._remove = remove
        self.mode = conditional_writes_mode(self.options, f"{scheme}://{bucket}")
        self._lock = threading.Lock()
        self._client: Any = None
        self._key = (scheme, bucket, frozenset(self.options.items()))

    def enabled(self, location: str) -> bool:
        """Whether writes to `location` use conditional writes (see the module's docstring).

        Raises:
            ConditionalWritesError: `conditional_writes=required` and the store does not honour them.
        """
        if self.mode is ConditionalWrites.OFF:
            return False
        verdict = self.support(location)
        if verdict.honoured:
            return True
        if self.mode is ConditionalWrites.REQUIRED:
            raise ConditionalWritesError(
                f"{location}: the store cannot make writes conditional ({verdict.reason}), and the storage "
                "option conditional_writes=required asks for them: writers on several machines could both "
                "create one instant. Use a store that honours If-None-Match and If-Match (AWS S3, GCS, MinIO, "
                "moto), or conditional_writes=auto to write from one machine at a time",
                location=location)
        with _KNOWN_LOCK:
            first = self._key not in _WARNED
            _WARNED.add(self._key)
        if first:
            log.warning("%s: the store cannot make writes conditional (%s): instants are created with a check, "
                        "then a write, and the table's lock is a local file, so only one machine may write "
                        "its tables at a time (storage option conditional_writes=required makes this an error)",
                        split(location).root, verdict.reason)
        return False

    def support(self, location: str) -> Support:
        """Whether the store honours conditional writes (probed once)."""
        if self.scheme not in (*S3_SCHEMES, *GCS_SCHEMES):
            return Support(False, f"{self.scheme}:// has no conditional writes in this writer")
        with _KNOWN_LOCK:
            known = _KNOWN.get(self._key)
        if known is not None:
            return known
        try:
            client = self._store()
        except ImportError:
            verdict = Support(False, f"the obstore package is not installed (pip install '{EXTRA}')")
        else:
            verdict = _probe(location, client, self._remove)
        with _KNOWN_LOCK:
            return _KNOWN.setdefault(self._key, verdict)

    def create(self, location: str, data: bytes) -> Version | None:
        """Write `data` at `location` unless an object is there; its version, or None when one was."""
        import obstore
        from obstore.exceptions import AlreadyExistsError, PreconditionError

        client, key = self._store(), split(location).key
        try:
            result = _guarded(location, "create", lambda: obstore.put(client, key, data, mode="create"))
        except (AlreadyExistsError, PreconditionError):
            return None
        return Version(result.get("e_tag"), result.get("version"))

    def replace(self, location: str, data: bytes, expected: Version) -> Version | None:
        """Write `data` at `location` if the object there is still `expected`; its new version, or
        None when it changed or is gone."""
        import obstore
        from obstore.exceptions import AlreadyExistsError, PreconditionError

        client, key = self._store(), split(location).key
        try:
            result = _guarded(location, "replace", lambda: obstore.put(client, key, data,
                                                                       mode=expected.precondition()))
        except (PreconditionError, FileNotFoundError, AlreadyExistsError):
            return None
        return Version(result.get("e_tag"), result.get("version"))

    def read(self, location: str) -> tuple[bytes, Version] | None:
        """The object at `location` and its version; None when there is none."""
        import obstore

        client, key = self._store(), split(location).key

        def get() -> tuple[bytes, Version]:
            result = obstore.get(client, key)
            meta = result.meta
            return bytes(result.bytes()), Version(meta.get("e_tag"), meta.get("version"))

        try:
            return _guarded(location, "read", get)
        except FileNotFoundError:  # obstore's "not found"
            return None

    def _store(self) -> Any:
        """The obstore client of the store (built once)."""
        with self._lock:
            if self._client is None:
                settings = s3_arguments(self.options) if self.scheme in S3_SCHEMES else {}
                self._client = _build(self.scheme, self.bucket, settings)
            return self._client


def _probe(location: str, client: Any, remove: Callable[[str], object] | None) -> Support:
    """Create a probe object twice, then replace it on a made-up version; remove it (with
    `remove`, given the probe's location, if given)."""
    import obstore
    from obstore.exceptions import AlreadyExistsError, BaseError, PreconditionError

    key = split(location).key
    marker = key.find(".hoodie")
    folder = f"{key[:marker]}.hoodie/.aux" if marker >= 0 else posixpath.dirname(key)
    probe = posixpath.join(folder, f".hudi-shim-probe-{uuid.uuid4().hex}")
    try:
        obstore.put(client, probe, b"first", mode="create")
        try:
            obstore.put(client, probe, b"second", mode="create")
            return Support(False, "it overwrote an object on a create with If-None-Match: *")
        except AlreadyExistsError:
            pass
        try:
            obstore.put(client, probe, b"third", mode={"e_tag": '"0123456789abcdef0123456789abcdef"',
                                                         "version": "1"})
            return Support(False, "it overwrote an object on a replace with If-Match of another ETag")
        except PreconditionError:
            pass
        return Support(True)
    except BaseError as error:  # denied, unreachable, not implemented by the store
        return Support(False, f"probing it failed: {_reason(error)}")
    finally:
        try:
            if remove is not None:
                remove(f"{split(location).root}/{probe}")
            else:
                obstore.delete(client, probe)
        except (BaseError, OSError) as error:  # a probe object left behind is harmless
            log.debug("%s: could not remove the probe object %s: %s", location, probe, error)


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
