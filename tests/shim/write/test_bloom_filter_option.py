"""Base files carry Hudi's record-key bloom filter unless `hoodie.parquet.bloom.filter.enabled` is false
(Hudi's switch for tables whose index does not need it), in writes and in compaction."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from shim.bloom import BLOOM_FILTER_KEY, DynamicBloomFilter, dynamic_bloom_filter
from shim.errors import InvalidArgumentError
from shim.write.services.compaction import compact
from tests.writekit import data_files, write

OFF = {"hoodie.parquet.bloom.filter.enabled": "false"}
MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}


def rows(ids: range, ts: int = 1) -> list[dict]:
    return [{"id": f"k{i}", "ts": ts, "fare": float(i)} for i in ids]


def footers(path: Path) -> dict[str, dict[bytes, bytes]]:
    return {name: pq.read_metadata(path / name).metadata for name in data_files(path) if name.endswith(".parquet")}


def test_written_base_files_hold_a_filter_of_their_keys(tmp_path):
    write(tmp_path / "t", rows(range(40)))
    found = footers(tmp_path / "t")
    assert found
    for name, footer in found.items():
        keys = pq.read_table(tmp_path / "t" / name, columns=["_hoodie_record_key"]).column(0).to_pylist()
        bloom = DynamicBloomFilter.parse(footer[BLOOM_FILTER_KEY])
        assert bloom.current == len(keys) and all(bloom.might_contain(k) for k in keys)


@pytest.mark.parametrize("together", [False, True])
def test_rewritten_base_files_hold_exactly_the_filter_of_their_keys(tmp_path, together):
    # upserts extend the rewritten file's filter with the keys merged in; a delete starts afresh
    path = tmp_path / "t"
    write(path, rows(range(40)))
    write(path, rows(range(30, 60), ts=2), tasks=2, together=together)
    check_exact_filters(path)
    write(path, rows(range(0, 60, 7), ts=3), tasks=2, **{"hoodie.datasource.write.operation": "delete"})
    check_exact_filters(path)


def check_exact_filters(path: Path) -> None:
    latest = {}
    for name in sorted(footers(path), key=lambda n: n.rsplit("_", 1)[-1]):
        latest[name.split("_")[0]] = name
    for name in latest.values():
        keys = pq.read_table(path / name, columns=["_hoodie_record_key"]).column(0).combine_chunks()
        assert pq.read_metadata(path / name).metadata[BLOOM_FILTER_KEY].decode() == dynamic_bloom_filter(keys), name


def test_switched_off_no_base_file_holds_one(tmp_path):
    write(tmp_path / "t", rows(range(40)), **OFF)
    write(tmp_path / "t", rows(range(0, 40, 2), ts=2), **OFF)  # copy-on-write: base files rewritten
    assert footers(tmp_path / "t")
    assert all(BLOOM_FILTER_KEY not in footer for footer in footers(tmp_path / "t").values())


def test_compaction_follows_the_switch(tmp_path):
    table = tmp_path / "t"
    write(table, rows(range(20)), **MOR)
    write(table, rows(range(0, 20, 3), ts=2), **MOR)
    instant = compact(str(table), options=OFF)
    compacted = {name: footer for name, footer in footers(table).items() if name.endswith(f"_{instant}.parquet")}
    assert compacted and all(BLOOM_FILTER_KEY not in footer for footer in compacted.values())
    assert all(BLOOM_FILTER_KEY in footer for name, footer in footers(table).items() if name not in compacted)


def test_a_value_other_than_true_or_false_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(InvalidArgumentError, match="hoodie.parquet.bloom.filter.enabled='no' must be true or false"):
        write(tmp_path / "t", rows(range(3)), **{"hoodie.parquet.bloom.filter.enabled": "no"})
    assert not (tmp_path / "t").exists()
