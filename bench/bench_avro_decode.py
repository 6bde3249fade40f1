"""Decode 200k Hudi-style Avro records: fastavro + Arrow conversion vs shim's columnar decoder.

    python bench/bench_avro_decode.py [--rows N] [--repeat K]

Records follow a Hudi trips log block: 5 string meta columns, then long, long, string, double,
string, int, every field a ["null", T] union. Prints the best time of each and the ratio.
"""

from __future__ import annotations

import argparse
import io
import random
import time
from collections.abc import Callable

import fastavro
import numpy as np
import pyarrow as pa

from shim.avro import avro_to_arrow_schema, decode_records, parse_avro_schema

SCHEMA = {
    "type": "record",
    "name": "trips_record",
    "namespace": "hoodie.trips",
    "fields": [
        {"name": name, "type": ["null", avro_type], "default": None}
        for name, avro_type in [
            ("_hoodie_commit_time", "string"),
            ("_hoodie_commit_seqno", "string"),
            ("_hoodie_record_key", "string"),
            ("_hoodie_partition_path", "string"),
            ("_hoodie_file_name", "string"),
            ("ts", "long"),
            ("seq", "long"),
            ("rider", "string"),
            ("fare", "double"),
            ("city", "string"),
            ("trips", "int"),
        ]
    ],
}


def make_block(rows: int, seed: int = 7) -> tuple[bytes, np.ndarray, np.ndarray]:
    """A buffer of `rows` length-prefixed records and their start and end offsets."""
    rng = random.Random(seed)
    parsed = fastavro.parse_schema(SCHEMA)
    out = io.BytesIO()
    starts = np.empty(rows, dtype=np.int64)
    ends = np.empty(rows, dtype=np.int64)
    cities = ["san_francisco", "sao_paulo", "chennai", None]
    for i in range(rows):
        record = {
            "_hoodie_commit_time": "20250331030645735",
            "_hoodie_commit_seqno": f"20250331030645735_0_{i}",
            "_hoodie_record_key": f"{rng.getrandbits(64):016x}-{i}",
            "_hoodie_partition_path": "city=san_francisco",
            "_hoodie_file_name": "d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0_0-26-85_20250331030645735.parquet",
            "ts": 1695159649087 + i,
            "seq": rng.randint(-(2**40), 2**40),
            "rider": f"rider-{rng.choice('ABCDEFGH')}" if i % 17 else None,
            "fare": rng.random() * 100,
            "city": rng.choice(cities),
            "trips": rng.randint(0, 10_000),
        }
        body = io.BytesIO()
        fastavro.schemaless_writer(body, parsed, record)
        payload = body.getvalue()
        out.write(len(payload).to_bytes(4, "big"))
        starts[i] = out.tell()
        out.write(payload)
        ends[i] = out.tell()
    return out.getvalue(), starts, ends


def with_fastavro(buf: bytes, starts: np.ndarray, ends: np.ndarray) -> pa.Table:
    parsed = fastavro.parse_schema(SCHEMA)
    view = memoryview(buf)
    rows = [
        fastavro.schemaless_reader(io.BytesIO(view[s:e]), parsed) for s, e in zip(starts, ends, strict=True)
    ]
    return pa.Table.from_pylist(rows, schema=avro_to_arrow_schema(SCHEMA))


def with_shim(buf: bytes, starts: np.ndarray, ends: np.ndarray) -> pa.Table:
    return decode_records(buf, starts, parse_avro_schema(SCHEMA), ends=ends)


def best_of(repeat: int, fn: Callable[..., pa.Table], *args: object) -> tuple[float, pa.Table]:
    best = float("inf")
    result = None
    for _ in range(repeat):
        began = time.perf_counter()
        result = fn(*args)
        best = min(best, time.perf_counter() - began)
    assert result is not None
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    buf, starts, ends = make_block(args.rows)
    with_shim(buf, starts[:10], ends[:10])  # load pyarrow's compute kernels outside the timing
    cold, got = best_of(1, with_shim, buf, starts, ends)
    fast, got = best_of(args.repeat, with_shim, buf, starts, ends)
    slow, expected = best_of(1, with_fastavro, buf, starts, ends)
    assert got.equals(expected), "decoders disagree"
    print(f"records: {args.rows}, bytes: {len(buf)}")
    print(f"fastavro + Arrow:     {slow:8.3f} s")
    print(f"shim decode (first):  {cold:8.3f} s")
    print(f"shim decode (best of {args.repeat}): {fast:8.3f} s")
    print(f"ratio: {slow / fast:.1f}x (first run: {slow / cold:.1f}x)")


if __name__ == "__main__":
    main()
