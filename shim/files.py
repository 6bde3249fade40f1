"""Base and log file names: `<fileId>_<writeToken>_<instant>.parquet`, `.<fileId>_<ts>.log.<v>_<token>`."""

from __future__ import annotations

import re
from dataclasses import dataclass

BASE_FILE_EXTENSIONS = (".parquet", ".orc", ".hfile", ".lance")
PARTITION_METAFILE_PREFIX = ".hoodie_partition_metadata"

_BASE_FILE = re.compile(r"^(?P<file_id>.+)_(?P<token>[^_]+)_(?P<instant>\d{8,})(?P<ext>\.[a-z]+)$")
_LOG_FILE = re.compile(
    r"^\.(?P<file_id>.+)_(?P<instant>\d{8,})\.(?P<ext>log|archive)\.(?P<version>\d+)"
    r"(?:_(?P<token>\d+-\d+-\d+))?(?P<cdc>\.cdc|-cdc)?$"
)


@dataclass(frozen=True, slots=True)
class BaseFile:
    """A base (columnar) file of a file slice."""

    file_id: str
    write_token: str
    instant_time: str
    name: str
    partition_path: str
    size: int = 0

    @property
    def extension(self) -> str:
        return self.name[self.name.rfind(".") :]


@dataclass(frozen=True, slots=True)
class LogFile:
    """A log file of a file slice.

    Attributes:
        instant_time: the instant in the name: the slice's base instant on table version 6, the
            writing deltacommit's requested time on version 8+.
    """

    file_id: str
    instant_time: str
    version: int
    write_token: str
    name: str
    partition_path: str
    size: int = 0

    def sort_key(self) -> tuple[str, int, tuple[int, ...], str]:
        """Order of log files within a slice: instant, version, then write token as Hudi compares it."""
        return (self.instant_time, self.version, _token_key(self.write_token), self.name)


def _token_key(token: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in token.split("-"))
    except ValueError:
        return ()


def parse_base_file(name: str, partition_path: str, size: int = 0) -> BaseFile | None:
    """Parse a base file name; None when the name is not one."""
    if name.startswith("."):
        return None
    match = _BASE_FILE.match(name)
    if match is None or match.group("ext") not in BASE_FILE_EXTENSIONS:
        return None
    return BaseFile(
        file_id=match.group("file_id"),
        write_token=match.group("token"),
        instant_time=match.group("instant"),
        name=name,
        partition_path=partition_path,
        size=size,
    )


def parse_log_file(name: str, partition_path: str, size: int = 0) -> LogFile | None:
    """Parse a data log file name; None for other names, CDC logs and archive files."""
    match = _LOG_FILE.match(name)
    if match is None or match.group("cdc") or match.group("ext") != "log":
        return None
    return LogFile(
        file_id=match.group("file_id"),
        instant_time=match.group("instant"),
        version=int(match.group("version")),
        write_token=match.group("token") or "",
        name=name,
        partition_path=partition_path,
        size=size,
    )


def base_file_name(file_id: str, write_token: str, instant_time: str, extension: str = ".parquet") -> str:
    """The name Hudi gives a base file."""
    return f"{file_id}_{write_token}_{instant_time}{extension}"


def log_file_name(file_id: str, instant_time: str, version: int, write_token: str) -> str:
    """The name Hudi gives a log file."""
    return f".{file_id}_{instant_time}.log.{version}_{write_token}"
