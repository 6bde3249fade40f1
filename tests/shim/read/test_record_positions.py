"""Record positions (`RECORD_POSITIONS`): log blocks naming the base file rows they update are
merged by row, without reading the base file's keys, with Hudi's fallbacks to keys."""

from __future__ import annotations

import base64
import struct
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import shim
from shim.errors import CorruptFileError
from shim.log.positions import decode_positions, encode_positions
from shim.read import slice_state
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("v", pa.string()), ("ts", pa.int64())])
COMMIT_TIME = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"


@pytest.mark.parametrize("values", [[], [0], [1, 2], list(range(0, 300_000, 7)), list(range(70_000)),
                                    [5, 2**33 + 7, 2**40]])
def test_positions_round_trip_through_the_portable_roaring_format(values: list[int]) -> None:
    positions = np.array(values, dtype=np.int64)
    assert decode_positions(encode_positions(positions), "/t/x", 0).tolist() == values


def test_the_header_hudi_wrote_for_rows_1_and_2_is_decoded_and_written_byte_for_byte() -> None:
    hudi = "AQAAAAAAAAAAAAAAOjAAAAEAAAAAAAEAEAAAAAEAAgA="  # Hudi 1.2, a MERGE INTO of the 2nd and 3rd row
    assert decode_positions(hudi, "/t/x", 0).tolist() == [1, 2]
    assert encode_positions(np.array([1, 2])) == hudi


def test_run_containers_as_roaring_writes_them_after_run_optimize() -> None:
    # one bucket (high 0), cookie 12347 with 2 containers, both runs; key 0: 10..14; key 1: 65536+0..2
    bitmap = struct.pack("<I", 12347 | (1 << 16)) + bytes([0b11])
    bitmap += struct.pack("<HHHH", 0, 4, 1, 2)  # keys and cardinalities - 1 (no offsets: fewer than 4)
    bitmap += struct.pack("<HHH", 1, 10, 4) + struct.pack("<HHH", 1, 0, 2)
    text = base64.b64encode(struct.pack("<QI", 1, 0) + bitmap).decode()
    assert decode_positions(text, "/t/x", 0).tolist() == [10, 11, 12, 13, 14, 65536, 65537, 65538]
    lying = base64.b64encode(struct.pack("<QI", 1, 0) + bitmap[:-2] + struct.pack("<H", 60000)).decode()
    with pytest.raises(CorruptFileError, match="runs that do not add up"):
        decode_positions(lying, "/t/x", 7)


@pytest.mark.parametrize("text", ["not base64!", base64.b64encode(b"\xff" * 8).decode(),
                                  base64.b64encode(struct.pack("<QI", 1, 0) + struct.pack("<II", 12346, 2**30)).decode()])
def test_a_damaged_header_is_corrupt_naming_file_and_block(text: str) -> None:
    with pytest.raises(CorruptFileError, match="RECORD_POSITIONS header of the log block at byte offset 42") as info:
        decode_positions(text, "/t/x", 42)
    assert info.value.offset == 42


def _table(tmp_path: Path, payload: str | None = None) -> tuple[TinyTable, str]:
    kit = TinyTable(tmp_path / "t", SCHEMA, payload=payload)
    base = kit.base([{"id": f"k{i}", "v": f"b{i}", "ts": 1} for i in range(6)])
    return kit, base


@pytest.fixture
def keys_read(monkeypatch) -> list[int]:
    """How many batches of base rows had their record keys read by a merge."""
    calls: list[int] = []
    original = slice_state.record_keys

    def counting(batch, spec, path, offset=None):
        if offset is None:  # base rows (log records name their block)
            calls.append(batch.num_rows)
        return original(batch, spec, path, offset)

    monkeypatch.setattr(slice_state, "record_keys", counting)
    return calls


@pytest.mark.parametrize("payload", [None, COMMIT_TIME])
def test_blocks_with_positions_merge_by_row_without_reading_base_keys(tmp_path: Path, keys_read, payload) -> None:
    kit, base = _table(tmp_path, payload)
    kit.log([{"id": "k1", "v": "L1", "ts": 2}, {"id": "k4", "v": "L4", "ts": 2}], base_instant=base,
            positions=np.array([1, 4]))
    rows = {r["id"]: r["v"] for r in shim.open_table(kit.path).read().to_pylist()}
    assert rows == {"k0": "b0", "k1": "L1", "k2": "b2", "k3": "b3", "k4": "L4", "k5": "b5"}
    assert keys_read == []


def test_positions_of_another_base_file_or_miscounted_fall_back_to_keys(tmp_path: Path, keys_read) -> None:
    kit, base = _table(tmp_path)
    kit.log([{"id": "k1", "v": "L1", "ts": 2}], base_instant=base, positions=np.array([1]))
    kit.log([{"id": "k2", "v": "L2", "ts": 2}, {"id": "k9", "v": "new", "ts": 2}], base_instant=base)  # an insert: none
    rows = {r["id"]: r["v"] for r in shim.open_table(kit.path).read().to_pylist()}
    assert rows == {"k0": "b0", "k1": "L1", "k2": "L2", "k3": "b3", "k4": "b4", "k5": "b5", "k9": "new"}
    assert sum(keys_read) == 6  # a block without positions: the whole slice merges by key


def test_event_time_ordering_by_position_still_compares_ordering_values(tmp_path: Path, keys_read) -> None:
    kit, base = _table(tmp_path)
    kit.log([{"id": "k1", "v": "old", "ts": 0}, {"id": "k2", "v": "new", "ts": 5}], base_instant=base,
            positions=np.array([1, 2]))
    rows = {r["id"]: r["v"] for r in shim.open_table(kit.path).read().to_pylist()}
    assert (rows["k1"], rows["k2"]) == ("b1", "new")
    assert keys_read == []


def test_positions_past_the_base_file_fall_back_to_keys(tmp_path: Path) -> None:
    kit, base = _table(tmp_path)
    kit.log([{"id": "k1", "v": "L1", "ts": 2}], base_instant=base, positions=np.array([60]))
    rows = {r["id"]: r["v"] for r in shim.open_table(kit.path).read().to_pylist()}
    assert rows["k1"] == "L1" and len(rows) == 6
