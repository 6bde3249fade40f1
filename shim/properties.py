"""`.hoodie/hoodie.properties`: parsing and typed access to the table configuration."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from shim.errors import InvalidTableError, UnsupportedFeatureError
from shim.storage import Storage, paths

SUPPORTED_TABLE_VERSIONS = (6, 8, 9)

# Keys, named as Hudi names them.
TABLE_NAME = "hoodie.table.name"
TABLE_TYPE = "hoodie.table.type"
TABLE_VERSION = "hoodie.table.version"
TIMELINE_LAYOUT_VERSION = "hoodie.timeline.layout.version"
TIMELINE_PATH = "hoodie.timeline.path"
TIMELINE_HISTORY_PATH = "hoodie.timeline.history.path"
RECORD_KEY_FIELDS = "hoodie.table.recordkey.fields"
PARTITION_FIELDS = "hoodie.table.partition.fields"
# Not a table property in Hudi 0.14/0.15; this writer records it for CustomKeyGenerator tables,
# whose version-6 `hoodie.table.partition.fields` loses the field types.
WRITE_PARTITION_FIELDS = "hoodie.datasource.write.partitionpath.field"
PRECOMBINE_FIELD = "hoodie.table.precombine.field"
ORDERING_FIELDS = "hoodie.table.ordering.fields"
KEYGEN_CLASS = "hoodie.table.keygenerator.class"
KEYGEN_TYPE = "hoodie.table.keygenerator.type"
HIVE_STYLE_PARTITIONING = "hoodie.datasource.write.hive_style_partitioning"
URL_ENCODE_PARTITIONING = "hoodie.datasource.write.partitionpath.urlencode"
DROP_PARTITION_COLUMNS = "hoodie.datasource.write.drop.partition.columns"
POPULATE_META_FIELDS = "hoodie.populate.meta.fields"
CDC_ENABLED = "hoodie.table.cdc.enabled"
PAYLOAD_CLASS = "hoodie.compaction.payload.class"
LEGACY_PAYLOAD_CLASS = "hoodie.payload.class"
RECORD_MERGE_MODE = "hoodie.record.merge.mode"
RECORD_MERGE_STRATEGY_ID = "hoodie.record.merge.strategy.id"
LEGACY_MERGE_STRATEGY_ID = "hoodie.compaction.record.merger.strategy"
CREATE_SCHEMA = "hoodie.table.create.schema"
BASE_FILE_FORMAT = "hoodie.table.base.file.format"
READ_BASE_FILE_FORMATS = ("PARQUET", "LANCE")
"""Base file formats read (Lance with pylance, the `lance` extra); ORC and HFile tables are refused."""
LOG_FILE_FORMAT = "hoodie.table.log.file.format"
BOOTSTRAP_BASE_PATH = "hoodie.bootstrap.base.path"
TABLE_FORMAT = "hoodie.table.format"
ARCHIVELOG_FOLDER = "hoodie.archivelog.folder"
PARTIAL_UPDATE_MODE = "hoodie.table.partial.update.mode"


class TableType(enum.Enum):
    """Copy-on-write or merge-on-read."""

    COPY_ON_WRITE = "COPY_ON_WRITE"
    MERGE_ON_READ = "MERGE_ON_READ"


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java `.properties` text (comments, `=`/`:` separators, backslash escapes, continuations)."""
    result: dict[str, str] = {}
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip()
        if not pending and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            pending += line[:-1]
            continue
        logical.append(pending + line)
        pending = ""
    if pending:
        logical.append(pending)
    for line in logical:
        key, value = _split_key_value(line)
        result[_unescape(key)] = _unescape(value)
    return result


def _split_key_value(line: str) -> tuple[str, str]:
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\":
            i += 2
            continue
        if ch in "=: \t\f":
            key = line[:i]
            rest = line[i:].lstrip(" \t\f")
            if rest[:1] in ("=", ":") and ch in " \t\f":
                rest = rest[1:].lstrip(" \t\f")
            elif ch in "=:":
                rest = line[i + 1 :].lstrip(" \t\f")
            return key, rest
        i += 1
    return line, ""


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    out: list[str] = []
    i = 0
    while i < len(s):
        ch = s[i]
        if ch != "\\" or i + 1 == len(s):
            out.append(ch)
            i += 1
            continue
        nxt = s[i + 1]
        if nxt == "u" and i + 6 <= len(s):
            out.append(chr(int(s[i + 2 : i + 6], 16)))
            i += 6
            continue
        out.append(_ESCAPES.get(nxt, nxt))
        i += 2
    return "".join(out)


def format_properties(props: Mapping[str, str]) -> str:
    """Render properties the way Java's `Properties.store` escapes them (sorted keys)."""
    lines = []
    for key in sorted(props):
        lines.append(f"{_escape(key, is_key=True)}={_escape(props[key], is_key=False)}")
    return "\n".join(lines) + "\n"


def _escape(s: str, *, is_key: bool) -> str:
    out = []
    for i, ch in enumerate(s):
        if ch in "\\=:#!":
            out.append("\\" + ch)
        elif ch == " " and (is_key or i == 0):
            out.append("\\ ")
        elif ch in "\t\n\r\f":
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}[ch])
        else:
            out.append(ch)
    return "".join(out)


def _split_list(value: str | None) -> tuple[str, ...]:
    if not value:
        return ()
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _bool(value: str | None, default: bool) -> bool:
    if value is None or value.strip() == "":
        return default
    return value.strip().lower() == "true"


@dataclass(frozen=True, slots=True)
class TableConfig:
    """Typed view of `hoodie.properties`.

    Attributes:
        raw: every key as written in the file.
        path: the properties file, for error messages.
    """

    raw: Mapping[str, str]
    path: str = ""

    @classmethod
    def from_text(cls, text: str, path: str = "") -> TableConfig:
        """Parse and validate the properties; unsupported versions fail here, up front."""
        try:
            config = cls(parse_properties(text), path)
        except ValueError as exc:  # a malformed \uXXXX escape, as Java's Properties.load refuses
            raise InvalidTableError(f"{path}: not a properties file: {exc}", path=path) from None
        config.validate()
        return config

    def get(self, key: str, default: str | None = None) -> str | None:
        """Raw value of `key`."""
        return self.raw.get(key, default)

    @property
    def name(self) -> str:
        return self.raw.get(TABLE_NAME, "")

    @property
    def table_type(self) -> TableType:
        value = self.raw.get(TABLE_TYPE, TableType.COPY_ON_WRITE.value).strip().upper()
        try:
            return TableType(value)
        except ValueError:
            raise InvalidTableError(
                f"{self.path}: unknown {TABLE_TYPE}={value!r}; expected COPY_ON_WRITE or MERGE_ON_READ",
                path=self.path,
            ) from None

    @property
    def is_mor(self) -> bool:
        return self.table_type is TableType.MERGE_ON_READ

    @property
    def version(self) -> int:
        # Tables written before versions were recorded are version 0.
        return self._number(TABLE_VERSION, 0)

    @property
    def timeline_layout_version(self) -> int:
        value = self.raw.get(TIMELINE_LAYOUT_VERSION)
        if value is None or not value.strip():
            return 2 if self.version >= 8 else 1
        return self._number(TIMELINE_LAYOUT_VERSION, 1)

    def _number(self, key: str, default: int) -> int:
        value = self.raw.get(key)
        if value is None:
            return default
        text = value.strip()
        if not (text.isascii() and text.isdigit()) or len(text) > 18:
            raise InvalidTableError(f"{self.path}: {key}={value[:40]!r} is not a number", path=self.path)
        return int(text)

    @property
    def timeline_path(self) -> str:
        """Folder of active instants, relative to `.hoodie` ("" for layout 1)."""
        if self.timeline_layout_version < 2:
            return ""
        return self.raw.get(TIMELINE_PATH, "timeline") or "timeline"

    @property
    def timeline_history_path(self) -> str:
        return self.raw.get(TIMELINE_HISTORY_PATH, "history") or "history"

    @property
    def archive_path(self) -> str:
        """Folder of archived instants, relative to `.hoodie`: archive logs (layout 1) or the LSM
        history under the timeline folder (layout 2)."""
        if self.timeline_layout_version < 2:
            return self.raw.get(ARCHIVELOG_FOLDER, "archived") or "archived"
        return f"{self.timeline_path}/{self.timeline_history_path}"

    @property
    def record_key_fields(self) -> tuple[str, ...]:
        return _split_list(self.raw.get(RECORD_KEY_FIELDS))

    @property
    def partition_fields(self) -> tuple[str, ...]:
        """Partition columns; CustomKeyGenerator's `field:TYPE` suffixes are stripped."""
        return tuple(f.split(":", 1)[0] for f in _split_list(self.raw.get(PARTITION_FIELDS)))

    @property
    def partition_field_types(self) -> tuple[str | None, ...]:
        """Per partition field, the CustomKeyGenerator type (SIMPLE, TIMESTAMP) when declared (in
        the partition fields, else in a recorded `hoodie.datasource.write.partitionpath.field`)."""
        declared = _split_list(self.raw.get(PARTITION_FIELDS))
        if not any(":" in f for f in declared):
            recorded = _split_list(self.raw.get(WRITE_PARTITION_FIELDS))
            if [f.split(":", 1)[0].strip() for f in recorded] == list(self.partition_fields):
                declared = recorded
        return tuple(f.split(":", 1)[1].strip().upper() if ":" in f else None for f in declared)

    @property
    def spelled_partition_fields(self) -> tuple[str, ...]:
        """The partition fields whose folder names hold the column value itself (not a date the
        timestamp-based or custom key generators formatted from it, nor a field of unknown type)."""
        if not self.is_partitioned or self.key_generator == "TIMESTAMP":
            return ()
        if self.key_generator != "CUSTOM":
            return self.partition_fields
        types = self.partition_field_types
        return tuple(f for f, t in zip(self.partition_fields, types, strict=False) if t == "SIMPLE")

    @property
    def ordering_fields(self) -> tuple[str, ...]:
        value = self.raw.get(ORDERING_FIELDS)
        if value is None or not value.strip():
            value = self.raw.get(PRECOMBINE_FIELD)
        return _split_list(value)

    @property
    def key_generator(self) -> str:
        """Key generator as a short type name (SIMPLE, COMPLEX, NON_PARTITION, TIMESTAMP, CUSTOM, ...)."""
        key_type = self.raw.get(KEYGEN_TYPE)
        if key_type:
            return key_type.strip().upper()
        return key_generator_type(self.raw.get(KEYGEN_CLASS) or "")

    @property
    def hive_style_partitioning(self) -> bool:
        return _bool(self.raw.get(HIVE_STYLE_PARTITIONING), False)

    @property
    def url_encode_partitioning(self) -> bool:
        return _bool(self.raw.get(URL_ENCODE_PARTITIONING), False)

    @property
    def drop_partition_columns(self) -> bool:
        return _bool(self.raw.get(DROP_PARTITION_COLUMNS), False)

    @property
    def populate_meta_fields(self) -> bool:
        return _bool(self.raw.get(POPULATE_META_FIELDS), True)

    @property
    def cdc_enabled(self) -> bool:
        """Whether writers keep change-data-capture log blocks (`hoodie.table.cdc.enabled`)."""
        return _bool(self.raw.get(CDC_ENABLED), False)

    @property
    def payload_class(self) -> str | None:
        return self.raw.get(PAYLOAD_CLASS) or self.raw.get(LEGACY_PAYLOAD_CLASS)

    @property
    def merge_mode(self) -> str | None:
        value = self.raw.get(RECORD_MERGE_MODE)
        return value.strip().upper() if value else None

    @property
    def merge_strategy_id(self) -> str | None:
        return self.raw.get(RECORD_MERGE_STRATEGY_ID) or self.raw.get(LEGACY_MERGE_STRATEGY_ID)

    @property
    def create_schema(self) -> str | None:
        return self.raw.get(CREATE_SCHEMA)

    @property
    def is_partitioned(self) -> bool:
        return bool(self.partition_fields) and self.key_generator not in ("NON_PARTITION", "GLOBAL_DELETE")

    @property
    def base_file_format(self) -> str:
        """`hoodie.table.base.file.format`, upper case (PARQUET when unset)."""
        return (self.raw.get(BASE_FILE_FORMAT) or "PARQUET").strip().upper()

    def require_parquet_base_files(self, action: str) -> None:
        """Refuse `action` (a write, a compaction) on a table whose base files are not Parquet:
        hudi-shim's writers write Parquet only, and a Hudi table keeps one base file format."""
        if self.base_file_format != "PARQUET":
            raise UnsupportedFeatureError(
                f"{self.path}: cannot {action}: the table keeps its base files in {self.base_file_format} "
                f"({BASE_FILE_FORMAT}) and hudi-shim writes Parquet base files only; write it with Apache Hudi",
                feature=f"write-base-file-format-{self.base_file_format.lower()}",
                path=self.path,
            )

    def validate(self) -> None:
        """Reject tables this reader cannot read correctly, naming the key and value."""
        version = self.version
        if version not in SUPPORTED_TABLE_VERSIONS:
            raise UnsupportedFeatureError(
                f"{self.path}: table version {version} is not supported; hudi-shim reads versions "
                f"{', '.join(map(str, SUPPORTED_TABLE_VERSIONS))} (upgrade the table with Hudi first)",
                feature=f"table-version-{version}",
                path=self.path,
            )
        self.table_type  # noqa: B018 - validates the value
        layout = self.timeline_layout_version
        if layout not in (1, 2):
            raise UnsupportedFeatureError(
                f"{self.path}: timeline layout version {layout} is not supported (1 or 2)",
                feature=f"timeline-layout-{layout}",
                path=self.path,
            )
        base_format = self.base_file_format
        if base_format not in READ_BASE_FILE_FORMATS:
            raise UnsupportedFeatureError(
                f"{self.path}: base file format {base_format} is not supported; "
                f"{' and '.join(READ_BASE_FILE_FORMATS)} are",
                feature=f"base-file-format-{base_format.lower()}",
                path=self.path,
            )
        if self.raw.get(BOOTSTRAP_BASE_PATH):
            raise UnsupportedFeatureError(
                f"{self.path}: bootstrapped tables ({BOOTSTRAP_BASE_PATH}) are not supported",
                feature="bootstrap",
                path=self.path,
            )
        table_format = (self.raw.get(TABLE_FORMAT) or "native").strip().lower()
        if table_format != "native":
            raise UnsupportedFeatureError(
                f"{self.path}: {TABLE_FORMAT}={table_format} is not supported; only native Hudi tables are",
                feature=f"table-format-{table_format}",
                path=self.path,
            )


def key_generator_type(class_name: str) -> str:
    """A key generator class's short type name (SIMPLE for none; the upper-cased class name when unknown)."""
    short = class_name.strip().rsplit(".", 1)[-1]
    return _KEYGEN_CLASS_TO_TYPE.get(short, short.upper() or "SIMPLE")


_KEYGEN_CLASS_TO_TYPE = {
    "SimpleKeyGenerator": "SIMPLE",
    "SimpleAvroKeyGenerator": "SIMPLE",
    "ComplexKeyGenerator": "COMPLEX",
    "ComplexAvroKeyGenerator": "COMPLEX",
    "NonpartitionedKeyGenerator": "NON_PARTITION",
    "NonpartitionedAvroKeyGenerator": "NON_PARTITION",
    "TimestampBasedKeyGenerator": "TIMESTAMP",
    "TimestampBasedAvroKeyGenerator": "TIMESTAMP",
    "CustomKeyGenerator": "CUSTOM",
    "CustomAvroKeyGenerator": "CUSTOM",
    "GlobalDeleteKeyGenerator": "GLOBAL_DELETE",
}


def config_path(table_path: str) -> str:
    """Where the table at `table_path` keeps its `hoodie.properties`."""
    return paths.properties(table_path)


def find_config_file(storage: Storage) -> str | None:
    """The properties file to read of the table at the storage's root: `hoodie.properties`, or its
    `.backup` (Hudi restores the file from it after a failed update); None when neither exists."""
    path = config_path(storage.root)
    for candidate in (path, path + ".backup"):
        if storage.is_file(candidate):
            return candidate
    return None


def read_table_config(storage: Storage) -> TableConfig | None:
    """The config of the table at the storage's root, or None when there is no table there.

    Raises:
        UnsupportedFeatureError: the table uses a version or feature hudi-shim cannot read.
    """
    path = find_config_file(storage)
    if path is None:
        return None
    return TableConfig.from_text(storage.read_text(path), path)
