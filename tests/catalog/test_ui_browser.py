"""The UI in a real browser (Debian's headless Chromium) against a real server on 127.0.0.1: the
login form, the tables list (also without JavaScript), the schema history grid, the timeline,
the files with their column mappings and misread flags, and a scan's plan and rows, on an evolved
table (rename, drop, drop and re-add, widening). Screenshots go to $HUDI_SHIM_SCREENSHOTS (docs/,
for docs/ui.md) or a tmp folder. One browser for the module."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pyarrow as pa
import pytest

from catalog.settings import Settings
from tests.browserkit import browser, screenshot_dir, wait_for
from tests.catalog.servekit import live_server
from tests.tablekit import EvolvingTable, add, drop, rename, retype

TOKEN = "ui-test-token"
RIDES = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string()), ("rider", pa.string()),
                   ("note", pa.string()), ("fare", pa.int32()), ("tip", pa.int32())])


@dataclass
class Site:
    url: str
    driver: object
    rides: EvolvingTable
    first: str  # the first commit
    shots: Path

    def open(self, path: str) -> None:
        self.driver.get(self.url + path)  # type: ignore[attr-defined]

    def shot(self, name: str) -> None:
        self.driver.save_screenshot(str(self.shots / f"ui-{name}.png"))  # type: ignore[attr-defined]


def build_rides(root: Path) -> tuple[EvolvingTable, str]:
    """`rides` (MOR, by city): rider renamed to passenger, note dropped, tip dropped and re-added as
    text, fare widened from int to double; a new base file and a log update in the new schema."""
    rides = EvolvingTable(root / "rides", RIDES, partition=["city"])
    first = rides.base([{"id": "a", "ts": 1, "city": "sf", "rider": "ann", "note": "n1", "fare": 10, "tip": 1},
                        {"id": "b", "ts": 1, "city": "sf", "rider": "bob", "note": "n2", "fare": 20, "tip": 2}],
                       partition="city=sf")
    rides.base([{"id": "c", "ts": 1, "city": "ny", "rider": "cy", "note": "n3", "fare": 30, "tip": 3}],
               partition="city=ny", file_id="fg2-0")
    rides.alter(rename("rider", "passenger"))
    rides.alter(drop("note"))
    rides.alter(drop("tip"))
    rides.alter(add("tip", "string"))
    rides.alter(retype("fare", "double"))
    rides.base([{"id": "d", "ts": 1, "city": "la", "passenger": "di", "fare": 7.5, "tip": "cash"}],
               partition="city=la", file_id="fg3-0")
    rides.log([{"id": "a", "ts": 2, "city": "sf", "passenger": "ann", "fare": 15.5, "tip": "card"}],
              partition="city=sf", base_instant=first)
    return rides, first


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("ui-warehouse")
    rides, first = build_rides(root)
    shots = screenshot_dir(tmp_path_factory.mktemp("ui-shots"))
    with live_server(Settings(warehouse=str(root), token=TOKEN)) as server, browser() as driver:
        yield Site(server.url, driver, rides, first, shots)


def _text(driver: object, selector: str) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, selector).text  # type: ignore[attr-defined]


def _all(driver: object, selector: str) -> list:
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, selector)  # type: ignore[attr-defined]


def _log_in(site: Site) -> None:
    from selenium.webdriver.common.by import By

    site.open("/ui")
    if "/ui/login" in site.driver.current_url:  # type: ignore[attr-defined]  # (else the cookie is there)
        field = site.driver.find_element(By.NAME, "token")  # type: ignore[attr-defined]
        field.send_keys(TOKEN)
        field.submit()
    wait_for(lambda: _all(site.driver, "#tables tbody tr[data-table]"), what="the tables list")


def test_ui_login_form_refuses_a_wrong_token_then_lets_the_right_one_in(site):
    from selenium.webdriver.common.by import By

    site.open("/ui/tables/rides")
    assert "/ui/login" in site.driver.current_url
    field = site.driver.find_element(By.NAME, "token")
    field.send_keys("not-it")
    field.submit()
    assert "not the server's token" in wait_for(lambda: _text(site.driver, "p.error"))
    _log_in(site)
    assert site.driver.current_url.rstrip("/").endswith("/ui")


def test_ui_json_needs_the_token_or_the_login_cookie(site):
    refused = httpx.get(f"{site.url}/ui/api/tables")
    assert refused.status_code == 401
    assert refused.json()["error"]["type"] == "UnauthorizedError"
    allowed = httpx.get(f"{site.url}/ui/api/tables", headers={"Authorization": f"Bearer {TOKEN}"})
    assert [t["name"] for t in allowed.json()] == ["rides"]
    assert httpx.get(f"{site.url}/ui", follow_redirects=False).status_code == 303


def test_ui_tables_page_lists_the_table_with_its_facts(site):
    _log_in(site)
    [row] = _all(site.driver, "#tables tbody tr[data-table='rides']")
    cells = [c.text for c in row.find_elements("css selector", "td")]
    table = site.rides
    assert cells[0] == "rides" and cells[2] == "MERGE_ON_READ" and cells[3] == "6"
    assert cells[4].endswith("deltacommit · UPSERT")  # the log update is the last commit
    assert cells[5] == "≈ 4" and cells[6] == "3"  # rows a, b, c, d; slices of sf, ny, la
    assert cells[7] == str(table.path)
    assert cells[8].split() == ["rides", "rides_ro", "default.rides", "default.rides_ro"]
    site.shot("tables")


def test_ui_tables_page_lists_the_tables_without_javascript(site):
    _log_in(site)
    site.driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
    try:
        site.open("/ui")
        names = [r.get_attribute("data-table") for r in _all(site.driver, "#tables tbody tr")]
        assert names == ["rides"]
        assert _all(site.driver, "#tables tbody tr td a")[0].get_attribute("href").endswith("/ui/tables/rides")
    finally:
        site.driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})


def _open_table(site: Site, tab: str) -> None:
    site.open(f"/ui/tables/rides#{tab}")
    site.driver.refresh()  # a new hash alone does not load the page again
    wait_for(lambda: site.driver.find_element("css selector", "body").get_attribute("data-ready") == tab,
             what=f"the {tab} tab")


def _grid(site: Site) -> dict[str, list[tuple[str, str]]]:
    """Row id -> [(change, text) per version] of the schema grid."""
    rows = {}
    for row in _all(site.driver, "#schema-grid tbody tr"):
        cells = row.find_elements("css selector", "td")
        rows[row.get_attribute("data-id")] = [(c.get_attribute("data-change"), c.text.replace("\n", " ")) for c in cells]
    return rows


def test_ui_schema_grid_shows_rename_drop_readd_and_widening_by_column_id(site):
    _log_in(site)
    _open_table(site, "schema")
    versions = [th.get_attribute("data-version") for th in _all(site.driver, "#schema-grid th.version")]
    assert len(versions) == 6  # the first write, then five schema changes
    grid = _grid(site)
    # ids: meta columns 0-4, then id 5, ts 6, city 7, rider 8, note 9, fare 10, tip 11; the new tip 12
    assert list(grid) == ["5", "6", "7", "8", "9", "10", "11", "12"]
    assert grid["8"][0] == ("initial", "rider string")
    assert grid["8"][1] == ("renamed", "passenger (was rider) string")
    assert site.driver.find_element("css selector", "tr[data-id='8'] th.names").text == "rider → passenger"
    assert [c for c, _ in grid["9"]] == ["initial", "same", "dropped", "absent", "absent", "absent"]
    assert [c for c, _ in grid["11"]] == ["initial", "same", "same", "dropped", "absent", "absent"]
    assert grid["12"][4] == ("readded", "tip string re-added (new id)")
    assert grid["12"][5] == ("same", "tip string")
    assert grid["10"][4] == ("same", "fare int")
    assert grid["10"][5] == ("widened", "fare int → double")
    operations = [th.text.split("\n")[-1] for th in _all(site.driver, "#schema-grid th.version")]
    assert operations == ["UPSERT"] + ["ALTER_SCHEMA"] * 5
    site.shot("schema")


def test_ui_schema_version_links_to_the_instant_that_made_it(site):
    _log_in(site)
    _open_table(site, "schema")
    header = _all(site.driver, "#schema-grid th.version")[1]
    version = header.get_attribute("data-version")
    header.find_element("css selector", "a").click()
    row = wait_for(lambda: _all(site.driver, f"#timeline tr#instant-{version}.highlight"), what="the instant")[0]
    assert row.get_attribute("data-action") == "commit"
    assert "ALTER_SCHEMA" in row.text


def test_ui_timeline_lists_every_instant_with_its_states_and_writes(site):
    _log_in(site)
    _open_table(site, "timeline")
    rows = _all(site.driver, "#timeline tbody tr")
    assert [r.get_attribute("data-instant") for r in rows] == site.rides.instants
    assert {r.get_attribute("data-state") for r in rows} == {"completed"}
    first = rows[0]
    assert first.find_elements("css selector", "span.badge") and \
        [b.text for b in first.find_elements("css selector", "td:nth-child(3) span.badge")] == \
        ["requested", "inflight", "completed"]
    assert "1 file in 1 partition: 2 inserted, 0 updated, 0 deleted" in first.text
    last = rows[-1]
    assert last.get_attribute("data-action") == "deltacommit"
    last.find_element("css selector", "details summary").click()
    assert ".fg1-0_" in last.find_element("css selector", "details ul").text
    site.shot("timeline")


def _chip(site: Site, name_part: str):
    return wait_for(lambda: [c for c in _all(site.driver, "#files-body .file.base")
                             if name_part in c.get_attribute("data-file")], what=f"file {name_part}")[0]


def _hover(site: Site, element) -> str:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(site.driver).move_to_element(element).perform()
    tip = wait_for(lambda: [t for t in _all(site.driver, "#tooltip") if t.is_displayed()], what="the tooltip")[0]
    return tip.text


def test_ui_files_flag_what_by_name_and_by_position_readers_misread(site):
    _log_in(site)
    _open_table(site, "files")
    first_base = f"fg1-0_0-1-0_{site.first}.parquet"
    old = _chip(site, first_base)
    assert old.get_attribute("data-misreads") == "5"
    text = _hover(site, old)
    assert "rider string → passenger 8 string rename" in text
    assert "fare int32 → fare 10 double cast" in text
    assert "— → tip 12 string null" in text
    assert "by name: passenger reads NULL: the file holds this column as 'rider'" in text
    assert "by name: tip reads the values of 'tip' (id 11, a dropped column), where it should read NULL" in text
    assert "by name: fare reads int32 values where the table has double" in text
    assert "by position: fare reads the values of the file's column 5, 'note' (id 9, a dropped column)" in text
    assert "by position: tip reads the values of the file's column 6, 'fare' (id 10), where it should read NULL" in text
    site.shot("files")
    new = _chip(site, "fg3-0_")
    assert new.get_attribute("data-misreads") == "0"
    assert "By-name and by-position readers read this file right." in _hover(site, new)
    [block] = _all(site.driver, "#files-body .file.block")
    assert block.get_attribute("data-misreads") == "0"
    summary = site.driver.find_element("css selector", "#files-summary strong")
    assert summary.get_attribute("data-misread-files") == "2"  # the two base files written before the changes


def test_ui_files_as_of_the_first_commit_show_that_read(site):
    from selenium.webdriver.common.by import By

    _log_in(site)
    _open_table(site, "files")
    form = site.driver.find_element(By.ID, "files-form")
    form.find_element(By.NAME, "as_of").send_keys(site.first)
    form.find_element(By.CSS_SELECTOR, "button").click()
    wait_for(lambda: site.driver.find_element(By.ID, "files-summary").get_attribute("data-instant") == site.first,
             what="the files as of the first commit")
    read = [s.get_attribute("data-state") for s in _all(site.driver, "#files-body .slice")]
    assert read.count("read") == 1  # only sf's first base file existed then
    chip = _chip(site, f"fg1-0_0-1-0_{site.first}.parquet")
    assert chip.get_attribute("data-misreads") == "0"  # read with the schema of its time


def _plan(site: Site, filter_text: str, *, as_of: str = "", mode: str = "snapshot") -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    _open_table(site, "plan")
    site.driver.execute_script("delete document.body.dataset.planned")
    form = site.driver.find_element(By.ID, "plan-form")
    form.find_element(By.NAME, "filter").send_keys(filter_text)
    if as_of:
        form.find_element(By.NAME, "as_of").send_keys(as_of)
    Select(form.find_element(By.NAME, "mode")).select_by_value(mode)
    form.find_element(By.CSS_SELECTOR, "button").click()
    wait_for(lambda: site.driver.find_element(By.TAG_NAME, "body").get_attribute("data-planned") == "1",
             what="the plan")


def _rows(site: Site) -> list[dict[str, str]]:
    names = [th.text for th in _all(site.driver, "#plan-rows thead th")]
    return [dict(zip(names, [td.text for td in tr.find_elements("css selector", "td")], strict=True))
            for tr in _all(site.driver, "#plan-rows tbody tr")]


def test_ui_plan_prunes_partitions_and_merges_the_log_block(site):
    _log_in(site)
    _plan(site, "city = 'sf' AND fare > 12")
    partitions = {r.get_attribute("data-partition"): r.text for r in _all(site.driver, "#plan-partitions tbody tr")}
    assert partitions == {"city=la": "city=la pruned city = 'sf' is false where city = 'la'",
                          "city=ny": "city=ny pruned city = 'sf' is false where city = 'ny'",
                          "city=sf": "city=sf read"}
    [sf] = _all(site.driver, "#plan-files tbody tr")
    assert sf.get_attribute("data-base") == "read"
    assert "city = 'sf': true on every row of this partition" in sf.text
    merged = sf.find_elements("css selector", "ol li")
    assert len(merged) == 1 and merged[0].text.startswith(".fg1-0_")
    rows = sorted(_rows(site), key=lambda r: r["id"])
    assert rows == [
        {"id": "a", "ts": "2", "city": "sf", "passenger": "ann", "fare": "15.5", "tip": "card"},
        {"id": "b", "ts": "1", "city": "sf", "passenger": "bob", "fare": "20", "tip": "NULL"},
    ]
    site.shot("plan")


def test_ui_plan_skips_base_files_by_bloom_filter_and_statistics(site):
    _log_in(site)
    _plan(site, "id = 'c'")
    bases = {r.get_attribute("data-file-id"): r.get_attribute("data-base") for r in _all(site.driver, "#plan-files tbody tr")}
    assert bases == {"fg1-0": "skipped by bloom filter", "fg2-0": "read", "fg3-0": "skipped by bloom filter"}
    assert _rows(site) == [{"id": "c", "ts": "1", "city": "ny", "passenger": "cy", "fare": "30", "tip": "NULL"}]
    _plan(site, "fare > 100", mode="read_optimized")
    files = {r.get_attribute("data-file-id"): r for r in _all(site.driver, "#plan-files tbody tr")}
    assert files["fg3-0"].get_attribute("data-base") == "skipped by statistics"
    assert "fare > 100.0e0 is false for fare from 7.5 to 7.5" in files["fg3-0"].text
    assert files["fg2-0"].get_attribute("data-base") == "read"
    assert "'fare' is int32 in this file, double in the table" in files["fg2-0"].text
    assert _rows(site) == []


def test_ui_plan_as_of_the_first_commit_reads_the_schema_of_its_time(site):
    _log_in(site)
    _plan(site, "", as_of=site.first)
    assert sorted(_rows(site), key=lambda r: r["id"]) == [
        {"id": "a", "ts": "1", "city": "sf", "rider": "ann", "note": "n1", "fare": "10", "tip": "1"},
        {"id": "b", "ts": "1", "city": "sf", "rider": "bob", "note": "n2", "fare": "20", "tip": "2"},
    ]


def test_ui_shows_the_apis_errors(site):
    _log_in(site)
    _plan(site, "nope = 1")
    error = site.driver.find_element("css selector", "#plan-body .error")
    assert error.get_attribute("data-status") == "422"
    assert error.get_attribute("data-type") == "ColumnNotFoundError"
    assert error.text.startswith("422 ColumnNotFoundError: filter column 'nope' not found")
    _plan(site, "", as_of="1999-01-01")
    error = site.driver.find_element("css selector", "#plan-body .error")
    assert error.get_attribute("data-type") == "InstantNotFoundError"
