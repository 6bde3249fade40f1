"""ALTER TABLE changes on InternalSchema: ids, positions and the changes Hudi forbids."""

from __future__ import annotations

import pytest

from shim.errors import SchemaEvolutionError
from shim.schema import Field, InternalSchema
from shim.schema.internal_schema import META_FIELDS
from shim.schema.types import INT, LONG, STRING, ArrayType, DecimalType, RecordType
from shim.write.schema_changes import add_column, drop_column, move_column, rename_column, update_column_type

BASE = InternalSchema.of(
    [
        *META_FIELDS,
        Field(5, "id", STRING, False),
        Field(6, "ts", LONG),
        Field(7, "f1", STRING),
        Field(8, "point", RecordType((Field(9, "x", INT), Field(10, "y", INT)))),
    ],
    version_id=1,
)
DATA = ["id", "ts", "f1", "point"]


def data_names(schema: InternalSchema) -> list[str]:
    return [n for n in schema.field_names() if not n.startswith("_hoodie")]


def test_add_column_after_takes_next_id_and_position():
    changed = add_column(BASE, "price", "decimal(10, 2)", after="id")
    assert data_names(changed) == ["id", "price", "ts", "f1", "point"]
    assert changed.find_field_by_name("price") == Field(11, "price", DecimalType(10, 2), True)
    assert changed.max_column_id == 11


def test_add_column_first_goes_after_meta_columns():
    changed = add_column(BASE, "k", "int", first=True)
    assert changed.field_names()[5] == "k"


def test_add_nested_column_and_nested_type_get_fresh_ids():
    changed = add_column(BASE, "point.z", "long")
    assert changed.find_field_by_name("point.z") == Field(11, "z", LONG, True)
    with_array = add_column(BASE, "tags", ArrayType(0, STRING, True))
    assert with_array.find_field_by_name("tags").type == ArrayType(12, STRING, True)
    assert with_array.max_column_id == 12


def test_drop_then_add_same_name_never_reuses_the_dropped_id():
    dropped = drop_column(BASE, "point")
    assert dropped.max_column_id == 10
    renamed = rename_column(dropped, "f1", "name")  # Hudi would recompute the max id here
    readded = add_column(renamed, "point", "string")
    assert readded.find_field_by_name("point").id == 11


def test_rename_nested_column_keeps_id():
    changed = rename_column(BASE, "point.x", "lon")
    assert changed.find_field_by_name("point.lon").id == 9
    assert changed.find_field_by_name("point.x") is None


def test_update_column_type_allowed_widening():
    assert update_column_type(BASE, "ts", "double").find_type("ts").token == "double"
    assert update_column_type(BASE, "point.x", "long").find_type("point.x") == LONG


def test_move_column_after_and_first():
    assert data_names(move_column(BASE, "f1", after="id")) == ["id", "f1", "ts", "point"]
    assert data_names(move_column(BASE, "point", first=True)) == ["point", "id", "ts", "f1"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: update_column_type(s, "ts", "int"), "from type long to incompatible type int"),
        (lambda s: update_column_type(s, "f1", "int"), "from type string to incompatible type int"),
        (lambda s: update_column_type(s, "point", "string"), "only primitive types change"),
        (lambda s: add_column(s, "ts", "int"), "already exists"),
        (lambda s: add_column(s, "ts.x", "int"), "is a long, not a struct"),
        (lambda s: add_column(s, "_hoodie_commit_time", "int"), "meta column"),
        (lambda s: drop_column(s, "_hoodie_record_key"), "meta column"),
        (lambda s: drop_column(s, "nope"), "does not exist"),
        (lambda s: drop_column(s, "id", protected={"id"}), "protected"),
        (lambda s: rename_column(s, "id", "key", protected={"id"}), "protected"),
        (lambda s: rename_column(s, "f1", "ts"), "already exists"),
        (lambda s: drop_column(drop_column(s, "point.x"), "point.y"), "last column of its struct"),
        (lambda s: move_column(s, "f1", after="nope"), "no such column"),
        (lambda s: update_column_type(s, "id", "string", protected={"id"}), "protected"),
    ],
)
def test_forbidden_changes_raise_naming_the_column(change, message):
    with pytest.raises(SchemaEvolutionError, match=message):
        change(BASE)
