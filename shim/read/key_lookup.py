"""Point lookups by record key: base files whose bloom filter rules out every key asked for are
not read.

Hudi writes a bloom filter of its record keys into every base file's footer. When a filter pins
the record key to a few values (`_hoodie_record_key = 'k'`, or `id IN ('a', 'b')` on the single
key field of a simple or non-partitioned key generator, text or integer typed, where the key is
the value's text), a file whose filter holds none of them has no matching row: it is not read,
and a merge-on-read slice built on it yields only its log records. Files without a filter are read.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

import pyarrow as pa

from shim.bloom import BLOOM_FILTER_KEY, DYNAMIC_V0, TYPE_CODE_KEY, DynamicBloomFilter
from shim.filters import Expr, conjuncts
from shim.filters.expr import CompareOp, Comparison, InList
from shim.layout.table_schema import META_COLUMNS
from shim.properties import TableConfig
from shim.read.base_files import parquet_footer
from shim.read.cache import ByteBoundedCache
from shim.storage import Storage

MAX_KEYS = 256
"""More keys than this and a lookup is not worth hashing them for every file."""
RECORD_KEY = META_COLUMNS[2]
_VALUE_IS_KEY = ("SIMPLE", "NON_PARTITION")
_NOTHING = "nothing"
_FILTERS: ByteBoundedCache[DynamicBloomFilter | str] = ByteBoundedCache(64 * 2**20)


def pinned_keys(expr: Expr | None, config: TableConfig, schema: pa.Schema) -> frozenset[str] | None:
    """The record keys every matching row has one of, when the filter says (None: any key)."""
    if expr is None:
        return None
    key_fields = config.record_key_fields
    key_column = key_fields[0] if len(key_fields) == 1 and config.key_generator in _VALUE_IS_KEY else None
    pinned: frozenset[str] | None = None
    for term in conjuncts(expr):
        keys = _keys_of(term, key_column, schema)
        if keys is not None:
            pinned = keys if pinned is None else pinned & keys
    return pinned if pinned is not None and len(pinned) <= MAX_KEYS else None


def _keys_of(term: Expr, key_column: str | None, schema: pa.Schema) -> frozenset[str] | None:
    if isinstance(term, Comparison) and term.op is CompareOp.EQ:
        column, values = term.column, [term.literal.value]
    elif isinstance(term, InList) and not term.negated:
        column, values = term.column, [v.value for v in term.values]
    else:
        return None
    if len(column.path) != 1 or column.path[0] not in (RECORD_KEY, key_column):
        return None
    field = schema.field(column.path[0]) if column.path[0] in schema.names else None
    if field is None or not _key_is_text_of(field.type):
        return None
    if not all((isinstance(v, str) and v) or (isinstance(v, int) and not isinstance(v, bool)) for v in values):
        return None  # other literals, and empty text (key generators write no empty keys) pin nothing
    if pa.types.is_integer(field.type) and not all(isinstance(v, int) for v in values):
        return None
    return frozenset(str(v) for v in values)


def _key_is_text_of(data_type: pa.DataType) -> bool:
    return pa.types.is_string(data_type) or pa.types.is_large_string(data_type) or pa.types.is_integer(data_type)


def files_with_any(storage: Storage, paths: Iterable[str], keys: frozenset[str]) -> list[str]:
    """The files among `paths` that may hold one of `keys`."""
    wanted = sorted(keys)
    return [path for path in paths if _may_hold(storage, path, wanted)]


def _may_hold(storage: Storage, path: str, keys: list[str]) -> bool:
    try:
        info = storage.stat(path)
    except OSError:
        return True  # reading it reports the problem, naming the file
    cache_key = (path, info.size, info.mtime_ns)
    bloom = _FILTERS.get(cache_key)
    if bloom is None:
        bloom = _read_filter(storage, path)
        _FILTERS.put(cache_key, bloom, bloom.nbytes + 256 if isinstance(bloom, DynamicBloomFilter) else 256)
    return not isinstance(bloom, DynamicBloomFilter) or bloom.might_contain_any(keys)


def _read_filter(storage: Storage, path: str) -> DynamicBloomFilter | str:
    footer = parquet_footer(storage, path).metadata or {}
    text = footer.get(BLOOM_FILTER_KEY)
    # Without a type code the filter is the older SIMPLE kind, not read here: the file is read.
    if text is None or footer.get(TYPE_CODE_KEY) != DYNAMIC_V0.encode():
        return _NOTHING
    try:
        return DynamicBloomFilter.parse(text)
    except (ValueError, struct.error):
        return _NOTHING
