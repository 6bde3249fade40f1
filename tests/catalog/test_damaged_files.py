"""Files removed or damaged under a real server: nothing is lost silently, nothing escapes as an
unhandled exception. Files are removed at the moment the scan reaches them (a hook around the
reader's own open), so each test shows one exact sequence of events."""

from __future__ import annotations

import threading
from pathlib import Path

import pyarrow as pa
import pytest

import shim.read.log_blocks
from catalog.settings import Settings
from engines.http import ShimClient
from shim.errors import FileGoneError
from shim.timeline.instant import Action
from shim.write.data_files import write_base_file
from tests.catalog.servekit import live_server, logged, scan_outcome, server_log
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.string())])
ROWS_PER_GROUP = 50_000


def build_groups(root: Path, groups: int = 3) -> TinyTable:
    """A merge-on-read table of `groups` file groups, each a base file and a log updating its first row."""
    table = TinyTable(root / "t", SCHEMA)
    for g in range(groups):
        rows = [{"id": f"g{g}-{i:06d}", "ts": 1, "v": "base"} for i in range(ROWS_PER_GROUP)]
        base = table.base(rows, file_id=f"fg{g}-0")
        table.log([{"id": f"g{g}-000000", "ts": 2, "v": "log"}], file_id=f"fg{g}-0", base_instant=base)
    return table


def one_commit_of_files(root: Path, files: int) -> TinyTable:
    """A copy-on-write table whose one commit wrote `files` base files into one partition."""
    table = TinyTable(root / "t", SCHEMA, mor=False)
    instant, _ = table._begin(Action.COMMIT)
    writes = [write_base_file(str(table.path), table.config, partition_path="", file_id=f"fg{f}-0", instant=instant,
                              write_token="0-1-0", data=pa.Table.from_pylist(
                                  [{"id": f"{f}-{i}", "ts": 1, "v": "x" * 20} for i in range(20_000)], schema=SCHEMA))
              for f in range(files)]
    table._commit(writes, instant, Action.COMMIT, True, None)
    return table


def damage(path: Path, at: float = 0.33, size: int = 200) -> None:
    """Overwrite `size` bytes of the file's data pages (its footer stays readable)."""
    data = bytearray(path.read_bytes())
    start = int(len(data) * at)
    data[start:start + size] = bytes((b ^ 0x5A) for b in data[start:start + size])
    path.write_bytes(bytes(data))


def log_of(table: TinyTable, group: int) -> Path:
    [path] = table.path.glob(f".fg{group}-0_*.log.*")
    return path


@pytest.fixture
def remove_when_opened(monkeypatch):
    """`remove(path, after=event)`: the log file at `path` is removed just before the scan opens
    it, once `after` is set (waited for at most 30 s)."""
    original = shim.read.log_blocks.read_log_file
    targets: dict[str, threading.Event] = {}

    def reading(path: str):
        event = targets.get(path)
        if event is not None:
            assert event.wait(30), "the test never let the scan go on"
            Path(path).unlink()
        return original(path)

    monkeypatch.setattr(shim.read.log_blocks, "read_log_file", reading)

    def remove(path: Path, after: threading.Event) -> None:
        targets[str(path)] = after

    return remove


def test_a_log_file_removed_mid_stream_ends_the_stream_with_file_gone(tmp_path, remove_when_opened):
    table = build_groups(tmp_path / "wh")
    first_batch_read = threading.Event()
    gone = log_of(table, 2)
    remove_when_opened(gone, after=first_batch_read)
    settings = Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:", batch_rows=4096)
    with live_server(settings) as live, server_log() as records:
        reader = ShimClient(live.url).scan_batches("t")
        reader.read_next_batch()
        first_batch_read.set()
        with pytest.raises(FileGoneError, match=gone.name):
            reader.read_all()
    assert "Exception in ASGI application" not in logged(records)
    assert "FileNotFoundError" not in logged(records)


def test_a_corrupt_base_file_among_several_is_the_one_file_named(tmp_path):
    table = one_commit_of_files(tmp_path / "wh", files=4)
    files = sorted(table.path.glob("*.parquet"))
    damage(files[2])
    with live_server(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:")) as live:
        outcome = scan_outcome(live.url, "t", {"mode": "read_optimized"})
    assert outcome.error is not None and outcome.error["type"] == "CorruptFileError"
    message = outcome.error["message"]
    assert files[2].name in message
    assert [f.name for f in files if f.name in message] == [files[2].name]
