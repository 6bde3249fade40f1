"""Distinct-value counts of a published view's columns, as Iceberg Puffin statistics: one
`apache-datasketches-theta-v1` blob per top-level primitive column, as Trino's `ANALYZE` writes
them (a compact theta sketch of 2^12 nominal entries and the default seed, zstd-compressed, its
estimate truncated to an integer in the blob's `ndv` property), named by the table metadata's
`statistics` for the current snapshot. Trino's optimizer reads the `ndv`s (`SHOW STATS`'s
`distinct_values_count`).

A sketch is fed each distinct value in Iceberg's single-value form, as Trino feeds it, where the
`datasketches` package can hash those bytes: it hashes 64-bit integers (as their 8
little-endian bytes) and UTF-8 text. So longs, timestamps, times, doubles (their IEEE 754 bits),
strings and booleans are hashed exactly as Trino hashes them, and so is every other value whose
single-value bytes are valid UTF-8 (small ints, many dates); the rest (other ints, dates and
floats, decimals, binary) are hashed in another, still one-to-one, form. Counts are the same
either way; only a union with a sketch Trino wrote of such a column would count some values
twice.

Sketches are kept per file slice, in a Puffin file named after the slice's content digest
(`catalog.iceberg.materialize.slice_digest`, the name of its written-out files), so a new
commit computes only the slices it changed, and the table's sketch of a column is the union of
its slices' (theta sketches union without loss). A slice's sketch is of the rows Iceberg
readers see in it: the shim's read of the slice in the view.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import shim
from catalog.iceberg.puffin import Blob, PuffinFile, blob_bytes, read_footer, write_puffin
from catalog.iceberg.types import iceberg_id, primitive_name
from shim import FileSlice
from shim.errors import HudiShimError, UnsupportedFeatureError
from shim.storage import Storage

THETA_BLOB = "apache-datasketches-theta-v1"
NDV_PROPERTY = "ndv"
LG_K = 12  # 4096 nominal entries: DataSketches' (and Trino's) default
CREATED_BY = "hudi-shim"
#: The table statistics file's property naming the slice sketch files it was made of (retention
#: keeps them while the statistics file is kept).
SLICE_SKETCHES_PROPERTY = "hudi-shim.slice-sketches"
SKETCH_SUFFIX = ".theta.puffin"


def _datasketches() -> Any:
    try:
        import datasketches
    except ImportError as exc:
        raise ImportError("Iceberg statistics need the datasketches package: pip install 'hudi-shim[statistics]'") \
            from exc
    return datasketches


def available() -> bool:
    """Whether the `datasketches` package is installed (without it, views are published without
    statistics)."""
    try:
        _datasketches()
    except ImportError:
        return False
    return True


def sketched_columns(schema: pa.Schema) -> dict[str, int]:
    """The columns given distinct-value counts (top-level primitive ones, as Trino's `ANALYZE`
    collects them), name -> Iceberg id."""
    found = {}
    for field in schema:
        if pa.types.is_nested(field.type) or pa.types.is_fixed_size_list(field.type):
            continue
        try:
            primitive_name(field.type, field.name)
        except UnsupportedFeatureError:
            continue
        found[field.name] = iceberg_id(field, field.name)
    return found


def _hashed(values: pa.Array) -> Iterator[int | str]:
    """What the sketch is updated with for each (distinct, non-null) value: its Iceberg
    single-value bytes where the package hashes exactly those (8-byte integers, UTF-8 text),
    else a one-to-one stand-in (see the module's doc)."""
    data_type = values.type
    if pa.types.is_string(data_type) or pa.types.is_large_string(data_type):
        yield from values.to_pylist()
    elif pa.types.is_boolean(data_type):
        yield from ("\x01" if value else "\x00" for value in values.to_pylist())
    elif pa.types.is_int64(data_type) or pa.types.is_time64(data_type):
        yield from values.cast(pa.int64()).to_numpy().tolist()
    elif pa.types.is_timestamp(data_type):
        micros = values.cast(pa.timestamp("us", tz=data_type.tz), safe=False)  # as Iceberg reads them
        yield from micros.cast(pa.int64()).to_numpy().tolist()
    elif pa.types.is_time32(data_type):
        yield from (value * 1000 for value in values.cast(pa.int32()).cast(pa.int64()).to_numpy().tolist())
    elif pa.types.is_float64(data_type):
        yield from values.to_numpy(zero_copy_only=False).astype("<f8").view("<i8").tolist()
    elif pa.types.is_integer(data_type) or pa.types.is_date32(data_type) or pa.types.is_float32(data_type):
        raw = values.cast(pa.float32() if pa.types.is_float32(data_type) else pa.int32())
        array = raw.to_numpy(zero_copy_only=False).astype("<f4" if pa.types.is_float32(data_type) else "<i4")
        yield from (_as_text_or_integer(bytes(word)) for word in array.view(np.uint8).reshape(-1, 4))
    elif pa.types.is_decimal(data_type):
        for value in values.to_pylist():
            unscaled = int(value.scaleb(data_type.scale))
            yield _as_text_or_integer(unscaled.to_bytes(((unscaled if unscaled >= 0 else ~unscaled).bit_length() + 8)
                                                        // 8, "big", signed=True))
    else:  # binary, fixed
        yield from (_as_text_or_integer(bytes(value)) for value in values.to_pylist())


def _as_text_or_integer(raw: bytes) -> int | str:
    """Bytes the package can hash as they are when they are UTF-8 text; else, up to 8 of them,
    the 64-bit integer of the bytes zero-padded (8 hashed bytes: never the same input as a
    shorter value's own bytes), and longer ones as text of their hex digits behind a mark."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        if len(raw) <= 8:
            return int(struct.unpack("<q", raw.ljust(8, b"\x00"))[0])
        return "\ufffe" + raw.hex()


class ColumnSketches:
    """Theta sketches of some columns, fed batch by batch."""

    def __init__(self, columns: Mapping[str, int]) -> None:
        ds = _datasketches()
        self.columns = dict(columns)
        self._sketches = {name: ds.update_theta_sketch(LG_K) for name in self.columns}

    def update(self, batch: pa.RecordBatch) -> None:
        for name, sketch in self._sketches.items():
            index = batch.schema.get_field_index(name)
            if index < 0:
                continue
            distinct = pc.unique(batch.column(index)).drop_null()
            for value in _hashed(distinct):
                sketch.update(value)

    def compact(self) -> dict[int, Any]:
        """The compact (ordered) sketch of each column, by Iceberg id."""
        return {self.columns[name]: sketch.compact() for name, sketch in self._sketches.items()}


@dataclass(frozen=True, slots=True)
class SliceSketch:
    """A slice's sketches by Iceberg id, and the file that keeps them."""

    path: str
    sketches: Mapping[int, Any]


def slice_sketch(out: Storage, scan: shim.Scan, file_slice: FileSlice, digest: str, folder: str,
                 columns: Mapping[str, int]) -> SliceSketch:
    """The sketches of a slice's rows in `scan`'s view, from `folder/<digest>.theta.puffin` on
    `out` when a publication computed them before, else computed now (a full read of the slice)
    and kept."""
    path = os.path.join(folder, digest + SKETCH_SUFFIX)
    if out.exists(path):
        try:
            kept = _read_sketches(out, path)
            if set(kept) >= set(columns.values()):
                return SliceSketch(path, {i: kept[i] for i in columns.values()})
        except HudiShimError:
            pass  # damaged: computed again
    sketches = ColumnSketches(columns)
    reader = replace(scan, slices=[file_slice]).reader()
    try:
        for batch in reader:
            sketches.update(batch)
    finally:
        reader.close()
    computed = sketches.compact()
    puffin = write_puffin([Blob(THETA_BLOB, (field_id,), -1, -1, sketch.serialize(),
                                properties={NDV_PROPERTY: str(int(sketch.get_estimate()))})
                           for field_id, sketch in sorted(computed.items())], {"created-by": CREATED_BY})
    out.make_dirs(folder)
    out.write_atomically(path, puffin.data, durable=False)
    return SliceSketch(path, computed)


def _read_sketches(out: Storage, path: str) -> dict[int, Any]:
    ds = _datasketches()
    puffin = read_footer(out.read_bytes(path), path)
    return {int(blob["fields"][0]): ds.compact_theta_sketch.deserialize(blob_bytes(puffin, blob, path))
            for blob in puffin.blobs if blob.get("type") == THETA_BLOB and len(blob.get("fields", ())) == 1}


def union(slices: Sequence[SliceSketch], field_ids: Iterable[int]) -> dict[int, Any]:
    """Per field id, the union of the slices' sketches (compact, ordered)."""
    ds = _datasketches()
    found = {}
    for field_id in field_ids:
        merged = ds.theta_union(LG_K)
        for piece in slices:
            sketch = piece.sketches.get(field_id)
            if sketch is not None:
                merged.update(sketch)
        found[field_id] = merged.get_result()
    return found


def statistics_file(out: Storage, path: str, location: str, sketches: Mapping[int, Any], snapshot_id: int, sequence_number: int,
                    slice_files: Sequence[str]) -> dict[str, Any]:
    """Write the table's statistics file for `snapshot_id` (a blob per field id) at `path` (its
    URI `location`) on `out`; its entry in the table metadata's `statistics`."""
    blobs = [Blob(THETA_BLOB, (field_id,), snapshot_id, sequence_number, sketch.serialize(),
                  properties={NDV_PROPERTY: str(int(sketch.get_estimate()))})
             for field_id, sketch in sorted(sketches.items())]
    puffin: PuffinFile = write_puffin(blobs, {"created-by": CREATED_BY,
                                              SLICE_SKETCHES_PROPERTY: json.dumps(sorted(slice_files))})
    if not out.exists(path):
        out.write_atomically(path, puffin.data)
    return {
        "snapshot-id": snapshot_id,
        "statistics-path": location,
        "file-size-in-bytes": len(puffin.data),
        "file-footer-size-in-bytes": puffin.footer_size,
        "blob-metadata": [{"type": b["type"], "snapshot-id": b["snapshot-id"], "sequence-number": b["sequence-number"],
                           "fields": b["fields"], "properties": b.get("properties", {})} for b in puffin.blobs],
    }


def files_named_by(out: Storage, statistics_path: str) -> list[str]:
    """The slice sketch files a table statistics file on `out` was made of (for retention)."""
    puffin = read_footer(out.read_bytes(statistics_path), statistics_path)
    named = puffin.properties.get(SLICE_SKETCHES_PROPERTY)
    return list(json.loads(named)) if named else []
