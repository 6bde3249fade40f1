"""A read planned before a clean removed its files: in process and over HTTP it is planned again
on the newer timeline (the new rows come back), and when it cannot be it fails naming the file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import shim
from catalog.server import running
from catalog.service import Catalog
from catalog.settings import MEMORY, Settings
from engines.http import ShimClient
from shim.errors import CommittedDataError, FileGoneError
from tests.writekit import data_files, shim_rows, write

KEEP_ONE_VERSION = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}


def trips(ts: int) -> list[dict]:
    return [{"id": f"k{i:02d}", "ts": ts, "region": ("eu", "us")[i % 2], "fare": float(ts * 100 + i)}
            for i in range(20)]


def rewrite_and_clean(path: Path, ts: int) -> None:
    """Update every row; the clean after the commit removes the files the previous version read."""
    before = set(data_files(path))
    write(path, trips(ts), **KEEP_ONE_VERSION)
    assert before - set(data_files(path)), "the clean removed no file"


def test_a_table_opened_before_a_clean_reads_what_is_there_now(tmp_path: Path) -> None:
    path = tmp_path / "trips"
    write(path, trips(1), **KEEP_ONE_VERSION)
    opened = shim.open_table(str(path))
    rewrite_and_clean(path, 2)
    # Its old timeline with today's files would hold no file group at all: it reloads instead.
    assert sorted((r["id"], r["ts"]) for r in opened.read().to_pylist()) == [(f"k{i:02d}", 2) for i in range(20)]
    assert len(opened.file_slices()) == 4


def test_a_read_whose_files_a_clean_removes_names_the_file_and_read_plans_again(tmp_path: Path) -> None:
    path = tmp_path / "trips"
    write(path, trips(1), **KEEP_ONE_VERSION)
    table = shim.open_table(str(path))
    planned = table.scan()  # planned now, files opened as batches are read
    rewrite_and_clean(path, 2)
    with pytest.raises(FileGoneError, match=r"\.parquet is gone: it was removed .* read again") as caught:
        planned.read_all()
    assert caught.value.path is not None and not os.path.exists(caught.value.path)
    real_plan = shim.TableSnapshot.plan
    calls: list[int] = []

    def planned_before_a_clean(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        reader = real_plan(self, *args, **kwargs)
        calls.append(1)
        if len(calls) == 1:
            rewrite_and_clean(path, 3)
        return reader

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(shim.TableSnapshot, "plan", planned_before_a_clean)
        rows = table.read().to_pylist()
    assert len(calls) == 2 and {r["ts"] for r in rows} == {3} and len(rows) == 20
    assert [r["fare"] for r in shim_rows(path)] == [r["fare"] for r in sorted(trips(3), key=lambda r: r["id"])]


def test_the_server_plans_again_when_a_clean_removes_the_files_of_its_plan(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "trips"
    write(path, trips(1), **KEEP_ONE_VERSION)
    planned = Catalog.scan
    calls: list[int] = []

    def scan_then_clean(self, name, request, **kwargs):  # type: ignore[no-untyped-def]
        reader = planned(self, name, request, **kwargs)
        calls.append(len(calls))
        if len(calls) == 1:  # a writer commits and cleans between the plan and the first batch
            rewrite_and_clean(path, len(calls) + 1)
        return reader

    monkeypatch.setattr(Catalog, "scan", scan_then_clean)
    with running(Settings(warehouse=str(tmp_path), catalog_db=MEMORY)) as live:
        rows = ShimClient(live.url).scan("trips").to_pylist()
    assert len(calls) == 2
    assert sorted((r["id"], r["ts"]) for r in rows) == [(f"k{i:02d}", 2) for i in range(20)]


def test_a_file_that_stays_gone_is_a_committed_data_error_naming_it(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "trips"
    write(path, trips(1))
    planned = Catalog.scan
    calls: list[int] = []

    def scan_then_lose_files(self, name, request, **kwargs):  # type: ignore[no-untyped-def]
        reader = planned(self, name, request, **kwargs)
        calls.append(1)
        for name_ in data_files(path):  # files vanish behind the timeline's back (not a clean)
            os.remove(path / name_)
        return reader

    monkeypatch.setattr(Catalog, "scan", scan_then_lose_files)
    with running(Settings(warehouse=str(tmp_path), catalog_db=MEMORY)) as live:
        import httpx

        answer = httpx.post(f"{live.url}/v1/tables/trips/scan", json={"mode": "snapshot"}, timeout=30)
        # Planned again once on the files listed anew, which lack files completed commits wrote.
        assert answer.status_code == 500, answer.text
        error = answer.json()["error"]
        assert error["type"] == "CommittedDataError" and error["message"].startswith("trips/")
        assert ".parquet is missing" in error["message"]
        assert len(calls) == 1  # the second plan failed
        with pytest.raises(CommittedDataError, match="is missing"):
            ShimClient(live.url).scan("trips")  # not asked again: nothing will bring the files back
