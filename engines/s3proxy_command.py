"""`hudi-shim s3proxy`: a local S3-compatible server to try the shim on object storage, until
interrupted.

    hudi-shim s3proxy --bucket lake        # prints the `export AWS_...` lines to paste, then waits

s3proxy (from Maven Central; Java 17 or newer) listens on 127.0.0.1 with fresh keys, the buckets
are made, and the exports printed hold everything a client needs: keys, endpoint, region, and the
checksum settings the AWS SDK needs for servers like it. Objects live in memory, or under `--dir`
with `--on-disk` (kept after it stops). Ctrl-C or SIGTERM stops it; a temporary folder is removed.
"""

from __future__ import annotations

import json
import shlex
import shutil
import signal
import tempfile
import threading
from pathlib import Path

from engines.s3server import S3Server, start_s3proxy


def exports(server: S3Server) -> list[str]:
    """The shell lines that give a client the server's environment."""
    return [f"export {name}={shlex.quote(value)}" for name, value in server.environment().items()]


def run(buckets: list[str], port: int | None, folder: str | None, on_disk: bool) -> int:
    """Start s3proxy, make the buckets, print how to reach it, wait until interrupted."""
    temporary = folder is None
    base = Path(folder or tempfile.mkdtemp(prefix="hudi-shim-s3proxy-"))
    previous = signal.signal(signal.SIGTERM, _interrupted)
    server: S3Server | None = None
    try:
        server = start_s3proxy(base, port=port, on_disk=on_disk)
        for bucket in buckets:
            server.create_bucket(bucket)
        print(f"s3proxy is up at {server.endpoint} with the bucket(s) {', '.join(buckets)}; in another shell:")
        for line in exports(server):
            print(line)
        options = {"aws_endpoint_url": server.endpoint, "aws_region": server.environment()["AWS_REGION"],
                   "aws_access_key_id": server.access_key, "aws_secret_access_key": server.secret_key}
        print(f"# or, in Python: storage_options = {json.dumps(options)}")
        print(f"# e.g.: hudi-shim serve --warehouse s3://{buckets[0]}/warehouse    (Ctrl-C stops s3proxy)", flush=True)
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        if server is not None:
            server.stop()
        signal.signal(signal.SIGTERM, previous)
        if temporary:
            shutil.rmtree(base, ignore_errors=True)
    return 0


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
