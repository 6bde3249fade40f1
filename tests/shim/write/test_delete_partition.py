"""Hudi's delete_partition: a replacecommit that replaces every live file group of the partitions
named (`hoodie.datasource.write.partitions.to.delete`, `*` wildcards) or, without that option, of
the partitions the rows given fall in (no row is written). Readers stop seeing them at once; the
cleaner removes their files later."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import shim
from shim.errors import InvalidArgumentError
from tests.writekit import data_files, hudi_rs_rows, shim_rows, write

COLUMNS = ["id", "ts", "region", "fare"]
HIVE = {"hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.datasource.write.partitionpath.field": "region"}
DELETE = {"hoodie.datasource.write.operation": "delete_partition"}


def trips(ts: int, regions: tuple[str, ...] = ("eu", "us", "ap")) -> list[dict]:
    return [{"id": f"k{i:02d}", "ts": ts, "region": regions[i % len(regions)], "fare": float(ts * 100 + i)}
            for i in range(24)]


def last_commit(path: Path) -> tuple[str, dict]:
    table = shim.open_table(str(path))
    instant = [i for i in table.timeline() if i.is_completed][-1]
    with open(path / ".hoodie" / instant.file_name, encoding="utf-8") as handle:
        return instant.action.value, json.loads(handle.read())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_named_partitions_disappear_for_every_reader(tmp_path: Path, table_type: str) -> None:
    options = {**HIVE, "hoodie.datasource.write.table.type": table_type}
    write(tmp_path, trips(1), **options)
    write(tmp_path, trips(2)[::3], **options)  # log blocks or rewritten base files in every partition
    files_before = set(data_files(tmp_path))
    write(tmp_path, [], **DELETE, **{"hoodie.datasource.write.partitions.to.delete": "region=us"})

    action, metadata = last_commit(tmp_path)
    assert action == "replacecommit" and metadata["operationType"] == "DELETE_PARTITION"
    assert sorted(metadata["partitionToReplaceFileIds"]) == ["region=us"]
    assert set(data_files(tmp_path)) == files_before  # nothing written, nothing removed yet
    latest = {r["id"]: r for r in trips(1)} | {r["id"]: r for r in trips(2)[::3]}
    want = [latest[k] for k in sorted(latest) if latest[k]["region"] != "us"]
    assert [{k: r[k] for k in COLUMNS} for r in shim_rows(tmp_path)] == want
    assert hudi_rs_rows(tmp_path, COLUMNS) == want
    assert shim.open_table(str(tmp_path)).read(mode="read_optimized", filter="region = 'us'").num_rows == 0

    # Writing to the partition again starts new file groups there.
    write(tmp_path, [{"id": "k99", "ts": 3, "region": "us", "fare": 1.0}], **options)
    assert [r["id"] for r in shim_rows(tmp_path) if r["region"] == "us"] == ["k99"]


def test_wildcards_and_partitions_named_by_rows(tmp_path: Path) -> None:
    write(tmp_path, trips(1, ("eu-west", "eu-north", "us", "ap")), **HIVE)
    write(tmp_path, [], **DELETE, **{"hoodie.datasource.write.partitions.to.delete": "region=eu-*,region=nowhere"})
    assert {r["region"] for r in shim_rows(tmp_path)} == {"us", "ap"}
    # Without the option, the rows name the partitions; their other values do not matter.
    write(tmp_path, [{"id": "zz", "ts": 0, "region": "ap", "fare": -1.0}], **DELETE)
    assert {r["region"] for r in shim_rows(tmp_path)} == {"us"}
    assert sorted(last_commit(tmp_path)[1]["partitionToReplaceFileIds"]) == ["region=ap"]
    assert hudi_rs_rows(tmp_path, COLUMNS) == [{k: r[k] for k in COLUMNS} for r in shim_rows(tmp_path)]


def test_the_cleaner_removes_deleted_partitions_files_later(tmp_path: Path) -> None:
    options = {**HIVE, "hoodie.cleaner.commits.retained": "1"}
    write(tmp_path, trips(1), **options)
    write(tmp_path, [], **DELETE, **options, **{"hoodie.datasource.write.partitions.to.delete": "region=eu"})
    write(tmp_path, trips(2, ("us",))[:2], **options)
    write(tmp_path, trips(3, ("us",))[:2], **options)
    assert not any(name.startswith("region=eu/") and name.endswith(".parquet") for name in data_files(tmp_path))
    assert {r["region"] for r in shim_rows(tmp_path)} == {"us", "ap"}


def test_what_delete_partition_cannot_do(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError, match="needs an existing table"):
        write(tmp_path / "new", trips(1), **HIVE, **DELETE)
    write(tmp_path / "flat", trips(1), **{"hoodie.datasource.write.partitionpath.field": ""})
    with pytest.raises(InvalidArgumentError, match="needs a partitioned table"):
        write(tmp_path / "flat", [], **DELETE, **{"hoodie.datasource.write.partitions.to.delete": "x"})


def test_patterns_matching_no_partition_are_refused_naming_how_paths_are_spelled(tmp_path: Path) -> None:
    plain = {"hoodie.datasource.write.partitionpath.field": "region"}  # not hive-style: paths are values
    write(tmp_path, trips(1, ("eu-west", "eu-north", "us")), **plain)
    before = shim.open_table(str(tmp_path)).timeline()
    with pytest.raises(InvalidArgumentError, match=r"region=eu-\* matches none of the table's 3 partitions "
                                                   r"\(eu-north, eu-west, us\).*not hive-style"):
        write(tmp_path, [], **DELETE, **{"hoodie.datasource.write.partitions.to.delete": "region=eu-*"})
    assert shim.open_table(str(tmp_path)).timeline() == before, "nothing committed, nothing left pending"
    write(tmp_path, [], **DELETE, **{"hoodie.datasource.write.partitions.to.delete": "eu-*"})
    assert {r["region"] for r in shim_rows(tmp_path)} == {"us"}
