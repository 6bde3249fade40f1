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
from pathlib import Path

from engines.foreground import run_until_interrupted
from engines.s3server import S3Server, start_s3proxy


def exports(server: S3Server) -> list[str]:
    """The shell lines that give a client the server's environment."""
    return [f"export {name}={shlex.quote(value)}" for name, value in server.environment().items()]


def run(buckets: list[str], port: int | None, folder: str | None, on_disk: bool) -> int:
    """Start s3proxy, make the buckets, print how to reach it, wait until interrupted."""

    def start(base: Path) -> S3Server:
        server = start_s3proxy(base, port=port, on_disk=on_disk)
        try:
            for bucket in buckets:
                server.create_bucket(bucket)
        except BaseException:
            server.stop()
            raise
        return server

    def announce(server: S3Server) -> None:
        print(f"s3proxy is up at {server.endpoint} with the bucket(s) {', '.join(buckets)}; in another shell:")
        for line in exports(server):
            print(line)
        options = {"aws_endpoint_url": server.endpoint, "aws_region": server.environment()["AWS_REGION"],
                   "aws_access_key_id": server.access_key, "aws_secret_access_key": server.secret_key}
        print(f"# or, in Python: storage_options = {json.dumps(options)}")
        print(f"# e.g.: hudi-shim serve --warehouse s3://{buckets[0]}/warehouse    (Ctrl-C stops s3proxy)", flush=True)

    return run_until_interrupted(start, S3Server.stop, announce, folder, "hudi-shim-s3proxy-")
