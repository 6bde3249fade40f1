"""Publishing latency: from a commit to the moment a reader of each catalog kind sees it.

    python bench/bench_publish_latency.py [--commits 10] [--seconds 5] [--hive-metastore thrift://...]

One server (in this process) keeps a warehouse with one merge-on-read table and publishes it to
three catalog kinds: its Iceberg REST catalog (published when a reader loads the table), a Hive
Metastore (`--hive-metastore`, else Apache Hive's standalone metastore started here as the tests
start it) and a Hadoop catalog folder. Both of the latter are brought up to date every
`--seconds` and when a writer announces its commit (Hudi's HTTP commit callback, which the shim's
writer sends after the commit).

Each round writes one commit (an update of a row through a log block), at a random moment of the
timers' period: `--commits` announced, then as many not announced (left to the timers). A poller per kind asks all the time (every `--poll-ms`):
REST loads the table and watches its metadata location, the metastore's client watches the
table's `metadata_location`, the folder's `version-hint.text` is read. The latency is the time
the poller first saw the new version minus the commit's completion (the completed instant
file's modification time), so it includes up to one poll interval and the reader's own request.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from catalog.hive.metastore import MetastoreClient
from catalog.server import running
from catalog.settings import Settings
from tests.writekit import write

TOKEN = "bench-publish-latency"
TABLE = "latency"
KINDS = ("rest", "hms", "hadoop")


class Poller(threading.Thread):
    """Asks `state()` every `interval` seconds; remembers when each new state was first seen."""

    def __init__(self, state: Callable[[], str | None], interval: float) -> None:
        super().__init__(daemon=True)
        self.state, self.interval = state, interval
        self.seen: list[tuple[float, str | None]] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            try:
                value = self.state()
            except Exception:  # noqa: BLE001 - a reader failing now and then is what a reader sees
                value = None
            now = time.time()
            if value is not None and (not self.seen or self.seen[-1][1] != value):
                self.seen.append((now, value))
            self.stopped.wait(self.interval)

    def first_after(self, index: int, wait: float) -> float | None:
        """When the state numbered `index` (the first after `index` earlier ones) was first seen,
        waiting up to `wait` seconds for it."""
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if len(self.seen) > index:
                return self.seen[index][0]
            time.sleep(0.005)
        return None


def _rest_state(url: str) -> Callable[[], str | None]:
    import json

    def state() -> str | None:
        request = urllib.request.Request(f"{url}/iceberg/v1/namespaces/default/tables/{TABLE}",
                                         headers={"Authorization": f"Bearer {TOKEN}"})
        with urllib.request.urlopen(request, timeout=60) as response:
            return str(json.load(response)["metadata-location"])

    return state


def _hms_state(uri: str) -> Callable[[], str | None]:
    client = MetastoreClient.open(uri)

    def state() -> str | None:
        return client.get_table("default", TABLE).parameters.get("metadata_location")

    return state


def _hadoop_state(folder: Path) -> Callable[[], str | None]:
    hint = folder / "default" / TABLE / "metadata" / "version-hint.text"

    def state() -> str | None:
        try:
            return hint.read_text(encoding="utf-8").strip()
        except OSError:
            return None

    return state


def _completed_at(table: Path, instant: str) -> float:
    """The modification time of the completed instant file of `instant`."""
    for folder in (table / ".hoodie" / "timeline", table / ".hoodie"):
        if folder.is_dir():
            for name in os.listdir(folder):
                if name.startswith(instant) and name.endswith(("commit", "deltacommit")):
                    return (folder / name).stat().st_mtime
    raise RuntimeError(f"no completed instant file of {instant} in {table}")


@contextmanager
def _metastore(given: str | None, folder: Path) -> Iterator[str]:
    if given:
        yield given
        return
    from tests.engines.trino.enginekit import runner
    from tests.hmskit import metastore_server

    with metastore_server(folder, how=runner(), version="3.1.3") as server:
        yield server.uri


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=10, help="commits per mode (default: 10)")
    parser.add_argument("--seconds", type=float, default=5.0,
                        help="how often the server brings the metastore and the folder up to date (default: 5)")
    parser.add_argument("--poll-ms", type=float, default=20.0, help="how often each poller asks (default: 20)")
    parser.add_argument("--hive-metastore", help="a running metastore (default: one started here)")
    parser.add_argument("--out", help="also write the figures to this file")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-latency-"))
    warehouse, hadoop = root / "warehouse", root / "hadoop"
    table = warehouse / TABLE
    rows = [{"id": f"k{i}", "ts": 0, "region": "eu", "fare": float(i)} for i in range(1000)]
    base: dict[str, str] = {"hoodie.table.name": TABLE, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    write(table, rows, **base)
    results: dict[str, dict[str, list[float]]] = {}
    with _metastore(args.hive_metastore, root / "metastore") as uri:
        settings = Settings(warehouse=str(warehouse), token=TOKEN, catalog_db=":memory:",
                            hadoop_catalog_dir=str(hadoop), hadoop_catalog_seconds=args.seconds,
                            hive_metastore=uri, hive_metastore_seconds=args.seconds)
        with running(settings) as live:
            pollers = {"rest": Poller(_rest_state(live.url), args.poll_ms / 1000),
                       "hms": Poller(_hms_state(uri), args.poll_ms / 1000),
                       "hadoop": Poller(_hadoop_state(hadoop), args.poll_ms / 1000)}
            for poller in pollers.values():
                poller.start()
            announce: dict[str, str] = {"hoodie.write.commit.callback.on": "true",
                        "hoodie.write.commit.callback.http.url": f"{live.url}/v1/commits",
                        "hoodie.write.commit.callback.http.custom.headers": f"Authorization:Bearer {TOKEN}"}
            for poller in pollers.values():  # the first commit, published everywhere before we start
                if poller.first_after(0, 3 * args.seconds + 60) is None:
                    raise RuntimeError("a catalog never showed the table")
            modes: list[tuple[str, dict[str, str]]] = [("announced", announce), ("timer", {})]
            for mode, options in modes:
                results[mode] = {kind: [] for kind in KINDS}
                for round_ in range(args.commits):
                    time.sleep(random.uniform(0, args.seconds))  # commits at any phase of the timers
                    before = {kind: len(p.seen) for kind, p in pollers.items()}
                    update = [{"id": f"k{round_ % 1000}", "ts": round_ + 1, "region": "eu", "fare": -1.0}]
                    instant = write(table, update, **base, **options)
                    completed = _completed_at(table, instant)
                    for kind, poller in pollers.items():
                        seen = poller.first_after(before[kind], 3 * args.seconds + 60)
                        if seen is None:
                            raise RuntimeError(f"{kind} never showed commit {instant} ({mode})")
                        results[mode][kind].append(seen - completed)
            for poller in pollers.values():
                poller.stopped.set()
    lines = [(f"Publishing latency, commit to visible: {args.commits} commits per mode, a 1,000-row MOR table, "
              f"metastore and folder timers {args.seconds:g} s, pollers every {args.poll_ms:g} ms "
              "(milliseconds: median / p90 / max)")]
    for mode, kinds in results.items():
        for kind, values in kinds.items():
            ordered = sorted(v * 1000 for v in values)
            p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
            lines.append(f"  {mode:9} {kind:6} {statistics.median(ordered):8.0f} {p90:8.0f} {ordered[-1]:8.0f}")
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
