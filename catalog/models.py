"""JSON shapes of the HTTP API (requests and responses), as documented in its OpenAPI schema."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StringConstraints

from catalog.service import TableInfo
from catalog.stream import MAX_FILTER_CHARS
from shim import FileSchema
from shim.filters.parse import MAX_CONDITIONS
from shim.scan_options import REMOTE_NAMES, ScanOptions
from shim.schema import arrow_field_id
from shim.timeline.instant import Instant

Name = Annotated[str, StringConstraints(min_length=1, max_length=1024)]
Scalar = str | int | float | bool | None
FilterItem = str | tuple[Name, Name, Scalar | list[Scalar]]


class ScanBody(BaseModel):
    """A scan request: a field for each option of `shim.ScanOptions` a server takes (its
    `REMOTE_NAMES`, with their wire types and limits), and `WIRE_ONLY` fields."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["snapshot", "read_optimized"] = Field(default="snapshot", description="merge log files, or base files only")
    columns: list[Name] | None = Field(default=None, max_length=10_000, description="columns in order (default: all)")
    filter: (Annotated[str, StringConstraints(max_length=MAX_FILTER_CHARS)]
             | Annotated[list[FilterItem], Field(max_length=MAX_CONDITIONS)] | None) = Field(
        None, description="SQL-like text (\"city = 'sf' AND fare > 10\"; at most 1 MiB, 256 conditions) or "
                          "[column, op, value] triples (ANDed; at most 256)")
    filter_substrait: Annotated[str, StringConstraints(max_length=4_000_000)] | None = Field(
        None, description="a Substrait ExtendedExpression (base64), as pyarrow's Expression.to_substrait writes")
    as_of: Annotated[str, StringConstraints(max_length=64)] | None = Field(
        None, description="instant to read as of (yyyyMMddHHmmssSSS or 'yyyy-MM-dd HH:mm:ss')")
    limit: StrictInt | None = Field(default=None, ge=0, le=2**62, description="return at most this many rows")
    dictionary_partitions: StrictBool = Field(
        default=False, description="send partition columns dictionary-encoded (one value per batch)")
    dictionary_strings: StrictBool = Field(
        default=False, description="send dictionary-encoded the partition columns and the string columns data files "
                                  "store as dictionaries (fewer bytes; columns compared by the filter stay plain)")
    corrupt: Literal["error", "skip"] = Field(
        default="error", description="a log block a completed commit wrote that cannot be read: an error "
                                     "(default), or skipped as Hudi does; the stream then ends with a batch "
                                     "reporting the blocks skipped (metadata key hudi-shim-skipped-blocks)")
    compression: Literal["lz4", "zstd"] | None = Field(
        default=None, description="compress record batch buffers (Arrow IPC compression; readers decompress "
                                  "transparently): fewer bytes over slow networks, more CPU on both ends")

    def scan_options(self, **given: Any) -> ScanOptions:
        """The request's scan options (those in `given`, such as the filter the request's text
        or Substrait stands for, taken as given)."""
        options = {name: getattr(self, name) for name in REMOTE_NAMES}
        options["as_of"] = options["as_of"] or None
        return ScanOptions(**{**options, **given})


WIRE_ONLY = frozenset({"filter_substrait", "compression"})
"""Fields of a scan request that are not scan options: how the filter and the answer travel."""


class ErrorDetail(BaseModel):
    type: str
    message: str
    code: int | None = Field(default=None, description="the HTTP status (as in the Iceberg REST error model)")
    column: str | None = None
    instant: str | None = None
    feature: str | None = None


class ErrorBody(BaseModel):
    error: ErrorDetail


class FieldModel(BaseModel):
    """A column: its id (None when the file format recorded none), Arrow type and nested fields."""

    name: str
    id: int | None
    type: str
    nullable: bool
    fields: list[FieldModel] = []

    @classmethod
    def of(cls, field: pa.Field) -> FieldModel:
        children = [field.type.field(i) for i in range(field.type.num_fields)]
        return cls(name=field.name, id=arrow_field_id(field), type=str(field.type),
                   nullable=field.nullable, fields=[cls.of(child) for child in children])


def schema_fields(schema: pa.Schema) -> list[FieldModel]:
    return [FieldModel.of(field) for field in schema]


class InstantModel(BaseModel):
    requested_time: str
    action: str
    state: str
    completion_time: str | None

    @classmethod
    def of(cls, instant: Instant) -> InstantModel:
        return cls(requested_time=instant.requested_time, action=instant.action.value,
                   state=instant.state.value, completion_time=instant.completion_time)


class TableSummary(BaseModel):
    name: str
    table_type: str | None = None
    latest_instant: str | None = None
    error: ErrorDetail | None = Field(default=None, description="why the table cannot be opened")


class TableList(BaseModel):
    tables: list[TableSummary]


class TableDetail(BaseModel):
    name: str
    hudi_name: str
    table_type: str
    version: int
    latest_instant: InstantModel | None = Field(description="the latest completed write (or the one read as of)")
    record_key_fields: list[str]
    partition_fields: list[str]
    schema_: list[FieldModel] = Field(alias="schema")
    arrow_schema: str = Field(description="the schema as an Arrow IPC schema message, base64")
    properties: dict[str, str]

    model_config = ConfigDict(populate_by_name=True)

    @classmethod
    def of(cls, info: TableInfo, arrow_schema: str) -> TableDetail:
        return cls(
            name=info.name, hudi_name=info.hudi_name, table_type=info.table_type, version=info.version,
            latest_instant=InstantModel.of(info.instant) if info.instant is not None else None,
            record_key_fields=list(info.record_key_fields), partition_fields=list(info.partition_fields),
            schema=schema_fields(info.schema), arrow_schema=arrow_schema, properties=dict(info.properties),
        )


class TimelineModel(BaseModel):
    name: str
    instants: list[InstantModel]


class ColumnMappingModel(BaseModel):
    table_column: str
    column_id: int | None
    table_type: str
    file_column: str | None
    file_type: str | None
    action: Literal["read", "rename", "cast", "rename+cast", "null", "partition"]


class FileSchemaModel(BaseModel):
    path: str = Field(description="relative to the table folder")
    kind: Literal["base_file", "log_block"]
    partition_path: str
    file_id: str
    instant: str = Field(description="the instant that wrote it")
    block_offset: int | None
    schema_version: int | None = Field(description="InternalSchema version (None: matched by name)")
    columns: list[ColumnMappingModel]

    @classmethod
    def of(cls, value: FileSchema) -> FileSchemaModel:
        columns = [ColumnMappingModel(table_column=c.table_column, column_id=c.column_id, table_type=c.table_type,
                                      file_column=c.file_column, file_type=c.file_type,
                                      action=c.action)  # type: ignore[arg-type]
                   for c in value.columns]
        return cls(path=value.path, kind=value.kind, partition_path=value.partition_path,  # type: ignore[arg-type]
                   file_id=value.file_id, instant=value.instant, block_offset=value.block_offset,
                   schema_version=value.schema_version, columns=columns)


class FilesModel(BaseModel):
    name: str
    view: Literal["snapshot", "read_optimized"]
    instant: str | None = Field(description="the completed instant read")
    schema_: list[FieldModel] = Field(alias="schema")
    files: list[FileSchemaModel]

    model_config = ConfigDict(populate_by_name=True)
