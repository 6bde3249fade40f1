"""Files the writer writes carry no Parquet field ids, nested members included, as Hudi's own
files carry none: rows carried over from an older file (copy-on-write rewrites, merge-on-read
Parquet log blocks) are read back with their columns' ids, and an Iceberg reader takes a file
with ids anywhere for one it must read by id (Trino read such files' top-level columns as null)."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import shim
from shim.log.blocks import BlockType
from shim.log.reader import read_log_file
from shim.schema import has_field_ids
from shim.write.ddl import alter_table
from tests.local import LOCAL
from tests.parquetkit import empty_dictionary_chunks
from tests.writekit import write

INFO = pa.struct([("a", pa.int32()), ("b", pa.string())])
V1 = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("region", pa.string()), ("info", INFO)])
V2 = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("region", pa.string()),
                ("info", pa.struct([("a", pa.int32()), ("b", pa.string()), ("c", pa.string())]))])


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_rewritten_and_logged_rows_reach_files_without_field_ids(tmp_path, table_type):
    path = tmp_path / "t"
    options = {"hoodie.datasource.write.table.type": table_type, "hoodie.logfile.data.block.format": "parquet"}
    write(path, [{"id": f"k{i}", "ts": 1, "region": "sf", "info": {"a": i, "b": "x"}} for i in range(4)],
          schema=V1, **options)
    alter_table(str(path)).add_column("info.c", "string")
    write(path, [{"id": "k1", "ts": 2, "region": "sf", "info": {"a": 10, "b": "y", "c": "new"}}], schema=V2,
          **options)

    base_files = sorted(path.rglob("*.parquet"))
    log_files = sorted(p for p in path.rglob(".*.log.*"))
    assert base_files and (log_files or table_type == "COPY_ON_WRITE")
    for base_file in base_files:
        assert not has_field_ids(pq.read_schema(base_file)), base_file
    parquet_blocks = 0
    for log_file in log_files:
        contents = read_log_file(LOCAL, str(log_file))
        for block in contents.blocks:
            if block.block_type is BlockType.PARQUET_DATA:
                content = contents.data[block.content_offset:block.content_offset + block.content_length]
                assert not has_field_ids(pq.read_schema(io.BytesIO(content))), log_file
                parquet_blocks += 1
    assert parquet_blocks == (1 if table_type == "MERGE_ON_READ" else 0)
    rows = sorted(shim.open_table(str(path)).read().to_pylist(), key=lambda r: r["id"])
    assert rows[1]["info"] == {"a": 10, "b": "y", "c": "new"} and rows[0]["info"] == {"a": 0, "b": "x", "c": None}


def test_base_files_give_no_valueless_column_chunk_a_dictionary(tmp_path):
    """A column with no value in a row group gets no dictionary there (its page would be empty,
    and Presto fails any filter on the column: 'cannot use empty ranges'); the others keep one."""
    path = tmp_path / "t"
    rows = [{"id": f"k{i:03d}", "ts": 1, "region": "sf", "fare": None if i < 60 else float(i % 3)}
            for i in range(100)]
    write(path, rows, **{"hoodie.parquet.block.size": "2000", "hoodie.bucket.index.num.buckets": "1"})  # small row groups
    [base_file] = path.rglob("*.parquet")
    metadata = pq.ParquetFile(base_file).metadata
    assert metadata.num_row_groups > 2
    assert empty_dictionary_chunks(str(base_file)) == []
    region = [metadata.row_group(g).column(metadata.schema.names.index("region")).has_dictionary_page
              for g in range(metadata.num_row_groups)]
    assert all(region)
    assert shim.open_table(str(path)).read(filter="fare IS NULL").num_rows == 60
