"""`hudi-shim s3proxy` as the README has a newcomer run it: a real s3proxy, its buckets made, and
exports that a client in another shell pastes to write and read a table (a multipart upload
included), with nothing else set; SIGTERM stops it and removes its folder."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECKSUMS = ("AWS_REQUEST_CHECKSUM_CALCULATION", "AWS_RESPONSE_CHECKSUM_VALIDATION")
CLIENT = """
import pyarrow as pa, shim
from shim.storage import storage_for
from tests.writekit import write
big = storage_for("s3://lake/objects")
big.write_atomically("s3://lake/objects/big.bin", bytes(12 << 20))  # a multipart upload
assert big.file_size("s3://lake/objects/big.bin") == 12 << 20
write("s3://lake/warehouse/trips", [{"id": f"k{i}", "ts": 1, "region": "eu", "fare": float(i)} for i in range(20)])
print(shim.open_table("s3://lake/warehouse/trips").read().num_rows)
"""


def _without_aws(environment: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in environment.items() if not k.startswith("AWS_")}


def _folders() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("hudi-shim-s3proxy-*"))


def test_the_exports_printed_let_a_fresh_shell_write_and_read_a_table():
    environment = {**_without_aws(dict(os.environ)), "PYTHONPATH": str(REPO)}
    before = _folders()
    server = subprocess.Popen([sys.executable, "-m", "engines.cli", "s3proxy"], env=environment, cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert server.stdout is not None
        said = [server.stdout.readline() for _ in range(3)]
        while not said[-1].startswith("# e.g."):
            said.append(server.stdout.readline())
            assert said[-1], "".join(said)
        assert said[0].startswith("s3proxy is up at http://127.0.0.1:") and "lake" in said[0]
        exported = dict(re.findall(r"^export (\w+)=(\S+)$", "".join(said), re.MULTILINE))
        assert set(CHECKSUMS) <= set(exported) and exported["AWS_ENDPOINT_URL"] in said[0]
        # a client with the keys and the endpoint alone (without the checksum settings) works too
        client = {**environment, **{k: v for k, v in exported.items() if k not in CHECKSUMS}}
        done = subprocess.run([sys.executable, "-c", CLIENT], env=client, cwd=REPO, capture_output=True, text=True,
                              check=False,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        assert done.stdout.strip().splitlines()[-1] == "20"
        assert len(_folders() - before) == 1, "its temporary folder"
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0
        assert _folders() - before == set(), "the temporary folder was left behind"
    finally:
        if server.poll() is None:
            server.kill()
