"""Columnar decoding of many Avro-binary records into one Arrow table.

All records are decoded in lockstep, field by field: each step reads one value at the current
position of every record with numpy (see `_vector`), builds the Arrow buffers directly and
advances the positions. Python work is per field, never per record, except inside arrays and
maps where the lockstep runs over item index.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from shim.avro import _arrays as build
from shim.avro import _vector as vec
from shim.avro._plan import Kind, Node, compile_record
from shim.errors import ColumnNotFoundError, CorruptFileError

_LEAF_NUMPY: dict[Kind, Any] = {Kind.INT: np.int32, Kind.LONG: np.int64}
_MAX_EMPTY_ITEMS = 1 << 20


def decode_records(
    buf: bytes | bytearray | memoryview,
    starts: np.ndarray,
    schema: Mapping[str, Any],
    columns: Sequence[str] | None = None,
    *,
    ends: np.ndarray | None = None,
    path: str | None = None,
) -> pa.Table:
    """Decode the Avro records that begin at `starts` in `buf` into an Arrow table.

    Args:
        buf: the bytes holding the records.
        starts: offset of each record in `buf` (int64).
        schema: the writer's Avro record schema (parsed, see `parse_avro_schema`).
        columns: top-level fields to return, in schema order; None for all.
        ends: offset just past each record; when given, each record must decode to exactly its
            length (anything else is corruption).
        path: file the buffer came from, named in errors.

    Returns:
        A table whose schema is `avro_to_arrow_schema(schema)` projected to `columns`.

    Raises:
        ColumnNotFoundError: a requested column is not in the schema.
        CorruptFileError: a record does not decode (its offset is the record's start).
        UnsupportedFeatureError: the schema has a union of several non-null types.
    """
    plan = compile_record(schema)
    wanted = _projection(plan, columns)
    data = np.frombuffer(buf, dtype=np.uint8)
    starts64 = np.ascontiguousarray(starts, dtype=np.int64)
    ends64 = None if ends is None else np.ascontiguousarray(ends, dtype=np.int64)
    ctx = _Ctx(data, starts64, ends64, path or "<buffer>")
    last_needed = max((i for i, f in enumerate(plan.fields) if f.name in wanted), default=-1)
    arrays: list[pa.Array] = []
    fields: list[pa.Field] = []
    for i, field in enumerate(plan.fields):
        if field.name in wanted:
            arrays.append(ctx.read(field.node, None, None))
            fields.append(field.arrow_field)
        elif ends64 is not None or i < last_needed:
            ctx.skip(field.node, None)
        else:
            break
    ctx.check_ends()
    if not arrays:
        return build.empty_table(starts64.shape[0])
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _projection(plan: Node, columns: Sequence[str] | None) -> set[str]:
    names = [f.name for f in plan.fields]
    if columns is None:
        return set(names)
    missing = [c for c in columns if c not in names]
    if missing:
        raise ColumnNotFoundError(
            f"column {missing[0]!r} is not in the Avro schema (columns: {', '.join(names)})",
            column=missing[0],
        )
    return set(columns)


class _Ctx:
    """Decoding state: the buffer, each record's current position and its limit."""

    def __init__(self, buf: vec.U8, starts: vec.I64, ends: vec.I64 | None, path: str) -> None:
        self.buf = buf
        self.buffer = pa.py_buffer(buf)
        self.starts = starts
        self.ends = ends
        self.limit = ends if ends is not None else np.full(starts.shape[0], buf.shape[0], dtype=np.int64)
        self.pos = starts.copy()
        self.path = path
        # Records in buffer order, none overlapping: any field's positions ascend row by row.
        self.ascending = ends is not None and bool(
            (ends >= starts).all() and (starts.shape[0] < 2 or (starts[1:] >= ends[:-1]).all())
        )

    # -- positions --------------------------------------------------------------------------
    def at(self, rows: vec.I64 | None) -> vec.I64:
        return self.pos if rows is None else self.pos[rows]

    def move(self, rows: vec.I64 | None, new_pos: vec.I64) -> None:
        if rows is None:
            self.pos = new_pos
        else:
            self.pos[rows] = new_pos

    def corrupt(self, rows: vec.I64 | None, bad: int, reason: str) -> CorruptFileError:
        row = bad if rows is None else int(rows[bad])
        offset = int(self.starts[row])
        return CorruptFileError(
            f"{self.path}: Avro record {row} at byte offset {offset} is corrupt: {reason}",
            path=self.path,
            offset=offset,
        )

    def check_ends(self) -> None:
        """Every record must end at its end (when known) and inside the buffer."""
        if self.ends is None:
            over = np.flatnonzero(self.pos > self.buf.shape[0])
            if over.size:
                raise self.corrupt(None, int(over[0]), "it runs past the end of the buffer")
            return
        wrong = np.flatnonzero(self.pos != self.ends)
        if wrong.size:
            row = int(wrong[0])
            used = int(self.pos[row] - self.starts[row])
            length = int(self.ends[row] - self.starts[row])
            raise self.corrupt(None, row, f"it decodes to {used} bytes but its length is {length}")

    def varint(self, rows: vec.I64 | None) -> vec.I64:
        try:
            values, new_pos = vec.read_long(self.buf, self.at(rows))
        except vec.VarintTooLong as exc:
            raise self.corrupt(rows, exc.index, "a varint is longer than 10 bytes") from None
        self.move(rows, new_pos)
        return values

    # -- decoding ---------------------------------------------------------------------------
    def read(self, node: Node, rows: vec.I64 | None, valid: vec.Mask | None) -> pa.Array:
        """Decode `node` for `rows` (None: all); with `valid`, spread them over its True slots."""
        kind = node.kind
        if kind is Kind.NULLABLE:
            return self._read_nullable(node, rows)
        if kind is Kind.RECORD:
            return self._expand(self._read_record(node, rows), valid)
        if kind in (Kind.ARRAY, Kind.MAP):
            return self._expand(self._read_repeated(node, rows), valid)
        if kind is Kind.NULL:
            return pa.nulls(self._count(rows) if valid is None else valid.shape[0])
        return self._read_leaf(node, rows, valid)

    def _count(self, rows: vec.I64 | None) -> int:
        return self.pos.shape[0] if rows is None else rows.shape[0]

    def _read_leaf(self, node: Node, rows: vec.I64 | None, valid: vec.Mask | None) -> pa.Array:
        kind = node.kind
        if kind in (Kind.INT, Kind.LONG):
            values = self.varint(rows)
            if kind is Kind.INT and values.size and (values.min() < -(2**31) or values.max() >= 2**31):
                bad = int(np.flatnonzero((values < -(2**31)) | (values >= 2**31))[0])
                raise self.corrupt(rows, bad, "an Avro int does not fit in 32 bits")
            return build.fixed_width(node.arrow_type, values.astype(_LEAF_NUMPY[kind], copy=False), valid)
        if kind is Kind.BOOLEAN:
            pos = self.at(rows)
            values = np.take(self.buf, pos, mode="clip") != 0
            self.move(rows, pos + 1)
            return build.booleans(values, valid)
        if kind in (Kind.FLOAT, Kind.DOUBLE):
            pos = self.at(rows)
            size = 4 if kind is Kind.FLOAT else 8
            floats = vec.read_float32(self.buf, pos) if size == 4 else vec.read_float64(self.buf, pos)
            self.move(rows, pos + size)
            return build.fixed_width(node.arrow_type, floats, valid)
        if kind in (Kind.STRING, Kind.BYTES):
            return self._read_bytes(node, rows, valid)
        if kind is Kind.FIXED:
            pos = self.at(rows)
            raw = vec.read_fixed(self.buf, pos, node.size)
            self.move(rows, pos + node.size)
            return build.fixed_width(node.arrow_type, raw, valid)
        if kind is Kind.ENUM:
            symbols = node.symbols
            assert symbols is not None
            index = self.varint(rows)
            if index.size and (index.min() < 0 or index.max() >= len(symbols)):
                bad = int(np.flatnonzero((index < 0) | (index >= len(symbols)))[0])
                raise self.corrupt(rows, bad, f"enum index {int(index[bad])} is out of range")
            return symbols.take(build.spread_indices(index, valid))
        if kind in (Kind.DECIMAL_BYTES, Kind.DECIMAL_FIXED):
            return self._read_decimal(node, rows, valid)
        raise AssertionError(f"unhandled Avro kind {kind}")

    def _lengths(self, rows: vec.I64 | None) -> tuple[vec.I64, vec.I64]:
        lengths = self.varint(rows)
        pos = self.at(rows)
        end = pos + lengths
        limit = self.limit if rows is None else self.limit[rows]
        bad = (end > limit) | (lengths < 0)
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise self.corrupt(rows, first, f"a length of {int(lengths[first])} bytes runs past the record")
        self.move(rows, end)
        return pos, lengths

    def _read_bytes(self, node: Node, rows: vec.I64 | None, valid: vec.Mask | None) -> pa.Array:
        pos, lengths = self._lengths(rows)
        if valid is not None:
            # Null slots become empty ranges at the previous range's end, keeping them ascending.
            spread_end = np.zeros(valid.shape[0], dtype=np.int64)
            spread_end[valid] = pos + lengths
            spread_pos = np.maximum.accumulate(spread_end)
            spread_pos[valid] = pos
            spread_end[~valid] = spread_pos[~valid]
            pos, lengths = spread_pos, spread_end - spread_pos
        spans = vec.binary_from_ranges(self.buffer, pos, lengths, ascending=self.ascending)
        if spans is None:
            offsets = np.zeros(lengths.shape[0] + 1, dtype=np.int32)
            np.cumsum(lengths, out=offsets[1:])
            offsets_buf, data_buf = (
                pa.py_buffer(offsets),
                pa.py_buffer(vec.gather_ranges(self.buf, pos, lengths)),
            )
        else:
            _, offsets_buf, data_buf = spans.buffers()
        bitmap, nulls = build.validity(valid)
        offset = 0 if spans is None else spans.offset
        array = pa.Array.from_buffers(
            node.arrow_type, lengths.shape[0], [bitmap, offsets_buf, data_buf], nulls, offset
        )
        if node.kind is Kind.STRING and not build.is_ascii(data_buf):
            try:
                array.validate(full=True)
            except pa.ArrowInvalid:
                bad = build.first_invalid_utf8(array)
                if valid is not None:
                    bad = int(np.count_nonzero(valid[:bad]))
                raise self.corrupt(rows, bad, "a string is not valid UTF-8") from None
        return array

    def _read_decimal(self, node: Node, rows: vec.I64 | None, valid: vec.Mask | None) -> pa.Array:
        width = node.arrow_type.byte_width
        if node.kind is Kind.DECIMAL_BYTES:
            pos, lengths = self._lengths(rows)
        else:
            pos = self.at(rows)
            lengths = np.full(pos.shape[0], node.size, dtype=np.int64)
            self.move(rows, pos + node.size)
        raw, overflow = vec.big_endian_to_decimal(self.buf, pos, lengths, width)
        if overflow.any():
            raise self.corrupt(rows, int(np.flatnonzero(overflow)[0]), f"a decimal exceeds {node.arrow_type}")
        return build.fixed_width(node.arrow_type, raw, valid)

    def _union_valid(self, node: Node, rows: vec.I64 | None) -> vec.Mask:
        """Read the branch index of a nullable union: True where the value branch was written."""
        pos = self.at(rows)
        first = np.take(self.buf, pos, mode="clip")
        if node.branches == 2 and not (first & 0xFD).any():
            # One-byte zig-zag 0 or 1 (raw 0x00 or 0x02), the only indexes a two-branch union has.
            self.move(rows, pos + 1)
            return first == 2 * node.value_branch
        branch = self.varint(rows)
        if branch.size and (branch.min() < 0 or branch.max() >= node.branches):
            bad = int(np.flatnonzero((branch < 0) | (branch >= node.branches))[0])
            raise self.corrupt(rows, bad, f"union branch {int(branch[bad])} does not exist")
        return branch == node.value_branch

    def _read_nullable(self, node: Node, rows: vec.I64 | None) -> pa.Array:
        valid = self._union_valid(node, rows)
        inner = node.children[0]
        if valid.all():
            return self.read(inner, rows, None)
        subset = np.flatnonzero(valid) if rows is None else rows[valid]
        if inner.kind in (Kind.RECORD, Kind.ARRAY, Kind.MAP):
            if not subset.size:
                return pa.nulls(valid.shape[0], node.arrow_type)
            return self._expand(self.read(inner, subset, None), valid)
        return self.read(inner, subset, valid)

    def _expand(self, array: pa.Array, valid: vec.Mask | None) -> pa.Array:
        """Spread `array` over the True slots of `valid`, nulls elsewhere."""
        if valid is None:
            return array
        if not len(array):
            return pa.nulls(valid.shape[0], array.type)
        if isinstance(array, pa.StructArray) and array.type.num_fields:
            # Null structs repeat row 0 underneath, so non-nullable children hold no nulls.
            index = np.zeros(valid.shape[0], dtype=np.int64)
            index[valid] = np.arange(len(array), dtype=np.int64)
            taken = array.take(pa.array(index))
            children = [taken.field(i) for i in range(array.type.num_fields)]
            fields = [array.type.field(i) for i in range(array.type.num_fields)]
            return pa.StructArray.from_arrays(children, fields=fields, mask=pa.array(~valid))
        return array.take(build.spread_indices(np.arange(len(array), dtype=np.int64), valid))

    def _read_record(self, node: Node, rows: vec.I64 | None) -> pa.Array:
        children = [self.read(f.node, rows, None) for f in node.fields]
        count = self._count(rows)
        if not children:
            return pa.Array.from_buffers(node.arrow_type, count, [None])
        return pa.StructArray.from_arrays(children, fields=[f.arrow_field for f in node.fields])

    def _read_repeated(self, node: Node, rows: vec.I64 | None) -> pa.Array:
        """Arrays and maps: blocks of items, decoded in lockstep over the item index."""
        count = self._count(rows)
        owners = np.arange(count, dtype=np.int64) if rows is None else rows
        totals = np.zeros(count, dtype=np.int64)
        keys: list[pa.Array] = []
        values: list[pa.Array] = []
        order_owner: list[vec.I64] = []
        order_seq: list[vec.I64] = []

        def on_items(active: vec.I64) -> None:
            if node.key is not None:
                keys.append(self._read_bytes(node.key, owners[active], None))
            values.append(self.read(node.children[0], owners[active], None))
            order_owner.append(active)
            order_seq.append(totals[active].copy())

        self._walk_blocks(node, owners, totals, on_items)
        offsets = np.zeros(count + 1, dtype=np.int32)
        np.cumsum(totals, out=offsets[1:])
        order = pa.array(np.lexsort((build.concat(order_seq), build.concat(order_owner))))
        item_type = node.children[0].arrow_type
        items = pa.concat_arrays(values).take(order) if values else pa.array([], type=item_type)
        if node.kind is Kind.MAP:
            map_keys = pa.concat_arrays(keys).take(order) if keys else pa.array([], type=pa.string())
            return pa.MapArray.from_arrays(pa.array(offsets), map_keys, items, type=node.arrow_type)
        return pa.ListArray.from_arrays(pa.array(offsets), items, type=node.arrow_type)

    def _walk_blocks(self, node: Node, owners: vec.I64, totals: vec.I64, on_items: Any) -> None:
        active = np.arange(owners.shape[0], dtype=np.int64)
        while active.size:
            counts = self.varint(owners[active])
            negative = counts < 0
            if negative.any():
                self.varint(owners[active[negative]])  # block size in bytes, not needed
                counts = np.abs(counts)
            keep = counts > 0
            active, counts = active[keep], counts[keep]
            room = self.limit[owners[active]] - self.pos[owners[active]]
            # Items of no bytes (nulls, empty records) cannot be bounded by the bytes left; no
            # writer puts millions of them in one record, and counting them is a Python step each.
            too_many = counts * node.min_item_size > room if node.min_item_size else counts > _MAX_EMPTY_ITEMS
            if too_many.any():
                bad = int(np.flatnonzero(too_many)[0])
                raise self.corrupt(
                    owners[active], bad, f"a block of {int(counts[bad])} items runs past the record"
                )
            remaining, current = counts, active
            while current.size:
                on_items(current)
                totals[current] += 1
                remaining = remaining - 1
                more = remaining > 0
                current, remaining = current[more], remaining[more]

    # -- skipping ---------------------------------------------------------------------------
    def skip(self, node: Node, rows: vec.I64 | None) -> None:
        """Advance past `node` for `rows` without building anything."""
        kind = node.kind
        if kind is Kind.NULL:
            return
        if kind is Kind.NULLABLE:
            valid = self._union_valid(node, rows)
            if valid.all():
                self.skip(node.children[0], rows)
            elif valid.any():
                self.skip(node.children[0], np.flatnonzero(valid) if rows is None else rows[valid])
            return
        if kind is Kind.RECORD:
            for field in node.fields:
                self.skip(field.node, rows)
            return
        if kind in (Kind.STRING, Kind.BYTES, Kind.DECIMAL_BYTES):
            self._lengths(rows)
            return
        if kind in (Kind.INT, Kind.LONG, Kind.ENUM):
            try:
                self.move(rows, vec.skip_long(self.buf, self.at(rows)))
            except vec.VarintTooLong as exc:
                raise self.corrupt(rows, exc.index, "a varint is longer than 10 bytes") from None
            return
        if node.size >= 0:
            self.move(rows, self.at(rows) + node.size)
            return
        owners = np.arange(self._count(rows), dtype=np.int64) if rows is None else rows
        totals = np.zeros(owners.shape[0], dtype=np.int64)

        def skip_items(active: vec.I64) -> None:
            if node.kind is Kind.MAP:
                self._lengths(owners[active])
            self.skip(node.children[0], owners[active])

        self._walk_blocks(node, owners, totals, skip_items)
