"""A table made under the warehouse of a running server is found the moment it is asked for by
name, even right after a miss, without searching the whole warehouse for every unknown name
(issue 36, finding 7: it was a 404 for about a second)."""

from __future__ import annotations

import httpx
import pyarrow as pa

from catalog.registry import Registry
from catalog.settings import Settings
from engines.http import ShimClient
from tests.catalog.servekit import live_server
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64())])


def test_a_table_asked_for_right_after_it_was_made_is_found_at_once(tmp_path, monkeypatch):
    warehouse = tmp_path / "wh"
    TinyTable(warehouse / "t", SCHEMA, mor=False).base([{"id": "a", "ts": 1}])
    for other in range(20):  # folders the lookups must not have to look into
        (warehouse / f"other{other}" / "deeper").mkdir(parents=True)
    searches = []
    original = Registry.discover
    monkeypatch.setattr(Registry, "discover", lambda self, *args: searches.append(args) or original(self, *args))
    with live_server(Settings(warehouse=str(warehouse), catalog_db=":memory:")) as live, \
            httpx.Client(base_url=live.url, timeout=30) as client:
        searches.clear()  # the search at startup
        answers = []
        for name, folder in (("fresh", warehouse / "fresh"), ("db_my_trips", warehouse / "db" / "my-trips")):
            before = client.get(f"/v1/tables/{name}").status_code
            TinyTable(folder, SCHEMA, mor=False).base([{"id": name, "ts": 1}])
            answers.append((before, client.get(f"/v1/tables/{name}").status_code, ShimClient(live.url).scan(name)))
        TinyTable(warehouse / "newest", SCHEMA).base([{"id": "n", "ts": 1}])
        iceberg = client.get("/iceberg/v1/namespaces/default/tables/newest_ro")
        unknown = {client.get(f"/v1/tables/nope{i}").status_code for i in range(50)}
    for (before, after, rows), name in zip(answers, ("fresh", "db_my_trips")):
        assert (before, after) == (404, 200)
        assert rows.to_pylist() == [{"id": name, "ts": 1}]
    assert iceberg.status_code == 200, iceberg.text
    assert unknown == {404}
    assert searches == []  # found by the folders their names can lie in, never by searching everything
