"""A real S3-compatible server on 127.0.0.1 for `hudi-shim s3proxy`, tests, benches and the docs:
s3proxy (`org.gaul:s3proxy`, Apache 2.0) from Maven Central, keeping its objects in memory or in a
local folder. The tests' moto server (`tests/moto_s3.py`) starts through `wait_until_answering`.

    server = start_s3proxy(Path("/tmp/s3"))
    server.create_bucket("lake")
    shim.open_table("s3://lake/trips", storage_options=server.storage_options())
    server.stop()

s3proxy 2.6.0 ignores conditional writes (`If-None-Match: *`, `If-Match`: it overwrites); moto
honours them: tests of several writers use moto, tests of the fallback s3proxy.

s3proxy checks AWS signatures (v2 and v4) with the keys it is started with, but does not take the
newer SDKs' streamed checksums (`x-amz-content-sha256: STREAMING-UNSIGNED-PAYLOAD-TRAILER`):
clients of it set `AWS_REQUEST_CHECKSUM_CALCULATION=when_required` (`CLIENT_ENVIRONMENT`).
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.foreground import stop_process
from engines.maven import Artifact, fetch
from shim.errors import HudiShimError

S3PROXY = Artifact("org.gaul", "s3proxy", "2.6.0", "jar", "jar-with-dependencies")
LOOPBACK = "127.0.0.1"
REGION = "us-east-1"
CLIENT_ENVIRONMENT = {"AWS_REQUEST_CHECKSUM_CALCULATION": "when_required",
                      "AWS_RESPONSE_CHECKSUM_VALIDATION": "when_required"}
"""What an AWS SDK client of s3proxy needs in its environment (see the module's docstring)."""


class S3ServerError(HudiShimError):
    """The S3-compatible server did not start."""


@dataclass
class S3Server:
    """A running S3-compatible server: its endpoint on 127.0.0.1, its keys, where it keeps objects."""

    port: int
    access_key: str
    secret_key: str
    data_dir: Path
    log_path: Path
    process: subprocess.Popen[bytes] = field(repr=False)

    @property
    def endpoint(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def storage_options(self) -> dict[str, Any]:
        """`storage_options` for `shim.open_table` and the catalog's settings."""
        return {"endpoint_override": self.endpoint, "access_key": self.access_key,
                "secret_key": self.secret_key, "region": REGION, "scheme": "http"}

    def environment(self) -> dict[str, str]:
        """The `AWS_*` variables by which an SDK client (or the shim, with no `storage_options`)
        reaches this server."""
        return {"AWS_ACCESS_KEY_ID": self.access_key, "AWS_SECRET_ACCESS_KEY": self.secret_key,
                "AWS_ENDPOINT_URL": self.endpoint, "AWS_REGION": REGION, "AWS_DEFAULT_REGION": REGION,
                **CLIENT_ENVIRONMENT}

    def create_bucket(self, name: str) -> None:
        """Make a bucket (through the S3 API)."""
        import pyarrow.fs as pafs

        pafs.S3FileSystem(**self.storage_options(), allow_bucket_creation=True).create_dir(name)

    def stop(self) -> None:
        stop_process(self.process, 20)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


def start_s3proxy(folder: Path, *, port: int | None = None, access_key: str = "hudi-shim",
                  secret_key: str | None = None, on_disk: bool = False, heap: str = "2g",
                  startup_seconds: float = 60.0) -> S3Server:
    """Start s3proxy on 127.0.0.1 with its objects in memory, or with `on_disk` under
    `folder/data` as files (a folder per bucket; that store cannot hold a key and a longer key
    under it as a folder, nor delete a prefix's marker before its objects: use it for data that
    must outlive the server)."""
    jar = fetch(S3PROXY)
    java = shutil.which("java", path=os.path.join(os.environ["JAVA_HOME"], "bin")) if "JAVA_HOME" in os.environ \
        else shutil.which("java")
    if java is None:
        raise S3ServerError("s3proxy needs Java 17 or newer: no `java` on PATH or in $JAVA_HOME")
    folder.mkdir(parents=True, exist_ok=True)
    data_dir = folder / "data"
    data_dir.mkdir(exist_ok=True)
    port = port or free_port()
    secret_key = secret_key or secrets.token_hex(16)
    properties = folder / "s3proxy.conf"
    properties.write_text("\n".join([
        f"s3proxy.endpoint=http://{LOOPBACK}:{port}",
        "s3proxy.authorization=aws-v2-or-v4",
        f"s3proxy.identity={access_key}",
        f"s3proxy.credential={secret_key}",
        f"jclouds.provider={'filesystem-nio2' if on_disk else 'transient'}",
        "jclouds.identity=local", "jclouds.credential=local",
        f"jclouds.filesystem.basedir={data_dir}", ""]))
    properties.chmod(0o600)
    log_path = folder / "s3proxy.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen([java, f"-Xmx{heap}", "-jar", str(jar), "--properties", str(properties)],
                                   stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    return wait_until_answering("s3proxy", S3Server(port, access_key, secret_key, data_dir, log_path, process), startup_seconds)


def wait_until_answering(name: str, server: S3Server, startup_seconds: float) -> S3Server:
    """`server` once it answers on its port; stopped, and an error, if it exits or stays silent."""
    deadline = time.monotonic() + startup_seconds
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise S3ServerError(f"{name} exited with {server.process.returncode}; see {server.log_path}")
        if _answers(server.endpoint):
            return server
        time.sleep(0.25)
    server.stop()
    raise S3ServerError(f"{name} did not answer on {server.endpoint} within {startup_seconds:.0f} s; "
                        f"see {server.log_path}")


def _answers(endpoint: str) -> bool:
    try:
        urllib.request.urlopen(endpoint, timeout=2).close()
    except urllib.error.HTTPError:
        return True  # 403 to an unsigned request: it is up
    except OSError:
        return False
    return True
