"""Cost of date partitions: partition paths of 2M rows from a timestamp-based key generator
against a simple key generator over a column holding the same days as text.

    python bench/bench_keygen.py [--rows 2000000] [--repeat 5]

Contenders (each the partition path of every row, as the writer computes them per batch):
- simple: a string column of 30 distinct day values, spelled as they are;
- epoch_millis: int64 epoch milliseconds over 30 days, formatted `yyyy/MM/dd` in UTC;
- epoch_millis_zone: the same in Europe/Paris (zone rules applied per row);
- date_string: ISO strings with offsets (`yyyy-MM-dd'T'HH:mm:ss.SSSZ`, every row distinct), parsed
  and formatted `yyyy-MM-dd`.
Printed: seconds per run (fastest of `repeat`) and the ratio of each to `simple`.

Then, on a copy-on-write table of those rows partitioned by day (EPOCHMILLISECONDS, `yyyy/MM/dd`,
30 partitions), a query for one day's rows (`millis >= a AND millis < b`) against the whole table
scanned with the same filter applied after reading (`--no-scan` skips it): pruning's gain.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import shim
from shim.keys.partition_scheme import PartitionScheme, scheme_of_table
from shim.keys.timestamp_keygen import TimestampPartitioning
from shim.properties import TableType
from shim.storage import as_storage
from shim.timeline.instant import Action
from shim.write.clock import new_instant_time
from shim.write.commit import CommitRecord, InstantFiles
from shim.write.data_files import avro_record_schema, write_base_file
from shim.write.table_init import TableSpec, create_table

P = "hoodie.keygen.timebased."
START_MS = 1_709_251_200_000  # 2024-03-01T00:00Z


def _scheme(field: str, **options: str) -> PartitionScheme:
    settings = TimestampPartitioning.from_options({P + k: v for k, v in options.items()})
    return PartitionScheme((field,), (field,), timestamp=settings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-scan", action="store_true", help="skip the pruned-scan comparison")
    args = parser.parse_args()
    rng = np.random.default_rng(5)
    millis = START_MS + rng.integers(0, 30 * 86_400_000, args.rows)
    days = pa.array(np.datetime_as_string(millis.astype("datetime64[ms]"), unit="D"))
    stamps = pa.array(millis, pa.int64())
    iso = pc.binary_join_element_wise(
        pc.strftime(stamps.cast(pa.timestamp("ms", tz="UTC")), format="%Y-%m-%dT%H:%M:%S"), "+0000", "")  # %S prints the milliseconds
    columns = {"day": days, "millis": stamps, "iso": iso}
    runs: dict[str, Callable[[], pa.Array]] = {
        "simple": lambda: PartitionScheme(("day",)).paths(columns, args.rows),
        "epoch_millis": lambda: _scheme("millis", **{"timestamp.type": "EPOCHMILLISECONDS",
                                                      "output.dateformat": "yyyy/MM/dd",
                                                      "timezone": "UTC"}).paths(columns, args.rows),
        "epoch_millis_zone": lambda: _scheme("millis", **{"timestamp.type": "EPOCHMILLISECONDS",
                                                           "output.dateformat": "yyyy/MM/dd",
                                                           "timezone": "Europe/Paris"}).paths(columns, args.rows),
        "date_string": lambda: _scheme("iso", **{"timestamp.type": "DATE_STRING",
                                                 "input.dateformat": "yyyy-MM-dd'T'HH:mm:ss.SSSZ",
                                                 "output.dateformat": "yyyy-MM-dd",
                                                 "output.timezone": "UTC"}).paths(columns, args.rows),
    }
    best: dict[str, float] = {name: float("inf") for name in runs}
    for _ in range(args.repeat):
        for name, run in runs.items():
            start = time.perf_counter()
            result = run()
            best[name] = min(best[name], time.perf_counter() - start)
            assert len(result) == args.rows
    report: dict[str, object] = {"rows": args.rows}
    for name, seconds in best.items():
        report[f"{name}_s"] = round(seconds, 3)
        report[f"{name}_vs_simple"] = round(seconds / best["simple"], 2)
    if not args.no_scan:
        report |= pruned_scan(millis, args.repeat)
    print(json.dumps(report, indent=2))


def pruned_scan(millis: np.ndarray, repeat: int) -> dict[str, object]:
    """One day of 30 read with pruning vs the same filter over every partition."""
    folder = tempfile.mkdtemp(prefix="hudi-shim-keygen-")
    try:
        path = os.path.join(folder, "by_day")
        data = pa.table({"id": pa.array([f"k{i}" for i in range(len(millis))]), "ts": pa.array(millis),
                         "millis": pa.array(millis), "fare": pa.array(np.arange(len(millis), dtype=np.float64))})
        spec = TableSpec(name="by_day", record_key_fields=("id",), table_type=TableType.COPY_ON_WRITE,
                         partition_fields=("millis",), ordering_fields=("ts",),
                         key_generator="org.apache.hudi.keygen.TimestampBasedKeyGenerator",
                         extra={P + "timestamp.type": "EPOCHMILLISECONDS", P + "output.dateformat": "yyyy/MM/dd",
                                P + "timezone": "UTC"})
        avro = json.dumps(avro_record_schema("by_day", data.schema))
        config = create_table(path, spec, avro)
        paths = scheme_of_table(config).paths({"millis": data.column("millis")}, data.num_rows)
        instant = new_instant_time()
        files = InstantFiles(as_storage(path), config, instant, Action.COMMIT)
        files.request()
        files.start(b"{}")
        writes = []
        for g, partition in enumerate(pc.unique(paths).to_pylist()):
            rows = data.filter(pc.equal(paths, partition))
            writes.append(write_base_file(as_storage(path), config, partition_path=partition, file_id=f"{g:08d}-day-0000-0",
                                          instant=instant, write_token=f"{g}-1-{g}", data=rows, partition_id=g))
        files.complete(CommitRecord(tuple(writes), "BULK_INSERT", {"schema": avro}))
        table = shim.open_table(path)
        low = START_MS + 7 * 86_400_000
        text = f"millis >= {low} AND millis < {low + 86_400_000}"
        expected = int(((millis >= low) & (millis < low + 86_400_000)).sum())
        pruned = unpruned = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            assert table.read(filter=text, columns=["id", "fare"]).num_rows == expected
            pruned = min(pruned, time.perf_counter() - start)
            start = time.perf_counter()
            everything = table.read(columns=["id", "fare", "millis"])
            keep = pc.and_(pc.greater_equal(everything["millis"], low), pc.less(everything["millis"], low + 86_400_000))
            assert everything.filter(keep).num_rows == expected
            unpruned = min(unpruned, time.perf_counter() - start)
        return {"one_day_pruned_s": round(pruned, 3), "one_day_full_scan_s": round(unpruned, 3),
                "one_day_speedup": round(unpruned / pruned, 1), "partitions": len(writes)}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
