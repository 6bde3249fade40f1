"""Listing a table from its metadata table against listing storage, and HFile lookups against scans.

    python bench/bench_metadata.py [--tables DIR ...] [--s3] [--hfile FILE ...] [--repeat 5]

Listing: for each table (default: the oracle's tables with the metadata table on, built by
`tests.oracle.generate`), the best time of listing every partition's files from storage
(`shim.layout`: partitions, then each partition's folder) and from the MDT
(`shim.metadata.metadata_listing`, opened anew each time: its timeline, the files partition's
HFile base file and logs). With `--s3` the same on s3proxy (loopback, objects in memory) behind a
counting tap: requests (LIST, GET, HEAD) and time, where each request costs a round trip.
HFile: for each `--hfile`, the time to open it and scan every entry, and to open it and look up one
key (a key from the middle: one data block read, or one per index level), as data blocks read.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import shim
from shim.hfile import HFileReader
from shim.layout.partitions import list_partitions
from shim.layout.slices import list_file_groups
from shim.metadata import metadata_listing
from shim.storage import LocalStorage

LOCAL = LocalStorage("/")


def best(repeat: int, action: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def storage_listing(table: shim.Table) -> int:
    partitions = list_partitions(table.storage, table.config)
    return sum(len(g.base_files) + len(g.log_files) for g in list_file_groups(table.storage, partitions))


def mdt_listing(table: shim.Table) -> int:
    listing = metadata_listing(table.storage, table.config, table.snapshot().active_timeline, None)
    assert listing.files is not None, listing.reason
    return sum(len(files) for files in listing.files.values())


def oracle_tables() -> list[Path]:
    from tests.oracle.generate import generate
    from tests.oracle.recipes import RECIPES

    names = [n for n, r in RECIPES.items() if "metadata table on" in r.features]
    return [g.path for g in generate(names).values()]


def _name(path: Path) -> str:
    return path.parent.name.split("-")[0] if path.name == "table" else path.name


def list_locally(paths: list[Path], repeat: int) -> None:
    print(f"{'table':28} {'files':>5}  {'storage ms':>10}  {'MDT ms':>8}")
    for path in paths:
        table = shim.open_table(path)
        files = mdt_listing(table)
        assert files == storage_listing(table) or table.config.version < 8
        slow = best(repeat, lambda t=table: storage_listing(t))  # type: ignore[misc]
        fast = best(repeat, lambda t=table: mdt_listing(t))  # type: ignore[misc]
        print(f"{_name(path)[:28]:28} {files:5}  {slow * 1000:10.2f}  {fast * 1000:8.2f}")


def list_on_s3(paths: list[Path], repeat: int) -> None:
    import pyarrow.fs as pafs

    from engines.s3server import CLIENT_ENVIRONMENT, start_s3proxy
    from tests.s3tap import S3Tap

    os.environ.update(CLIENT_ENVIRONMENT)
    with tempfile.TemporaryDirectory() as scratch:
        server = start_s3proxy(Path(scratch))
        tap = S3Tap(server.endpoint).start()
        try:
            server.create_bucket("bench")
            upload = pafs.S3FileSystem(**server.storage_options())
            options = {**server.storage_options(), "endpoint_override": tap.endpoint}
            print(f"{'table on s3proxy':28} {'storage ms':>10} {'requests':>9}  {'MDT ms':>8} {'requests':>9}")
            for path in paths:
                name = _name(path).replace("_", "-")
                pafs.copy_files(str(path), f"bench/{name}", destination_filesystem=upload)
                uri = f"s3://bench/{name}"
                row = [f"{name[:28]:28}"]
                for lister in (storage_listing, mdt_listing):
                    table = shim.open_table(uri, storage_options=options, merge_cache_bytes=0)
                    tap.counts.reset()
                    lister(table)
                    counts = tap.counts.snapshot()
                    requests = counts["requests"]
                    seconds = best(repeat, lambda t=table, f=lister: f(t))  # type: ignore[misc]
                    row.append(f"{seconds * 1000:10.1f} {requests:9}")
                print("  ".join(row))
        finally:
            tap.stop()
            server.stop()


def hfiles(paths: list[Path], repeat: int) -> None:
    print(f"{'HFile':52} {'entries':>7} {'levels':>6}  {'scan ms':>8}  {'lookup ms':>9} {'blocks':>6}")
    for path in paths:
        hfile(path, repeat)


def hfile(path: Path, repeat: int) -> None:
    reader = HFileReader.open(LOCAL, str(path))
    keys = [key for key, _ in reader.scan()]
    middle = keys[len(keys) // 2]
    scan = best(repeat, lambda: sum(1 for _ in HFileReader.open(LOCAL, str(path)).scan()))

    def lookup() -> int:
        found = HFileReader.open(LOCAL, str(path))
        assert found.get(middle) is not None
        return found.blocks_read

    seconds = best(repeat, lookup)
    print(f"{path.name[:52]:52} {len(keys):7} {reader.trailer.data_index_levels:6}  {scan * 1000:8.1f}  "
          f"{seconds * 1000:9.2f} {lookup():6}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", nargs="*", type=Path)
    parser.add_argument("--s3", action="store_true")
    parser.add_argument("--hfile", nargs="*", type=Path, default=[])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    paths = args.tables or oracle_tables()
    list_locally(paths, args.repeat)
    if args.s3:
        list_on_s3(paths, args.repeat)
    if args.hfile:
        hfiles(args.hfile, args.repeat)


if __name__ == "__main__":
    main()
