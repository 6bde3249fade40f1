"""hudi-rs's own test tables, from a package registry: the source distribution of `hudi` 0.5.0 on
PyPI (the hudi-rs release the differential tests compare with) ships hudi-rs's `crates/test/data`,
among them the tables Apache Hudi 1.2 wrote with Lance base files.

No crate on crates.io carries them (hudi-rs publishes `hudi`, `hudi-core` and `hudi-datafusion`,
whose packages leave the test data out). The sdist is fetched once into the project's cache
(`$HUDI_SHIM_CACHE/hudi-rs/`), checked against its SHA-256, and only the wanted zips are taken
from it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tarfile
import urllib.request
from pathlib import Path, PurePosixPath

from shim.local_cache import cache_dir

SDIST = "hudi-0.5.0.tar.gz"
SDIST_SHA256 = "dc8e1f3405d262491b97e8f009bcae2cbd66279dd2a8300b738ecdc3d9cba51d"
_DATA = "hudi-0.5.0/crates/test/data/"
_FAMILIES = {"quickstart_trips_table": "trips", "sample_table": "sample"}


class HudiRsDataUnavailable(Exception):
    """The registry could not be reached (no network): tests needing the tables skip."""


def lance_table_zips() -> dict[str, Path]:
    """hudi-rs's tables with Lance base files: name (`sample__cow__v9_lance_nonpartitioned`, as the
    shared tables are named) -> zip in the cache."""
    return table_zips(lambda member: "lance" in PurePosixPath(member).name)


def table_zips(wanted) -> dict[str, Path]:
    """The zips of hudi-rs's test data whose path (under `crates/test/data/`) `wanted` accepts."""
    folder = cache_dir("hudi-rs", "0.5.0")
    archive = _sdist()
    zips: dict[str, Path] = {}
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            inner = member.name.removeprefix(_DATA)
            if member.name == inner or not member.isfile() or not inner.endswith(".zip") or not wanted(inner):
                continue
            parts = inner.removesuffix(".zip").split("/")
            name = "__".join([_FAMILIES.get(parts[0], parts[0]), *parts[1:]])
            target = folder / f"{name}.zip"
            if not target.exists() or target.stat().st_size != member.size:
                source = tar.extractfile(member)
                assert source is not None
                partial = target.with_suffix(".part")
                partial.write_bytes(source.read())
                partial.replace(target)
            zips[name] = target
    return dict(sorted(zips.items()))


def _sdist() -> Path:
    target = cache_dir("hudi-rs") / SDIST
    if target.exists() and _sha256(target) == SDIST_SHA256:
        return target
    url = _sdist_url()
    partial = target.with_suffix(".part")
    try:
        with urllib.request.urlopen(url, timeout=120) as response, open(partial, "wb") as out:
            while chunk := response.read(1 << 20):
                out.write(chunk)
    except OSError as exc:
        raise HudiRsDataUnavailable(f"cannot download {url}: {exc}") from exc
    digest = _sha256(partial)
    if digest != SDIST_SHA256:
        partial.unlink()
        raise AssertionError(f"{url} has SHA-256 {digest}, not {SDIST_SHA256}")
    partial.replace(target)
    return target


def _sdist_url() -> str:
    """The sdist's address from the package index's simple page (PEP 691 JSON, else HTML)."""
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    page = f"{index}/hudi/"
    request = urllib.request.Request(page, headers={"Accept": "application/vnd.pypi.simple.v1+json, text/html;q=0.1"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            kind = response.headers.get("Content-Type", "")
            body = response.read().decode("utf-8")
    except OSError as exc:
        raise HudiRsDataUnavailable(f"cannot reach the package index {page}: {exc}") from exc
    if "json" in kind:
        links = [(f["filename"], f["url"]) for f in json.loads(body)["files"]]
    else:
        links = [(m.group(2).split("/")[-1].split("#")[0], m.group(2))
                 for m in re.finditer(r"<a\s[^>]*href=([\"'])([^\"']+)\1", body)]
    for filename, url in links:
        if filename == SDIST:
            return urllib.request.urljoin(page, url)
    raise HudiRsDataUnavailable(f"the package index {page} lists no {SDIST}")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
