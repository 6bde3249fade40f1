"""Arrow IPC streaming of a scan: one batch per chunk, limits, and errors after the stream started."""

from __future__ import annotations

import asyncio
import json
import threading

import pyarrow as pa
import pytest

from catalog.stream import ERROR_METADATA_KEY, StreamAborted, StreamLimits, ipc_stream, prefetched
from shim.errors import CorruptFileError

SCHEMA = pa.schema([("n", pa.int64())])
ROOMY = StreamLimits(max_rows=10**9, max_bytes=10**12, max_seconds=3600, batch_rows=1000)


class Source:
    """A reader over batches of `sizes` rows that records whether it was closed."""

    def __init__(self, sizes, fail_after=None):
        self.closed = False
        self.sizes = sizes
        self.fail_after = fail_after

    def batches(self):
        start = 0
        for index, size in enumerate(self.sizes):
            if self.fail_after is not None and index == self.fail_after:
                raise CorruptFileError("block at 7 cannot be decoded", path="p/f.log", offset=7)
            yield pa.record_batch([pa.array(range(start, start + size), pa.int64())], schema=SCHEMA)
            start += size

    def reader(self):
        source = self

        def gen():
            try:
                yield from source.batches()
            finally:
                source.closed = True

        return pa.RecordBatchReader.from_batches(SCHEMA, gen())


def read_chunks(chunks):
    """Batches and their custom metadata, read back from the concatenated chunks."""
    reader = pa.ipc.open_stream(b"".join(chunks))
    out = []
    while True:
        try:
            out.append(reader.read_next_batch_with_custom_metadata())
        except StopIteration:
            return out


def test_ipc_stream_one_chunk_per_batch_and_big_batches_split():
    source = Source([3, 2500])
    chunks = list(ipc_stream(source.reader(), ROOMY))
    # schema, 3 rows, 1000 + 1000 + 500 rows, end-of-stream marker
    assert len(chunks) == 6
    batches = read_chunks(chunks)
    assert [b.num_rows for b, _ in batches] == [3, 1000, 1000, 500]
    assert pa.Table.from_batches([b for b, _ in batches])["n"].to_pylist() == list(range(2503))
    assert chunks[-1] == b"\xff\xff\xff\xff\x00\x00\x00\x00"
    assert source.closed


def test_ipc_stream_limit_stops_reading_early():
    source = Source([4, 4, 4])
    chunks = list(ipc_stream(source.reader(), ROOMY, limit=6))
    assert [b.num_rows for b, _ in read_chunks(chunks)] == [4, 2]
    assert source.closed


def test_ipc_stream_limit_zero_sends_schema_only():
    chunks = list(ipc_stream(Source([4]).reader(), ROOMY, limit=0))
    assert read_chunks(chunks) == []
    assert pa.ipc.open_stream(b"".join(chunks)).schema == SCHEMA


def test_ipc_stream_first_batch_is_sent_first():
    reader = Source([2, 3]).reader()
    first = reader.read_next_batch()
    chunks = list(ipc_stream(reader, ROOMY, first=first))
    assert [b.num_rows for b, _ in read_chunks(chunks)] == [2, 3]


def error_of(chunks):
    batch, metadata = read_chunks(chunks)[-1]
    assert batch.num_rows == 0
    return json.loads(metadata[ERROR_METADATA_KEY])


def test_ipc_stream_row_limit_sends_error_batch_then_aborts():
    source = Source([5, 5])
    limits = StreamLimits(max_rows=7, max_bytes=10**9, max_seconds=60, batch_rows=1000)
    chunks = []
    with pytest.raises(StreamAborted):
        chunks.extend(ipc_stream(source.reader(), limits))  # keeps the chunks sent before the error
    assert [b.num_rows for b, _ in read_chunks(chunks)] == [5, 0]
    assert error_of(chunks) == {"type": "ScanLimitError",
                                "message": "the scan returns more than the server's limit of 7 rows; "
                                           "add a filter or a limit"}
    assert chunks[-1] != b"\xff\xff\xff\xff\x00\x00\x00\x00"  # no end-of-stream marker
    assert source.closed


def test_ipc_stream_byte_limit_aborts_before_sending_the_batch():
    limits = StreamLimits(max_rows=10**9, max_bytes=600, max_seconds=60, batch_rows=1000)
    chunks = []
    with pytest.raises(StreamAborted):
        chunks.extend(ipc_stream(Source([10, 500]).reader(), limits))
    assert [b.num_rows for b, _ in read_chunks(chunks)] == [10, 0]
    assert "limit of 600 bytes" in error_of(chunks)["message"]


def test_ipc_stream_time_limit_checked_between_batches():
    limits = StreamLimits(max_rows=10**9, max_bytes=10**9, max_seconds=1, batch_rows=1000)
    chunks = []
    with pytest.raises(StreamAborted):
        chunks.extend(ipc_stream(Source([1, 1]).reader(), limits, started=-100.0))
    assert [b.num_rows for b, _ in read_chunks(chunks)] == [1, 0]
    assert "longer than the server's limit of 1 seconds" in error_of(chunks)["message"]


def test_ipc_stream_scan_error_midway_is_reported_with_its_fields():
    source = Source([2, 2], fail_after=1)
    chunks = []
    with pytest.raises(StreamAborted) as info:
        chunks.extend(ipc_stream(source.reader(), ROOMY))
    assert isinstance(info.value.error, CorruptFileError)
    assert error_of(chunks) == {"type": "CorruptFileError", "message": "block at 7 cannot be decoded", "offset": 7}
    assert source.closed


def test_ipc_stream_dictionary_columns_use_the_writer_and_errors_still_arrive():
    schema = pa.schema([("city", pa.dictionary(pa.int32(), pa.string()))])

    def gen():
        yield pa.record_batch([pa.array(["sf", "ny", "sf"]).dictionary_encode()], schema=schema)
        raise CorruptFileError("bad block", path="p/f.log")

    chunks = []
    with pytest.raises(StreamAborted):
        chunks.extend(ipc_stream(pa.RecordBatchReader.from_batches(schema, gen()), ROOMY))
    batches = read_chunks(chunks)
    assert batches[0][0].column(0).to_pylist() == ["sf", "ny", "sf"]
    assert error_of(chunks)["type"] == "CorruptFileError"


def test_prefetched_yields_in_order_and_raises_errors_in_place():
    def gen():
        yield 1
        yield 2
        raise ValueError("boom")

    got = []

    async def consume() -> None:
        async for item in prefetched(gen(), depth=1):
            got.append(item)

    with pytest.raises(ValueError, match="boom"):
        asyncio.run(consume())
    assert got == [1, 2]


def test_prefetched_stopped_early_closes_the_source():
    closed = threading.Event()

    def gen():
        try:
            yield from range(1000)
        finally:
            closed.set()

    async def first_then_stop() -> int:
        stream = prefetched(gen(), depth=2)
        first = await anext(stream)
        await stream.aclose()
        return first

    assert asyncio.run(first_then_stop()) == 0
    assert closed.wait(5)


def test_ipc_stream_splits_batches_to_about_batch_bytes():
    limits = StreamLimits(max_rows=10**9, max_bytes=10**12, max_seconds=60, batch_rows=10**6, batch_bytes=8000)
    chunks = list(ipc_stream(Source([10_000]).reader(), limits))  # 80,000 bytes of int64
    sizes = [b.num_rows for b, _ in read_chunks(chunks)]
    assert sizes == [1000] * 10
