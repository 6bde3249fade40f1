"""Iceberg v3 deletion vectors: the deleted row positions of one data file as a
`deletion-vector-v1` blob in a Puffin file of its own (`format/puffin-spec.md`).

    blob = length (4 bytes, big-endian: of magic and bitmap) | magic D1 D3 39 64
           | portable Roaring64 bitmap of the positions | CRC-32 of magic and bitmap (big-endian)

The blob is stored uncompressed, for the field `_pos` (id 2147483645), with snapshot id and
sequence number -1 (a vector is not tied to a snapshot) and the properties
`referenced-data-file` and `cardinality`. A delete manifest entry names the Puffin file, the
blob's offset and length, and the data file it applies to.
"""

from __future__ import annotations

import base64
import os
import struct
import zlib
from dataclasses import dataclass

import numpy as np

from catalog.iceberg.puffin import Blob, blob_bytes, read_footer, write_puffin
from shim.errors import CorruptFileError
from shim.log.positions import decode_positions, encode_positions
from shim.storage import Storage

BLOB_TYPE = "deletion-vector-v1"
MAGIC = b"\xd1\xd3\x39\x64"
#: The field id of the row position (`_pos`) a deletion vector is computed for.
ROW_POSITION_ID = 2147483645
#: Length, magic and CRC around the bitmap.
_FRAME = 4 + 4 + 4


@dataclass(frozen=True, slots=True)
class VectorFile:
    """A Puffin file holding one data file's deletion vector: where, which data file, how many
    positions, the file's size and the blob's offset and length in it."""

    path: str
    referenced: str
    cardinality: int
    size: int
    offset: int
    length: int


def encode_vector(positions: np.ndarray) -> bytes:
    """The `deletion-vector-v1` blob of ascending, distinct row `positions`."""
    body = MAGIC + base64.b64decode(encode_positions(positions))
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))


def decode_vector(blob: bytes, where: str) -> np.ndarray:
    """The positions of a `deletion-vector-v1` blob, its length, magic and CRC checked."""
    if len(blob) < _FRAME:
        raise CorruptFileError(f"{where}: a deletion vector of {len(blob)} bytes (at least {_FRAME}: length, "
                               "magic, CRC)", path=where)
    (length,) = struct.unpack(">I", blob[:4])
    if length != len(blob) - 8 or blob[4:8] != MAGIC:
        raise CorruptFileError(f"{where}: a deletion vector's length {length} or magic {blob[4:8].hex()} does "
                               f"not fit its {len(blob)} bytes", path=where)
    body = blob[4:-4]
    if struct.unpack(">I", blob[-4:])[0] != zlib.crc32(body):
        raise CorruptFileError(f"{where}: the deletion vector's CRC-32 does not match its bytes", path=where)
    return decode_positions(base64.b64encode(body[4:]).decode("ascii"), where, 0)


def vector_blob(positions: np.ndarray, referenced: str) -> Blob:
    """The Puffin blob of `referenced`'s deletion vector."""
    return Blob(BLOB_TYPE, (ROW_POSITION_ID,), -1, -1, encode_vector(positions), compression=None,
                properties={"referenced-data-file": referenced, "cardinality": str(len(positions))})


def write_vector_file(out: Storage, path: str, positions: np.ndarray, referenced: str) -> VectorFile:
    """`referenced`'s deletion vector as the Puffin file `path` on `out` (found again when
    already there: a file's name says what it holds)."""
    if out.exists(path):
        found, _ = read_vector_file(out, path)
        if found.referenced != referenced:
            raise CorruptFileError(f"{path}: a deletion vector of {found.referenced}, not of {referenced}", path=path)
        return found
    puffin = write_puffin([vector_blob(positions, referenced)], {"created-by": "hudi-shim"})
    out.make_dirs(os.path.dirname(path))
    out.write_atomically(path, puffin.data)
    [blob] = puffin.blobs
    return VectorFile(path, referenced, len(positions), len(puffin.data), int(blob["offset"]), int(blob["length"]))


def read_vector_file(out: Storage, path: str) -> tuple[VectorFile, np.ndarray]:
    """The Puffin file `path` of one deletion vector, and its positions."""
    data = out.read_bytes(path)
    puffin = read_footer(data, path)
    if len(puffin.blobs) != 1 or puffin.blobs[0].get("type") != BLOB_TYPE:
        raise CorruptFileError(f"{path}: not a Puffin file of one {BLOB_TYPE} blob", path=path)
    [blob] = puffin.blobs
    properties = blob.get("properties") or {}
    positions = decode_vector(blob_bytes(puffin, blob, path), path)
    if str(len(positions)) != properties.get("cardinality"):
        raise CorruptFileError(f"{path}: {len(positions)} positions, its blob says {properties.get('cardinality')}",
                               path=path)
    found = VectorFile(path, str(properties.get("referenced-data-file", "")), len(positions), len(data),
                       int(blob["offset"]), int(blob["length"]))
    return found, positions
