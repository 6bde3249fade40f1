"""Every single-byte flip of a committed log file: the read returns the table's rows, or fails
with an error naming the file and the offset; never fewer rows in silence, never an exception
outside hudi-shim's own (MemoryError included: the flips run under an address-space limit).

Hudi's log format has no checksums, so a flip inside a record's own bytes (a value, a key) can
change that record and no reader can tell: such flips may change the rows of at most the one
record they hit. Every other byte (magics, lengths, versions, block types, headers with the
instant and the writer's schema, record counts and lengths) must be caught.
"""

from __future__ import annotations

import collections
import json
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from shim.log.blocks import BlockType
from shim.log.reader import read_log_file
from tests.local import LOCAL
from tests.tablekit import EvolvingTable, TinyTable, rename

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.string())])
MASKS = {"plain": (0xFF, 0x01), "evolved": (0xFF,), "parquet": (0xFF,)}
"""XOR masks per table: every bit of a byte at once, and the lowest alone (digits of an instant,
letters of a column name stay printable), where the time allows."""
REPO = Path(__file__).resolve().parents[3]


def plain_table(root: Path) -> Path:
    table = TinyTable(root / "plain", SCHEMA)
    base = table.base([{"id": f"k{i}", "ts": 1, "v": f"b{i}"} for i in range(5)])
    table.log([{"id": "k1", "ts": 2, "v": "L1"}, {"id": "k2", "ts": 2, "v": "L2"}], deletes=["k3"], base_instant=base)
    table.log([{"id": "k4", "ts": 3, "v": "L4"}], base_instant=base)
    return table.path


def parquet_block_table(root: Path) -> Path:
    table = TinyTable(root / "parquet", SCHEMA)
    base = table.base([{"id": f"k{i}", "ts": 1, "v": f"b{i}"} for i in range(3)])
    table.log([{"id": "k1", "ts": 2, "v": "L1"}], deletes=["k2"], base_instant=base, block_format="parquet")
    return table.path


def evolved_table(root: Path) -> Path:
    table = EvolvingTable(root / "evolved", SCHEMA)
    base = table.base([{"id": f"k{i}", "ts": 1, "v": f"b{i}"} for i in range(4)])
    table.alter(rename("v", "value"))
    table.log([{"id": "k1", "ts": 2, "value": "L1"}], base_instant=base)
    return table.path


def flip_every_byte(table: Path, tmp_path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[Path]]:
    logs = sorted(p for p in table.rglob(".*.log.*") if ".hoodie" not in p.parts)
    assert logs
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"table": str(table), "files": [str(p) for p in logs], "masks": MASKS[table.name]}))
    done = subprocess.run([sys.executable, "-m", "tests.shim.read.flipkit", str(spec)], check=False, cwd=REPO,
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return lines[0]["baseline"], lines[1:], logs


def payload_bytes(log: Path) -> set[int]:
    """Offsets inside records' own bytes (values and keys, which the format does not protect)."""
    contents = read_log_file(LOCAL, str(log))
    inside: set[int] = set()
    for block in contents.blocks:
        start, end = block.content_offset, block.content_offset + block.content_length
        if block.block_type is BlockType.AVRO_DATA:
            pos = start + 8  # version, record count
            while pos < end:
                (size,) = struct.unpack_from(">i", contents.data, pos)
                inside.update(range(pos + 4, pos + 4 + size))
                pos += 4 + size
        elif block.block_type is BlockType.DELETE:
            inside.update(range(start + 8, end))  # version, payload length; then the Avro payload
        elif block.block_type is BlockType.PARQUET_DATA:
            inside.update(range(start, end))
    return inside


def keys_of(rows: list[str]) -> collections.Counter[str]:
    return collections.Counter(json.loads(row)["_hoodie_record_key"] for row in rows)


@pytest.mark.parametrize("build", [plain_table, evolved_table, parquet_block_table])
def test_a_flipped_byte_in_a_committed_log_reads_right_or_names_file_and_offset(build, tmp_path: Path) -> None:
    baseline, outcomes, logs = flip_every_byte(build(tmp_path), tmp_path)
    good = baseline["rows"]
    payload = {str(log): payload_bytes(log) for log in logs}
    tally: collections.Counter[str] = collections.Counter()
    for outcome in outcomes:
        where = f"{Path(outcome['file']).name} byte {outcome['offset']} ^ {outcome['mask']:#x}"
        assert "escaped" not in outcome, f"{where}: {outcome.get('trace')}"
        in_payload = outcome["offset"] in payload[outcome["file"]]
        if "error" in outcome:
            tally["error"] += 1
            assert outcome["error"] in ("CorruptFileError", "CommittedDataError"), f"{where}: {outcome}"
            assert outcome["path"] == outcome["file"] and outcome["offset"] is not None, f"{where}: {outcome}"
            assert "skip_error" not in outcome, f"{where}: corrupt='skip' failed: {outcome}"
            assert outcome["skip_count"] >= 1, f"{where}: skipping reported nothing"
        elif outcome["rows"] == good:
            tally["same rows"] += 1
        else:
            assert in_payload, f"{where}: a flip outside any record's bytes changed the rows silently"
            changed = (keys_of(outcome["rows"]) - keys_of(good)) + (keys_of(good) - keys_of(outcome["rows"]))
            changed_values = {json.loads(r)["_hoodie_record_key"] for r in set(outcome["rows"]) ^ set(good)}
            assert len(set(changed) | changed_values) <= 2, f"{where}: one record's flip changed {changed_values}"
            tally["one record changed"] += 1
    assert tally["error"] > 0 and tally["same rows"] > 0
    print(dict(tally))
