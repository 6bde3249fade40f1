"""The first Iceberg load of a merge-on-read table with 40 commits (4 file groups, then 36
commits each updating 2% of one group through a log file), published with its 10 past snapshots:
alone, two loads at once, and a load while a Hadoop catalog refresh (`POST /v1/publish` with
`--hadoop-catalog-dir`, Presto's views by name) publishes the same table.

    python bench/bench_first_publish.py [--rows 100000] [--rounds 2]

Each scenario runs on a fresh copy of the table and a fresh server (`catalog.server.running`, on
loopback, in this process). Prints the time of each load, how many publications computed their
files (`IcebergPublisher._versions`) and how many log sides were merged (`slice_merge_state` in
`catalog.iceberg.materialize`); the fastest round of each scenario.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import httpx
import pyarrow as pa

from catalog.iceberg import materialize
from catalog.iceberg.publish import IcebergPublisher
from catalog.server import running
from catalog.settings import Settings
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.float64()), ("s", pa.string())])
COUNTS = {"publications": 0, "merges": 0}


def build(root: Path, rows: int) -> None:
    table = TinyTable(root / "t", SCHEMA)
    bases = [table.base(pa.table({"id": [f"{g}-{i}" for i in range(rows)], "ts": pa.array([1] * rows, pa.int64()),
                                  "v": pa.array(range(rows), pa.float64()), "s": ["x" * 20] * rows}),
                        file_id=f"fg{g}-0") for g in range(4)]
    updated = rows // 50
    for commit in range(36):
        g = commit % 4
        ids = [f"{g}-{(commit * updated + i) % rows}" for i in range(updated)]
        table.log(pa.table({"id": ids, "ts": pa.array([2 + commit] * updated, pa.int64()),
                            "v": pa.array([float(commit)] * updated), "s": ["y" * 20] * updated}),
                  file_id=f"fg{g}-0", base_instant=bases[g])


def count(cls: type, name: str, key: str) -> None:
    original = getattr(cls, name)

    def counted(*args, **kwargs):
        COUNTS[key] += 1
        return original(*args, **kwargs)

    setattr(cls, name, counted)


def load(url: str) -> float:
    started = time.monotonic()
    response = httpx.get(f"{url}/iceberg/v1/namespaces/default/tables/t", timeout=3600)
    response.raise_for_status()
    return time.monotonic() - started


def scenario(kind: str, source: Path) -> str:
    work = Path(tempfile.mkdtemp(prefix="bench-publish-"))
    try:
        shutil.copytree(source, work / "wh")
        hadoop = str(work / "presto") if kind == "refresh" else None
        settings = Settings(warehouse=str(work / "wh"), catalog_db=":memory:", hadoop_catalog_dir=hadoop,
                            hadoop_catalog_seconds=3600)
        with running(settings) as live:
            if hadoop is not None:  # the refresh at startup: wait for it, then time one of our own
                httpx.post(f"{live.url}/v1/publish", timeout=3600)
                shutil.rmtree(work / "wh" / ".hudi-shim")
            COUNTS.update(publications=0, merges=0)
            with ThreadPoolExecutor(2) as pool:
                if kind == "alone":
                    times = [load(live.url)]
                elif kind == "two":
                    times = list(pool.map(lambda _: load(live.url), range(2)))
                else:
                    refresh = pool.submit(httpx.post, f"{live.url}/v1/publish", timeout=3600)
                    time.sleep(0.05)
                    times = [load(live.url)]
                    refresh.result()
            again = load(live.url)
        loads = " / ".join(f"{t:.2f} s" for t in times)
        return (f"{kind:8s} first load {loads}, again {again * 1000:.0f} ms; "
                f"publications {COUNTS['publications']}, log sides merged {COUNTS['merges']}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="rows per file group")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    count(IcebergPublisher, "_versions", "publications")
    original_merge = materialize.slice_merge_state

    def merging(*a, **k):
        COUNTS["merges"] += 1
        return original_merge(*a, **k)

    materialize.slice_merge_state = merging
    source = Path(tempfile.mkdtemp(prefix="bench-publish-source-"))
    try:
        build(source, args.rows)
        for kind in ("alone", "two", "refresh"):
            results = [scenario(kind, source) for _ in range(args.rounds)]
            print(min(results, key=lambda line: float(line.split("first load ")[1].split(" s")[0])), flush=True)
    finally:
        shutil.rmtree(source, ignore_errors=True)


if __name__ == "__main__":
    main()
