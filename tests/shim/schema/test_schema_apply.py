"""apply(): executing read plans on real Arrow data, with exact values."""

from __future__ import annotations

import datetime as dt
import json
import zipfile
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from shim.errors import SchemaEvolutionError
from shim.schema import FIELD_ID_KEY, InternalSchema, apply, internal_from_avro, internal_to_arrow, resolve
from shim.schema import types as t
from tests.conftest import shared_tables_dir

F = t.Field
SHARED = shared_tables_dir() or Path("/nonexistent/shared/hudi-tables")


def schema(*fields: t.Field, max_id: int = -1) -> InternalSchema:
    return InternalSchema.of(fields, max_column_id=max_id)


FLAT = schema(F(0, "id", t.INT, False), F(1, "name", t.STRING), F(2, "score", t.FLOAT), F(3, "old", t.INT))
FLAT_DATA = pa.record_batch(
    {
        "id": pa.array([1, 2, 3], pa.int32()),
        "name": ["a", None, "c"],
        "score": pa.array([1.1, None, 0.5], pa.float32()),
        "old": pa.array([7, 8, None], pa.int32()),
    }
)


def _addresses(arr: pa.Array) -> list[int]:
    return [b.address for b in arr.buffers() if b is not None]


def test_apply_identity_plan_is_zero_copy():
    plan = resolve(FLAT, FLAT)
    out = apply(FLAT_DATA, plan)
    assert out.schema == internal_to_arrow(FLAT)
    for i in range(FLAT_DATA.num_columns):
        assert _addresses(out.column(i)) == _addresses(FLAT_DATA.column(i))


def test_apply_identity_plan_on_table_is_zero_copy():
    table = pa.Table.from_batches([FLAT_DATA, FLAT_DATA])
    out = apply(table, resolve(FLAT, FLAT))
    assert isinstance(out, pa.Table)
    for name in FLAT.field_names():
        for before, after in zip(table.column(name).chunks, out.column(name).chunks, strict=True):
            assert _addresses(after) == _addresses(before)


def test_apply_output_keeps_field_ids_in_metadata():
    out = apply(FLAT_DATA, resolve(FLAT, FLAT))
    assert [out.schema.field(i).metadata[FIELD_ID_KEY] for i in range(4)] == [b"0", b"1", b"2", b"3"]


def test_apply_rename_reorder_drop_readd_add_and_promote():
    query = schema(
        F(2, "score", t.DOUBLE),  # float -> double, moved first
        F(1, "title", t.STRING),  # renamed from name
        F(0, "id", t.STRING, False),  # int -> string
        F(4, "old", t.INT),  # dropped and re-added: must not show 7, 8
        F(5, "added", t.DecimalType(5, 2)),
        max_id=5,
    )
    out = apply(FLAT_DATA, resolve(query, FLAT))
    assert out.schema == internal_to_arrow(query)
    assert out.to_pydict() == {
        "score": [1.1, None, 0.5],
        "title": ["a", None, "c"],
        "id": ["1", "2", "3"],
        "old": [None, None, None],
        "added": [None, None, None],
    }


def test_apply_int_to_decimal_and_string_to_date_values():
    file = schema(F(0, "n", t.LONG), F(1, "d", t.STRING))
    query = schema(F(0, "n", t.DecimalType(6, 2)), F(1, "d", t.DATE))
    data = pa.record_batch({"n": pa.array([12, -3, 10_000], pa.int64()), "d": ["2021-03-04", "x", None]})
    assert apply(data, resolve(query, file)).to_pydict() == {
        "n": [Decimal("12.00"), Decimal("-3.00"), None],
        "d": [dt.date(2021, 3, 4), None, None],
    }


NESTED_FILE = schema(
    F(0, "s", t.RecordType((F(3, "x", t.INT), F(4, "y", t.STRING)))),
    F(1, "l", t.ArrayType(5, t.RecordType((F(6, "p", t.INT), F(7, "q", t.STRING))))),
    F(2, "m", t.MapType(8, t.STRING, 9, t.RecordType((F(10, "v", t.FLOAT),)))),
)
NESTED_QUERY = schema(
    F(0, "s", t.RecordType((F(11, "z", t.BOOLEAN), F(3, "xx", t.LONG)))),  # y dropped, x renamed+widened
    F(
        1, "l", t.ArrayType(5, t.RecordType((F(7, "q", t.STRING), F(6, "p", t.STRING))))
    ),  # reorder, int->string
    F(2, "m", t.MapType(8, t.STRING, 9, t.RecordType((F(10, "v", t.DOUBLE), F(12, "w", t.INT))))),
    max_id=12,
)


def _nested_data() -> pa.RecordBatch:
    # Parquet-style child names: list item "array" (not null), map entries "key_value".
    list_type = pa.list_(pa.field("array", pa.struct([("p", pa.int32()), ("q", pa.string())]), False))
    map_type = pa.map_(
        pa.field("key", pa.string(), False), pa.field("value", pa.struct([("v", pa.float32())]))
    )
    return pa.record_batch(
        {
            "s": pa.array([{"x": 1, "y": "a"}, None, {"x": None, "y": "c"}, {"x": 4, "y": "d"}]),
            "l": pa.array(
                [[{"p": 1, "q": "one"}], None, [], [{"p": 2, "q": None}, {"p": 3, "q": "t"}]], list_type
            ),
            "m": pa.array([[("k", {"v": 1.1})], [("a", None), ("b", {"v": 0.5})], None, []], map_type),
        }
    )


def test_apply_nested_struct_list_and_map_changes():
    out = apply(_nested_data(), resolve(NESTED_QUERY, NESTED_FILE))
    assert out.schema == internal_to_arrow(NESTED_QUERY)
    assert out.to_pydict() == {
        "s": [{"z": None, "xx": 1}, None, {"z": None, "xx": None}, {"z": None, "xx": 4}],
        "l": [[{"q": "one", "p": "1"}], None, [], [{"q": None, "p": "2"}, {"q": "t", "p": "3"}]],
        "m": [
            [("k", {"v": 1.1, "w": None})],
            [("a", None), ("b", {"v": 0.5, "w": None})],
            None,
            [],
        ],
    }


def test_apply_nested_changes_on_sliced_batch_respect_offsets():
    data = _nested_data().slice(1, 3)
    out = apply(data, resolve(NESTED_QUERY, NESTED_FILE))
    out.validate(full=True)
    assert out.to_pydict() == {
        "s": [None, {"z": None, "xx": None}, {"z": None, "xx": 4}],
        "l": [None, [], [{"q": None, "p": "2"}, {"q": "t", "p": "3"}]],
        "m": [[("a", None), ("b", {"v": 0.5, "w": None})], None, []],
    }


def test_apply_unchanged_nested_column_with_parquet_child_names_is_relabelled_not_copied():
    file = schema(F(1, "l", t.ArrayType(5, t.INT, True)))
    data = pa.record_batch({"l": pa.array([[1, 2], None], pa.list_(pa.field("array", pa.int32(), False)))})
    out = apply(data, resolve(file, file))
    assert out.column(0).type == pa.list_(pa.field("element", pa.int32()))
    assert _addresses(out.column(0)) == _addresses(data.column(0))
    assert out.to_pydict() == {"l": [[1, 2], None]}


def test_apply_other_representations_of_the_file_type_are_normalized():
    file = schema(F(0, "ts", t.TIMESTAMP), F(1, "s", t.STRING), F(2, "i", t.INT), F(3, "d", t.STRING))
    data = pa.record_batch(
        {
            "ts": pa.array([1_500], pa.timestamp("ms", tz="UTC")),
            "s": pa.array(["x"], pa.large_string()),
            "i": pa.array([-3], pa.int16()),
            "d": pa.array(["v"]).dictionary_encode(),
        }
    )
    out = apply(data, resolve(file, file))
    assert out.schema == internal_to_arrow(file)
    assert out.column(0).cast(pa.int64()).to_pylist() == [1_500_000]
    assert out.column(1).to_pylist() == ["x"]
    assert out.column(2).to_pylist() == [-3]
    assert out.column(3).to_pylist() == ["v"]


def test_apply_data_type_not_fitting_the_file_schema_raises():
    file = schema(F(0, "n", t.INT))
    data = pa.record_batch({"n": ["1"]})
    with pytest.raises(SchemaEvolutionError) as info:
        apply(data, resolve(file, file, file_path="/t/f.parquet"))
    assert str(info.value).startswith(
        "Cannot read column 'n' of file /t/f.parquet: it holds Arrow type string but its schema type is int"
    )


def test_apply_missing_source_column_raises_naming_it():
    plan = resolve(FLAT, FLAT, file_path="/t/f.parquet")
    with pytest.raises(SchemaEvolutionError, match="the data has no column 'old'"):
        apply(FLAT_DATA.drop_columns(["old"]), plan)


def test_apply_source_column_matched_case_insensitively():
    data = pa.record_batch({"ID": pa.array([5], pa.int32())})
    file = schema(F(0, "id", t.INT))
    assert apply(data, resolve(file, file)).to_pydict() == {"id": [5]}


def test_apply_table_with_chunks_converts_each_chunk():
    file = schema(F(0, "a", t.INT))
    query = schema(F(0, "a", t.LONG), F(1, "b", t.STRING))
    table = pa.Table.from_batches(
        [
            pa.record_batch({"a": pa.array([1], pa.int32())}),
            pa.record_batch({"a": pa.array([2, 3], pa.int32())}),
        ]
    )
    out = apply(table, resolve(query, file))
    assert out.schema == internal_to_arrow(query)
    assert out.column("a").num_chunks == 2
    assert out.to_pydict() == {"a": [1, 2, 3], "b": [None, None, None]}


def test_apply_empty_batch_keeps_schema():
    query = schema(F(0, "a", t.DecimalType(10, 2)), F(1, "d", t.DATE), F(2, "s", t.STRING))
    file = schema(F(0, "a", t.STRING), F(1, "d", t.STRING), F(2, "s", t.FLOAT))
    data = pa.record_batch(
        {"a": pa.array([], pa.string()), "d": pa.array([], pa.string()), "s": pa.array([], pa.float32())}
    )
    out = apply(data, resolve(query, file))
    assert out.num_rows == 0 and out.schema == internal_to_arrow(query)


def _shared_table(zip_name: str, tmp_path: Path) -> Path:
    with zipfile.ZipFile(SHARED / zip_name) as z:
        z.extractall(tmp_path)
    return tmp_path


@pytest.mark.skipif(not SHARED.exists(), reason="needs ../shared/hudi-tables (real Hudi tables)")
def test_apply_real_hudi_parquet_file_read_through_an_evolved_schema(tmp_path):
    root = _shared_table("sample__cow__v6_simplekeygen_nonhivestyle.zip", tmp_path)
    commit = next(p for p in root.rglob("20240418172804498.commit") if "MACOSX" not in str(p))
    file_schema = internal_from_avro(json.loads(commit.read_text())["extraMetadata"]["schema"], add_meta=True)
    path = next(
        p for p in root.rglob("*_20240418172804498.parquet") if "MACOSX" not in str(p) and "/30/" in str(p)
    )
    data = pq.read_table(path)

    # ALTERs: rename name -> full_name, intField int -> long, floatField float -> double,
    # drop isActive, add a string, rename structField.field1 -> f1, widen its child double.
    evolved = []
    for f in file_schema.fields:
        if f.name == "name":
            f = F(f.id, "full_name", f.type)
        elif f.name == "intField":
            f = F(f.id, f.name, t.LONG)
        elif f.name == "floatField":
            f = F(f.id, f.name, t.DOUBLE)
        elif f.name == "isActive":
            continue
        elif f.name == "structField":
            s = f.type
            f = F(f.id, f.name, t.RecordType((F(s.fields[0].id, "f1", t.STRING), *s.fields[1:])))
        evolved.append(f)
    evolved.append(F(33, "comment", t.STRING))
    query = InternalSchema.of(evolved, max_column_id=33).select(
        ["id", "full_name", "intField", "floatField", "structField", "arrayField", "mapField", "comment"]
    )
    out = apply(data, resolve(query, file_schema, file_path=str(path)))
    assert out.schema == internal_to_arrow(query)
    assert out.slice(0, 1).to_pylist() == [
        {
            "id": 4,
            "full_name": "Diana",
            "intField": 45000,
            "floatField": 4.0,
            "structField": {
                "f1": "Diana",
                "field2": 50,
                "child_struct": {"child_field1": 987.654, "child_field2": True},
            },
            "arrayField": [
                {"arr_struct_f1": "orange", "arr_struct_f2": 900},
                {"arr_struct_f1": "gray", "arr_struct_f2": 1000},
            ],
            "mapField": [
                ("key7", {"map_field_value_struct_f1": 456.789, "map_field_value_struct_f2": True}),
                ("key8", {"map_field_value_struct_f1": 123.456, "map_field_value_struct_f2": False}),
            ],
            "comment": None,
        }
    ]


def test_apply_struct_children_in_another_order_than_the_file_schema_match_by_name():
    file = schema(F(0, "s", t.RecordType((F(1, "x", t.INT), F(2, "y", t.INT)))))
    data = pa.record_batch(
        {"s": pa.array([{"y": 2, "x": 1}], pa.struct([("y", pa.int32()), ("x", pa.int32())]))}
    )
    assert apply(data, resolve(file, file)).to_pydict() == {"s": [{"x": 1, "y": 2}]}
