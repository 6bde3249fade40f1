"""The oracle's environment: Apache Hudi's Spark bundle on PySpark 3.5, in a venv of its own.

The project runs a newer PySpark than any Hudi bundle supports, so Hudi runs in a second
interpreter: a venv under the cache (`cache_dir("hudi-oracle", "venv-<digest of its pins>")`)
made on first use, and the bundle jar from the local Maven repository (`engines.maven.fetch`).
`run_driver` hands `driver.py` a request and returns its response.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engines import maven
from shim.errors import HudiShimError
from shim.local_cache import cache_dir

BUNDLE = "org.apache.hudi:hudi-spark3.5-bundle_2.12:1.2.0"
REQUIREMENTS = ("pyspark==3.5.6",)
DRIVER = Path(__file__).with_name("driver.py")
DRIVER_MODULES = (DRIVER, Path(__file__).with_name("writers.py"))  # what the driver runs


class OracleError(HudiShimError):
    """The oracle environment could not be set up, or Apache Hudi failed a job."""


@dataclass(frozen=True, slots=True)
class OracleEnv:
    """A ready oracle: the venv's interpreter and the bundle jar."""

    python: Path
    jar: Path

    @property
    def fingerprint(self) -> str:
        """What the oracle's results depend on: the bundle, the pins and the driver's code."""
        digest = hashlib.sha256()
        digest.update(BUNDLE.encode())
        digest.update("\n".join(REQUIREMENTS).encode())
        for module in DRIVER_MODULES:
            digest.update(module.read_bytes())
        return digest.hexdigest()[:16]


def _venv_dir() -> Path:
    pins = hashlib.sha256(("\n".join(REQUIREMENTS) + sys.version.split()[0]).encode()).hexdigest()[:12]
    return cache_dir("hudi-oracle") / f"venv-{pins}"


@contextlib.contextmanager
def cache_lock(name: str, timeout: float = 1800.0) -> Iterator[None]:
    """An exclusive lock on `cache_dir("hudi-oracle")/<name>.lock` (waits for another process)."""
    path = cache_dir("hudi-oracle") / f"{name}.lock"
    with open(path, "a+") as handle:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise OracleError(f"waited {timeout:.0f} s for {path}, held by another process") from None
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_env() -> OracleEnv:
    """The oracle environment, made on first use (a venv with PySpark 3.5, the bundle jar).

    Raises:
        OracleError: no Java, the venv or the jar could not be made.
    """
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise OracleError("the Apache Hudi oracle needs Java 17 (no `java` on PATH, no JAVA_HOME)")
    venv = _venv_dir()
    python = venv / "bin" / "python"
    ready = venv / ".ready"
    with cache_lock("venv"):
        if not ready.is_file():
            shutil.rmtree(venv, ignore_errors=True)
            _run([sys.executable, "-m", "venv", str(venv)], "create the oracle venv")
            _run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *REQUIREMENTS],
                 f"install {' '.join(REQUIREMENTS)} into {venv}")
            ready.write_text("\n".join(REQUIREMENTS) + "\n")
    try:
        jar = maven.fetch(BUNDLE)
    except maven.ArtifactError as exc:
        raise OracleError(f"Apache Hudi's Spark bundle is needed for the oracle: {exc}") from exc
    return OracleEnv(python, jar)


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=1800)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip().splitlines()[-8:]
        raise OracleError(f"could not {what}: " + " | ".join(tail))


def run_driver(env: OracleEnv, jobs: list[dict[str, Any]], *, conf: dict[str, str] | None = None,
               timeout: float = 1800.0, check: bool = True) -> dict[str, Any]:
    """Run jobs (see `driver.py`) in one Spark session of the oracle; returns the response (with
    `check=False` also when a job failed: its error, and no later job, is in it).

    Raises:
        OracleError: the driver crashed, timed out, or (with `check`) a job failed (naming the
            job and Hudi's error).
    """
    with tempfile.TemporaryDirectory(prefix="hudi-oracle-") as scratch:
        request = Path(scratch, "request.json")
        response = Path(scratch, "response.json")
        request.write_text(json.dumps({"jar": str(env.jar), "warehouse": str(Path(scratch, "warehouse")),
                                       "conf": conf or {}, "jobs": jobs}))
        environment = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": str(env.python),
                       "PYSPARK_DRIVER_PYTHON": str(env.python), "TZ": "UTC"}
        for key in ("SPARK_HOME", "PYTHONPATH", "PYSPARK_SUBMIT_ARGS"):
            environment.pop(key, None)
        try:
            done = subprocess.run([str(env.python), str(DRIVER), str(request), str(response)], cwd=scratch,
                                  env=environment, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired as exc:
            raise OracleError(f"the Apache Hudi oracle took over {timeout:.0f} s") from exc
        if not response.is_file():
            tail = (done.stdout + done.stderr).strip().splitlines()[-12:]
            raise OracleError(f"the Apache Hudi oracle exited {done.returncode}: " + " | ".join(tail))
        result: dict[str, Any] = json.loads(response.read_text())
    if check:
        check_response(result)
    return result


def check_response(response: dict[str, Any]) -> None:
    """Raise the first failed job's error.

    Raises:
        OracleError: naming the job, its table and Hudi's error.
    """
    for job in response["jobs"]:
        if "error" in job:
            raise OracleError(f"Apache Hudi failed a {job['kind']} job on {job['path']}: {job['error']}\n"
                              f"{job.get('traceback', '')}")
