"""The UI in a real browser on every real Hudi table in ../shared/hudi-tables (written by Apache
Hudi: copy-on-write and merge-on-read, versions 6, 8 and 9, Avro and Parquet log blocks,
rollbacks): each tab draws without an error and shows what the shim reads. One browser for the
module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import shim
from catalog.settings import Settings
from tests.browserkit import browser, wait_for
from tests.catalog.servekit import live_server
from tests.conftest import shared_table_names

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def site(shared_tables: dict[str, Path]) -> Iterator[tuple[str, object]]:
    tables = tuple(f"{name}={path}" for name, path in shared_tables.items())
    with live_server(Settings(tables=tables)) as server, browser() as driver:
        yield server.url, driver


def _tab(url: str, driver, name: str, tab: str) -> None:
    driver.get(f"{url}/ui/tables/{name}#{tab}")
    driver.refresh()
    wait_for(lambda: driver.find_element("css selector", "body").get_attribute("data-ready") == tab, what=tab)
    errors = [e.text for e in driver.find_elements("css selector", ".error") if e.is_displayed()]
    assert errors == [], errors


@pytest.mark.parametrize("name", shared_table_names())
def test_ui_draws_every_tab_of_a_real_table(site, shared_tables, name):
    url, driver = site
    table = shim.open_table(str(shared_tables[name]))
    _tab(url, driver, name, "schema")
    versions = driver.find_elements("css selector", "#schema-grid th.version")
    assert versions, "no schema version shown"
    last = [row.find_elements("css selector", "td")[-1].text.split("\n")[0]
            for row in driver.find_elements("css selector", "#schema-grid tbody tr")]
    assert set(table.schema().names) <= {n for n in last if n}

    _tab(url, driver, name, "timeline")
    times = {i.requested_time for i in table.timeline()} | {a.requested_time for a in table.archived_timeline()}
    shown = [r.get_attribute("data-instant") for r in driver.find_elements("css selector", "#timeline tbody tr")]
    assert sorted(shown) == sorted(times)

    _tab(url, driver, name, "files")
    read = driver.find_elements("css selector", "#files-body .slice[data-state='read']")
    assert len(read) == len(table.file_slices())
    bases = {c.get_attribute("data-file") for c in driver.find_elements("css selector", "#files-body .slice[data-state='read'] .file.base")}
    assert bases == {s.base_file.name for s in table.file_slices() if s.base_file is not None}

    _tab(url, driver, name, "plan")
    columns = [th.text for th in driver.find_elements("css selector", "#plan-rows thead th")]
    assert columns == table.schema().names
    rows = driver.find_elements("css selector", "#plan-rows tbody tr")
    assert len(rows) == min(100, table.read().num_rows)
