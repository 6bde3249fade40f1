"""Edge cases of the format on tiny tables: corrupt and rolled-back blocks, keyless and empty
tables, insert_overwrite, errors that name what they are about."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

import shim
from shim.log.blocks import HeaderKey
from shim.log.reader import CorruptBlockWarning
from shim.log.writer import append_log_blocks, encode_avro_data_block, encode_command_block
from shim.timeline.instant import Action
from shim.write.clock import new_instant_time
from shim.write.data_files import avro_record_schema, with_meta_columns
from tests.local import LOCAL
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.string())])


def _ids(path, **kwargs) -> list[str]:
    return sorted(shim.open_table(path).read(**kwargs).column("id").to_pylist())


def _log_path(table: TinyTable):
    [log] = list(table.path.glob(".*.log.*"))
    return log


def test_corrupt_block_is_skipped_with_a_warning_and_later_blocks_still_apply(tmp_path):
    table = TinyTable(tmp_path / "t", SCHEMA)
    base = table.base([{"id": "a", "ts": 1, "v": "x"}])
    table.log([{"id": "b", "ts": 1, "v": "y"}], base_instant=base)
    log = _log_path(table)
    with open(log, "ab") as handle:
        handle.write(b"#HUDI#" + b"\x00\x00\x00\x00\x00\x01\x00\x00" + b"garbage")  # a block cut short
    later = new_instant_time()
    rows = pa.Table.from_pylist([{"id": "c", "ts": 1, "v": "z"}], schema=SCHEMA)
    full = with_meta_columns(rows, table.config, instant=later, file_name=log.name)
    avro = avro_record_schema("tiny", full.schema)
    append_log_blocks(LOCAL, str(log), [encode_avro_data_block(
        full, avro, {HeaderKey.INSTANT_TIME: later, HeaderKey.SCHEMA: json.dumps(avro)})])
    table._commit([], later, Action.DELTA_COMMIT, True, None)
    with pytest.warns(CorruptBlockWarning, match=str(log)):
        assert _ids(table.path) == ["a", "b", "c"]


def test_rollback_command_block_hides_the_rolled_back_instant(tmp_path):
    table = TinyTable(tmp_path / "t", SCHEMA)
    base = table.base([{"id": "a", "ts": 1, "v": "x"}])
    failed = table.log([{"id": "ghost", "ts": 1, "v": "y"}], base_instant=base)
    log = _log_path(table)
    rollback = new_instant_time()
    append_log_blocks(LOCAL, str(log), [encode_command_block(
        {HeaderKey.INSTANT_TIME: rollback, HeaderKey.TARGET_INSTANT_TIME: failed})])
    assert _ids(table.path) == ["a"]


def test_empty_table_reads_no_rows_with_its_create_schema(tmp_path):
    table = TinyTable(tmp_path / "t", SCHEMA)
    t = shim.open_table(table.path)
    assert t.schema().names == ["id", "ts", "v"]
    result = t.read()
    assert result.num_rows == 0 and result.column_names == ["id", "ts", "v"]
    assert t.file_slices() == []


def test_table_without_meta_fields_merges_on_complex_virtual_keys(tmp_path):
    schema = pa.schema([("a", pa.string()), ("b", pa.int64()), ("ts", pa.int64()), ("v", pa.string())])
    table = TinyTable(tmp_path / "t", schema, key=["a", "b"],
                      extra={"hoodie.populate.meta.fields": "false"})
    base = table.base([{"a": "x", "b": 1, "ts": 1, "v": "old"}, {"a": "x", "b": 2, "ts": 1, "v": "keep"},
                       {"a": "y", "b": 1, "ts": 1, "v": "gone"}])
    table.log([{"a": "x", "b": 1, "ts": 2, "v": "new"}], deletes=["a:y,b:1"], base_instant=base)
    rows = sorted(shim.open_table(table.path).read(columns=["a", "b", "v"]).to_pylist(), key=lambda r: (r["a"], r["b"]))
    assert rows == [{"a": "x", "b": 1, "v": "new"}, {"a": "x", "b": 2, "v": "keep"}]
    with pytest.raises(shim.UnsupportedFeatureError, match="meta columns"):
        shim.open_table(table.path).incremental("0")


def test_insert_overwrite_replaces_the_old_file_groups(tmp_path):
    table = TinyTable(tmp_path / "t", SCHEMA, mor=False)
    first = table.base([{"id": "a", "ts": 1, "v": "x"}], file_id="old-0")
    table.base([{"id": "b", "ts": 1, "v": "y"}], file_id="new-0", action=Action.REPLACE_COMMIT,
               replaced={"": ("old-0",)}, operation="INSERT_OVERWRITE")
    assert _ids(table.path) == ["b"]
    assert _ids(table.path, as_of=first) == ["a"]


def test_time_travel_before_an_incomplete_write_is_refused(tmp_path):
    table = TinyTable(tmp_path / "t", SCHEMA)
    table.base([{"id": "a", "ts": 1, "v": "x"}])
    pending = table.log([{"id": "b", "ts": 1, "v": "y"}], complete=False)
    table.base([{"id": "c", "ts": 1, "v": "z"}], file_id="fg2-0")
    with pytest.raises(shim.InvalidArgumentError, match=f"deltacommit {pending} is still inflight"):
        shim.open_table(table.path).read(as_of=table.instants[-1])


def test_unknown_column_and_bad_filter_errors_name_the_problem(tmp_path):
    table = TinyTable(tmp_path / "t", SCHEMA)
    table.base([{"id": "a", "ts": 1, "v": "x"}])
    t = shim.open_table(table.path)
    with pytest.raises(shim.ColumnNotFoundError, match="'nope'") as info:
        t.read(columns=["id", "nope"])
    assert info.value.column == "nope"
    with pytest.raises(shim.InvalidFilterError, match="ts"):
        t.read(filter="ts = 'not a number'")
    with pytest.raises(shim.InvalidArgumentError, match="scan mode"):
        t.read(mode="fast")


def test_missing_table_is_reported_with_its_path(tmp_path):
    with pytest.raises(shim.TableNotFoundError, match=str(tmp_path / "nowhere")):
        shim.open_table(tmp_path / "nowhere")


def test_file_uri_opens_the_same_table(tmp_path):
    table = TinyTable(tmp_path / "t", SCHEMA)
    table.base([{"id": "a", "ts": 1, "v": "x"}])
    assert _ids(f"file://{table.path}") == ["a"]
