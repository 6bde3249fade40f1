"""Page load of the web UI on a big evolved table: 1,000 file slices, 50 schema versions.

    python bench/bench_ui.py [--slices 1000] [--versions 50] [--rounds 5] [--no-browser]

Builds a merge-on-read table (10 partitions; every 4th file group also has a log file) whose
schema changes 49 times (columns added, renamed, widened) between its writes, serves it with
`hudi-shim serve`'s application on 127.0.0.1, and times:
- over HTTP: the table page (HTML, script, style sheet, the summary and the schema history it
  asks for on load), and the data of each other tab (timeline, files, plan without a filter);
  the first request after the server started (cold: commit metadata, footers and file schemas
  read) and the median of `--rounds` more (warm);
- in Chromium (Debian's, headless; skipped with --no-browser or when missing): from navigation to
  the tab drawn, per tab, median of `--rounds`.
Target: the page under 300 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import httpx
import pyarrow as pa

from catalog.server import running
from catalog.settings import Settings
from tests.tablekit import EvolvingTable, add, rename, retype

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("region", pa.string()), ("amount", pa.int32())])


def build(root: Path, slices: int, versions: int) -> EvolvingTable:
    table = EvolvingTable(root / "bench", SCHEMA, partition=["region"])
    every = max(1, slices // versions)
    changes = 0
    for i in range(slices):
        if i and i % every == 0 and changes < versions - 1:
            changes += 1
            kind = changes % 3
            if kind == 0:
                table.alter(add(f"c{changes}", "int"))
            elif kind == 1:
                last = [n for n in table.schema.names if n.startswith("c") and table.schema.field(n).type == pa.int32()]
                table.alter(retype(last[-1], "long") if last else add(f"c{changes}", "int"))
            else:
                names = [n for n in table.schema.names if n.startswith("c")]
                table.alter(rename(names[-1], f"{names[-1]}_r") if names else add(f"c{changes}", "int"))
        region = f"r{i % 10}"
        row = {f.name: _value(f.type, i) for f in table.schema}
        row.update(id=f"k{i}", region=region)
        first = table.base([row], file_id=f"fg{i}-0", partition=f"region={region}")
        if i % 4 == 0:
            table.log([{**row, "ts": 2}], file_id=f"fg{i}-0", partition=f"region={region}", base_instant=first)
    while changes < versions - 1:
        changes += 1
        table.alter(add(f"c{changes}", "int"))
    return table


def _value(kind: pa.DataType, i: int) -> object:
    if pa.types.is_string(kind):
        return f"v{i}"
    return i


def timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def http_figures(url: str, rounds: int) -> None:
    name = "bench"
    client = httpx.Client(base_url=url, timeout=120)

    def page() -> None:
        for path in (f"/ui/tables/{name}", "/ui/static/app.js", "/ui/static/style.css",
                     f"/ui/api/tables/{name}", f"/ui/api/tables/{name}/schemas"):
            client.get(path).raise_for_status()

    tabs: dict[str, Callable[[], None]] = {
        "table page (schema history)": page,
        "timeline": lambda: client.get(f"/ui/api/tables/{name}/timeline").raise_for_status() and None,
        "files": lambda: client.get(f"/ui/api/tables/{name}/files").raise_for_status() and None,
        "plan (no filter, 100 rows)": lambda: client.get(f"/ui/api/tables/{name}/plan").raise_for_status() and None,
    }
    cold = {label: timed(call) for label, call in tabs.items()}  # the first of each, in the order a user clicks
    print("over HTTP (ms):               first  again (median)")
    for label, call in tabs.items():
        warm = statistics.median(timed(call) for _ in range(rounds))
        print(f"  {label:<28} {cold[label]:7.1f} {warm:7.1f}")
    sizes = {tab: len(client.get(f"/ui/api/tables/{name}/{tab}").content) for tab in ("schemas", "timeline", "files")}
    print(f"JSON sizes: {', '.join(f'{k} {v / 1024:.0f} KiB' for k, v in sizes.items())}")


def browser_figures(url: str, rounds: int) -> None:
    from tests.browserkit import CHROMEDRIVER, CHROMIUM, browser, wait_for

    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        print("in Chromium: skipped (apt-get install chromium chromium-driver)")
        return
    with browser() as driver:
        print("in Chromium, from the start of the navigation to the tab drawn (performance.now(); ms, median):")
        for tab in ("schema", "timeline", "files", "plan"):
            figures = []
            for _ in range(rounds + 1):
                driver.get("about:blank")
                driver.get(f"{url}/ui/tables/bench#{tab}")
                wait_for(lambda tab=tab: driver.find_element("css selector", "body").get_attribute("data-ready") == tab,
                         timeout=120, what=tab)
                # the page's own clock: from the start of the navigation to the tab drawn
                figures.append(float(driver.find_element("css selector", "body").get_attribute("data-ready-ms")))
            print(f"  {tab:<10} {statistics.median(figures[1:]):7.1f}  (first {figures[0]:.1f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--slices", type=int, default=1000)
    parser.add_argument("--versions", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hudi-shim-bench-ui-") as folder:
        started = time.perf_counter()
        table = build(Path(folder), args.slices, args.versions)
        print(f"built {args.slices} file slices, {len(table.instants)} commits in {time.perf_counter() - started:.1f} s")
        with running(Settings(warehouse=folder)) as server:
            http_figures(server.url, args.rounds)
            if not args.no_browser:
                browser_figures(server.url, args.rounds)


if __name__ == "__main__":
    main()
