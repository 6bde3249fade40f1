"""Partial-update log blocks (IS_PARTIAL, as Hudi 1.x writes a MERGE INTO of some columns): a
partial record sets only its columns; the rest keep the value of the version it merges onto."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import shim
from shim.read import slice_merge_state
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("name", pa.string()), ("price", pa.float64()), ("qty", pa.int64()),
                    ("ts", pa.int64())])
MODES = {"event": None, "commit": "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"}


def table(tmp_path: Path, mode: str = "event") -> tuple[TinyTable, str]:
    kit = TinyTable(tmp_path / "t", SCHEMA, payload=MODES[mode])
    base = kit.base([{"id": f"k{i}", "name": f"n{i}", "price": i * 1.5, "qty": i, "ts": 1} for i in range(1, 7)])
    return kit, base


def rows(path: Path, **read: object) -> dict[str, dict[str, object]]:
    return {r["id"]: {k: v for k, v in r.items() if k != "id"} for r in shim.open_table(path).read(**read).to_pylist()}


def test_a_partial_record_sets_its_columns_and_keeps_the_rest_of_the_base_record(tmp_path: Path) -> None:
    kit, base = table(tmp_path)
    kit.log([{"id": "k2", "price": 20.5, "ts": 5}, {"id": "k3", "price": 30.5, "ts": 5}], base_instant=base, partial=True)

    read = rows(kit.path)

    assert read["k2"] == {"name": "n2", "price": 20.5, "qty": 2, "ts": 5}
    assert read["k3"] == {"name": "n3", "price": 30.5, "qty": 3, "ts": 5}
    assert read["k1"] == {"name": "n1", "price": 1.5, "qty": 1, "ts": 1}
    assert len(read) == 6


def test_event_time_a_partial_record_with_a_lower_ordering_value_changes_nothing(tmp_path: Path) -> None:
    kit, base = table(tmp_path)
    kit.log([{"id": "k2", "price": 20.5, "ts": 0}], base_instant=base, partial=True)  # base has ts 1
    kit.log([{"id": "k3", "qty": 300, "name": "three", "price": 3.0, "ts": 5}], base_instant=base)  # whole record
    kit.log([{"id": "k3", "name": "late", "ts": 4}], base_instant=base, partial=True)  # loses to ts 5

    read = rows(kit.path)

    assert read["k2"] == {"name": "n2", "price": 3.0, "qty": 2, "ts": 1}
    assert read["k3"] == {"name": "three", "price": 3.0, "qty": 300, "ts": 5}


def test_partial_records_compose_in_hudis_order_not_per_column_maximum(tmp_path: Path) -> None:
    """k2: price at ts 5, then qty at ts 10, then price again at ts 7: the record at ts 10 took
    over, so price is the one of the record before it (5), as Hudi's pairwise merge gives, not
    the price with the highest ordering value among those that set it (7)."""
    kit, base = table(tmp_path)
    kit.log([{"id": "k2", "price": 5.0, "ts": 5}], base_instant=base, partial=True)
    kit.log([{"id": "k2", "qty": 10, "ts": 10}], base_instant=base, partial=True)
    kit.log([{"id": "k2", "price": 7.0, "name": "seven", "ts": 7}], base_instant=base, partial=True)

    assert rows(kit.path)["k2"] == {"name": "seven", "price": 5.0, "qty": 10, "ts": 10}


def test_commit_time_ordering_the_later_partial_record_always_wins(tmp_path: Path) -> None:
    kit, base = table(tmp_path, "commit")
    kit.log([{"id": "k2", "price": 5.0, "ts": 5}], base_instant=base, partial=True)
    kit.log([{"id": "k2", "price": 7.0, "name": "low", "ts": 0}], base_instant=base, partial=True)

    assert rows(kit.path)["k2"] == {"name": "low", "price": 7.0, "qty": 2, "ts": 0}


def test_a_partial_record_of_a_key_without_a_base_record_reads_null_elsewhere(tmp_path: Path) -> None:
    kit, base = table(tmp_path)
    kit.log([{"id": "k9", "name": "nine", "ts": 4}], base_instant=base, partial=True)

    assert rows(kit.path)["k9"] == {"name": "nine", "price": None, "qty": None, "ts": 4}


def test_a_delete_then_a_partial_record_overlays_the_base_record_as_hudi_does(tmp_path: Path) -> None:
    """Hudi's partial merge forgets a delete a record is merged onto; the base record then fills
    the columns the record lacks."""
    kit, base = table(tmp_path)
    kit.log([{"id": "k4", "price": 40.0, "ts": 5}], deletes=["k2"], base_instant=base, partial=True)
    kit.log([{"id": "k2", "qty": 22, "ts": 6}], base_instant=base, partial=True)

    read = rows(kit.path)

    assert read["k2"] == {"name": "n2", "price": 3.0, "qty": 22, "ts": 6}
    assert read["k4"] == {"name": "n4", "price": 40.0, "qty": 4, "ts": 5}


def test_a_delete_after_partial_records_deletes_the_key(tmp_path: Path) -> None:
    kit, base = table(tmp_path)
    kit.log([{"id": "k2", "price": 5.0, "ts": 5}], base_instant=base, partial=True)
    kit.log(deletes=["k2"], base_instant=base)

    assert "k2" not in rows(kit.path)


@pytest.mark.parametrize("read", [
    {"columns": ["id", "qty"]},
    {"filter": "price > 20"},
    {"limit": 100},
    {"mode": "read_optimized"},
])
def test_projections_filters_limits_and_views_read_the_same_records(tmp_path: Path, read: dict) -> None:
    kit, base = table(tmp_path)
    kit.log([{"id": "k2", "price": 20.5, "ts": 5}, {"id": "k9", "name": "nine", "price": 90.0, "ts": 5}],
            base_instant=base, partial=True)
    everything = rows(kit.path)
    opened = shim.open_table(kit.path)
    for _ in range(2):  # the first read merges, the second reads the remembered merge
        got = {r["id"]: r for r in opened.read(**read).to_pylist()}
        if read.get("mode") == "read_optimized":
            assert got["k2"]["price"] == 3.0 and "k9" not in got
            continue
        expected = {k: v for k, v in everything.items() if "filter" not in read or (v["price"] or 0) > 20}
        assert set(got) == set(expected)
        for key, row in got.items():
            assert all(row[c] == expected[key][c] for c in row if c != "id"), key


def test_time_travel_before_the_partial_update_reads_the_base_record(tmp_path: Path) -> None:
    kit, base = table(tmp_path)
    first = kit.log([{"id": "k2", "price": 20.5, "ts": 5}], base_instant=base, partial=True)
    kit.log([{"id": "k2", "qty": 7, "ts": 6}], base_instant=base, partial=True)

    assert rows(kit.path, as_of=base)["k2"] == {"name": "n2", "price": 3.0, "qty": 2, "ts": 1}
    assert rows(kit.path, as_of=first)["k2"] == {"name": "n2", "price": 20.5, "qty": 2, "ts": 5}
    assert rows(kit.path)["k2"] == {"name": "n2", "price": 20.5, "qty": 7, "ts": 6}


def test_the_catalogs_merge_state_holds_composed_records_whole(tmp_path: Path) -> None:
    kit, base = table(tmp_path)
    kit.log([{"id": "k2", "price": 20.5, "ts": 5}], base_instant=base, partial=True)
    opened = shim.open_table(kit.path)
    scan = opened.plan(shim.ScanOptions())
    [file_slice] = scan.slices

    for _ in range(2):  # merged afresh, then from the remembered merge
        state = slice_merge_state(scan, file_slice)
        dropped = [i for i, keep in enumerate(state.base_keep.to_pylist()) if not keep]
        assert dropped == [1]  # k2's base row, which the composed record replaces
        [composed] = state.log_rows.to_pylist()
        assert {k: composed[k] for k in SCHEMA.names} == {"id": "k2", "name": "n2", "price": 20.5, "qty": 2, "ts": 5}
