"""Reading HFiles (version 3): a full scan, and lookups by key or key prefix through the block index.

Opening reads the trailer and the load-on-open section (root data index, meta index, file info):
a file up to `WHOLE_FILE_BYTES` in one read, a larger one in two ranged reads (the tail, then the
section). Lookups descend the data index (one index block per level below the root, read when
first needed) to the one data block that can hold the key, so a point lookup reads one data block;
a scan reads the data section in one ranged read. Keys compare as unsigned bytes (Hudi's order);
lookups and results use the key content (the row bytes of the HBase KeyValue key: UTF-8 strings
in Hudi's files). HBase writes a shortened "fake" first key into the index for a block (between the
previous block's last key and the block's first), which the descent allows for.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from shim.errors import CorruptFileError, UnsupportedFeatureError, file_gone, is_missing_file
from shim.hfile.format import (
    HEADER_SIZE,
    READABLE_CODECS,
    TRAILER_SIZE,
    BlockHeader,
    BlockType,
    Codec,
    Corrupt,
    block_data,
    i16,
    i32,
    i64,
    length,
    need,
    parse_header,
    parse_trailer,
    pb_fields,
    pb_varint,
    vlong,
)
from shim.storage import Storage

WHOLE_FILE_BYTES = 1 << 20
"""Files up to this size are read whole when opened (one request); larger ones by ranges."""
_PBUF = b"PBUF"
_LAST_KEY = b"hfile.LASTKEY"
_KEY_VALUE_VERSION = b"KEY_VALUE_VERSION"
_MAX_TAGS_LEN = b"hfile.MAX_TAGS_LEN"


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """A block index entry: the first key (content) of the block it points to, and where it is."""

    first_key: bytes
    offset: int
    size: int


class _Source:
    """The file's bytes: all of them in memory, or read by ranges from storage."""

    def __init__(self, path: str, size: int, data: bytes | None, storage: Storage | None = None) -> None:
        self.path, self.size, self.data, self.storage = path, size, data, storage
        self.reads = 0

    def read(self, offset: int, count: int) -> bytes:
        if offset < 0 or count < 0 or offset + count > self.size:
            raise Corrupt(offset, f"a range of {count} bytes at {offset} lies outside the file's {self.size} bytes")
        if self.data is not None or self.storage is None:
            return (self.data or b"")[offset:offset + count]
        self.reads += 1
        try:
            chunk = self.storage.read_range(self.path, offset, count)
        except OSError as exc:
            if is_missing_file(exc):
                raise file_gone(self.path) from exc
            raise CorruptFileError(f"cannot read HFile {self.path}: {exc}", path=self.path, offset=offset) from exc
        if len(chunk) != count:
            raise Corrupt(offset, f"the file ended {len(chunk)} bytes into a read of {count} (it is shorter than "
                                  f"{self.size} bytes now)")
        return chunk


class HFileReader:
    """One HFile, opened: its trailer, file info and block index, with data blocks read on demand.

    Attributes:
        path: the file (or the log file holding it, for an HFile data block).
        trailer: the trailer's fields.
        file_info: the file info map (keys and values as bytes).
        blocks_read: data and index blocks read so far below the load-on-open section (for tests
            and benchmarks: a lookup reads one data block per level-1 index).
    """

    def __init__(self, source: _Source, base: int = 0) -> None:
        self._source = source
        self.path = source.path
        self._base = base  # where the HFile starts in the file named in errors (a log block's content)
        self.blocks_read = 0
        try:
            self._open()
        except Corrupt as exc:
            raise self._corrupt(exc) from None

    @classmethod
    def open(cls, storage: Storage, path: str, *, size: int | None = None,
             whole_file_bytes: int = WHOLE_FILE_BYTES) -> HFileReader:
        """Open the HFile at `path` on `storage`; `size`: its size, when a listing gave it (spares
        a request on an object store).

        Raises:
            CorruptFileError: the file does not follow the HFile version 3 layout (naming the offset).
            UnsupportedFeatureError: a compression codec other than gzip or none.
            FileGoneError: the file does not exist.
        """
        if size is None or size <= 0:
            size = storage.known_size(path)
        if size is None or size <= 0:
            try:
                size = storage.file_size(path)
            except FileNotFoundError:
                raise file_gone(path) from None
        data = storage.read_bytes(path) if size <= whole_file_bytes else None
        if data is not None and len(data) != size:
            size = len(data)
        return cls(_Source(path, size, data, storage))

    @classmethod
    def from_bytes(cls, data: bytes, path: str, *, offset: int = 0) -> HFileReader:
        """An HFile held in memory (the content of a log file's HFile data block at `offset`)."""
        return cls(_Source(path, len(data), data), base=offset)

    # -- opening ----------------------------------------------------------------------------------

    def _open(self) -> None:
        size = self._source.size
        if size < TRAILER_SIZE:
            raise Corrupt(0, f"{size} bytes, shorter than the {TRAILER_SIZE}-byte HFile trailer")
        self.trailer = trailer = parse_trailer(self._source.read(size - TRAILER_SIZE, TRAILER_SIZE), size)
        if trailer.codec not in READABLE_CODECS:
            name = Codec(trailer.codec).name if trailer.codec in Codec._value2member_map_ else str(trailer.codec)
            raise UnsupportedFeatureError(
                f"{self.path}: HFile compressed with {name}; Hudi writes gzip or uncompressed HFiles, and "
                "hudi-shim reads those", feature="hfile codec", path=self.path)
        start, end = trailer.load_on_open_offset, size - TRAILER_SIZE
        if not 0 <= start < end:
            raise Corrupt(size - TRAILER_SIZE, f"load-on-open offset {start} is outside the file's "
                                               f"{end} bytes before the trailer")
        if trailer.data_index_levels < 1:
            raise Corrupt(size - TRAILER_SIZE, f"{trailer.data_index_levels} data index levels")
        section = self._source.read(start, end - start)
        pos = 0
        at = start + pos
        root, pos = self._block(section, pos, start, BlockType.ROOT_INDEX)
        # (a multi-level index's root ends with 16 bytes on its middle key, which reads never need)
        mid_key = 16 if trailer.data_index_levels > 1 else 0
        with self._inside(at):
            self._root = _root_entries(root, trailer.data_index_count, at + HEADER_SIZE, self._data_key, mid_key)
        at = start + pos
        meta, pos = self._block(section, pos, start, BlockType.ROOT_INDEX)
        with self._inside(at):
            self._meta = {e.first_key: e for e in _root_entries(meta, trailer.meta_index_count, at + HEADER_SIZE,
                                                                 bytes, 0)}
        at = start + pos
        info, pos = self._block(section, pos, start, BlockType.FILE_INFO)
        with self._inside(at):
            self.file_info = _file_info(info, at + HEADER_SIZE)
        version = self.file_info.get(_KEY_VALUE_VERSION)
        self._mvcc = version is None or int.from_bytes(version, "big", signed=True) == 1
        self._tags = _MAX_TAGS_LEN in self.file_info
        self._children: dict[int, tuple[list[IndexEntry], list[bytes]]] = {}
        self._root_keys = [e.first_key for e in self._root]
        if (trailer.entry_count == 0) != (not self._root):
            raise Corrupt(size - TRAILER_SIZE, f"the trailer counts {trailer.entry_count} entries in "
                                               f"{len(self._root)} indexed data blocks")
        self._cached: tuple[int, list[tuple[bytes, bytes]]] | None = None

    def _block(self, buf: bytes, pos: int, base: int, expected: BlockType | tuple[BlockType, ...],
               end: int | None = None) -> tuple[bytes, int]:
        """The data of the block at `buf[pos]` (file offset `base + pos`) and the position after it."""
        header: BlockHeader = parse_header(buf, pos, len(buf) if end is None else end, base)
        wanted = expected if isinstance(expected, tuple) else (expected,)
        if header.block_type not in wanted:
            raise Corrupt(base + pos, f"a {header.block_type.name} block where a "
                                      f"{' or '.join(w.name for w in wanted)} block belongs")
        return block_data(buf, pos, header, self.trailer.codec, base), pos + header.on_disk_size

    def _read_block(self, entry: IndexEntry, expected: BlockType | tuple[BlockType, ...],
                    source: _Source | None = None) -> bytes:
        if entry.size < HEADER_SIZE or entry.offset < 0 or entry.offset + entry.size > self.trailer.load_on_open_offset:
            raise Corrupt(entry.offset, f"an index entry names {entry.size} bytes at offset {entry.offset}, not a "
                                        f"block before the load-on-open section at {self.trailer.load_on_open_offset}")
        self.blocks_read += 1
        buf = (source or self._source).read(entry.offset, entry.size)
        data, _ = self._block(buf, 0, entry.offset, expected)
        return data

    @contextmanager
    def _inside(self, block_offset: int) -> Iterator[None]:
        """Errors in a block's data name their offset; in compressed data, the block's offset
        and how far into its uncompressed bytes."""
        try:
            yield
        except Corrupt as exc:
            if self.trailer.codec == Codec.NONE:
                raise
            into = exc.offset - block_offset - HEADER_SIZE
            raise Corrupt(block_offset, f"{exc.reason} ({into} bytes into the uncompressed data of the block at byte "
                                        f"offset {block_offset})") from None

    def _data_key(self, key: bytes) -> bytes:
        """The content of an HBase KeyValue key: its row (2-byte length, then the bytes)."""
        row = i16(key, 0, len(key), 0) & 0xFFFF
        if row > len(key) - 2:
            raise Corrupt(0, f"a key's row length {row} exceeds its {len(key)} bytes")
        return key[2:2 + row]

    def _corrupt(self, exc: Corrupt) -> CorruptFileError:
        offset = self._base + exc.offset
        where = f" (HFile at byte {self._base})" if self._base else ""
        return CorruptFileError(f"{self.path}: HFile{where} is corrupt at byte offset {offset}: {exc.reason}",
                                path=self.path, offset=offset)

    # -- public reads -----------------------------------------------------------------------------

    @property
    def entry_count(self) -> int:
        """Key-value entries the trailer counts."""
        return self.trailer.entry_count

    @property
    def last_key(self) -> bytes | None:
        """The file's last key (content), from the file info."""
        raw = self.file_info.get(_LAST_KEY)
        if raw is None:
            return None
        try:
            return self._data_key(raw)
        except Corrupt as exc:
            raise self._corrupt(exc) from None

    def meta_block(self, name: str) -> bytes | None:
        """The content of the meta block named `name` (Hudi keeps a bloom filter under
        `bloomFilter`); None when the file has none."""
        entry = self._meta.get(name.encode("utf-8"))
        if entry is None:
            return None
        try:
            return self._read_block(entry, BlockType.META)
        except Corrupt as exc:
            raise self._corrupt(exc) from None

    def scan(self) -> Iterator[tuple[bytes, bytes]]:
        """Every (key, value) in key order. The data section is read in one ranged read."""
        if self.trailer.entry_count == 0 or not self._root:
            return
        try:
            entries = list(self._data_entries(None))
            source = self._source
            if source.data is None:  # one request for every data block, not one per block
                first, end = entries[0].offset, self.trailer.load_on_open_offset
                source = _OffsetSource(source, first, source.read(first, end - first))
            count = 0
            for entry in entries:
                pairs = self._entries_of(entry, source)
                count += len(pairs)
                yield from pairs
            if count != self.trailer.entry_count:
                raise Corrupt(self._source.size - TRAILER_SIZE, f"the data blocks hold {count} entries, the "
                                                                f"trailer counts {self.trailer.entry_count}")
        except Corrupt as exc:
            raise self._corrupt(exc) from None

    def get(self, key: bytes) -> bytes | None:
        """The value stored under `key`, reading the one data block that can hold it."""
        return self.get_many([key]).get(key)

    def get_many(self, keys: Iterable[bytes]) -> dict[bytes, bytes]:
        """The values of those of `keys` the file holds; each data block is read once."""
        found: dict[bytes, bytes] = {}
        if self.trailer.entry_count == 0 or not self._root:
            return found
        try:
            for key in sorted(set(keys)):
                entry = next(self._data_entries(key), None)
                if entry is None:
                    continue
                for stored, value in self._entries_of(entry):
                    if stored >= key:
                        if stored == key:
                            found[key] = value
                        break
        except Corrupt as exc:
            raise self._corrupt(exc) from None
        return found

    def prefixed(self, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
        """Every (key, value) whose key starts with `prefix`, in key order, reading the data blocks
        from the one that can hold the first such key until a key past them."""
        if self.trailer.entry_count == 0 or not self._root:
            return
        try:
            for entry in self._data_entries(prefix):
                for stored, value in self._entries_of(entry):
                    if stored.startswith(prefix):
                        yield stored, value
                    elif stored > prefix:
                        return
        except Corrupt as exc:
            raise self._corrupt(exc) from None

    # -- index and data blocks --------------------------------------------------------------------

    def _data_entries(self, key: bytes | None) -> Iterator[IndexEntry]:
        """Data block entries in order, from the one that can hold `key` (None: the first)."""
        yield from self._walk(self._root, self._root_keys, self.trailer.data_index_levels, key)

    def _walk(self, entries: list[IndexEntry], keys: list[bytes], level: int, key: bytes | None) -> Iterator[IndexEntry]:
        start = 0 if key is None else max(bisect_right(keys, key) - 1, 0)
        for entry in entries[start:]:
            if level == 1:
                yield entry
            else:
                children, child_keys = self._index_block(entry, level - 1)
                yield from self._walk(children, child_keys, level - 1, key)
            key = None  # the next siblings are read from their first entry

    def _index_block(self, entry: IndexEntry, level: int) -> tuple[list[IndexEntry], list[bytes]]:
        cached = self._children.get(entry.offset)
        if cached is None:
            kind = BlockType.LEAF_INDEX if level == 1 else BlockType.INTERMEDIATE_INDEX
            data = self._read_block(entry, kind)
            with self._inside(entry.offset):
                children = _non_root_entries(data, entry.offset + HEADER_SIZE, self._data_key)
            cached = self._children[entry.offset] = (children, [c.first_key for c in children])
        return cached

    def _entries_of(self, entry: IndexEntry, source: _Source | None = None) -> list[tuple[bytes, bytes]]:
        """The (key, value) pairs of a data block (the last one read is kept)."""
        if self._cached is not None and self._cached[0] == entry.offset:
            return self._cached[1]
        data = self._read_block(entry, BlockType.DATA, source)
        with self._inside(entry.offset):
            pairs = self._key_values(data, entry.offset + HEADER_SIZE)
        self._cached = (entry.offset, pairs)
        return pairs

    def _key_values(self, data: bytes, base: int) -> list[tuple[bytes, bytes]]:
        pairs: list[tuple[bytes, bytes]] = []
        pos, end = 0, len(data)
        while pos < end:
            key_length = length(i32(data, pos, end, base), pos + 8, end, base, "key length")
            value_length = length(i32(data, pos + 4, end, base), pos + 8 + key_length, end, base, "value length")
            key_start = pos + 8
            row = i16(data, key_start, key_start + key_length, base) & 0xFFFF
            length(row, key_start + 2, key_start + key_length, base, "key row length")
            key = data[key_start + 2:key_start + 2 + row]
            pos = key_start + key_length + value_length
            pairs.append((key, data[key_start + key_length:pos]))
            if self._tags:
                tags = i16(data, pos, end, base) & 0xFFFF
                pos += 2 + length(tags, pos + 2, end, base, "tags length")
            if self._mvcc:
                _, pos = vlong(data, pos, end, base)
        return pairs


class _OffsetSource(_Source):
    """A range of a file held in memory, served at its file offsets."""

    def __init__(self, source: _Source, start: int, chunk: bytes) -> None:
        super().__init__(source.path, source.size, None)
        self._start, self._chunk = start, chunk

    def read(self, offset: int, count: int) -> bytes:
        local = offset - self._start
        if local < 0 or local + count > len(self._chunk):
            raise Corrupt(offset, f"a range of {count} bytes at {offset} lies outside the data section")
        return self._chunk[local:local + count]


def _root_entries(data: bytes, count: int, base: int, key_of: Callable[[bytes], bytes],
                  trailing: int) -> list[IndexEntry]:
    """Root index entries: offset (i64), size (i32), key length (vint), key; `count` of them,
    then `trailing` bytes, and nothing else."""
    entries: list[IndexEntry] = []
    pos, end = 0, len(data)
    if count < 0 or count * 13 > end:
        raise Corrupt(base, f"{count} root index entries cannot fit in {end} bytes")
    for _ in range(count):
        offset, size = i64(data, pos, end, base), i32(data, pos + 8, end, base)
        key_length, pos = vlong(data, pos + 12, end, base)
        length(key_length, pos, end, base, "index key length")
        key = data[pos:pos + key_length]
        pos += key_length
        entries.append(IndexEntry(key_of(key), offset, size))
    if end - pos not in (0, trailing):
        raise Corrupt(base + pos, f"{end - pos} bytes follow the {count} entries of a root index block")
    return entries


def _non_root_entries(data: bytes, base: int, key_of: Callable[[bytes], bytes]) -> list[IndexEntry]:
    """Intermediate and leaf index entries: a count, the entries' relative offsets (count + 1 of
    them), then per entry offset (i64), size (i32) and the key, its length from the offsets."""
    end = len(data)
    count = i32(data, 0, end, base)
    if count < 0 or (count + 1) * 4 + 4 > end:
        raise Corrupt(base, f"{count} index entries cannot fit in a {end}-byte index block")
    first = 4 + (count + 1) * 4
    relative = [i32(data, 4 + 4 * i, end, base) for i in range(count + 1)]
    entries = []
    for i in range(count):
        start, stop = first + relative[i], first + relative[i + 1]
        if not first <= start and start + 12 <= stop <= end:
            raise Corrupt(base + 4 + 4 * i, f"index entry {i} spans [{start}, {stop}) of a {end}-byte block")
        need(start, 12, stop, base, "an index entry")
        key = data[start + 12:stop]
        entries.append(IndexEntry(key_of(key), i64(data, start, stop, base), i32(data, start + 8, stop, base)))
    return entries


def _file_info(data: bytes, base: int) -> dict[bytes, bytes]:
    """The file info block: `PBUF`, then a length-delimited `InfoProto` of (first, second) pairs."""
    if data[:4] != _PBUF:
        raise Corrupt(base, "the file info block does not start with PBUF")
    size, pos = pb_varint(data, 4, len(data), base)
    length(size, pos, len(data), base, "file info length")
    info: dict[bytes, bytes] = {}
    for number, pair in pb_fields(data, pos, pos + size, base):
        if number != 1 or not isinstance(pair, bytes):
            continue
        values = {n: v for n, v in pb_fields(pair, 0, len(pair), base) if isinstance(v, bytes)}
        if 1 in values:
            info[values[1]] = values.get(2, b"")
    return info
