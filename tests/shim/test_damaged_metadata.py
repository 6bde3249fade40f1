"""Damaged table metadata is an `InvalidTableError` naming the file, never a bare Python error
(`UnicodeDecodeError`, `ValueError` from `int()`, `AttributeError` on a JSON value of the wrong
kind) that names nothing: callers serving many tables report it and go on with the others."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

import shim
from shim.errors import InvalidTableError
from tests.tablekit import EvolvingTable, rename

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.string())])


def evolved(root: Path) -> EvolvingTable:
    table = EvolvingTable(root / "t", SCHEMA)
    table.base([{"id": "a", "ts": 1, "v": "x"}])
    table.alter(rename("v", "w"))
    return table


def commit_of(table: EvolvingTable, index: int = 0) -> Path:
    [path] = (table.path / ".hoodie").glob(f"{table.instants[index]}.*commit")
    return path


def edit_json(path: Path, change: Callable[[dict], None]) -> None:
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))


def first_stat(document: dict) -> dict:
    return next(iter(document["partitionToWriteStats"].values()))[0]


def bad_properties_bytes(table: EvolvingTable) -> Path:
    path = table.path / ".hoodie" / "hoodie.properties"
    path.write_bytes(path.read_bytes() + b"hoodie.note=caf\xe9\n")  # Latin-1, not UTF-8
    return path


def bad_properties_number(table: EvolvingTable) -> Path:
    path = table.path / ".hoodie" / "hoodie.properties"
    path.write_text(path.read_text() + "hoodie.timeline.layout.version=\x11\n")
    return path


def bad_properties_escape(table: EvolvingTable) -> Path:
    path = table.path / ".hoodie" / "hoodie.properties"
    path.write_text(path.read_text() + "hoodie.note=\\uzzzz\n")
    return path


def bad_commit_bytes(table: EvolvingTable) -> Path:
    path = commit_of(table)
    path.write_bytes(path.read_bytes().replace(b'"UPSERT"', b'"UPS\xffRT"'))
    return path


def non_numeric_write_stat(table: EvolvingTable) -> Path:
    path = commit_of(table)
    edit_json(path, lambda d: first_stat(d).update(numWrites="lots"))
    return path


def write_stats_not_an_object(table: EvolvingTable) -> Path:
    path = commit_of(table)
    edit_json(path, lambda d: d.update(partitionToWriteStats="lots"))
    return path


def log_files_not_a_list(table: EvolvingTable) -> Path:
    path = commit_of(table)
    edit_json(path, lambda d: first_stat(d).update(logFiles=7))
    return path


def schema_with_a_field_id_of_text(table: EvolvingTable) -> Path:
    path = commit_of(table, -1)

    def change(document: dict) -> None:
        schema = json.loads(document["extraMetadata"]["latestSchema"])
        schema["fields"][0]["id"] = "lots"
        document["extraMetadata"]["latestSchema"] = json.dumps(schema)

    edit_json(path, change)
    return path


@pytest.mark.parametrize("damage", [bad_properties_bytes, bad_properties_number, bad_properties_escape,
                                    bad_commit_bytes, non_numeric_write_stat, write_stats_not_an_object,
                                    log_files_not_a_list, schema_with_a_field_id_of_text])
def test_damaged_metadata_is_an_invalid_table_error_naming_the_file(tmp_path, damage):
    table = evolved(tmp_path)
    damaged = damage(table)
    with pytest.raises(InvalidTableError) as info:
        opened = shim.open_table(table.path)
        opened.read()
    assert damaged.name in str(info.value)
    assert info.value.path is not None and info.value.path.endswith(damaged.name)


def test_bad_bytes_are_shown_with_their_offset(tmp_path):
    table = evolved(tmp_path)
    path = bad_properties_bytes(table)
    offset = path.read_bytes().index(b"\xe9")
    with pytest.raises(InvalidTableError, match=f"is not UTF-8 text: byte 0xe9 at offset {offset}$"):
        shim.open_table(table.path)
