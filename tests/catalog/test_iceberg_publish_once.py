"""Publications share their work (issue 36, finding 8: a first Iceberg load of a merge-on-read
table took 70 s while a Hadoop catalog refresh published the same table): concurrent loads of one
version of a view publish it once, and a slice's log side is merged and written out once, however
many publications need it (the latest and past snapshots of a view, its Presto twin by name)."""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pyarrow as pa

import catalog.iceberg.materialize
from catalog.iceberg.publish import IcebergPublisher
from catalog.settings import Settings
from tests.catalog.servekit import live_server
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.float64())])


def merge_on_read(root: Path, groups: int = 2, updates: int = 6) -> TinyTable:
    """`groups` file groups, then `updates` commits each updating one group through a log file."""
    table = TinyTable(root / "t", SCHEMA)
    bases = [table.base([{"id": f"{g}-{i}", "ts": 1, "v": 0.0} for i in range(200)], file_id=f"fg{g}-0")
             for g in range(groups)]
    for u in range(updates):
        g = u % groups
        table.log([{"id": f"{g}-{i}", "ts": 2 + u, "v": float(u)} for i in range(u, 200, 7)], file_id=f"fg{g}-0",
                  base_instant=bases[g])
    return table


def load(url: str, name: str = "t") -> httpx.Response:
    return httpx.get(f"{url}/iceberg/v1/namespaces/default/tables/{name}", timeout=60)


def test_two_concurrent_loads_of_an_unpublished_view_publish_it_once(tmp_path, monkeypatch):
    merge_on_read(tmp_path / "wh")
    entered, publications = [], []
    both_asked = threading.Event()
    publish, versions = IcebergPublisher.publish, IcebergPublisher._versions

    def asked(self, *args, **kwargs):
        entered.append(args)
        if len(entered) == 2:
            both_asked.set()
        return publish(self, *args, **kwargs)

    def publishing(self, *args, **kwargs):
        publications.append(args[2])  # the view
        assert both_asked.wait(30), "the second load never came"  # it arrives while this one works
        return versions(self, *args, **kwargs)

    monkeypatch.setattr(IcebergPublisher, "publish", asked)
    monkeypatch.setattr(IcebergPublisher, "_versions", publishing)
    with live_server(Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:")) as live, \
            ThreadPoolExecutor(2) as pool:
        first, second = pool.map(lambda _: load(live.url), range(2))
        again = load(live.url)
    assert (first.status_code, second.status_code) == (200, 200), first.text[:300]
    assert publications == ["snapshot"]
    assert first.json() == second.json() == again.json()
    assert len(first.json()["metadata"]["snapshots"]) == 8


def test_each_log_side_is_merged_once_whichever_publications_need_it(tmp_path, monkeypatch):
    """The startup refresh of the Hadoop catalog folder (Presto's views, by name), Iceberg loads of
    both views and a publish of every table, some at the same time: no slice of any snapshot is
    merged twice (each was, once per snapshot and per kind of reader, before)."""
    merge_on_read(tmp_path / "wh")
    merged: Counter[tuple[object, ...]] = Counter()
    original = catalog.iceberg.materialize.slice_merge_state

    def merging(scan, file_slice):
        merged[(file_slice, scan.read_instant)] += 1
        return original(scan, file_slice)

    monkeypatch.setattr(catalog.iceberg.materialize, "slice_merge_state", merging)
    settings = Settings(warehouse=str(tmp_path / "wh"), catalog_db=":memory:", iceberg_slices="deletes", hadoop_catalog_dir=str(tmp_path / "hd"))
    with live_server(settings) as live, ThreadPoolExecutor(3) as pool:
        answers = list(pool.map(lambda name: load(live.url, name), ["t", "t", "t_ro"]))
        published = httpx.post(f"{live.url}/v1/publish", timeout=60)
    assert [answer.status_code for answer in answers] == [200, 200, 200]
    assert published.status_code == 200 and published.json()["failed"] == {}, published.text
    assert (tmp_path / "hd" / "default" / "t" / "metadata" / "version-hint.text").is_file()
    assert merged and max(merged.values()) == 1, [count for count in merged.values() if count > 1]
    assert len(merged) == 8  # each group's slice under each of the 4 commits that wrote it (base, 3 logs)
