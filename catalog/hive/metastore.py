"""A Hive Metastore client over Thrift (`catalog.hive.thrift`): databases, tables and partitions.

    with MetastoreClient.connect("thrift://127.0.0.1:9083") as hms:
        hms.get_table("default", "trips").parameters["metadata_location"]

The models carry the fields the shim writes and reads (Hive's `Table`, `StorageDescriptor`,
`SerDeInfo`, `FieldSchema`, `Partition`, `Database`, with their Thrift field ids); the others a
metastore returns are skipped. Hive 3.1 and 4.0 metastores answer the calls used here alike.
Plain Thrift only: a metastore behind Kerberos (SASL) is not reached.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, BinaryIO, ClassVar, cast
from urllib.parse import urlparse

from catalog.hive.thrift import (
    BOOL,
    I16,
    I32,
    STRING,
    ListOf,
    MapOf,
    RemoteException,
    Struct,
    ThriftError,
    call,
)
from shim.errors import HudiShimError, InvalidArgumentError

DEFAULT_PORT = 9083
TIMEOUT_SECONDS = 60.0
_STRINGS = MapOf(STRING, STRING)


class MetastoreError(HudiShimError):
    """The metastore could not be reached, or refused a call (its message, and which exception)."""

    def __init__(self, message: str, *, kind: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind


class NoSuchObjectError(MetastoreError):
    """The database or table asked for does not exist in the metastore."""


@dataclass(slots=True)
class FieldSchema:
    """A column: name, Hive type (`struct<a:int>`), comment."""

    name: str
    type: str
    comment: str | None = None
    THRIFT: ClassVar = ((1, "name", STRING), (2, "type", STRING), (3, "comment", STRING))


@dataclass(slots=True)
class SerDeInfo:
    """The serde of a table or partition."""

    name: str | None = None
    serializationLib: str | None = None
    parameters: dict[str, str] = field(default_factory=dict)
    THRIFT: ClassVar = ((1, "name", STRING), (2, "serializationLib", STRING), (3, "parameters", _STRINGS))


@dataclass(slots=True)
class StorageDescriptor:
    """Where a table's (or partition's) files are and how they are read."""

    cols: list[FieldSchema] = field(default_factory=list)
    location: str | None = None
    inputFormat: str | None = None
    outputFormat: str | None = None
    compressed: bool = False
    numBuckets: int = -1
    serdeInfo: SerDeInfo = field(default_factory=SerDeInfo)
    bucketCols: list[str] = field(default_factory=list)
    parameters: dict[str, str] = field(default_factory=dict)
    storedAsSubDirectories: bool = False
    THRIFT: ClassVar = ((1, "cols", ListOf(Struct.of(FieldSchema))), (2, "location", STRING),
                        (3, "inputFormat", STRING), (4, "outputFormat", STRING), (5, "compressed", BOOL),
                        (6, "numBuckets", I32), (7, "serdeInfo", Struct.of(SerDeInfo)),
                        (8, "bucketCols", ListOf(STRING)), (10, "parameters", _STRINGS),
                        (12, "storedAsSubDirectories", BOOL))


@dataclass(slots=True)
class Table:
    """A metastore table."""

    tableName: str
    dbName: str
    owner: str | None = None
    createTime: int = 0
    lastAccessTime: int = 0
    retention: int = 0
    sd: StorageDescriptor = field(default_factory=StorageDescriptor)
    partitionKeys: list[FieldSchema] = field(default_factory=list)
    parameters: dict[str, str] = field(default_factory=dict)
    tableType: str = "EXTERNAL_TABLE"
    THRIFT: ClassVar = ((1, "tableName", STRING), (2, "dbName", STRING), (3, "owner", STRING),
                        (4, "createTime", I32), (5, "lastAccessTime", I32), (6, "retention", I32),
                        (7, "sd", Struct.of(StorageDescriptor)), (8, "partitionKeys", ListOf(Struct.of(FieldSchema))),
                        (9, "parameters", _STRINGS), (12, "tableType", STRING))


@dataclass(slots=True)
class Partition:
    """One partition of a table: its values (in partition-key order) and storage."""

    values: list[str]
    dbName: str
    tableName: str
    createTime: int = 0
    lastAccessTime: int = 0
    sd: StorageDescriptor = field(default_factory=StorageDescriptor)
    parameters: dict[str, str] = field(default_factory=dict)
    THRIFT: ClassVar = ((1, "values", ListOf(STRING)), (2, "dbName", STRING), (3, "tableName", STRING),
                        (4, "createTime", I32), (5, "lastAccessTime", I32), (6, "sd", Struct.of(StorageDescriptor)),
                        (7, "parameters", _STRINGS))


@dataclass(slots=True)
class Database:
    """A metastore database (a schema to Trino and Presto)."""

    name: str
    description: str | None = None
    locationUri: str | None = None
    parameters: dict[str, str] = field(default_factory=dict)
    ownerName: str | None = None
    ownerType: int | None = 1  # USER
    THRIFT: ClassVar = ((1, "name", STRING), (2, "description", STRING), (3, "locationUri", STRING),
                        (4, "parameters", _STRINGS), (6, "ownerName", STRING), (7, "ownerType", I32))


@dataclass(slots=True)
class _GetTableRequest:
    dbName: str
    tblName: str
    THRIFT: ClassVar = ((1, "dbName", STRING), (2, "tblName", STRING))


@dataclass(slots=True)
class _GetTableResult:
    table: Table
    THRIFT: ClassVar = ((1, "table", Struct.of(Table)),)


_TABLE, _DATABASE, _PARTITION = Struct.of(Table), Struct.of(Database), Struct.of(Partition)


def parse_uri(uri: str) -> tuple[str, int]:
    """(host, port) of a `thrift://host:port` URI."""
    parsed = urlparse(uri)
    if parsed.scheme != "thrift" or not parsed.hostname:
        raise InvalidArgumentError(f"a Hive Metastore URI is thrift://HOST:PORT, got {uri!r}")
    return parsed.hostname, parsed.port or DEFAULT_PORT


class MetastoreClient:
    """One connection to a metastore; calls are serialized (one at a time)."""

    def __init__(self, uri: str, sock: socket.socket) -> None:
        self.uri = uri
        self._socket = sock
        self._stream = cast(BinaryIO, sock.makefile("rwb"))
        self._seq = 0
        self._lock = threading.Lock()

    @classmethod
    def open(cls, uri: str, timeout: float = TIMEOUT_SECONDS) -> MetastoreClient:
        host, port = parse_uri(uri)
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as exc:
            raise MetastoreError(f"cannot reach the Hive Metastore at {uri}: {exc}") from exc
        return cls(uri, sock)

    @classmethod
    @contextmanager
    def connect(cls, uri: str, timeout: float = TIMEOUT_SECONDS) -> Iterator[MetastoreClient]:
        client = cls.open(uri, timeout)
        try:
            yield client
        finally:
            client.close()

    def close(self) -> None:
        try:
            self._stream.close()
        finally:
            self._socket.close()

    def _call(self, method: str, arguments: Sequence[tuple[int, Any, Any]], result: Any,
              exceptions: Sequence[str]) -> Any:
        with self._lock:
            self._seq += 1
            try:
                return call(self._stream, method, arguments, result, exceptions, self._seq)
            except RemoteException as exc:
                error = NoSuchObjectError if exc.kind == "NoSuchObjectException" else MetastoreError
                raise error(f"the Hive Metastore at {self.uri} refused {method}: {exc.kind}: {exc.remote_message}",
                            kind=exc.kind) from None
            except (OSError, ThriftError) as exc:
                raise MetastoreError(f"the Hive Metastore at {self.uri} failed {method}: {exc}") from exc

    def get_database(self, name: str) -> Database:
        database: Database = self._call("get_database", [(1, STRING, name)], _DATABASE,
                                        ("NoSuchObjectException", "MetaException"))
        return database

    def create_database(self, database: Database) -> None:
        self._call("create_database", [(1, _DATABASE, database)], None,
                   ("AlreadyExistsException", "InvalidObjectException", "MetaException"))

    def get_all_tables(self, database: str) -> list[str]:
        names: list[str] = self._call("get_all_tables", [(1, STRING, database)], ListOf(STRING), ("MetaException",))
        return names

    def get_table(self, database: str, name: str) -> Table:
        # get_table_req: Hive 4 has no get_table any more; Hive 2.3 and 3.x have both
        request = _GetTableRequest(database, name)
        result: _GetTableResult = self._call("get_table_req", [(1, Struct.of(_GetTableRequest), request)],
                                             Struct.of(_GetTableResult), ("MetaException", "NoSuchObjectException"))
        return result.table

    def create_table(self, table: Table) -> None:
        self._call("create_table", [(1, _TABLE, table)], None,
                   ("AlreadyExistsException", "InvalidObjectException", "MetaException", "NoSuchObjectException"))

    def alter_table(self, database: str, name: str, table: Table) -> None:
        self._call("alter_table", [(1, STRING, database), (2, STRING, name), (3, _TABLE, table)], None,
                   ("InvalidOperationException", "MetaException"))

    def drop_table(self, database: str, name: str, *, delete_data: bool = False) -> None:
        self._call("drop_table", [(1, STRING, database), (2, STRING, name), (3, BOOL, delete_data)], None,
                   ("NoSuchObjectException", "MetaException"))

    def add_partitions(self, partitions: Sequence[Partition]) -> int:
        added: int = self._call("add_partitions", [(1, ListOf(_PARTITION), list(partitions))], I32,
                                ("InvalidObjectException", "AlreadyExistsException", "MetaException"))
        return added

    def get_partition_names(self, database: str, name: str) -> list[str]:
        names: list[str] = self._call("get_partition_names", [(1, STRING, database), (2, STRING, name), (3, I16, -1)],
                                      ListOf(STRING), ("NoSuchObjectException", "MetaException"))
        return names

    def get_partitions(self, database: str, name: str) -> list[Partition]:
        partitions: list[Partition] = self._call(
            "get_partitions", [(1, STRING, database), (2, STRING, name), (3, I16, -1)], ListOf(_PARTITION),
            ("NoSuchObjectException", "MetaException"))
        return partitions

    def drop_partition_by_name(self, database: str, name: str, partition: str) -> bool:
        dropped: bool = self._call(
            "drop_partition_by_name", [(1, STRING, database), (2, STRING, name), (3, STRING, partition), (4, BOOL, False)],
            BOOL, ("NoSuchObjectException", "MetaException"))
        return dropped
