"""Partial updates through the writer (`hoodie.spark.sql.merge.into.partial.updates`, or the Avro
schema of the columns set in `hoodie.write.partial.update.schema`): IS_PARTIAL log blocks of the
columns set, read as Hudi merges them (Apache Hudi's own read: tests/hudi), and clear refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

import shim
from shim.errors import InvalidArgumentError, UnsupportedFeatureError, WriteError
from shim.log import HeaderKey, read_log_file
from tests.local import LOCAL
from tests.writekit import write

MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}
PARTIAL = {**MOR, "hoodie.spark.sql.merge.into.partial.updates": "true"}
FARES = [{"id": f"k{i}", "ts": 1, "region": "eu", "fare": i * 1.5} for i in range(4)]


def fares(path: Path) -> dict[str, tuple[int, float]]:
    return {r["id"]: (r["ts"], r["fare"]) for r in shim.open_table(path).read().to_pylist()}


@pytest.mark.parametrize("how", ["merge-into flag", "partial update schema"])
def test_an_upsert_of_some_columns_writes_partial_blocks_of_those_columns(tmp_path: Path, how: str) -> None:
    path = tmp_path / "t"
    write(path, FARES, **MOR)
    update = pa.table({"id": ["k1", "k2"], "ts": [2, 2], "region": ["eu", "eu"]})
    options = PARTIAL if how == "merge-into flag" else {**MOR, "hoodie.write.partial.update.schema": json.dumps(
        {"type": "record", "name": "r", "fields": [{"name": n, "type": "string"} for n in ("id", "ts", "region")]})}
    write(path, update, **options)

    blocks = [block for log in path.rglob(".*.log.*") for block in read_log_file(LOCAL, str(log)).blocks]
    assert blocks
    for block in blocks:
        assert block.header[HeaderKey.IS_PARTIAL] == "true"
        assert [f["name"] for f in block.schema["fields"]][5:] == ["id", "ts", "region"]
    assert fares(path) == {"k0": (1, 0.0), "k1": (2, 1.5), "k2": (2, 3.0), "k3": (1, 4.5)}


def test_partial_updates_are_refused_where_hudi_has_none(tmp_path: Path) -> None:
    cow = tmp_path / "cow"
    write(cow, FARES)
    some = pa.table({"id": ["k1"], "ts": [2], "region": ["eu"]})
    with pytest.raises(UnsupportedFeatureError, match="upserts into merge-on-read tables"):
        write(cow, some, **{"hoodie.spark.sql.merge.into.partial.updates": "true"})
    with pytest.raises(InvalidArgumentError, match="need an existing table"):
        write(tmp_path / "new", some, **PARTIAL)
    mor = tmp_path / "mor"
    write(mor, FARES, **MOR)
    with pytest.raises(InvalidArgumentError, match="no column 'ts' needed by the upsert"):
        write(mor, pa.table({"id": ["k1"], "region": ["eu"], "fare": [1.0]}), **PARTIAL)
    schema = json.dumps({"type": "record", "name": "r", "fields": [{"name": "tip", "type": "double"}]})
    with pytest.raises(InvalidArgumentError, match="names 'tip', which the data does not hold"):
        write(mor, some, **MOR, **{"hoodie.write.partial.update.schema": schema})


def test_a_partial_update_of_a_key_without_a_file_group_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t"
    by_region = {"hoodie.datasource.write.partitionpath.field": "region"}
    write(path, FARES, **MOR, **by_region)
    other = pa.table({"id": ["x1"], "ts": [2], "region": ["us"]})  # a partition the table has no file group in
    with pytest.raises(WriteError, match="partial updates update records the table holds"):
        write(path, other, **PARTIAL, **by_region)
    assert fares(path) == {r["id"]: (1, r["fare"]) for r in FARES}  # nothing of the failed write is visible


def test_compaction_merges_partial_blocks_into_the_base_file(tmp_path: Path) -> None:
    from shim.write.services.compaction import compact

    path = tmp_path / "t"
    write(path, FARES, **MOR)
    write(path, pa.table({"id": ["k1", "k3"], "ts": [2, 2], "region": ["us", "us"]}), **PARTIAL)
    before = shim.open_table(path).read().sort_by("id")
    assert compact(str(path)) is not None
    after = shim.open_table(path)
    assert after.read().sort_by("id").equals(before)
    assert after.read(mode="read_optimized").sort_by("id").equals(before)  # the logs are in the base file now
    assert before.column("region").to_pylist() == ["eu", "us", "eu", "us"]
