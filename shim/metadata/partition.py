"""Reading one partition of the metadata table: file slices of an HFile base file and log files.

A key's versions are its base file's record and its records in the log blocks the MDT timeline
and the validity rule let through (`shim.read.log_blocks.visible_blocks` with HFile blocks kept:
corrupt regions, uncommitted and rolled-back blocks, log compaction), merged as
`shim.metadata.merge` says. Log blocks are HFile data blocks (an HFile holding the block's records,
decoded with the block's SCHEMA header), Avro data blocks, and delete blocks (the keys removed).

Lookups by key read, per file slice, the base file's data blocks that can hold the keys (through
its block index) and the slice's log files; in partitions of several file groups (record index,
secondary indexes) a key is looked up in the file group Hudi put it in.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from shim.errors import CorruptFileError, UnsupportedFeatureError
from shim.hfile import HFileReader
from shim.layout.slices import FileSlice
from shim.log.blocks import BlockType, HeaderKey
from shim.log.delete import decode_delete_block
from shim.metadata.keys import file_group_index
from shim.metadata.merge import merge_versions
from shim.metadata.records import MetadataRecord, ValueDecoder
from shim.read.log_blocks import VisibleBlock, visible_blocks
from shim.storage import Storage
from shim.timeline.timeline import Timeline

_I32 = struct.Struct(">i")
_SCHEMA_INFO = b"schema"


@dataclass(frozen=True, slots=True)
class Selection:
    """Which keys to read: all (`keys` and `prefixes` None), some keys, or keys with some prefixes."""

    keys: frozenset[str] | None = None
    prefixes: tuple[str, ...] | None = None

    def wants(self, key: str) -> bool:
        if self.keys is not None:
            return key in self.keys
        if self.prefixes is not None:
            return key.startswith(self.prefixes)
        return True


@dataclass(slots=True)
class ReadStats:
    """What reading cost: base files opened, HFile blocks read (below their load-on-open
    sections), log files read, log blocks of valid instants used."""

    base_files: int = 0
    hfile_blocks: int = 0
    log_files: int = 0
    log_blocks: int = 0


class MetadataPartition:
    """The latest file slices of one MDT partition, read under one MDT timeline and read instant."""

    def __init__(self, storage: Storage, name: str, slices: Sequence[FileSlice], timeline: Timeline,
                 read_instant: str, is_valid: Callable[[str], bool], stats: ReadStats | None = None) -> None:
        """`storage`: the metadata table's (its root the MDT's base path)."""
        self.storage, self.mdt_path, self.name = storage, storage.root, name
        self.slices = sorted(slices, key=lambda s: s.file_id)
        self._timeline, self._read_instant, self._is_valid = timeline, read_instant, is_valid
        self.stats = stats or ReadStats()
        self._logs: dict[str, list[tuple[VisibleBlock, list[MetadataRecord] | HFileReader | None]]] = {}
        self._bases: dict[str, HFileReader] = {}
        self._decoders: dict[tuple[str, str | bytes], ValueDecoder] = {}

    def read(self, selection: Selection = Selection()) -> dict[str, MetadataRecord]:
        """The merged record of every selected key that has one (deletes included: callers drop
        tombstones)."""
        found: dict[str, MetadataRecord] = {}
        for file_slice in self._slices_for(selection):
            found.update(self._read_slice(file_slice, selection))
        return found

    def _slices_for(self, selection: Selection) -> list[FileSlice]:
        """The slices that can hold the selected keys: for keys, the groups Hudi hashes them to
        (when the groups are numbered 0..n-1, as Hudi numbers them)."""
        if selection.keys is None or len(self.slices) <= 1:
            return self.slices
        numbered = {_group_number(s.file_id): s for s in self.slices}
        if set(numbered) != set(range(len(self.slices))):
            return self.slices
        wanted = {file_group_index(key, len(self.slices)) for key in selection.keys}
        return [numbered[i] for i in sorted(wanted)]

    def _read_slice(self, file_slice: FileSlice, selection: Selection) -> dict[str, MetadataRecord]:
        logs: dict[str, list[MetadataRecord]] = {}
        for record in self._log_records(file_slice, selection):
            logs.setdefault(record.key, []).append(record)
        base: dict[str, MetadataRecord] = {}
        if file_slice.base_file is not None:
            base = self._base_records(file_slice, selection)
        merged: dict[str, MetadataRecord] = {}
        for key in base.keys() | logs.keys():
            combined = merge_versions(base.get(key), logs.get(key, ()))
            if combined is not None:
                merged[key] = combined
        return merged

    def _base_records(self, file_slice: FileSlice, selection: Selection) -> dict[str, MetadataRecord]:
        path = file_slice.base_path(self.mdt_path)
        assert path is not None and file_slice.base_file is not None
        reader = self._bases.get(path)
        if reader is None:
            reader = self._bases[path] = HFileReader.open(self.storage, path, size=file_slice.base_file.size)
            self.stats.base_files += 1
        decoder = self._decoder(reader, path, None)
        instant = file_slice.base_file.instant_time
        records = {}
        before = reader.blocks_read
        for key, value in _select(reader, selection):
            record = decoder.decode(key, value, instant)
            records[record.key] = record
        self.stats.hfile_blocks += reader.blocks_read - before
        return records

    def _log_records(self, file_slice: FileSlice, selection: Selection) -> Iterator[MetadataRecord]:
        for visible, content in self._visible_logs(file_slice):
            block, contents = visible.block, visible.contents
            instant = block.instant_time or ""
            if block.block_type is BlockType.DELETE:
                deletes = decode_delete_block(contents, block).record_keys.to_pylist()
                for key in deletes:
                    if key is not None and selection.wants(key):
                        yield MetadataRecord(key, 0, None, instant)
            elif isinstance(content, HFileReader):
                decoder = self._decoder(content, contents.path, block.header.get(HeaderKey.SCHEMA))
                before = content.blocks_read
                for key, value in _select(content, selection):
                    yield decoder.decode(key, value, instant, block.content_offset)
                self.stats.hfile_blocks += content.blocks_read - before
            elif content is not None:
                yield from (r for r in content if selection.wants(r.key))

    def _visible_logs(self, file_slice: FileSlice) -> list[tuple[VisibleBlock, list[MetadataRecord] | HFileReader | None]]:
        """The slice's valid visible blocks, each with its HFile reader or Avro records (read once)."""
        cached = self._logs.get(file_slice.file_id)
        if cached is not None:
            return cached
        paths = file_slice.log_paths(self.mdt_path)
        self.stats.log_files += len(paths)
        blocks = visible_blocks(paths, self._timeline, self._read_instant, hfile_blocks=True)
        kept: list[tuple[VisibleBlock, list[MetadataRecord] | HFileReader | None]] = []
        for visible in blocks:
            block = visible.block
            if not self._is_valid(block.instant_time or ""):
                continue
            self.stats.log_blocks += 1
            content: list[MetadataRecord] | HFileReader | None = None
            if block.block_type is BlockType.HFILE:
                data = visible.contents.data[block.content_offset:block.content_offset + block.content_length]
                content = HFileReader.from_bytes(data, visible.contents.path, offset=block.content_offset)
            elif block.block_type is BlockType.AVRO_DATA:
                content = list(_avro_records(visible))
            elif block.block_type is not BlockType.DELETE:
                raise UnsupportedFeatureError(
                    f"{visible.contents.path}: a {block.block_type.name} block at byte offset {block.offset} in the "
                    "metadata table, whose writers append HFile, Avro and delete blocks", feature="mdt log block",
                    path=visible.contents.path)
            kept.append((visible, content))
        self._logs[file_slice.file_id] = kept
        return kept


    def _decoder(self, reader: HFileReader, path: str, header_schema: str | None) -> ValueDecoder:
        """The decoder of an HFile's values: the schema of the log block's header, or the
        HFile's own (`schema` in its file info, as Hudi's HFile writer puts it)."""
        schema = header_schema or reader.file_info.get(_SCHEMA_INFO)
        if not schema:
            raise CorruptFileError(f"{path}: an HFile of the metadata table without the schema of its records",
                                   path=path)
        found = self._decoders.get((path, schema))
        if found is None:
            found = self._decoders[(path, schema)] = ValueDecoder(schema, path)
        return found


def _select(reader: HFileReader, selection: Selection) -> Iterable[tuple[bytes, bytes]]:
    if selection.keys is not None:
        return reader.get_many(k.encode("utf-8") for k in selection.keys).items()
    if selection.prefixes is not None:
        return (pair for prefix in sorted(set(selection.prefixes)) for pair in reader.prefixed(prefix.encode("utf-8")))
    return reader.scan()


def _avro_records(visible: VisibleBlock) -> Iterator[MetadataRecord]:
    """The records of an Avro data block: version, count, then length-prefixed records."""
    block, contents = visible.block, visible.contents
    data, pos, end = contents.data, block.content_offset, block.content_offset + block.content_length
    schema = block.header.get(HeaderKey.SCHEMA)
    if end - pos < 8 or not schema:
        raise CorruptFileError(f"{contents.path}: Avro block at byte offset {block.offset} has no records or schema",
                               path=contents.path, offset=block.offset)
    count = int(_I32.unpack_from(data, pos + 4)[0])
    if count < 0 or count > (end - pos - 8) // 4:
        raise CorruptFileError(f"{contents.path}: Avro block at byte offset {block.offset} counts {count} records "
                               f"in {end - pos - 8} bytes", path=contents.path, offset=block.offset)
    decoder = ValueDecoder(schema, contents.path)
    pos += 8
    for _ in range(count):
        size = int(_I32.unpack_from(data, pos)[0]) if pos + 4 <= end else -1
        if size < 0 or pos + 4 + size > end:
            raise CorruptFileError(f"{contents.path}: Avro record at byte offset {pos} runs past its block",
                                   path=contents.path, offset=pos)
        yield decoder.decode(None, data[pos + 4:pos + 4 + size], block.instant_time or "", pos)
        pos += 4 + size


def _group_number(file_id: str) -> int:
    """The index Hudi numbers an MDT file group with: `<prefix>-NNNN` or `<prefix>-NNNN-0`."""
    stem = file_id.removesuffix("-0")
    digits = stem.rsplit("-", 1)[-1]
    return int(digits) if digits.isdigit() else -1
