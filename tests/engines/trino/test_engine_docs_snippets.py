"""Every `trino` and `presto` code block of README.md and docs/ runs as written (`tests/docskit.py`),
against the session's catalog, Trino and Presto (`conftest.Stack`), with the demo table `trips`
added to their warehouse: `sql` blocks in the engine their kind names, `python` blocks with the
engines' ports, `sh` blocks (which start their own `hudi-shim trino` or `presto`, so each distinct
one runs once) against a warehouse of their own, but for the `hudi-shim trino` line alone, which
test_local_command.py runs (and checks its JVM and folder are gone after SIGTERM). `properties`
blocks are the catalog files of `engines.trino.catalogs` (tests/test_docs.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import docskit
from tests.engines.trino.conftest import TOKEN, Stack
from tests.engines.trino.test_local_command import LINE


@pytest.fixture(scope="module")
def trips(stack: Stack, spark) -> Stack:
    """The stack, its warehouse holding the demo table `trips` too, published for Presto."""
    from engines.demo import write_demo_table

    if not (stack.warehouse / "trips").exists():
        write_demo_table(spark, str(stack.warehouse / "trips"))
    stack.catalog.publish()
    return stack


@pytest.fixture(scope="module")
def own(spark, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder `/data/` stands for in `sh` blocks: `warehouse/trips` is the demo table."""
    from engines.demo import write_demo_table

    root = tmp_path_factory.mktemp("docs-engines")
    write_demo_table(spark, str(root / "warehouse" / "trips"))
    return root


def _distinct(kinds: tuple[str, ...], languages: tuple[str, ...]) -> list[docskit.Snippet]:
    """The snippets of `kinds` in `languages`, each code once (the README repeats the docs' lines)."""
    found: dict[str, docskit.Snippet] = {}
    for kind in kinds:
        for snippet in docskit.snippets(kind):
            if snippet.language in languages:
                found.setdefault(snippet.code, snippet)
    return list(found.values())


QUERIES = _distinct(("trino", "presto"), ("sql", "python"))
COMMANDS = [s for s in _distinct(("trino", "presto"), ("sh",)) if s.code != LINE.code]


@pytest.mark.parametrize("snippet", QUERIES, ids=docskit.ids(QUERIES))
def test_engine_snippet_runs(snippet, trips, tmp_path):
    places = docskit.Places(root=tmp_path, catalog_port=int(trips.catalog.url.rsplit(":", 1)[1]),
                            trino_port=trips.trino.port, presto_port=trips.presto.port, token=TOKEN)
    if snippet.language == "sql":
        rows = trips.engine(snippet.kind).query(places.substitute(snippet.code).strip().rstrip(";"))
        assert rows, f"{snippet.where()}: no rows"
    else:
        docskit.run_python(snippet, places)


@pytest.mark.parametrize("snippet", COMMANDS, ids=docskit.ids(COMMANDS))
def test_engine_command_runs(snippet, trips, own, tmp_path):
    places = docskit.Places(root=own, catalog_port=int(trips.catalog.url.rsplit(":", 1)[1]), token=TOKEN,
                            environment={"HUDI_SHIM_TOKEN": TOKEN})
    docskit.run_sh(snippet, places, tmp_path)
