"""`MetadataTable`: Hudi's metadata table (`.hoodie/metadata`) read as of a data table's timeline.

The metadata table (MDT) is a merge-on-read Hudi table of its own (HFile base files, logs of
HFile data blocks, its own timeline under `.hoodie/metadata/.hoodie`) whose partitions index the
data table: `files` (partitions and their files), `column_stats`, `partition_stats`,
`record_index`, `bloom_filters`, `secondary_index_*`. It is read at its latest completed instant,
through the log blocks `shim.metadata.validity` lets through (never the MDT commit of a data
write that is not completed), and is usable for a read only when it holds every data write up to
that read (`unusable_reason`). Reads as of an earlier instant list what the latest state holds of
the files committed by then, as Hudi's metadata-backed file system view does; a clean after the
read instant may have removed files such a read needs, so it makes the MDT unusable for it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from shim.errors import HudiShimError
from shim.files import parse_base_file, parse_log_file
from shim.layout.slices import file_slices_as_of
from shim.metadata import keys as mdt_keys
from shim.metadata.partition import MetadataPartition, ReadStats, Selection
from shim.metadata.records import (
    BloomFilterEntry,
    ColumnStats,
    MetadataRecord,
    RecordLocation,
    bloom_filter_entry,
    column_stats,
    file_entries,
    is_tombstone,
    record_location,
)
from shim.metadata.validity import Validity, rolled_back_commits, validity
from shim.properties import SUPPORTED_TABLE_VERSIONS, TableConfig, find_config_file, parse_properties
from shim.storage import Storage, paths
from shim.timeline.instant import Action, instant_key
from shim.timeline.timeline import Timeline

FILES = "files"
COLUMN_STATS = "column_stats"
PARTITION_STATS = "partition_stats"
RECORD_INDEX = "record_index"
BLOOM_FILTERS = "bloom_filters"
SECONDARY_INDEX_PREFIX = "secondary_index_"
METADATA_PARTITIONS = "hoodie.table.metadata.partitions"
INFLIGHT_PARTITIONS = "hoodie.table.metadata.partitions.inflight"
INDEX_DEFINITIONS = "hoodie.table.index.defs.path"


class MetadataTableError(HudiShimError):
    """The metadata table, or the partition of it a call needs, cannot be used (the message says why)."""


@dataclass(frozen=True, slots=True)
class _Opened:
    config: TableConfig
    timeline: Timeline
    validity: Validity
    read_instant: str


class MetadataTable:
    """The metadata table of one data table, as of the data table's timeline `data_timeline`.

    Attributes:
        storage: the data table's storage.
        table_path: the data table (the storage's root).
        path: the metadata table (`<table>/.hoodie/metadata`).
        enabled_partitions: MDT partitions the data table lists as built
            (`hoodie.table.metadata.partitions`) and not being built.
        as_of: the read instant the listing is for (None: the latest).
        stats: files and blocks read so far.
    """

    def __init__(self, storage: Storage, data_timeline: Timeline, as_of: str | None = None, *,
                 config: TableConfig | None = None) -> None:
        self.storage = storage
        self.table_path = storage.root
        self.path = paths.metadata_table(storage.root)
        self._mdt_storage = storage.within(self.path)
        self.data_timeline = data_timeline
        self.as_of = as_of
        self.stats = ReadStats()
        self.config = config = config or data_timeline.config
        built = _names(config.get(METADATA_PARTITIONS))
        self.inflight_partitions = _names(config.get(INFLIGHT_PARTITIONS))
        self.enabled_partitions = tuple(p for p in built if p not in self.inflight_partitions)
        self._opened: _Opened | None = None
        self._problem: str | None = None
        self._partitions: dict[str, MetadataPartition] = {}
        self._secondary: dict[str, str] | None = None
        self._open()

    @classmethod
    def open(cls, storage: Storage, data_timeline: Timeline, as_of: str | None = None, *,
             config: TableConfig | None = None) -> MetadataTable:
        """The metadata table of the table at the storage's root whose timeline is `data_timeline`, for
        reads as of `as_of` (None: the latest). Never raises for a missing, lagging or broken MDT:
        `unusable_reason` says why it cannot serve a read. `config`: the data table's config
        (default: the timeline's)."""
        return cls(storage, data_timeline, as_of, config=config)

    def _open(self) -> None:
        if FILES not in self.enabled_partitions:
            state = "is being built" if FILES in self.inflight_partitions else "is not listed"
            self._problem = (f"the metadata table's files partition {state} in {METADATA_PARTITIONS} of "
                             f"{self.config.path or self.table_path}")
            return
        found = find_config_file(self._mdt_storage)
        if found is None:
            self._problem = f"no metadata table at {self.path}"
            return
        # Not validated as a data table's: its base files are HFiles.
        config = TableConfig(parse_properties(self._mdt_storage.read_text(found)), found)
        if config.version not in SUPPORTED_TABLE_VERSIONS or config.timeline_layout_version not in (1, 2):
            self._problem = (f"metadata table version {config.version} (timeline layout "
                             f"{config.timeline_layout_version}) is not one hudi-shim reads")
            return
        timeline = Timeline.load(self._mdt_storage, config)
        completed = [i for i in timeline.instants if i.is_completed]
        if not completed:
            self._problem = "the metadata table has no completed commit"
            return
        read_instant = max((i.requested_time for i in completed), key=instant_key)
        rules = validity(self.data_timeline, timeline, rolled_back_commits(self.data_timeline))
        self._opened = _Opened(config, timeline, rules, read_instant)

    # -- usability ---------------------------------------------------------------------------------

    def unusable_reason(self, read_instant: str | None = None) -> str | None:
        """Why this MDT cannot serve a listing for a read as of `read_instant` (default: `as_of`);
        None when it can."""
        if self._opened is None:
            return self._problem
        rules = self._opened.validity
        if rules.problems:
            return rules.problems[0]
        instant = read_instant if read_instant is not None else self.as_of
        behind = rules.behind(self.data_timeline, instant)
        if behind is not None:
            return behind
        if instant is not None:
            return self._time_travel_problem(instant)
        return None

    def is_usable_for(self, read_instant: str | None = None) -> bool:
        """Whether the MDT can serve a listing for a read as of `read_instant` (default: `as_of`)."""
        return self.unusable_reason(read_instant) is None

    def _time_travel_problem(self, instant: str) -> str | None:
        clean = self.data_timeline.latest_clean()
        if clean is not None and clean[1] and instant_key(clean[1]) > instant_key(instant):
            return (f"clean {clean[0].requested_time} kept only commits from {clean[1]} on: files a read as of "
                    f"{instant} needs may be gone")
        for restore in self.data_timeline.instants:
            if restore.action is Action.RESTORE and restore.is_completed and instant_key(restore.requested_time) > instant_key(instant):
                return f"restore {restore.requested_time} after {instant} removed files of earlier commits"
        return None

    def _require(self, partition: str) -> _Opened:
        reason = self.unusable_reason()
        if reason is not None:
            raise MetadataTableError(f"{self.table_path}: the metadata table cannot be used: {reason}",
                                     path=self.path)
        if partition not in self.enabled_partitions:
            raise MetadataTableError(
                f"{self.table_path}: the metadata table has no {partition} partition (built: "
                f"{', '.join(self.enabled_partitions) or 'none'})", path=self.path)
        assert self._opened is not None
        return self._opened

    def _partition(self, name: str) -> MetadataPartition:
        opened = self._require(name)
        found = self._partitions.get(name)
        if found is None:
            slices = file_slices_as_of(self._mdt_storage, [name], opened.timeline, None)
            found = self._partitions[name] = MetadataPartition(
                self._mdt_storage, name, slices, opened.timeline, opened.read_instant, opened.validity.is_valid,
                self.stats)
        return found

    def _read(self, partition: str, selection: Selection) -> dict[str, MetadataRecord]:
        records = self._partition(partition).read(selection)
        return {key: record for key, record in records.items() if not is_tombstone(record)}

    # -- files -------------------------------------------------------------------------------------

    def partitions(self) -> list[str]:
        """The data table's partitions ("" for a non-partitioned table's), sorted."""
        record = self._read(FILES, Selection(keys=frozenset([mdt_keys.ALL_PARTITIONS_KEY])))
        found = record.get(mdt_keys.ALL_PARTITIONS_KEY)
        if found is None:
            return []
        names = [mdt_keys.data_partition(n) for n, (_, deleted) in file_entries(found).items() if not deleted]
        return sorted(names)

    def files(self, partition: str) -> dict[str, int]:
        """File name -> size of the partition's files (committed as of `as_of`, when given)."""
        return self.all_files([partition]).get(partition, {})

    def all_files(self, partitions: Iterable[str] | None = None, *, committed: bool = True
                  ) -> dict[str, dict[str, int]]:
        """File name -> size per partition, for `partitions` (default: every partition), read in one
        pass over the files partition. `committed=False` keeps files written after `as_of` (the
        latest listing, as a storage listing has them)."""
        wanted = None if partitions is None else frozenset(mdt_keys.partition_identifier(p) for p in partitions)
        selection = Selection(keys=wanted) if wanted is not None else Selection()
        records = self._read(FILES, selection)
        listed: dict[str, dict[str, int]] = {}
        for key, record in records.items():
            if key == mdt_keys.ALL_PARTITIONS_KEY:
                continue
            partition = mdt_keys.data_partition(key)
            listed[partition] = {name: size for name, (size, deleted) in sorted(file_entries(record).items())
                                 if not deleted and (not committed or self._visible(name, partition))}
        if partitions is not None:
            for partition in partitions:
                listed.setdefault(partition, {})
        return listed

    def _visible(self, name: str, partition: str) -> bool:
        """Whether a listed file was committed as of `as_of` (base files and version 8+ logs by the
        instant in their name; version 6 logs name their slice's base instant)."""
        instant = self.as_of
        if instant is None:
            return True
        base = parse_base_file(name, partition)
        if base is not None:
            return self.data_timeline.is_committed(base.instant_time, instant)
        log = parse_log_file(name, partition)
        if log is None:
            return True
        if self.config.version >= 8:
            return self.data_timeline.is_committed(log.instant_time, instant)
        return instant_key(log.instant_time) <= instant_key(instant)

    # -- indexes -----------------------------------------------------------------------------------

    def column_stats(self, files: Mapping[str, Iterable[str]], columns: Iterable[str]
                     ) -> dict[tuple[str, str], dict[str, ColumnStats]]:
        """(partition, file name) -> column -> stats, for the given files (partition -> names) and
        columns; files or columns without stats are left out."""
        wanted = list(columns)
        keyed = {mdt_keys.column_stats_key(column, partition, name): (partition, name)
                 for partition, names in files.items() for name in names for column in wanted}
        records = self._read(COLUMN_STATS, Selection(keys=frozenset(keyed)))
        found: dict[tuple[str, str], dict[str, ColumnStats]] = {}
        for key, record in records.items():
            stats = column_stats(record)
            if stats is not None:
                found.setdefault(keyed[key], {})[stats.column_name] = stats
        return found

    def partition_stats(self, columns: Iterable[str], partitions: Iterable[str] | None = None
                        ) -> dict[str, dict[str, ColumnStats]]:
        """Partition -> column -> stats of the given columns, for `partitions` (default: all)."""
        columns = list(columns)
        if partitions is None:
            selection = Selection(prefixes=tuple(mdt_keys.column_id(c) for c in columns))
        else:
            selection = Selection(keys=frozenset(mdt_keys.partition_stats_key(c, p)
                                                 for c in columns for p in partitions))
        by_key = {mdt_keys.column_id(c): c for c in columns}
        found: dict[str, dict[str, ColumnStats]] = {}
        for key, record in self._read(PARTITION_STATS, selection).items():
            stats = column_stats(record)
            if stats is None or by_key.get(key[:12]) != stats.column_name:
                continue
            partition = stats.file_name if stats.file_name is not None else key[12:]
            found.setdefault(mdt_keys.data_partition(partition), {})[stats.column_name] = stats
        return found

    def record_locations(self, record_keys: Iterable[str]) -> dict[str, RecordLocation]:
        """Record key -> its location, for the keys the record index holds."""
        found = {}
        for key, record in self._read(RECORD_INDEX, Selection(keys=frozenset(record_keys))).items():
            location = record_location(record)
            if location is not None:
                found[key] = location
        return found

    def bloom_filter(self, partition: str, file_name: str) -> BloomFilterEntry | None:
        """The bloom filter the `bloom_filters` partition keeps for a base file."""
        return self.bloom_filters({partition: [file_name]}).get((partition, file_name))

    def bloom_filters(self, files: Mapping[str, Iterable[str]]) -> dict[tuple[str, str], BloomFilterEntry]:
        """(partition, file name) -> bloom filter, for the given base files (partition -> names)
        that the `bloom_filters` partition keeps one for."""
        keyed = {mdt_keys.bloom_filter_key(partition, name): (partition, name)
                 for partition, names in files.items() for name in names}
        found = {}
        for key, record in self._read(BLOOM_FILTERS, Selection(keys=frozenset(keyed))).items():
            entry = bloom_filter_entry(record)
            if entry is not None and key in keyed:
                found[keyed[key]] = entry
        return found

    def secondary_indexes(self) -> dict[str, str]:
        """Column -> the secondary index partition on it (`secondary_index_<name>`), for the
        secondary indexes built on one column as it is (Hudi's index definitions, `identity`)."""
        if self._secondary is None:
            self._secondary = self._secondary_indexes()
        return dict(self._secondary)

    def _secondary_indexes(self) -> dict[str, str]:
        relative = self.config.get(INDEX_DEFINITIONS)
        built = [p for p in self.enabled_partitions if p.startswith(SECONDARY_INDEX_PREFIX)]
        if not relative or not built:
            return {}
        try:
            text = self.storage.read_text(paths.table_file(self.table_path, relative))
            definitions = json.loads(text).get("indexDefinitions") or {}
        except (FileNotFoundError, ValueError, AttributeError):
            return {}
        found = {}
        for name in built:
            definition = definitions.get(name)
            if not isinstance(definition, dict):
                continue
            fields = definition.get("sourceFields") or []
            if len(fields) == 1 and str(definition.get("indexFunction") or "identity") == "identity":
                found[str(fields[0])] = name
        return found

    def secondary_index(self, index: str, secondary_keys: Iterable[str]) -> dict[str, list[str]]:
        """Secondary key -> record keys, from the secondary index partition `index`
        (`secondary_index_<name>`)."""
        prefixes = tuple(mdt_keys.secondary_index_key(k, "") for k in secondary_keys)
        found: dict[str, list[str]] = {}
        for key in sorted(self._read(index, Selection(prefixes=prefixes))):
            secondary, record_key = mdt_keys.split_secondary_index_key(key)
            found.setdefault(secondary, []).append(record_key)
        return found


def _names(value: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())
