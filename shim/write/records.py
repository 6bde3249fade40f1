"""Incoming rows of one write task: aligned to the write schema, keyed, bucketed, pre-combined.

Pre-combining keeps one record per key within the batch as Hudi's `deduplicateRecords` does: the
highest ordering value wins, ties go to the later row, and a null ordering value counts as the
lowest. Rows with `_hoodie_is_deleted = true` (and every row of a delete) become deletes that
compete in the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from shim.errors import WriteError
from shim.keys.keygen import key_columns, record_keys
from shim.schema import InternalSchema
from shim.write.bucket import bucket_ids
from shim.write.options import Operation, WriteOptions
from shim.write.write_schema import align_to_schema, data_arrow_schema

IS_DELETED = "_hoodie_is_deleted"


@dataclass(frozen=True, slots=True)
class GroupRows:
    """The rows of one batch that belong to one file group (partition path, bucket)."""

    partition_path: str
    bucket: int
    data: pa.Table
    keys: pa.Array
    delete_keys: pa.Array
    delete_ordering: tuple[pa.Array, ...]


@dataclass(frozen=True, slots=True)
class PreparedRows:
    """A task's rows ready to write: data rows and deletes, each with key, partition and bucket."""

    data: pa.Table
    keys: pa.Array
    partitions: pa.Array
    buckets: np.ndarray
    delete_keys: pa.Array
    delete_partitions: pa.Array
    delete_buckets: np.ndarray
    delete_ordering: tuple[pa.Array, ...]

    def groups(self) -> Iterator[GroupRows]:
        """Rows grouped by file group, in (partition, bucket) order (one sort, then zero-copy slices)."""
        data, keys, data_bounds = _sorted_groups(self.data, self.keys, self.partitions, self.buckets)
        deletes, delete_keys, delete_bounds = _sorted_groups(
            _ordering_table(self.delete_ordering, len(self.delete_keys)),
            self.delete_keys, self.delete_partitions, self.delete_buckets,
        )
        for group in sorted(set(data_bounds) | set(delete_bounds)):
            start, stop = data_bounds.get(group, (0, 0))
            d_start, d_stop = delete_bounds.get(group, (0, 0))
            ordering = deletes.slice(d_start, d_stop - d_start)
            yield GroupRows(
                partition_path=group[0],
                bucket=group[1],
                data=data.slice(start, stop - start),
                keys=keys.slice(start, stop - start),
                delete_keys=delete_keys.slice(d_start, d_stop - d_start),
                delete_ordering=tuple(ordering.column(i).combine_chunks() for i in range(len(self.delete_ordering))),
            )


def _ordering_table(ordering: tuple[pa.Array, ...], n: int) -> pa.Table:
    if not ordering:
        return pa.table({"_": pa.nulls(n)})
    return pa.table({f"o{i}": o for i, o in enumerate(ordering)})


def _sorted_groups(
    table: pa.Table, keys: pa.Array, partitions: pa.Array, buckets: np.ndarray
) -> tuple[pa.Table, pa.Array, dict[tuple[str, int], tuple[int, int]]]:
    """`table` and `keys` sorted by (partition, bucket), and each group's [start, stop) rows."""
    if len(buckets) == 0:
        return table, keys, {}
    encoded = pc.dictionary_encode(partitions)
    codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    names = encoded.dictionary.to_pylist()
    group = codes * (int(buckets.max()) + 1) + buckets
    # numpy sorts 16-bit integers by radix (one pass), wider ones by merge sort.
    order = np.argsort(group.astype(np.uint16) if group.max() < 2**16 else group, kind="stable")
    sorted_groups = group[order]
    starts = np.concatenate(([0], np.flatnonzero(np.diff(sorted_groups)) + 1))
    stops = np.concatenate((starts[1:], [len(order)]))
    indices = pa.array(order)
    bounds = {}
    for start, stop in zip(starts.tolist(), stops.tolist(), strict=True):
        first = int(order[start])
        bounds[(names[codes[first]], int(buckets[first]))] = (start, stop)
    return table.take(indices), keys.take(indices), bounds


def prepare_rows(batch: pa.Table, schema: InternalSchema, options: WriteOptions) -> PreparedRows:
    """Align `batch` to the write schema, split out deletes, compute keys and buckets, pre-combine."""
    deletes_mask = _delete_mask(batch, options)
    columns = key_columns(batch, (*options.record_key_fields, *options.partitioning.fields))
    keys_all = record_keys(columns, options.record_key_fields)
    if keys_all.null_count:
        raise WriteError(
            f"{keys_all.null_count} records have a null record key ({','.join(options.record_key_fields)})"
        )
    partitions_all = options.partitioning.paths(columns, batch.num_rows)
    ordering_all = tuple(
        batch.column(f).combine_chunks() if f in batch.column_names else pa.nulls(batch.num_rows)
        for f in options.ordering_fields
    )
    if options.combine and batch.num_rows:
        keep = _precombine(keys_all, ordering_all)
        if keep is not None:
            batch, keys_all, partitions_all = batch.take(keep), keys_all.take(keep), partitions_all.take(keep)
            ordering_all = tuple(o.take(keep) for o in ordering_all)
            deletes_mask = deletes_mask[keep.to_numpy()]
    num_buckets, fields = options.num_buckets, options.hash_fields
    if not deletes_mask.any():
        return PreparedRows(
            data=align_to_schema(batch, schema),
            keys=keys_all,
            partitions=partitions_all,
            buckets=bucket_ids(keys_all, fields, num_buckets),
            delete_keys=pa.array([], pa.string()),
            delete_partitions=pa.array([], pa.string()),
            delete_buckets=np.zeros(0, dtype=np.int32),
            delete_ordering=tuple(o.slice(0, 0) for o in ordering_all) if options.operation is not Operation.DELETE
            else (),
        )
    data_index = pa.array(np.flatnonzero(~deletes_mask))
    delete_index = pa.array(np.flatnonzero(deletes_mask))
    data = align_to_schema(batch.take(data_index), schema) if len(data_index) else _empty(schema)
    keys = keys_all.take(data_index)
    delete_keys = keys_all.take(delete_index)
    return PreparedRows(
        data=data,
        keys=keys,
        partitions=partitions_all.take(data_index),
        buckets=bucket_ids(keys, fields, num_buckets),
        delete_keys=delete_keys,
        delete_partitions=partitions_all.take(delete_index),
        delete_buckets=bucket_ids(delete_keys, fields, num_buckets),
        delete_ordering=(
            () if options.operation is Operation.DELETE else tuple(o.take(delete_index) for o in ordering_all)
        ),
    )


def _empty(schema: InternalSchema) -> pa.Table:
    return data_arrow_schema(schema).empty_table()


def _delete_mask(batch: pa.Table, options: WriteOptions) -> np.ndarray:
    if options.operation is Operation.DELETE:
        return np.ones(batch.num_rows, dtype=bool)
    if IS_DELETED not in batch.column_names:
        return np.zeros(batch.num_rows, dtype=bool)
    flags = pc.fill_null(batch.column(IS_DELETED).combine_chunks().cast(pa.bool_()), False)
    return np.asarray(flags.to_numpy(zero_copy_only=False), dtype=bool)


def _precombine(keys: pa.Array, ordering: tuple[pa.Array, ...]) -> pa.Array | None:
    """Indices of the rows that survive pre-combining, in input order; None when all do."""
    n = len(keys)
    if n < 2 or len(pc.unique(keys)) == n:
        return None  # no key twice: nothing to combine (the usual case, without sorting)
    columns = {"k": keys}
    sort_keys: list[tuple[str, str, str]] = [("k", "ascending", "at_start")]
    for i, values in enumerate(ordering):
        columns[f"o{i}"] = values
        sort_keys.append((f"o{i}", "ascending", "at_start"))
    columns["i"] = pa.array(np.arange(n, dtype=np.int64))
    sort_keys.append(("i", "ascending", "at_start"))
    table = pa.table(columns)
    try:
        order = pc.sort_indices(table, sort_keys=sort_keys)
    except (TypeError, ValueError, pa.ArrowInvalid):  # pyarrow < 25 takes null_placement once
        order = pc.sort_indices(table, sort_keys=[k[:2] for k in sort_keys], null_placement="at_start")
    sorted_keys = keys.take(order)
    if n < 2:
        return None
    last = np.ones(n, dtype=bool)
    last[:-1] = np.asarray(
        pc.not_equal(sorted_keys.slice(0, n - 1), sorted_keys.slice(1)).to_numpy(zero_copy_only=False), dtype=bool
    )
    if last.all():
        return None
    survivors = np.sort(np.asarray(order.to_numpy(), dtype=np.int64)[last])
    return pa.array(survivors)
