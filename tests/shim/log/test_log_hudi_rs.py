"""What the writer produces, hudi-rs reads: blocks added to a real MOR table change its snapshot."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from log_cases import log_files, needs_shared, snapshot_rows, unzip_table

from shim.log import (
    HeaderKey,
    append_log_blocks,
    decode_data_block,
    encode_avro_data_block,
    encode_delete_block,
    read_log_file,
    write_log_file,
)
from tests.local import LOCAL

pytest.importorskip("hudi", reason="hudi-rs python bindings (pip install hudi) are needed")

UPDATED_KEY = "9909a8b1-2d15-4d3d-8ec9-efc48c536a00"
DELETED_KEY = "334e26e9-8355-45cc-97c6-c31daf0df330"


def _complete(table: Path, instant: str) -> None:
    """A completed deltacommit for `instant`, adapted from the table's last one."""
    timeline = table / ".hoodie"
    for suffix in (".deltacommit.requested", ".deltacommit.inflight", ".deltacommit"):
        shutil.copy(timeline / f"20250331030645735{suffix}", timeline / f"{instant}{suffix}")


@needs_shared
@pytest.mark.shared
def test_hudi_rs_reads_appended_update_and_new_delete_log_file(tmp_path: Path) -> None:
    table = unzip_table("trips__mor__avro__v6_trips_8i1u", tmp_path)
    (log,) = [p for p in log_files(table) if "metadata" not in str(p)]
    contents = read_log_file(LOCAL, str(log))
    (block,) = contents.blocks
    assert block.schema is not None
    old = decode_data_block(contents, block)
    before = snapshot_rows(table)

    update_instant = "20250331030650000"
    row = old.to_pylist()[0] | {
        "_hoodie_commit_time": update_instant,
        "fare": 99.5,
        "ts": old["ts"][0].as_py() + 1,
    }
    append_log_blocks(LOCAL, str(log),
        [
            encode_avro_data_block(
                pa.Table.from_pylist([row], schema=old.schema),
                block.schema,
                {HeaderKey.INSTANT_TIME: update_instant},
            )
        ],
    )
    _complete(table, update_instant)
    after_update = snapshot_rows(table)

    delete_instant = "20250331030660000"
    next_log = log.with_name(log.name.replace(".log.1_0-26-85", ".log.2_0-30-90"))
    header = {HeaderKey.INSTANT_TIME: delete_instant, HeaderKey.SCHEMA: block.header[HeaderKey.SCHEMA]}
    write_log_file(LOCAL, str(next_log), [encode_delete_block([DELETED_KEY], ["city=san_francisco"], [], header)])
    _complete(table, delete_instant)
    after_delete = snapshot_rows(table)

    assert before[UPDATED_KEY]["fare"] == 25.0
    assert after_update[UPDATED_KEY]["fare"] == 99.5
    assert after_update[UPDATED_KEY]["_hoodie_commit_time"] == update_instant
    assert {k: v for k, v in after_update.items() if k != UPDATED_KEY} == {
        k: v for k, v in before.items() if k != UPDATED_KEY
    }
    assert len(after_delete) == 7
    assert DELETED_KEY not in after_delete and DELETED_KEY in after_update
