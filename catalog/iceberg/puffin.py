"""Iceberg Puffin files (`format/puffin-spec.md`): blobs of statistics about a table's snapshot,
with a JSON footer describing them.

    Magic Blob1 ... BlobN Footer;  Footer = Magic FooterPayload FooterPayloadSize Flags Magic

Magic is `PFA1`; the payload is the UTF-8 JSON `FileMetadata` (`blobs`: type, fields, snapshot-id,
sequence-number, offset, length, compression-codec, properties; `properties` of the file), its
size a little-endian 4-byte integer, the flags 4 bytes (bit 0 of the first: payload compressed;
this writer leaves it uncompressed, as Iceberg's Java writer does by default). A blob compressed
with `zstd` is a single Zstandard frame with the content size present (Arrow's codec writes it).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from shim.errors import CorruptFileError

MAGIC = b"PFA1"
ZSTD = "zstd"
#: Magic, payload size, flags and magic around a footer's payload.
_FOOTER_FRAME = 4 + 4 + 4 + 4


@dataclass(frozen=True, slots=True)
class Blob:
    """One blob: its type, the field ids it was computed for, the snapshot it describes, its bytes
    (uncompressed), how to compress them (None: stored as they are), and its properties."""

    type: str
    fields: tuple[int, ...]
    snapshot_id: int
    sequence_number: int
    data: bytes
    compression: str | None = ZSTD
    properties: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PuffinFile:
    """A Puffin file's bytes, its footer's size, and the metadata of each blob in it."""

    data: bytes
    footer_size: int
    blobs: tuple[dict[str, Any], ...]
    properties: Mapping[str, str]


def write_puffin(blobs: Sequence[Blob], properties: Mapping[str, str]) -> PuffinFile:
    """A Puffin file holding `blobs` in order, with the file `properties` (e.g. `created-by`)."""
    out = bytearray(MAGIC)
    described = []
    for blob in blobs:
        stored = _compress(blob.data, blob.compression)
        entry: dict[str, Any] = {"type": blob.type, "fields": list(blob.fields), "snapshot-id": blob.snapshot_id,
                                 "sequence-number": blob.sequence_number, "offset": len(out), "length": len(stored)}
        if blob.compression is not None:
            entry["compression-codec"] = blob.compression
        if blob.properties:
            entry["properties"] = dict(blob.properties)
        described.append(entry)
        out += stored
    metadata: dict[str, Any] = {"blobs": described}
    if properties:
        metadata["properties"] = dict(properties)
    payload = json.dumps(metadata, separators=(",", ":")).encode("utf-8")
    footer = MAGIC + payload + struct.pack("<i", len(payload)) + bytes(4) + MAGIC
    return PuffinFile(bytes(out + footer), len(footer), tuple(described), dict(properties))


def read_footer(data: bytes, where: str) -> PuffinFile:
    """The footer of the Puffin file `data` (read from `where`, named in errors)."""
    if len(data) < len(MAGIC) + _FOOTER_FRAME or data[:4] != MAGIC or data[-4:] != MAGIC:
        raise CorruptFileError(f"{where} is not a Puffin file (no PFA1 magic at its start and end)", path=where)
    size, flags = struct.unpack("<i4s", data[-12:-4])
    start = len(data) - _FOOTER_FRAME - size
    if size < 0 or start < 4 or data[start:start + 4] != MAGIC:
        raise CorruptFileError(f"{where}: Puffin footer of {size} bytes does not fit the file", path=where)
    if flags[0] & 1:
        raise CorruptFileError(f"{where}: compressed Puffin footers (LZ4) are not read", path=where)
    try:
        metadata = json.loads(data[start + 4:start + 4 + size])
        blobs = tuple(metadata["blobs"])
    except (ValueError, KeyError, TypeError) as exc:
        raise CorruptFileError(f"{where}: the Puffin footer is not its JSON file metadata: {exc}", path=where) from exc
    return PuffinFile(data, len(data) - start, blobs, metadata.get("properties", {}))


def blob_bytes(puffin: PuffinFile, blob: Mapping[str, Any], where: str) -> bytes:
    """A blob's bytes, decompressed."""
    offset, length = int(blob["offset"]), int(blob["length"])
    if offset < 4 or length < 0 or offset + length > len(puffin.data) - puffin.footer_size:
        raise CorruptFileError(f"{where}: blob at {offset} ({length} bytes) lies outside the blobs", path=where)
    stored = puffin.data[offset:offset + length]
    codec = blob.get("compression-codec")
    if codec is None:
        return stored
    if codec != ZSTD:
        raise CorruptFileError(f"{where}: blob compression {codec!r} is not read (only zstd)", path=where)
    return _decompress(stored, where)


def _compress(data: bytes, codec: str | None) -> bytes:
    if codec is None:
        return data
    if codec != ZSTD:
        raise ValueError(f"Puffin blobs are written uncompressed or with zstd, not {codec!r}")
    compressed: bytes = pa.compress(data, codec=ZSTD, asbytes=True)
    return compressed


def _decompress(data: bytes, where: str) -> bytes:
    # The frame header holds the content size (checked by pyarrow against the size given).
    size = _frame_content_size(data, where)
    decompressed: bytes = pa.decompress(data, decompressed_size=size, codec=ZSTD, asbytes=True)
    return decompressed


def _frame_content_size(frame: bytes, where: str) -> int:
    """The content size a Zstandard frame's header records (RFC 8878, 3.1.1.1)."""
    if len(frame) < 6 or frame[:4] != b"\x28\xb5\x2f\xfd":
        raise CorruptFileError(f"{where}: a zstd blob does not start with a Zstandard frame", path=where)
    descriptor = frame[4]
    size_flag, single_segment, has_dictionary = descriptor >> 6, (descriptor >> 5) & 1, descriptor & 3
    position = 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[has_dictionary]
    width = (1 if single_segment else 0, 2, 4, 8)[size_flag]
    if width == 0:
        raise CorruptFileError(f"{where}: a zstd blob's frame does not record its content size (Puffin requires it)",
                               path=where)
    value = int.from_bytes(frame[position:position + width], "little")
    return value + 256 if width == 2 else value
