"""Just enough of the Protocol Buffers wire format to read a message's fields.

Fields are read lazily by number; nothing is interpreted until asked for. Malformed input raises
`ProtobufError` (a ValueError), never anything else.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5


class ProtobufError(ValueError):
    """The bytes are not a well-formed protobuf message."""


@dataclass(frozen=True, slots=True)
class WireField:
    number: int
    wire_type: int
    value: int | bytes


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ProtobufError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ProtobufError("varint longer than 10 bytes")


def parse_fields(data: bytes) -> list[WireField]:
    """Every field of a message, in wire order."""
    fields: list[WireField] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise ProtobufError("field number 0")
        value: int | bytes
        if wire_type == VARINT:
            value, pos = _varint(data, pos)
        elif wire_type == FIXED64:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire_type == FIXED32:
            value, pos = data[pos:pos + 4], pos + 4
        elif wire_type == LENGTH:
            size, pos = _varint(data, pos)
            value, pos = data[pos:pos + size], pos + size
        else:
            raise ProtobufError(f"unsupported wire type {wire_type}")
        if pos > len(data):
            raise ProtobufError("truncated field")
        fields.append(WireField(number, wire_type, value))
    return fields


class Message:
    """A parsed message: typed access to its fields by number."""

    def __init__(self, data: bytes) -> None:
        self.fields = parse_fields(data)

    def numbers(self) -> set[int]:
        return {f.number for f in self.fields}

    def _all(self, number: int, wire_type: int) -> list[int | bytes]:
        values = []
        for field in self.fields:
            if field.number != number:
                continue
            if field.wire_type != wire_type:
                raise ProtobufError(f"field {number} has wire type {field.wire_type}, expected {wire_type}")
            values.append(field.value)
        return values

    def _bytes(self, number: int, wire_type: int = LENGTH) -> list[bytes]:
        return [v for v in self._all(number, wire_type) if isinstance(v, bytes)]

    def messages(self, number: int) -> list[Message]:
        return [Message(v) for v in self._bytes(number)]

    def message(self, number: int) -> Message | None:
        found = self.messages(number)
        return found[-1] if found else None

    def raw(self, number: int) -> bytes | None:
        found = self._bytes(number)
        return found[-1] if found else None

    def strings(self, number: int) -> list[str]:
        try:
            return [v.decode("utf-8") for v in self._bytes(number)]
        except UnicodeDecodeError as exc:
            raise ProtobufError(f"field {number} is not UTF-8: {exc}") from None

    def uint(self, number: int, default: int = 0) -> int:
        found = self._all(number, VARINT)
        return int(found[-1]) if found else default

    def sint(self, number: int, bits: int, default: int = 0) -> int:
        """A (non-zigzag) int32/int64: negative values are sign-extended 64-bit varints."""
        value = self.uint(number, default)
        value &= (1 << 64) - 1
        if value >= 1 << 63:
            value -= 1 << 64
        if not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
            raise ProtobufError(f"field {number} does not fit {bits} bits")
        return value

    def fixed32_float(self, number: int) -> float:
        found = self._bytes(number, FIXED32)
        return float(struct.unpack("<f", found[-1])[0]) if found else 0.0

    def fixed64_float(self, number: int) -> float:
        found = self._bytes(number, FIXED64)
        return float(struct.unpack("<d", found[-1])[0]) if found else 0.0
