"""The InternalSchema model: lookups by id and name, projection, and the visitor framework."""

from __future__ import annotations

import pytest

from shim.errors import ColumnNotFoundError
from shim.schema import (
    META_FIELDS,
    InternalSchema,
    SchemaVisitor,
    index_by_id,
    index_by_name,
    max_id,
    visit,
)
from shim.schema import types as t

ADDRESS = t.RecordType((t.Field(6, "city", t.STRING), t.Field(7, "zip", t.INT)))
ITEM = t.RecordType((t.Field(9, "sku", t.STRING), t.Field(10, "qty", t.INT)))
SCHEMA = InternalSchema.of(
    [
        t.Field(0, "id", t.LONG, False),
        t.Field(1, "address", ADDRESS),
        t.Field(2, "items", t.ArrayType(8, ITEM)),
        t.Field(3, "attrs", t.MapType(4, t.STRING, 5, t.DOUBLE, False)),
    ],
    version_id=42,
)


def test_internal_schema_max_column_id_defaults_to_largest_nested_id():
    assert SCHEMA.max_column_id == 10


def test_internal_schema_explicit_max_column_id_is_kept():
    assert InternalSchema.of([t.Field(0, "a", t.INT)], max_column_id=9).max_column_id == 9


def test_find_field_nested_element_and_map_ids_resolve():
    assert SCHEMA.find_field(7) == t.Field(7, "zip", t.INT)
    assert SCHEMA.find_field(8) == t.Field(8, "element", ITEM, True)
    assert SCHEMA.find_field(4) == t.Field(4, "key", t.STRING, False)
    assert SCHEMA.find_field(5) == t.Field(5, "value", t.DOUBLE, False)
    assert SCHEMA.find_field(99) is None


def test_find_field_by_name_dotted_paths_follow_hudi_naming():
    assert SCHEMA.find_field_by_name("address.city").id == 6
    assert SCHEMA.find_field_by_name("items.element.qty").id == 10
    assert SCHEMA.find_field_by_name("attrs.value").id == 5
    assert SCHEMA.find_field_by_name("address.nope") is None


def test_find_full_name_and_find_id_are_inverse():
    assert SCHEMA.find_full_name(9) == "items.element.sku"
    assert SCHEMA.find_id("items.element.sku") == 9
    assert SCHEMA.find_type("attrs.key") == t.STRING
    assert SCHEMA.find_type(1) == ADDRESS


def test_field_names_lists_top_level_columns_in_order():
    assert SCHEMA.field_names() == ["id", "address", "items", "attrs"]


def test_full_names_lists_every_path():
    assert sorted(SCHEMA.full_names()) == sorted(
        [
            "id",
            "address",
            "address.city",
            "address.zip",
            "items",
            "items.element",
            "items.element.sku",
            "items.element.qty",
            "attrs",
            "attrs.key",
            "attrs.value",
        ]
    )


def test_select_nested_names_prune_and_keep_ids_in_mention_order():
    selected = SCHEMA.select(["items.element.qty", "id", "address.zip"])
    assert selected.fields == (
        t.Field(2, "items", t.ArrayType(8, t.RecordType((t.Field(10, "qty", t.INT),)))),
        t.Field(0, "id", t.LONG, False),
        t.Field(1, "address", t.RecordType((t.Field(7, "zip", t.INT),))),
    )
    assert (selected.version_id, selected.max_column_id) == (42, 10)


def test_select_whole_struct_keeps_all_children():
    assert SCHEMA.select(["address"]).fields == (t.Field(1, "address", ADDRESS),)


def test_select_unknown_column_raises_column_not_found():
    with pytest.raises(ColumnNotFoundError, match="Column 'nope' is not in the schema") as info:
        SCHEMA.select(["id", "nope"])
    assert info.value.column == "nope"


def test_record_type_equality_ignores_avro_name_like_hudi():
    assert t.RecordType((t.Field(0, "a", t.INT),), "x.y") == t.RecordType((t.Field(0, "a", t.INT),))


def test_types_str_gives_hudi_tokens():
    assert [str(x) for x in (t.DecimalType(10, 2), t.FixedType(16), t.TIMESTAMP, t.UUID)] == [
        "decimal(10, 2)",
        "fixed[16]",
        "timestamp",
        "uuid",
    ]
    assert t.INT != t.LONG


def test_meta_fields_are_ids_0_to_4_optional_strings_with_empty_doc():
    assert [(f.id, f.name, f.type, f.optional, f.doc) for f in META_FIELDS] == [
        (0, "_hoodie_commit_time", t.STRING, True, ""),
        (1, "_hoodie_commit_seqno", t.STRING, True, ""),
        (2, "_hoodie_record_key", t.STRING, True, ""),
        (3, "_hoodie_partition_path", t.STRING, True, ""),
        (4, "_hoodie_file_name", t.STRING, True, ""),
    ]


def test_index_by_name_covers_elements_keys_and_values():
    assert index_by_name(SCHEMA) == {
        "id": 0,
        "address": 1,
        "address.city": 6,
        "address.zip": 7,
        "items": 2,
        "items.element": 8,
        "items.element.sku": 9,
        "items.element.qty": 10,
        "attrs": 3,
        "attrs.key": 4,
        "attrs.value": 5,
    }


def test_index_by_id_on_a_type_indexes_its_subtree():
    assert sorted(index_by_id(ADDRESS)) == [6, 7]


def test_max_id_of_a_primitive_is_minus_one():
    assert max_id(t.INT) == -1
    assert max_id(t.ArrayType(3, t.MapType(4, t.STRING, 5, t.INT))) == 5


class _Leaves(SchemaVisitor[list[str]]):
    """Collects the type of every leaf, post-order, with the path of names."""

    def __init__(self) -> None:
        self.path: list[str] = []

    def before_field(self, field: t.Field) -> None:
        self.path.append(field.name)

    def after_field(self, field: t.Field) -> None:
        self.path.pop()

    def record(self, record: t.RecordType, field_results: list[list[str]]) -> list[str]:
        return [leaf for result in field_results for leaf in result]

    def field(self, field: t.Field, field_result: list[str]) -> list[str]:
        return field_result

    def array(self, array: t.ArrayType, element_result: list[str]) -> list[str]:
        return element_result

    def map(self, map_type: t.MapType, key_result: list[str], value_result: list[str]) -> list[str]:
        return key_result + value_result

    def primitive(self, primitive: t.PrimitiveType) -> list[str]:
        return [f"{'.'.join(self.path)}:{primitive}"]


def test_visit_custom_visitor_sees_leaves_in_order_with_paths():
    assert visit(SCHEMA, _Leaves()) == [
        "id:long",
        "address.city:string",
        "address.zip:int",
        "items.sku:string",
        "items.qty:int",
        "attrs:string",
        "attrs:double",
    ]


def test_visit_not_a_schema_raises_type_error():
    with pytest.raises(TypeError, match="cannot visit"):
        visit("int", _Leaves())
