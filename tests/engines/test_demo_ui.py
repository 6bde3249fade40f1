"""The web UI on the demo table (`hudi-shim demo`: written by the PySpark writer, rider renamed to
passenger, tip dropped and re-added as text, fare widened), in Debian's headless Chromium."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from catalog.settings import Settings
from engines.demo import ui_url, write_demo_table
from tests.browserkit import browser, screenshot_dir, wait_for
from tests.catalog.servekit import live_server

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def demo_page(spark, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, object]]:
    warehouse = tmp_path_factory.mktemp("demo-warehouse")
    write_demo_table(spark, str(warehouse / "trips"))
    with live_server(Settings(warehouse=str(warehouse))) as server, browser() as driver:
        yield ui_url(server.url), driver


def _tab(page: str, driver, tab: str) -> None:
    driver.get(f"{page}#{tab}")
    driver.refresh()
    wait_for(lambda: driver.find_element("css selector", "body").get_attribute("data-ready") == tab, what=tab)


def test_demo_table_page_shows_the_evolution_and_the_files_a_by_name_reader_misreads(demo_page, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains

    page, driver = demo_page
    _tab(page, driver, "schema")
    rows = {r.find_element("css selector", "th.names").text: [c.get_attribute("data-change") for c in
                                                                r.find_elements("css selector", "td")]
            for r in driver.find_elements("css selector", "#schema-grid tbody tr")
            if r.find_element("css selector", "th.names").text != "tip"}
    tips = [[c.get_attribute("data-change") for c in r.find_elements("css selector", "td")]
            for r in driver.find_elements("css selector", "#schema-grid tbody tr")
            if r.find_element("css selector", "th.names").text == "tip"]
    assert "renamed" in rows["rider → passenger"]
    assert "widened" in rows["fare"]
    assert len(tips) == 2 and "dropped" in tips[0] and "readded" in tips[1]
    driver.save_screenshot(str(screenshot_dir(tmp_path) / "ui-demo-schema.png"))

    _tab(page, driver, "files")
    flagged = [c for c in driver.find_elements("css selector", "#files-body .file.base")
               if c.get_attribute("data-misreads") != "0"]
    assert flagged, "the base files written before the changes are flagged"
    ActionChains(driver).move_to_element(flagged[0]).perform()
    tip = wait_for(lambda: [t for t in driver.find_elements("css selector", "#tooltip") if t.is_displayed()])[0]
    assert "by name: passenger reads NULL: the file holds this column as 'rider'" in tip.text
    assert "by name: tip reads the values of 'tip' (id" in tip.text
