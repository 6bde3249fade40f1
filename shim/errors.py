"""One exception hierarchy for everything hudi-shim raises.

Every error carries the structured facts it is about (file, instant, column) so callers, the
HTTP layer and the CLI can report them without parsing messages.
"""

from __future__ import annotations

import pyarrow as pa

UNDECODABLE: tuple[type[BaseException], ...] = (OSError, ValueError, pa.ArrowException)
"""What pyarrow raises for bytes it cannot decode: I/O and Arrow errors, and ValueErrors such as
a UnicodeDecodeError from a damaged footer's column names."""


class HudiShimError(Exception):
    """Base class of all hudi-shim errors."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        instant: str | None = None,
        column: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.instant = instant
        self.column = column


class TableNotFoundError(HudiShimError):
    """The path holds no Hudi table (no `.hoodie/hoodie.properties`)."""


class InvalidTableError(HudiShimError):
    """Table metadata exists but cannot be understood (malformed properties, timeline or plan)."""


class UnsupportedFeatureError(HudiShimError):
    """The table uses a feature hudi-shim does not read; raised before any row is returned."""

    def __init__(self, message: str, *, feature: str, **kwargs: str | None) -> None:
        super().__init__(message, **kwargs)
        self.feature = feature


class CorruptFileError(HudiShimError):
    """A data or log file cannot be decoded."""

    def __init__(self, message: str, *, path: str, offset: int | None = None, **kwargs: str | None) -> None:
        super().__init__(message, path=path, **kwargs)
        self.offset = offset


class CommittedDataError(CorruptFileError):
    """Data a completed commit wrote cannot be read: a file it wrote is missing though no clean or
    rollback removed it, or a block inside the bytes it appended is damaged. Reading on would
    silently return older or fewer rows."""


class FileGoneError(HudiShimError):
    """A file listed when the read was planned no longer exists: a clean, rollback, replace or
    archival removed it meanwhile. Reading again (a new plan) sees the table without it."""


def file_gone(path: str) -> FileGoneError:
    """The error for a file that vanished after it was listed."""
    return FileGoneError(
        f"{path} is gone: it was removed (by a clean, a rollback or archival) after the read was planned; "
        "read again",
        path=path,
    )


def is_missing_file(error: BaseException) -> bool:
    """Whether an I/O error says a file does not exist (Python's or Arrow's wording)."""
    return isinstance(error, FileNotFoundError) or (
        isinstance(error, OSError | ValueError) and "No such file or directory" in str(error))


class StorageError(HudiShimError):
    """An object store or HDFS refused or failed an operation on a location."""

    def __init__(self, message: str, *, location: str = "") -> None:
        super().__init__(message)
        self.location = location


class InstantNotFoundError(HudiShimError):
    """A requested instant (as_of, incremental bound) is not on the timeline or malformed."""


class ColumnNotFoundError(HudiShimError):
    """A projection or filter names a column the table does not have."""


class InvalidFilterError(HudiShimError):
    """A filter expression cannot be parsed or does not fit the column's type."""


class SchemaEvolutionError(HudiShimError):
    """A file's schema cannot be reconciled to the query schema (a type change Hudi forbids)."""


class WriteError(HudiShimError):
    """A write could not be committed."""


class ConcurrentWriteError(WriteError):
    """Another writer holds the table."""


class ScanLimitError(HudiShimError):
    """A scan would exceed a limit set on it: rows, bytes or time (the server's, or the caller's)."""


class InvalidArgumentError(HudiShimError):
    """A call argument is not acceptable (unknown scan mode, bad limit, ...)."""
