"""A task's rows: keys, partition paths, buckets, deletes and pre-combining."""

from __future__ import annotations

import pyarrow as pa

from shim.write.bucket import bucket_of_key
from shim.write.options import WriteOptions
from shim.write.records import prepare_rows
from shim.write.write_schema import initial_schema

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("region", pa.string()), ("v", pa.string())])
OPTIONS = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "region",
    "hoodie.bucket.index.num.buckets": "4",
}


def prepare(rows: list[dict], **options: str):  # type: ignore[no-untyped-def]
    table = pa.Table.from_pylist(rows, schema=SCHEMA if "_hoodie_is_deleted" not in rows[0] else None)
    opts = WriteOptions.parse({**OPTIONS, **options}, tuple(table.column_names))
    return prepare_rows(table, initial_schema("t", table.schema), opts)


def test_precombine_keeps_highest_ordering_value_and_later_row_on_ties():
    prepared = prepare([
        {"id": "a", "ts": 2, "region": "x", "v": "a2"},
        {"id": "a", "ts": 5, "region": "x", "v": "a5"},
        {"id": "a", "ts": 1, "region": "x", "v": "a1"},
        {"id": "b", "ts": 3, "region": "x", "v": "b-first"},
        {"id": "b", "ts": 3, "region": "x", "v": "b-second"},
        {"id": "c", "ts": None, "region": "x", "v": "c-null"},
        {"id": "c", "ts": 0, "region": "x", "v": "c0"},
    ])
    assert sorted(prepared.data.column("v").to_pylist()) == ["a5", "b-second", "c0"]


def test_insert_does_not_combine_by_default():
    prepared = prepare([{"id": "a", "ts": 1, "region": "x", "v": "1"}, {"id": "a", "ts": 2, "region": "x", "v": "2"}],
                       **{"hoodie.datasource.write.operation": "insert"})
    assert prepared.data.num_rows == 2


def test_keys_partitions_and_buckets_follow_hudi():
    prepared = prepare([{"id": "k1", "ts": 1, "region": "x", "v": ""}, {"id": "k2", "ts": 1, "region": None, "v": ""}])
    assert prepared.keys.to_pylist() == ["k1", "k2"]
    assert prepared.partitions.to_pylist() == ["x", "__HIVE_DEFAULT_PARTITION__"]
    assert prepared.buckets.tolist() == [bucket_of_key("k1", ["id"], 4), bucket_of_key("k2", ["id"], 4)]


def test_is_deleted_rows_become_deletes_with_their_ordering_value():
    rows = [
        {"id": "a", "ts": 7, "region": "x", "_hoodie_is_deleted": True},
        {"id": "b", "ts": 1, "region": "x", "_hoodie_is_deleted": False},
        {"id": "c", "ts": 2, "region": "x", "_hoodie_is_deleted": None},
    ]
    prepared = prepare(rows)
    assert prepared.keys.to_pylist() == ["b", "c"]
    assert prepared.delete_keys.to_pylist() == ["a"]
    assert [o.to_pylist() for o in prepared.delete_ordering] == [[7]]


def test_delete_operation_keeps_one_delete_per_key_with_default_ordering():
    prepared = prepare([{"id": "a", "ts": 1, "region": "x", "v": None}, {"id": "a", "ts": 2, "region": "x", "v": None}],
                       **{"hoodie.datasource.write.operation": "delete"})
    assert prepared.data.num_rows == 0 and prepared.delete_keys.to_pylist() == ["a"]
    assert prepared.delete_ordering == ()


def test_groups_split_rows_by_partition_and_bucket():
    rows = [{"id": f"k{i}", "ts": i, "region": "x" if i % 2 else "y", "v": str(i)} for i in range(40)]
    prepared = prepare(rows)
    seen = []
    for group in prepared.groups():
        for key in group.keys.to_pylist():
            assert bucket_of_key(key, ["id"], 4) == group.bucket
        assert set(group.data.column("region").to_pylist()) == {group.partition_path}
        seen += group.data.column("v").to_pylist()
    assert sorted(seen, key=int) == [str(i) for i in range(40)]
