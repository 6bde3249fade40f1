"""Thrift's binary protocol over a plain socket: what a Hive Metastore client needs, no more.

A metastore speaks Thrift's strict binary protocol on a buffered (unframed) transport unless it
is set up for SASL or framing. Structs are described by `Struct` specs (field id, attribute name,
type) bound to dataclasses, so a call encodes dataclasses and decodes replies into them; fields
a reply carries that a spec does not name are skipped.

    call(sock_file, "get_database", [(1, STRING, "default")], Struct.of(Database), seq=1)
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, BinaryIO

from shim.errors import HudiShimError


class TType(IntEnum):
    """Thrift's wire types."""

    STOP = 0
    BOOL = 2
    BYTE = 3
    DOUBLE = 4
    I16 = 6
    I32 = 8
    I64 = 10
    STRING = 11
    STRUCT = 12
    MAP = 13
    SET = 14
    LIST = 15


@dataclass(frozen=True, slots=True)
class ListOf:
    """A `list<element>` type."""

    element: ThriftType


@dataclass(frozen=True, slots=True)
class MapOf:
    """A `map<key, value>` type."""

    key: ThriftType
    value: ThriftType


@dataclass(frozen=True, slots=True)
class Struct:
    """A struct type: its fields as (id, attribute, type), and the dataclass it decodes into."""

    cls: type
    fields: tuple[tuple[int, str, ThriftType], ...]

    @classmethod
    def of(cls, model: type) -> Struct:
        """The spec a dataclass declares in its `THRIFT` class attribute."""
        return cls(model, model.THRIFT)  # type: ignore[attr-defined]


ThriftType = TType | ListOf | MapOf | Struct
STRING, I16, I32, I64, BOOL = TType.STRING, TType.I16, TType.I32, TType.I64, TType.BOOL
_VERSION_1 = 0x80010000
_CALL, _REPLY, _EXCEPTION = 1, 2, 3


class ThriftError(HudiShimError):
    """The peer sent something this codec cannot read, or answered with an application error."""


class RemoteException(ThriftError):
    """A declared exception of the called method (the metastore's `NoSuchObjectException`...).

    Attributes:
        kind: the exception's name as the method declares it.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.remote_message = message


def _wire(kind: ThriftType) -> TType:
    if isinstance(kind, TType):
        return kind
    return {ListOf: TType.LIST, MapOf: TType.MAP, Struct: TType.STRUCT}[type(kind)]


class _Writer:
    def __init__(self) -> None:
        self.out = bytearray()

    def pack(self, fmt: str, *values: Any) -> None:
        self.out += struct.pack(fmt, *values)

    def string(self, value: str | bytes) -> None:
        data = value.encode("utf-8") if isinstance(value, str) else value
        self.pack("!i", len(data))
        self.out += data

    def value(self, kind: ThriftType, value: Any) -> None:
        if isinstance(kind, Struct):
            self.struct(kind, value)
        elif isinstance(kind, ListOf):
            self.pack("!bi", _wire(kind.element), len(value))
            for item in value:
                self.value(kind.element, item)
        elif isinstance(kind, MapOf):
            self.pack("!bbi", _wire(kind.key), _wire(kind.value), len(value))
            for key, item in value.items():
                self.value(kind.key, key)
                self.value(kind.value, item)
        elif kind is TType.STRING:
            self.string(value)
        elif kind is TType.BOOL:
            self.pack("!b", 1 if value else 0)
        else:
            self.pack({TType.BYTE: "!b", TType.I16: "!h", TType.I32: "!i", TType.I64: "!q",
                       TType.DOUBLE: "!d"}[kind], value)

    def fields(self, fields: Sequence[tuple[int, ThriftType, Any]]) -> None:
        for field_id, kind, value in fields:
            if value is None:
                continue
            self.pack("!bh", _wire(kind), field_id)
            self.value(kind, value)
        self.pack("!b", TType.STOP)

    def struct(self, spec: Struct, value: Any) -> None:
        self.fields([(field_id, kind, getattr(value, name)) for field_id, name, kind in spec.fields])


class _Reader:
    def __init__(self, source: BinaryIO) -> None:
        self.source = source

    def take(self, size: int) -> bytes:
        data = self.source.read(size)
        if data is None or len(data) != size:
            raise ThriftError("the metastore closed the connection mid-reply")
        return data

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def raw(self) -> bytes:
        size = self.unpack("!i")
        if size < 0 or size > 256 * 1024 * 1024:
            raise ThriftError(f"a string of {size} bytes: not a Thrift binary-protocol reply")
        return self.take(size)

    def value(self, wire: int, kind: ThriftType | None) -> Any:
        """A value of wire type `wire`, decoded as `kind` (None: decoded generically, or skipped)."""
        if wire == TType.STRUCT:
            return self.struct(kind if isinstance(kind, Struct) else None)
        if wire in (TType.LIST, TType.SET):
            element, size = self.unpack("!b"), self.unpack("!i")
            inner = kind.element if isinstance(kind, ListOf) else None
            return [self.value(element, inner) for _ in range(size)]
        if wire == TType.MAP:
            key_type, value_type, size = self.unpack("!b"), self.unpack("!b"), self.unpack("!i")
            keys = kind.key if isinstance(kind, MapOf) else None
            values = kind.value if isinstance(kind, MapOf) else None
            return {self._hashable(self.value(key_type, keys)): self.value(value_type, values) for _ in range(size)}
        if wire == TType.STRING:
            data = self.raw()
            return data.decode("utf-8", errors="replace") if kind is TType.STRING or kind is None else data
        if wire == TType.BOOL:
            return self.unpack("!b") != 0
        formats = {TType.BYTE: "!b", TType.I16: "!h", TType.I32: "!i", TType.I64: "!q", TType.DOUBLE: "!d"}
        if wire not in formats:
            raise ThriftError(f"unknown Thrift type {wire} in the reply")
        return self.unpack(formats[TType(wire)])

    @staticmethod
    def _hashable(value: Any) -> Any:
        return tuple(value) if isinstance(value, list) else value

    def field_values(self) -> dict[int, tuple[int, Any]]:
        """A struct's fields as id -> (wire type, raw value), read generically."""
        found: dict[int, tuple[int, Any]] = {}
        while True:
            wire = self.unpack("!b")
            if wire == TType.STOP:
                return found
            field_id = self.unpack("!h")
            found[field_id] = (wire, self.value(wire, None))

    def struct(self, spec: Struct | None) -> Any:
        if spec is None:
            return {field_id: value for field_id, (_, value) in self.field_values().items()}
        by_id = {field_id: (name, kind) for field_id, name, kind in spec.fields}
        values: dict[str, Any] = {}
        while True:
            wire = self.unpack("!b")
            if wire == TType.STOP:
                break
            field_id = self.unpack("!h")
            name, kind = by_id.get(field_id, (None, None))
            value = self.value(wire, kind)
            if name is not None and wire == _wire(kind):  # type: ignore[arg-type]
                values[name] = value
        names = {f.name for f in dataclasses.fields(spec.cls)}
        return spec.cls(**{k: v for k, v in values.items() if k in names})


def call(stream: BinaryIO, method: str, arguments: Sequence[tuple[int, ThriftType, Any]],
         result: ThriftType | None, exceptions: Sequence[str], seq: int) -> Any:
    """Call `method` with `arguments` ((id, type, value) of its argument struct) and read its
    reply: the value of type `result` (None: a void method), or `RemoteException` naming the
    declared exception (`exceptions[i]` is the exception of field id i + 1) the peer raised."""
    writer = _Writer()
    writer.pack("!I", _VERSION_1 | _CALL)
    writer.string(method)
    writer.pack("!i", seq)
    writer.fields(arguments)
    stream.write(bytes(writer.out))
    stream.flush()
    reader = _Reader(stream)
    header = reader.unpack("!I")
    if header & 0xFFFF0000 != _VERSION_1:
        raise ThriftError(f"the reply to {method} is not Thrift's strict binary protocol (header {header:#x}); "
                          "is the metastore set up for SASL or a framed transport?")
    kind = header & 0xFF
    name = reader.raw().decode("utf-8", errors="replace")
    reply_seq = reader.unpack("!i")
    if kind == _EXCEPTION:
        fields = reader.struct(None)
        raise ThriftError(f"the metastore failed {name}: {fields.get(1, 'no message')}")
    if kind != _REPLY or name != method or reply_seq != seq:
        raise ThriftError(f"unexpected reply {name!r} (type {kind}, sequence {reply_seq}) to {method}")
    return _reply(reader, method, result, exceptions)


def _reply(reader: _Reader, method: str, result: ThriftType | None, exceptions: Sequence[str]) -> Any:
    value: Any = None
    raised: tuple[str, str] | None = None
    while True:
        wire = reader.unpack("!b")
        if wire == TType.STOP:
            break
        field_id = reader.unpack("!h")
        if field_id == 0:
            value = reader.value(wire, result)
        else:
            body = reader.value(wire, None)
            kind = exceptions[field_id - 1] if 0 < field_id <= len(exceptions) else f"exception {field_id}"
            message = body.get(1, "") if isinstance(body, dict) else str(body)
            raised = (kind, message if isinstance(message, str) else repr(message))
    if raised is not None:
        raise RemoteException(*raised)
    return value
