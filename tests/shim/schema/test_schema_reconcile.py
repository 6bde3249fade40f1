"""resolve(): the read plan for each kind of schema change, alone and combined."""

from __future__ import annotations

import pyarrow as pa
import pytest

from shim.errors import SchemaEvolutionError
from shim.schema import (
    Conversion,
    FieldStatus,
    InternalSchema,
    ListPlan,
    MapPlan,
    PrimitivePlan,
    StructPlan,
    assign_ids_by_name,
    internal_to_arrow,
    resolve,
    resolve_by_name,
)
from shim.schema import types as t

F = t.Field


def schema(*fields: t.Field, max_id: int = -1) -> InternalSchema:
    return InternalSchema.of(fields, max_column_id=max_id)


def summary(plan):
    return [(c.name, c.status, c.source) for c in plan.columns]


def test_resolve_same_schema_reads_every_column_unchanged():
    s = schema(F(0, "a", t.INT), F(1, "b", t.STRING))
    plan = resolve(s, s)
    assert summary(plan) == [("a", FieldStatus.SAME, "a"), ("b", FieldStatus.SAME, "b")]
    assert plan.identity
    assert plan.read_columns == ("a", "b")
    assert plan.schema == internal_to_arrow(s)
    assert plan.columns[0].node == PrimitivePlan(t.INT, t.INT, Conversion.IDENTITY, pa.int32())


def test_resolve_renamed_column_reads_the_file_name():
    plan = resolve(
        schema(F(0, "a", t.INT), F(1, "c", t.STRING)), schema(F(0, "a", t.INT), F(1, "b", t.STRING))
    )
    assert summary(plan) == [("a", FieldStatus.SAME, "a"), ("c", FieldStatus.RENAMED, "b")]
    assert not plan.identity


def test_resolve_dropped_column_is_not_read():
    plan = resolve(schema(F(0, "a", t.INT), max_id=1), schema(F(0, "a", t.INT), F(1, "b", t.STRING)))
    assert summary(plan) == [("a", FieldStatus.SAME, "a")]
    assert plan.read_columns == ("a",)


def test_resolve_readded_name_under_new_id_reads_null_not_the_old_data():
    file = schema(F(0, "a", t.INT), F(1, "b", t.INT))
    query = schema(F(0, "a", t.INT), F(2, "b", t.STRING))
    plan = resolve(query, file)
    assert summary(plan) == [("a", FieldStatus.SAME, "a"), ("b", FieldStatus.READDED, None)]
    assert plan.read_columns == ("a",)


def test_resolve_reordered_columns_follow_query_order():
    file = schema(F(0, "a", t.INT), F(1, "b", t.STRING))
    plan = resolve(schema(F(1, "b", t.STRING), F(0, "a", t.INT)), file)
    assert summary(plan) == [("b", FieldStatus.SAME, "b"), ("a", FieldStatus.SAME, "a")]
    assert plan.read_columns == ("b", "a")


def test_resolve_added_column_reads_null():
    plan = resolve(schema(F(0, "a", t.INT), F(1, "n", t.DOUBLE)), schema(F(0, "a", t.INT)))
    assert summary(plan) == [("a", FieldStatus.SAME, "a"), ("n", FieldStatus.ADDED, None)]
    assert plan.columns[1].node is None
    assert plan.columns[1].arrow_field.type == pa.float64()


def test_resolve_type_change_plans_the_conversion():
    plan = resolve(schema(F(0, "a", t.LONG)), schema(F(0, "a", t.INT)))
    assert plan.columns[0].node == PrimitivePlan(t.INT, t.LONG, Conversion.DIRECT, pa.int64())
    assert not plan.identity


def test_resolve_nested_struct_rename_add_drop_by_id():
    file = schema(F(0, "s", t.RecordType((F(3, "x", t.INT), F(4, "y", t.STRING)))))
    query = schema(F(0, "s", t.RecordType((F(5, "z", t.DOUBLE), F(3, "xx", t.INT)))))
    node = resolve(query, file).columns[0].node
    assert isinstance(node, StructPlan)
    assert [(f.name, f.status, f.source) for f in node.fields] == [
        ("z", FieldStatus.ADDED, None),
        ("xx", FieldStatus.RENAMED, "x"),
    ]
    assert not node.identity


def test_resolve_nested_readded_name_reads_null():
    file = schema(F(0, "s", t.RecordType((F(3, "x", t.INT),))))
    query = schema(F(0, "s", t.RecordType((F(4, "x", t.INT),))), max_id=4)
    node = resolve(query, file).columns[0].node
    assert [(f.name, f.status) for f in node.fields] == [("x", FieldStatus.READDED)]


def test_resolve_array_of_struct_element_fields_by_id():
    file = schema(F(0, "l", t.ArrayType(6, t.RecordType((F(7, "p", t.INT), F(8, "q", t.STRING))))))
    query = schema(F(0, "l", t.ArrayType(6, t.RecordType((F(7, "p", t.LONG), F(9, "r", t.INT))))))
    node = resolve(query, file).columns[0].node
    assert isinstance(node, ListPlan)
    element = node.element
    assert isinstance(element, StructPlan)
    assert [(f.name, f.status, f.source) for f in element.fields] == [
        ("p", FieldStatus.SAME, "p"),
        ("r", FieldStatus.ADDED, None),
    ]
    assert element.fields[0].node == PrimitivePlan(t.INT, t.LONG, Conversion.DIRECT, pa.int64())


def test_resolve_map_value_struct_fields_by_id():
    file = schema(F(0, "m", t.MapType(1, t.STRING, 2, t.RecordType((F(3, "v", t.FLOAT),)))))
    query = schema(F(0, "m", t.MapType(1, t.STRING, 2, t.RecordType((F(3, "vv", t.DOUBLE),)))))
    node = resolve(query, file).columns[0].node
    assert isinstance(node, MapPlan)
    assert node.key == PrimitivePlan(t.STRING, t.STRING, Conversion.IDENTITY, pa.string())
    assert [(f.name, f.status, f.source) for f in node.value.fields] == [("vv", FieldStatus.RENAMED, "v")]
    assert node.value.fields[0].node.conversion is Conversion.DIRECT


def test_resolve_unchanged_nested_column_is_identity():
    nested = t.MapType(1, t.STRING, 2, t.ArrayType(3, t.RecordType((F(4, "v", t.INT),))))
    s = schema(F(0, "m", nested))
    assert resolve(s, s).columns[0].node.identity


def test_resolve_forbidden_type_change_names_column_types_and_file():
    with pytest.raises(SchemaEvolutionError) as info:
        resolve(schema(F(0, "price", t.INT)), schema(F(0, "price", t.STRING)), file_path="/t/p=1/f1.parquet")
    assert str(info.value) == (
        "Column 'price' is string in file /t/p=1/f1.parquet but int in the query schema, a type change "
        "Hudi does not allow; read the column as string (or a type Hudi promotes it to) or rewrite the file"
    )
    assert (info.value.column, info.value.path) == ("price", "/t/p=1/f1.parquet")


def test_resolve_forbidden_nested_change_names_the_full_path():
    file = schema(F(0, "s", t.ArrayType(1, t.RecordType((F(2, "x", t.DOUBLE),)))))
    query = schema(F(0, "s", t.ArrayType(1, t.RecordType((F(2, "x", t.FLOAT),)))))
    with pytest.raises(SchemaEvolutionError, match=r"Column 's\.element\.x' is double in the file but float"):
        resolve(query, file)


def test_resolve_struct_in_query_primitive_in_file_raises():
    with pytest.raises(SchemaEvolutionError, match="Column 'a' is int in the file but struct in the query"):
        resolve(schema(F(0, "a", t.RecordType((F(1, "x", t.INT),)))), schema(F(0, "a", t.INT)))


def test_resolve_combined_changes_in_one_file():
    # v1 file: id, name, price:int, addr{city, zip}, tags
    file = schema(
        F(0, "id", t.LONG, False),
        F(1, "name", t.STRING),
        F(2, "price", t.INT),
        F(3, "addr", t.RecordType((F(5, "city", t.STRING), F(6, "zip", t.INT)))),
        F(4, "tags", t.ArrayType(7, t.STRING)),
    )
    # query: rename name->title, price int->decimal, drop tags, re-add "tags" as a new id,
    # addr.zip dropped and addr.country added, reordered, a new column.
    query = schema(
        F(3, "addr", t.RecordType((F(5, "city", t.STRING), F(9, "country", t.STRING)))),
        F(0, "id", t.LONG, False),
        F(1, "title", t.STRING),
        F(2, "price", t.DecimalType(10, 2)),
        F(8, "tags", t.STRING),
        F(10, "added", t.BOOLEAN),
    )
    plan = resolve(query, file)
    assert summary(plan) == [
        ("addr", FieldStatus.SAME, "addr"),
        ("id", FieldStatus.SAME, "id"),
        ("title", FieldStatus.RENAMED, "name"),
        ("price", FieldStatus.SAME, "price"),
        ("tags", FieldStatus.READDED, None),
        ("added", FieldStatus.ADDED, None),
    ]
    assert plan.read_columns == ("addr", "id", "name", "price")
    assert [(f.name, f.status) for f in plan.columns[0].node.fields] == [
        ("city", FieldStatus.SAME),
        ("country", FieldStatus.ADDED),
    ]
    assert plan.columns[3].node.conversion is Conversion.DIRECT


def test_resolve_projected_query_reads_only_selected_columns():
    table = schema(
        F(0, "a", t.INT), F(1, "s", t.RecordType((F(3, "x", t.INT), F(4, "y", t.INT)))), F(2, "c", t.INT)
    )
    plan = resolve(table.select(["s.y", "a"]), table)
    assert summary(plan) == [("s", FieldStatus.SAME, "s"), ("a", FieldStatus.SAME, "a")]
    assert [f.name for f in plan.columns[0].node.fields] == ["y"]
    assert not plan.columns[0].node.identity  # x is left out, so the struct is rebuilt


def test_assign_ids_by_name_takes_query_ids_and_fresh_ids_for_the_rest():
    query = schema(F(10, "a", t.LONG), F(11, "s", t.RecordType((F(12, "x", t.INT),))), max_id=20)
    file = schema(
        F(0, "s", t.RecordType((F(2, "x", t.INT), F(3, "gone", t.INT)))), F(1, "a", t.INT), F(4, "old", t.INT)
    )
    assigned = assign_ids_by_name(file, query)
    assert assigned.record == t.RecordType(
        (
            F(11, "s", t.RecordType((F(12, "x", t.INT), F(21, "gone", t.INT)))),
            F(10, "a", t.INT),
            F(22, "old", t.INT),
        )
    )


def test_resolve_by_name_matches_names_promotes_and_fills_missing():
    query = schema(F(0, "id", t.LONG), F(1, "name", t.STRING), F(2, "score", t.DOUBLE), F(3, "new", t.INT))
    file_arrow = pa.schema(
        [("score", pa.float32()), ("id", pa.int32()), ("name", pa.string()), ("extra", pa.int8())]
    )
    plan = resolve_by_name(query, file_arrow, file_path="f.parquet")
    assert summary(plan) == [
        ("id", FieldStatus.SAME, "id"),
        ("name", FieldStatus.SAME, "name"),
        ("score", FieldStatus.SAME, "score"),
        ("new", FieldStatus.ADDED, None),
    ]
    assert plan.columns[0].node.conversion is Conversion.DIRECT
    assert plan.columns[2].node.file_type == t.FLOAT


def test_resolve_by_name_dropped_and_readded_name_reads_the_old_column():
    # Without ids a name is all there is: the old data comes back (as Hudi reads such tables).
    query = schema(F(0, "b", t.STRING))
    file = schema(F(0, "b", t.INT))
    assert summary(resolve_by_name(query, file)) == [("b", FieldStatus.SAME, "b")]


def test_resolve_by_name_forbidden_change_raises():
    with pytest.raises(SchemaEvolutionError, match="Column 'b' is string in file x but int"):
        resolve_by_name(schema(F(0, "b", t.INT)), schema(F(5, "b", t.STRING)), file_path="x")
