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
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from shim.partition_scheme import PartitionScheme
from shim.timestamp_keygen import TimestampPartitioning

P = "hoodie.keygen.timebased."
START_MS = 1_709_251_200_000  # 2024-03-01T00:00Z


def _scheme(field: str, **options: str) -> PartitionScheme:
    settings = TimestampPartitioning.from_options({P + k: v for k, v in options.items()})
    return PartitionScheme((field,), (field,), timestamp=settings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=5)
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
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
