"""Creating a table: `.hoodie/` and `hoodie.properties` as Hudi writes them."""

from __future__ import annotations

import datetime
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from shim.errors import WriteError
from shim.properties import TableConfig, TableType, config_path, format_properties
from shim.storage import Storage, as_storage, paths

_KEYGEN_CLASSES = {
    "SIMPLE": "org.apache.hudi.keygen.SimpleKeyGenerator",
    "COMPLEX": "org.apache.hudi.keygen.ComplexKeyGenerator",
    "NON_PARTITION": "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
}
DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
OVERWRITE_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"


@dataclass(frozen=True, slots=True)
class TableSpec:
    """What a new table is: its name, type, keys and layout options (table version 6)."""

    name: str
    record_key_fields: tuple[str, ...]
    table_type: TableType = TableType.COPY_ON_WRITE
    partition_fields: tuple[str, ...] = ()
    ordering_fields: tuple[str, ...] = ()
    hive_style_partitioning: bool = False
    url_encode_partitioning: bool = False
    payload_class: str | None = None
    database: str = "default"
    extra: Mapping[str, str] = field(default_factory=dict)
    key_generator: str | None = None
    """The key generator class to record (None: Simple, Complex or Nonpartitioned, by the fields)."""
    drop_partition_columns: bool = False

    @property
    def key_generator_class(self) -> str:
        if self.key_generator:
            return self.key_generator
        if not self.partition_fields:
            kind = "NON_PARTITION"
        elif len(self.record_key_fields) > 1 or len(self.partition_fields) > 1:
            kind = "COMPLEX"
        else:
            kind = "SIMPLE"
        return _KEYGEN_CLASSES[kind]

    def properties(self, create_schema: str | None) -> dict[str, str]:
        """The `hoodie.properties` entries of a version-6 table."""
        props = {
            "hoodie.table.name": self.name,
            "hoodie.database.name": self.database,
            "hoodie.table.type": self.table_type.value,
            "hoodie.table.version": "6",
            "hoodie.timeline.layout.version": "1",
            "hoodie.archivelog.folder": "archived",
            "hoodie.table.recordkey.fields": ",".join(self.record_key_fields),
            "hoodie.table.keygenerator.class": self.key_generator_class,
            "hoodie.datasource.write.hive_style_partitioning": str(self.hive_style_partitioning).lower(),
            "hoodie.datasource.write.partitionpath.urlencode": str(self.url_encode_partitioning).lower(),
            "hoodie.datasource.write.drop.partition.columns": str(self.drop_partition_columns).lower(),
            "hoodie.populate.meta.fields": "true",
            "hoodie.compaction.payload.class": self.payload_class
            or (DEFAULT_PAYLOAD if self.ordering_fields else OVERWRITE_PAYLOAD),
        }
        if self.partition_fields:
            props["hoodie.table.partition.fields"] = ",".join(self.partition_fields)
        if self.ordering_fields:
            props["hoodie.table.precombine.field"] = ",".join(self.ordering_fields)
        if create_schema:
            props["hoodie.table.create.schema"] = create_schema
        props.update(self.extra)
        props["hoodie.table.checksum"] = str(zlib.crc32(f"{self.database}.{self.name}".encode()))
        return props


def create_table(table: Storage | str, spec: TableSpec, create_schema: str | None = None) -> TableConfig:
    """Create an empty table at the storage's root, or a local path (which must not hold one yet)."""
    storage = as_storage(table)
    path = storage.root
    props_path = config_path(path)
    if storage.exists(props_path):
        raise WriteError(f"a Hudi table already exists at {path}", path=path)
    for folder in (paths.hoodie(path), paths.aux(path), paths.hoodie(path, paths.TEMP_FOLDER),
                   paths.hoodie(path, paths.ARCHIVE_FOLDER)):
        storage.make_dirs(folder)
    text = format_properties(spec.properties(create_schema))
    stamp = datetime.datetime.now(datetime.UTC).strftime("%a %b %d %H:%M:%S UTC %Y")
    if not storage.write_new(props_path, f"#Properties saved on {stamp}\n{text}".encode()):
        raise WriteError(f"a Hudi table already exists at {path}", path=path)  # another writer made it first
    return TableConfig.from_text(text, props_path)

