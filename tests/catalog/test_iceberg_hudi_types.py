"""Hudi 1.2's VECTOR, VARIANT and BLOB columns through the Iceberg REST catalog: a vector is an
Iceberg list of required floats (its slices written out, Hudi's files holding its bytes), a
variant the struct of its metadata and value binaries, a blob its struct; PyIceberg and DuckDB's
iceberg extension read the shim's rows."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog

from catalog.iceberg.types import VECTOR_ELEMENT_ID_BASE
from catalog.settings import Settings
from engines.iceberg import attach
from tests.catalog.servekit import live_server
from tests.shim.read.test_hudi_types import (
    STORED,
    VARIANT_METADATA,
    VARIANT_VALUE,
    HudiTypesTable,
    _base_rows,
    _le,
)


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    root = tmp_path_factory.mktemp("types")
    table = HudiTypesTable(root / "wh" / "typed", STORED)
    base = table.base(_base_rows())
    table.hudi_log([{"id": "b", "ts": 2, "embedding": _le("f", 9.0, 8.0, 7.0), "precise": _le("d", 4.0, 5.0),
                     "doc": {"metadata": VARIANT_METADATA, "value": VARIANT_VALUE},
                     "payload": {"type": "INLINE", "data": b"new", "reference": None}}], base_instant=base)
    with live_server(Settings(warehouse=str(root / "wh"), catalog_db=":memory:",
                              iceberg_dir=str(root / "ice"))) as live:
        yield live


def _ordered(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda row: row["id"])


@pytest.mark.parametrize(("name", "view"), [("typed", "snapshot"), ("typed_ro", "read_optimized")])
def test_vector_variant_and_blob_columns_read_through_iceberg_as_the_shim_reads_them(published, name, view):
    want = published.catalog.table("typed").read(mode=view)
    loaded = load_catalog("shim", type="rest", uri=f"{published.url}/iceberg").load_table(f"default.{name}")
    fields = {f.name: f for f in loaded.schema().fields}
    embedding = fields["embedding"]
    assert str(embedding.field_type) == "list<float>" and embedding.field_type.element_required
    assert embedding.field_type.element_id == embedding.field_id + VECTOR_ELEMENT_ID_BASE
    assert str(fields["precise"].field_type) == "list<double>"
    assert [f.name for f in fields["doc"].field_type.fields] == ["metadata", "value"]
    assert [f.name for f in fields["payload"].field_type.fields] == ["type", "data", "reference"]
    got = loaded.scan().to_arrow()
    assert _ordered(got.to_pylist()) == _ordered(want.to_pylist())
    rows = attach(published.url).execute(
        f"SELECT id, embedding, precise, doc.value AS v, payload.reference.external_path AS p "
        f"FROM shim.default.{name} ORDER BY id").fetchall()
    assert [(r[0], r[1], r[2], r[3], r[4]) for r in rows] == [
        (r["id"], r["embedding"], r["precise"], r["doc"]["value"] if r["doc"] else None,
         (r["payload"]["reference"] or {}).get("external_path") if r["payload"] else None)
        for r in _ordered(want.to_pylist())]
    assert loaded.metadata.properties["hudi-shim.files-in-place"] == "0"  # Hudi's files hold vector bytes
    assert json.loads(loaded.metadata.properties["schema.name-mapping.default"])  # still published


def test_vector_element_ids_count_in_the_last_column_id(published):
    loaded = load_catalog("shim", type="rest", uri=f"{published.url}/iceberg").load_table("default.typed")
    embedding = next(f for f in loaded.schema().fields if f.name == "embedding")
    assert loaded.metadata.last_column_id >= embedding.field_id + VECTOR_ELEMENT_ID_BASE
    assert pa.types.is_list(loaded.scan(selected_fields=("embedding",)).to_arrow().schema.field(0).type)
