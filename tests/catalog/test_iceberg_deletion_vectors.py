"""Deletes published as Iceberg v3 deletion vectors (`--iceberg-deletes vectors`): one
`deletion-vector-v1` blob per base file in a Puffin file, format version 3 with row lineage.
PyIceberg and DuckDB's iceberg extension read the shim's rows, at every snapshot kept."""

from __future__ import annotations

import itertools
from pathlib import Path

import fastavro
import numpy as np
import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog

import shim
from catalog.iceberg.deletion_vectors import (
    BLOB_TYPE,
    ROW_POSITION_ID,
    decode_vector,
    encode_vector,
    read_vector_file,
)
from catalog.iceberg.history import snapshot_id
from catalog.iceberg.puffin import blob_bytes, read_footer
from catalog.iceberg.retention import expire
from catalog.settings import Settings
from engines.iceberg import attach
from shim.errors import CorruptFileError, InvalidArgumentError
from shim.storage import as_storage
from tests.catalog.servekit import live_server
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string()), ("a", pa.int64())])
#: Rows of the large partition: enough updates for a Roaring bitmap container (over 4,096 values).
BIG = 6_000


@pytest.fixture
def mor_table(tmp_path: Path) -> tuple[TinyTable, list[str]]:
    """Two partitions: `big` gets 4,500 rows updated, then some deleted; `small` some deleted."""
    table = TinyTable(tmp_path / "wh" / "t", SCHEMA, partition=["city"])
    big = [{"id": f"b{i:05d}", "ts": 1, "city": "big", "a": i} for i in range(BIG)]
    small = [{"id": f"s{i:02d}", "ts": 1, "city": "small", "a": i} for i in range(40)]
    instants = [table.base(big, file_id="fg-big", partition="city=big")]
    instants.append(table.base(small, file_id="fg-small", partition="city=small"))
    updated = [dict(row, ts=2, a=-row["a"]) for row in big[::4]] + [dict(row, ts=2, a=-row["a"]) for row in big[1::2]]
    instants.append(table.log(updated, file_id="fg-big", partition="city=big", base_instant=instants[0]))
    instants.append(table.log(deletes=[f"s{i:02d}" for i in (0, 7, 39)], delete_ordering=[pa.array([3, 3, 3])],
                              file_id="fg-small", partition="city=small", base_instant=instants[1]))
    instants.append(table.log(deletes=[f"b{i:05d}" for i in range(0, BIG, 7)],
                              delete_ordering=[pa.array([3] * len(range(0, BIG, 7)))],
                              file_id="fg-big", partition="city=big", base_instant=instants[0]))
    return table, instants


def _sorted(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda row: row["id"])


def _avro(uri: str) -> tuple[dict, list[dict]]:
    with open(uri.removeprefix("file://"), "rb") as handle:
        reader = fastavro.reader(handle)
        return dict(reader.metadata), [record for record in reader if isinstance(record, dict)]


def test_the_setting_is_checked() -> None:
    assert Settings(warehouse="/tmp").iceberg_deletes == "positions"
    assert Settings(warehouse="/tmp", iceberg_deletes="vectors").iceberg_deletes == "vectors"
    with pytest.raises(InvalidArgumentError, match="iceberg_deletes must be one of positions, vectors, got 'bitmaps'"):
        Settings(warehouse="/tmp", iceberg_deletes="bitmaps")


def test_a_deletion_vector_round_trips_and_its_damage_is_caught() -> None:
    positions = np.array([0, 3, 4, 70_000, 2**32 + 5], dtype=np.int64)
    blob = encode_vector(positions)
    assert blob[4:8] == b"\xd1\xd3\x39\x64" and int.from_bytes(blob[:4], "big") == len(blob) - 8
    assert decode_vector(blob, "blob").tolist() == positions.tolist()
    flipped = blob[:10] + bytes([blob[10] ^ 1]) + blob[11:]
    with pytest.raises(CorruptFileError, match="CRC-32"):
        decode_vector(flipped, "blob")
    with pytest.raises(CorruptFileError, match="length"):
        decode_vector(b"\xff\xff\xff\xff" + blob[4:], "blob")  # a length beyond the bytes there are
    with pytest.raises(CorruptFileError, match="at least 12"):
        decode_vector(blob[:11], "blob")


def test_pyiceberg_and_duckdb_read_the_shims_rows_at_every_snapshot(tmp_path: Path, mor_table) -> None:
    table, instants = mor_table
    settings = Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:", iceberg_dir=str(tmp_path / "ice"),
                        iceberg_slices="deletes", iceberg_deletes="vectors")
    hudi = shim.open_table(str(table.path))
    with live_server(settings) as live:
        loaded = load_catalog("shim", type="rest", uri=f"{live.url}/iceberg").load_table("default.t")
        assert loaded.metadata.format_version == 3
        snapshots = loaded.metadata.snapshots
        assert [s.snapshot_id for s in snapshots] == [snapshot_id(i) for i in instants]
        duck = attach(live.url)
        try:
            for instant, snapshot in zip(instants, snapshots, strict=True):
                want = _sorted(hudi.read(mode="snapshot", as_of=instant).to_pylist())
                assert _sorted(loaded.scan(snapshot_id=snapshot.snapshot_id).to_arrow().to_pylist()) == want, instant
                got = duck.execute(f"SELECT id, ts, city, a FROM shim.default.t AT (VERSION => {snapshot.snapshot_id}) "
                                   "ORDER BY id").fetchall()
                assert got == [tuple(row.values()) for row in want], instant
            latest = _sorted(hudi.read(mode="snapshot").to_pylist())
            assert len(latest) == BIG + 40 - len(range(0, BIG, 7)) - 3
            assert duck.execute("SELECT id, ts, city, a FROM shim.default.t ORDER BY id").fetchall() == [
                tuple(row.values()) for row in latest]
            assert duck.execute("SELECT sum(a) FROM shim.default.t WHERE city = 'small'").fetchone() == (
                sum(row["a"] for row in latest if row["city"] == "small"),)
        finally:
            duck.close()
        # the read-optimized view has no deletes, and is format version 3 too
        read_optimized = load_catalog("shim", type="rest", uri=f"{live.url}/iceberg").load_table("default.t_ro")
        assert read_optimized.metadata.format_version == 3
        assert _sorted(read_optimized.scan().to_arrow().to_pylist()) == _sorted(
            hudi.read(mode="read_optimized").to_pylist())


def test_the_metadata_is_format_version_3_with_one_vector_per_base_file(tmp_path: Path, mor_table) -> None:
    table, _ = mor_table
    settings = Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:", iceberg_dir=str(tmp_path / "ice"),
                        iceberg_slices="deletes", iceberg_deletes="vectors")
    with live_server(settings) as live:
        published = live.app.state.iceberg.publish("t", "snapshot")
        metadata = published.metadata
    assert metadata["format-version"] == 3
    snapshots = metadata["snapshots"]
    # row lineage: each snapshot takes ids from the last one's end, the table's next id after the last
    for before, after in itertools.pairwise(snapshots):
        assert after["first-row-id"] == before["first-row-id"] + before["added-rows"]
    assert snapshots[0]["first-row-id"] == 0
    assert metadata["next-row-id"] == snapshots[-1]["first-row-id"] + snapshots[-1]["added-rows"]

    current = snapshots[-1]
    header, manifests = _avro(current["manifest-list"])
    assert header["format-version"] == "3" and header["first-row-id"] == str(current["first-row-id"])
    [data_manifest] = [m for m in manifests if m["content"] == 0]
    [delete_manifest] = [m for m in manifests if m["content"] == 1]
    assert data_manifest["first_row_id"] == current["first-row-id"] and delete_manifest["first_row_id"] is None

    manifest_header, data_entries = _avro(data_manifest["manifest_path"])
    assert manifest_header["format-version"] == "3"
    live_data = [e["data_file"] for e in data_entries if e["status"] != 2]
    ranges = sorted((f["first_row_id"], f["first_row_id"] + f["record_count"]) for f in live_data)
    assert all(end <= start for (_, end), (start, _) in itertools.pairwise(ranges))  # no row id given twice
    assert ranges[-1][1] <= metadata["next-row-id"]

    _, delete_entries = _avro(delete_manifest["manifest_path"])
    vectors = [e["data_file"] for e in delete_entries if e["status"] != 2]
    assert sorted(Path(v["referenced_data_file"]).parent.name for v in vectors) == ["city=big", "city=small"]
    base_files = {str(s.base_file.name) for s in shim.open_table(str(table.path)).file_slices() if s.base_file}
    for vector in vectors:
        assert vector["content"] == 1 and vector["file_format"] == "PUFFIN" and vector["file_path"].endswith(".puffin")
        assert vector["first_row_id"] is None and vector["lower_bounds"] is None
        path = vector["file_path"].removeprefix("file://")
        data = Path(path).read_bytes()
        assert vector["file_size_in_bytes"] == len(data)
        [blob] = read_footer(data, path).blobs
        assert blob["type"] == BLOB_TYPE and blob["fields"] == [ROW_POSITION_ID] and "compression-codec" not in blob
        assert (blob["snapshot-id"], blob["sequence-number"]) == (-1, -1)
        assert (vector["content_offset"], vector["content_size_in_bytes"]) == (blob["offset"], blob["length"])
        assert blob["properties"] == {"referenced-data-file": vector["referenced_data_file"],
                                      "cardinality": str(vector["record_count"])}
        raw = blob_bytes(read_footer(data, path), blob, path)
        positions = decode_vector(raw, path)  # the CRC checked
        assert encode_vector(positions) == raw and len(positions) == vector["record_count"]
        found, again = read_vector_file(as_storage(path), path)
        assert found.referenced == vector["referenced_data_file"] and again.tolist() == positions.tolist()
        assert Path(vector["referenced_data_file"]).name in base_files
    by_partition = {Path(v["referenced_data_file"]).parent.name: v["record_count"] for v in vectors}
    # small: three deleted; big: the updated rows (every 4th and every odd one) and every 7th
    assert by_partition["city=small"] == 3
    assert by_partition["city=big"] == len({*range(0, BIG, 4), *range(1, BIG, 2), *range(0, BIG, 7)})


def test_replaced_vectors_are_removed_with_the_versions_naming_them(tmp_path: Path, mor_table) -> None:
    table, instants = mor_table
    settings = Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:", iceberg_dir=str(tmp_path / "ice"),
                        iceberg_slices="deletes", iceberg_deletes="vectors", iceberg_history=0,
                        iceberg_keep_seconds=0)
    ice = tmp_path / "ice" / "t"
    with live_server(settings) as live:
        first = live.app.state.iceberg.publish("t", "snapshot")
        before = {p.name for p in ice.rglob("*.puffin")}
        assert len([name for name in before if name.endswith("-dv.puffin")]) == 2
        table.log(deletes=["s01"], delete_ordering=[pa.array([4])], file_id="fg-small", partition="city=small",
                  base_instant=instants[1])
        second = live.app.state.iceberg.publish("t", "snapshot")
        assert second.metadata_location != first.metadata_location
        expire(live.app.state.iceberg.storage, str(ice), 0, now=2**40)
        after = {p.name for p in ice.rglob("*-dv.puffin")}
    # the big partition's vector is kept (the same file), the small one's replaced
    assert len(after) == 2 and len(after & before) == 1
