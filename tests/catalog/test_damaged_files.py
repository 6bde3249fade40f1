"""Files removed or damaged under a real server: nothing is lost silently, nothing escapes as an
unhandled exception. Files are removed at the moment the scan reaches them (a hook around the
reader's own open), so each test shows one exact sequence of events."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import httpx
import pyarrow as pa
import pytest

import shim.read.log_blocks
from catalog.settings import Settings
from catalog.stream import SKIPPED_METADATA_KEY
from engines.http import ShimClient
from shim.errors import CommittedDataError, FileGoneError
from shim.storage import as_storage
from shim.timeline.instant import Action
from shim.write.data_files import write_base_file
from tests.catalog.servekit import ScanOutcome, live_server, logged, scan_outcome, server_log
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
    writes = [write_base_file(as_storage(str(table.path)), table.config, partition_path="", file_id=f"fg{f}-0", instant=instant,
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

    def reading(storage, path: str):
        event = targets.get(path)
        if event is not None:
            assert event.wait(30), "the test never let the scan go on"
            Path(path).unlink()
        return original(storage, path)

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
        with pytest.raises(FileGoneError, match=gone.name) as info:
            reader.read_all()
    assert str(tmp_path) not in str(info.value) and str(info.value).startswith(f"t/{gone.name} is gone")
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
    assert str(tmp_path) not in message and message.startswith("cannot read Parquet data from t/fg2-0_")


def test_a_log_file_removed_before_the_first_batch_is_a_committed_data_error(tmp_path, remove_when_opened):
    table = build_groups(tmp_path / "wh", groups=1)
    gone = log_of(table, 0)
    already = threading.Event()
    already.set()
    remove_when_opened(gone, after=already)
    with live_server(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:")) as live, \
            server_log() as records:
        outcome = scan_outcome(live.url, "t", {})
    # Planned again on a fresh listing, which lacks the log a completed commit wrote.
    assert (outcome.status, outcome.rows) == (500, 0)
    assert outcome.error["type"] == "CommittedDataError"
    assert gone.name in outcome.error["message"] and outcome.error["instant"] == table.instants[1]
    assert "Exception in ASGI application" not in logged(records)


def asked_again_if_gone(url: str, body: dict) -> ScanOutcome:
    """A scan, asked once more when a file was found gone under it (as `ShimClient.scan` does):
    a scan planned on the listing from before the removal meets the file gone; the next one lists
    the files anew."""
    outcome = scan_outcome(url, "t", body)
    if outcome.error is not None and outcome.error["type"] == "FileGoneError":
        outcome = scan_outcome(url, "t", body)
    return outcome


@pytest.mark.parametrize("scanned_before", [False, True])
def test_a_missing_committed_base_file_is_an_error_naming_it_not_a_partial_result(tmp_path, scanned_before):
    table = build_groups(tmp_path / "wh", groups=4)
    [gone] = table.path.glob("fg2-0_*.parquet")
    with live_server(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:")) as live:
        if scanned_before:
            assert scan_outcome(live.url, "t", {"columns": ["id"]}).rows == 4 * ROWS_PER_GROUP
        gone.unlink()
        outcomes = [asked_again_if_gone(live.url, {"columns": ["id"], "mode": mode})
                    for mode in ("snapshot", "read_optimized")]
    for outcome in outcomes:
        assert outcome.error is not None, f"{outcome.rows} of {4 * ROWS_PER_GROUP} rows and no error"
        assert outcome.error["type"] == "CommittedDataError"
        assert gone.name in outcome.error["message"]
        assert outcome.error["instant"] == table.instants[4]  # the third group's base commit
        assert outcome.status == 500 or not outcome.complete


def test_a_removed_partition_folder_is_an_error_too(tmp_path):
    table = TinyTable(tmp_path / "wh" / "t", SCHEMA, partition=["v"])
    table.base([{"id": "a", "ts": 1, "v": "x"}], partition="v=x")
    written = table.base([{"id": "b", "ts": 1, "v": "y"}], partition="v=y", file_id="fg2-0")
    for path in (table.path / "v=y").iterdir():
        path.unlink()
    (table.path / "v=y").rmdir()
    with live_server(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:")) as live:
        outcome = scan_outcome(live.url, "t", {})
    assert (outcome.status, outcome.error["type"], outcome.error["instant"]) == (500, "CommittedDataError", written)


def test_the_client_raises_committed_data_errors_as_the_shims_own(tmp_path):
    table = build_groups(tmp_path / "wh", groups=2)
    [gone] = table.path.glob("fg1-0_*.parquet")
    gone.unlink()
    with live_server(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:")) as live, \
            pytest.raises(CommittedDataError, match=gone.name) as info:
        ShimClient(live.url).scan("t")
    assert info.value.instant == table.instants[2]


def flip_second_magic(table: TinyTable, group: int) -> tuple[Path, int]:
    """Damage the magic of the second block (the delete block) of the group's log: Hudi's reader
    then drops the whole file. Returns the log and its size."""
    log = log_of(table, group)
    data = bytearray(log.read_bytes())
    data[data.find(b"#HUDI#", 1)] ^= 0x01
    log.write_bytes(bytes(data))
    return log, len(data)


def build_logged(root: Path) -> TinyTable:
    """Two file groups, each base file updated by a log of a data block and a delete block."""
    table = TinyTable(root / "t", SCHEMA)
    for g in range(2):
        base = table.base([{"id": f"g{g}-{i}", "ts": 1, "v": "old"} for i in range(100)], file_id=f"fg{g}-0")
        table.log([{"id": f"g{g}-{i}", "ts": 2, "v": "new"} for i in range(50)], deletes=[f"g{g}-99"],
                  file_id=f"fg{g}-0", base_instant=base)
    return table


def test_a_damaged_committed_log_block_is_a_500_naming_file_offset_and_instant(tmp_path):
    table = build_logged(tmp_path / "wh")
    log, _ = flip_second_magic(table, 1)
    with live_server(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:")) as live:
        outcome = scan_outcome(live.url, "t", {})
        http_error = None
        try:
            ShimClient(live.url).scan("t")
        except CommittedDataError as exc:
            http_error = exc
    assert outcome.error is not None, f"{outcome.rows} rows and no error"
    assert outcome.status == 500 or not outcome.complete
    assert outcome.error["type"] == "CommittedDataError"
    assert (outcome.error["offset"], outcome.error["instant"]) == (0, table.instants[3])
    assert log.name in outcome.error["message"] and str(tmp_path) not in outcome.error["message"]
    assert http_error is not None and http_error.instant == table.instants[3]


def test_corrupt_skip_reads_on_and_reports_the_skipped_blocks_in_the_stream(tmp_path):
    table = build_logged(tmp_path / "wh")
    log, size = flip_second_magic(table, 1)
    with live_server(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:")) as live:
        result = ShimClient(live.url).scan("t", corrupt="skip")
        plain = httpx.post(f"{live.url}/v1/tables/t/scan", json={"corrupt": "skip"}, timeout=60)
    values = result.column("v").to_pylist()
    assert (values.count("new"), values.count("old")) == (50, 149)  # group 1's updates and delete lost
    report = json.loads(result.schema.metadata[SKIPPED_METADATA_KEY])
    assert report == {"count": 1, "blocks": [{"path": log.name, "offset": 0, "length": size,
                                              "reason": "no block magic follows it", "instant": table.instants[3]}]}
    assert plain.status_code == 200
    batches = []
    stream = pa.ipc.open_stream(plain.content)
    while True:
        try:
            batches.append(stream.read_next_batch_with_custom_metadata())
        except StopIteration:
            break
    last, metadata = batches[-1]
    assert last.num_rows == 0 and json.loads(metadata[SKIPPED_METADATA_KEY])["count"] == 1
