"""Hudi's schema-on-read model (InternalSchema) and reconciliation of file schemas by column id.

- `types`, `internal_schema`: the model; `visitor`: one framework for walking it.
- `serde`: InternalSchema JSON as Hudi's `SerDeHelper` reads and writes it.
- `avro`, `arrow`: conversions, with Hudi's id assignment.
- `promote`, `casts`: allowed type changes and their exact value conversions.
- `reconcile` (`resolve` -> ReadPlan) and `apply` (ReadPlan x Arrow data -> query schema).
"""

from __future__ import annotations

from shim.schema.apply import apply
from shim.schema.arrow import (
    FIELD_ID_KEY,
    arrow_field_id,
    has_field_ids,
    internal_from_arrow,
    internal_to_arrow,
    type_to_arrow,
    without_field_ids,
)
from shim.schema.avro import add_meta_fields, internal_from_avro, internal_to_avro
from shim.schema.internal_schema import META_FIELD_NAMES, META_FIELDS, InternalSchema
from shim.schema.promote import Conversion, conversion, is_direct_change
from shim.schema.reconcile import (
    FieldPlan,
    FieldStatus,
    ListPlan,
    MapPlan,
    Node,
    PrimitivePlan,
    ReadPlan,
    StructPlan,
    assign_ids_by_name,
    resolve,
    resolve_by_name,
)
from shim.schema.serde import (
    history_from_json,
    history_to_json,
    inherit_schema_history,
    schema_from_json,
    schema_to_json,
    search_schema,
)
from shim.schema.types import (
    ArrayType,
    DecimalType,
    Field,
    FixedType,
    MapType,
    PrimitiveType,
    RecordType,
    Type,
    VectorType,
)
from shim.schema.visitor import (
    PartnerAccessor,
    SchemaVisitor,
    SchemaWithPartnerVisitor,
    index_by_id,
    index_by_name,
    max_id,
    visit,
    visit_with_partner,
)

__all__ = [
    "FIELD_ID_KEY",
    "META_FIELDS",
    "META_FIELD_NAMES",
    "ArrayType",
    "Conversion",
    "DecimalType",
    "Field",
    "FieldPlan",
    "FieldStatus",
    "FixedType",
    "InternalSchema",
    "ListPlan",
    "MapPlan",
    "MapType",
    "Node",
    "PartnerAccessor",
    "PrimitivePlan",
    "PrimitiveType",
    "ReadPlan",
    "RecordType",
    "SchemaVisitor",
    "SchemaWithPartnerVisitor",
    "StructPlan",
    "Type",
    "VectorType",
    "add_meta_fields",
    "apply",
    "arrow_field_id",
    "assign_ids_by_name",
    "conversion",
    "has_field_ids",
    "history_from_json",
    "history_to_json",
    "index_by_id",
    "index_by_name",
    "inherit_schema_history",
    "internal_from_arrow",
    "internal_from_avro",
    "internal_to_arrow",
    "internal_to_avro",
    "is_direct_change",
    "max_id",
    "resolve",
    "resolve_by_name",
    "schema_from_json",
    "schema_to_json",
    "search_schema",
    "type_to_arrow",
    "visit",
    "visit_with_partner",
    "without_field_ids",
]
