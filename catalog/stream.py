"""A scan as Arrow IPC stream bytes, one record batch at a time, within the server's limits.

The stream starts with the schema message and sends each batch as soon as the scan yields it,
so memory stays at about one batch. If the scan fails or exceeds a limit after the stream has
started, a last empty batch carries the error in its custom metadata (key `hudi-shim-error`,
a JSON object) and the stream ends without Arrow's end-of-stream marker, so no reader mistakes
a partial result for a complete one.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

import pyarrow as pa

from shim.errors import HudiShimError, ScanLimitError
from shim.read import NO_LIMIT, SKIPPED_BLOCKS_KEY, TimeLimit

ERROR_METADATA_KEY = b"hudi-shim-error"
SKIPPED_METADATA_KEY = SKIPPED_BLOCKS_KEY
"""Key of the last batch's metadata in a `corrupt="skip"` scan: the skipped log regions (JSON)."""
MEDIA_TYPE = "application/vnd.apache.arrow.stream"
MAX_FILTER_CHARS = 1 << 20
"""Longest filter text a scan request may carry (an IN list of some 60,000 short keys)."""

T = TypeVar("T")


class StreamAborted(Exception):
    """Raised after the error batch was sent, to cut the HTTP response short."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass(frozen=True, slots=True)
class StreamLimits:
    """Per-scan limits (rows, IPC bytes, seconds between batches) and the size of batches sent:
    at most `batch_rows` rows and about `batch_bytes` bytes (small enough for the socket to take
    each at once, so producing the next one overlaps with sending)."""

    max_rows: int
    max_bytes: int
    max_seconds: float
    batch_rows: int
    batch_bytes: int = 1 << 20


EOS = b"\xff\xff\xff\xff\x00\x00\x00\x00"


class _Encoder:
    """IPC stream messages: the schema, then per batch its message (one copy, in Arrow).

    Batches with dictionary-encoded columns, custom metadata or compressed buffers go through a
    stream writer of their own, which writes each dictionary before the batch: a stream may
    replace a dictionary between batches, so every batch carries the dictionaries it needs
    (partition columns: one value each).
    """

    def __init__(self, schema: pa.Schema, compression: str | None = None) -> None:
        self.schema = schema
        self._schema_message = schema.serialize()
        self._options = pa.ipc.IpcWriteOptions(compression=compression)
        self._plain = compression is None and not _has_dictionary(schema)

    def start(self) -> memoryview:
        return memoryview(self._schema_message)

    def batch(self, batch: pa.RecordBatch, metadata: dict[bytes, bytes] | None = None) -> memoryview:
        if self._plain and metadata is None:
            return memoryview(batch.serialize())
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, self.schema, options=self._options) as writer:
            writer.write_batch(batch, custom_metadata=metadata)
        # The writer's output starts with the schema message, already sent, and ends with the EOS.
        return memoryview(sink.getvalue())[self._schema_message.size:-len(EOS)]

    def end(self) -> bytes:
        return EOS

    def error(self, document: dict[str, object]) -> memoryview:
        """An empty batch carrying the error document in its custom metadata."""
        return self.batch(_empty(self.schema), {ERROR_METADATA_KEY: json.dumps(document).encode("utf-8")})


def _has_dictionary(schema: pa.Schema) -> bool:
    def check(kind: pa.DataType) -> bool:
        return pa.types.is_dictionary(kind) or any(check(kind.field(i).type) for i in range(kind.num_fields))

    return any(check(field.type) for field in schema)


def error_document(error: BaseException) -> dict[str, object]:
    """The JSON error object of an exception (`type`, `message`, and its structured fields)."""
    body: dict[str, object] = {"type": type(error).__name__, "message": str(error)}
    for key in ("column", "instant", "feature", "offset"):
        value = getattr(error, key, None)
        if value is not None:
            body[key] = value
    return body


def ipc_stream(
    reader: pa.RecordBatchReader,
    limits: StreamLimits,
    *,
    limit: int | None = None,
    first: pa.RecordBatch | None = None,
    started: float | None = None,
    compression: str | None = None,
    trailer: Callable[[], dict[bytes, bytes]] | None = None,
    redact: Callable[[str], str] | None = None,
) -> Iterator[bytes | memoryview]:
    """Arrow IPC stream chunks of `reader`'s rows (at most `limit`), `first` being a batch already
    taken from it; `compression` ("lz4" or "zstd") compresses each batch's buffers (the byte limit
    counts what is sent). `trailer` gives the custom metadata of an empty batch sent last, before
    the end-of-stream marker (a report known once every row was read); `redact` rewrites the
    message of an error batch (server paths). The reader is closed when the stream ends, fails or
    is dropped."""
    encoder = _Encoder(reader.schema, compression)
    start = time.monotonic() if started is None else started
    rows = sent = 0
    try:
        yield encoder.start()
        for batch in _batches(reader, first) if limit != 0 else ():
            for piece in _pieces(batch, limits.batch_rows, limits.batch_bytes):
                if limit is not None:
                    piece = piece.slice(0, limit - rows)
                if rows + piece.num_rows > limits.max_rows:
                    raise ScanLimitError(
                        f"the scan returns more than the server's limit of {limits.max_rows} rows; "
                        "add a filter or a limit"
                    )
                chunk = encoder.batch(piece)
                if sent + len(chunk) > limits.max_bytes:
                    raise ScanLimitError(
                        f"the scan returns more than the server's limit of {limits.max_bytes} bytes; "
                        "select fewer columns, add a filter or a limit"
                    )
                rows += piece.num_rows
                sent += len(chunk)
                yield chunk
                if limit is not None and rows >= limit:
                    break
            if limit is not None and rows >= limit:
                break
            if time.monotonic() - start > limits.max_seconds:
                raise ScanLimitError(
                    f"the scan ran longer than the server's limit of {limits.max_seconds:g} seconds; "
                    "add a filter or a limit"
                )
        if trailer is not None:
            yield encoder.batch(_empty(encoder.schema), trailer())
        yield encoder.end()
    except HudiShimError as exc:
        document = error_document(exc)
        if redact is not None:
            document["message"] = redact(str(document["message"]))
        yield encoder.error(document)
        raise StreamAborted(exc) from exc
    finally:
        reader.close()


async def prefetched(chunks: Iterator[T], depth: int = 4, time_limit: TimeLimit = NO_LIMIT) -> AsyncIterator[T]:
    """`chunks`, produced by a worker thread up to `depth` items ahead of the event loop.

    The HTTP server sends one chunk before asking for the next; producing the next batch (reading
    and merging files) while the previous one is on the wire keeps both busy. Chunks reach the
    event loop directly (no thread-pool hop per chunk). Exceptions reach the consumer in order;
    when the consumer stops early, the producer stops and `chunks` is closed. A producer kept
    waiting by a consumer that takes nothing (a client that stopped reading) past `time_limit`
    stops too, and the consumer gets its `ScanLimitError`.
    """
    loop = asyncio.get_running_loop()
    items: asyncio.Queue[tuple[str, object]] = asyncio.Queue()
    slots = threading.Semaphore(depth)
    stop = threading.Event()

    def hand_over(item: tuple[str, object]) -> None:
        try:
            loop.call_soon_threadsafe(items.put_nowait, item)
        except RuntimeError:  # the event loop is gone: nobody is listening any more
            stop.set()

    def produce() -> None:
        try:
            for chunk in chunks:
                while not slots.acquire(timeout=0.1):
                    if stop.is_set():
                        return
                    time_limit.check()
                if stop.is_set():
                    return
                hand_over(("item", chunk))
            hand_over(("end", None))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, which raises it
            hand_over(("error", exc))
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()

    worker = threading.Thread(target=produce, name="hudi-shim-scan", daemon=True)
    worker.start()
    try:
        while True:
            kind, value = await items.get()
            if kind == "item":
                slots.release()
                yield value  # type: ignore[misc]
            elif kind == "error":
                assert isinstance(value, BaseException)
                raise value
            else:
                return
    finally:
        stop.set()


def _empty(schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array([], f.type) for f in schema], schema=schema)


def _batches(reader: pa.RecordBatchReader, first: pa.RecordBatch | None) -> Iterator[pa.RecordBatch]:
    if first is not None:
        yield first
    while True:
        try:
            yield reader.read_next_batch()
        except StopIteration:
            return


def _pieces(batch: pa.RecordBatch, max_rows: int, max_bytes: int) -> Iterator[pa.RecordBatch]:
    size = max_rows
    if batch.num_rows and batch.nbytes > max_bytes:
        size = max(1, min(max_rows, max_bytes * batch.num_rows // batch.nbytes))
    if batch.num_rows <= size:
        yield batch
        return
    for offset in range(0, batch.num_rows, size):
        yield batch.slice(offset, size)
