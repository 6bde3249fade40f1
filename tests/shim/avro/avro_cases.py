"""Random Avro schemas and records for differential tests against fastavro (seeded, deterministic)."""

from __future__ import annotations

import datetime as dt
import io
import random
import struct
import uuid
from decimal import Decimal
from typing import Any

import fastavro
import numpy as np

from shim.avro.schema import min_bytes_for_precision

UTC = dt.UTC
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)

LEAVES: list[Any] = [
    "boolean",
    "int",
    "long",
    "float",
    "double",
    "bytes",
    "string",
    {"type": "int", "logicalType": "date"},
    {"type": "int", "logicalType": "time-millis"},
    {"type": "long", "logicalType": "time-micros"},
    {"type": "long", "logicalType": "timestamp-millis"},
    {"type": "long", "logicalType": "timestamp-micros"},
    {"type": "long", "logicalType": "local-timestamp-millis"},
    {"type": "long", "logicalType": "local-timestamp-micros"},
    {"type": "string", "logicalType": "uuid"},
]
DECIMAL_PRECISIONS = [1, 5, 9, 10, 18, 19, 30, 38, 39, 50]
TEXTS = ["", "a", "héllo wörld", "日本語テキスト", "emoji 🎉🚀", "x" * 40, "tab\tand\nnewline", "\x00nul"]


class SchemaMaker:
    """Random nested schemas; names are unique per maker."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.count = 0

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def record(self, depth: int = 0, fields: int | None = None) -> dict[str, Any]:
        width = fields if fields is not None else self.rng.randint(1, 5)
        return {
            "type": "record",
            "name": self.name("Rec"),
            "namespace": "test.ns",
            "fields": [{"name": self.name("f"), "type": self.maybe_null(depth + 1)} for _ in range(width)],
        }

    def maybe_null(self, depth: int) -> Any:
        inner = self.any_type(depth)
        roll = self.rng.random()
        if roll < 0.45:
            return ["null", inner]
        if roll < 0.55:
            return [inner, "null"]
        return inner

    def any_type(self, depth: int) -> Any:
        roll = self.rng.random()
        if depth < 3 and roll < 0.12:
            return self.record(depth)
        if depth < 3 and roll < 0.22:
            return {"type": "array", "items": self.maybe_null(depth + 1)}
        if depth < 3 and roll < 0.30:
            return {"type": "map", "values": self.maybe_null(depth + 1)}
        if roll < 0.36:
            return self.decimal()
        if roll < 0.40:
            return {"type": "fixed", "name": self.name("Fx"), "size": self.rng.randint(1, 20)}
        if roll < 0.44:
            return {"type": "enum", "name": self.name("En"), "symbols": ["A", "B", "C", "DELTA"]}
        return self.rng.choice(LEAVES)

    def decimal(self) -> dict[str, Any]:
        precision = self.rng.choice(DECIMAL_PRECISIONS)
        scale = self.rng.randint(0, precision)
        if self.rng.random() < 0.5:
            return {"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": scale}
        size = min_bytes_for_precision(precision) + self.rng.randint(0, 2)
        return {
            "type": "fixed",
            "name": self.name("Dec"),
            "size": size,
            "logicalType": "decimal",
            "precision": precision,
            "scale": scale,
        }


def value(rng: random.Random, t: Any) -> Any:
    """A random Python value of Avro type `t`, as fastavro writes it."""
    if isinstance(t, list):
        if "null" in t and rng.random() < 0.3:
            return None
        return value(rng, next(b for b in t if b != "null"))
    if isinstance(t, str):
        t = {"type": t}
    kind, logical = t["type"], t.get("logicalType")
    if logical == "decimal":
        precision, scale = t["precision"], t.get("scale", 0)
        bound = 10**precision - 1
        unscaled = rng.choice([0, bound, -bound, 1, -1, rng.randint(-bound, bound)])
        digits = tuple(int(d) for d in str(abs(unscaled)))
        return Decimal((1 if unscaled < 0 else 0, digits, -scale))
    if logical == "date":
        return dt.date(1970, 1, 1) + dt.timedelta(days=rng.randint(-700_000, 2_900_000))
    if logical in ("time-millis", "time-micros"):
        micros = rng.randint(0, 86_400_000_000 - 1)
        if logical == "time-millis":
            micros -= micros % 1000
        return (dt.datetime(2000, 1, 1) + dt.timedelta(microseconds=micros)).time()
    if logical is not None and "timestamp" in logical:
        micros = rng.choice([0, -1_000_000, rng.randint(-(10**16), 10**17)])
        if logical.endswith("millis"):
            micros -= micros % 1000
        stamp = EPOCH + dt.timedelta(microseconds=micros)
        return stamp.replace(tzinfo=None) if logical.startswith("local") else stamp
    if logical == "uuid":
        return uuid.UUID(int=rng.getrandbits(128))
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "int":
        return rng.choice([0, -1, 1, 63, -64, 64, 2**31 - 1, -(2**31), rng.randint(-(2**31), 2**31 - 1)])
    if kind == "long":
        return rng.choice([0, -1, 2**63 - 1, -(2**63), 2**35, rng.randint(-(2**63), 2**63 - 1)])
    if kind == "float":
        raw = rng.choice([0.0, -1.5, 3.4e38, float("inf"), -float("inf"), rng.uniform(-1e6, 1e6)])
        return struct.unpack("<f", struct.pack("<f", raw))[0]
    if kind == "double":
        return rng.choice([0.0, -0.5, 1.7976931348623157e308, float("-inf"), rng.uniform(-1e300, 1e300)])
    if kind == "bytes":
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 24)))
    if kind == "string":
        return rng.choice(TEXTS)
    if kind == "fixed":
        return bytes(rng.getrandbits(8) for _ in range(t["size"]))
    if kind == "enum":
        return rng.choice(t["symbols"])
    if kind == "record":
        return {f["name"]: value(rng, f["type"]) for f in t["fields"]}
    if kind == "array":
        return [value(rng, t["items"]) for _ in range(rng.choice([0, 0, 1, 2, 3, 7]))]
    if kind == "map":
        return {f"k{i}-{rng.choice(TEXTS)}": value(rng, t["values"]) for i in range(rng.choice([0, 1, 2, 4]))}
    raise AssertionError(t)


def arrow_style(t: Any, v: Any) -> Any:
    """A fastavro-decoded value in the form `pyarrow.Array.to_pylist` gives for it."""
    if v is None:
        return None
    if isinstance(t, list):
        return arrow_style(next(b for b in t if b != "null"), v)
    if isinstance(t, str):
        return v
    kind = t["type"]
    if t.get("logicalType") == "uuid":
        return str(v)
    if kind == "record":
        return {f["name"]: arrow_style(f["type"], v[f["name"]]) for f in t["fields"]}
    if kind == "array":
        return [arrow_style(t["items"], item) for item in v]
    if kind == "map":
        return [(key, arrow_style(t["values"], item)) for key, item in v.items()]
    return v


def encode_all(
    schema: dict[str, Any], records: list[dict[str, Any]], rng: random.Random, gaps: bool = True
) -> tuple[bytes, np.ndarray, np.ndarray]:
    """Records written one after another (with random junk between when `gaps`), and their bounds."""
    parsed = fastavro.parse_schema(schema)
    out = io.BytesIO()
    starts, ends = [], []
    for record in records:
        if gaps:
            out.write(bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 5))))
        starts.append(out.tell())
        fastavro.schemaless_writer(out, parsed, record)
        ends.append(out.tell())
    return out.getvalue(), np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)


def decode_with_fastavro(
    schema: dict[str, Any], buf: bytes, starts: np.ndarray, ends: np.ndarray
) -> list[Any]:
    """Rows as fastavro decodes them, put in Arrow's Python form."""
    parsed = fastavro.parse_schema(schema)
    rows = []
    for start, end in zip(starts, ends, strict=True):
        record = fastavro.schemaless_reader(io.BytesIO(buf[start:end]), parsed)
        assert isinstance(record, dict)
        rows.append({f["name"]: arrow_style(f["type"], record[f["name"]]) for f in schema["fields"]})
    return rows
