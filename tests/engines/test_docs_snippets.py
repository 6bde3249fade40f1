"""Every `local` and `s3` code block of README.md and docs/ runs as written (`tests/docskit.py`):
against a warehouse holding the demo table `trips`, a live `hudi-shim serve` on it asking for a
token, a Spark session and, for `s3`, s3proxy with the demo table copied under a prefix of the
bucket `lake`. Blocks run in the order of `docskit.documents` (README.md, then the site's pages in
its order), so a block may use what one before it wrote."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pyarrow.fs as pafs
import pytest

from engines.s3server import S3Server
from tests import docskit

pytestmark = pytest.mark.spark

TOKEN = "docs-snippets-token"


@pytest.fixture(scope="module")
def data(spark, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder `/data/` stands for: `warehouse/trips` is the demo table."""
    from engines.demo import write_demo_table

    root = tmp_path_factory.mktemp("data")
    write_demo_table(spark, str(root / "warehouse" / "trips"))
    return root


@pytest.fixture(scope="module")
def live(data: Path) -> Iterator[str]:
    """`hudi-shim serve` on the warehouse, in this process; its URL."""
    from catalog.server import running
    from catalog.settings import Settings

    published = data.parent / f"{data.name}-published"
    with running(Settings(warehouse=str(data / "warehouse"), token=TOKEN, catalog_db=":memory:",
                          iceberg_dir=str(published / "iceberg"))) as server:
        yield server.url


@pytest.fixture(scope="module")
def s3_prefix(s3: S3Server, data: Path) -> str:
    """A prefix of the bucket `lake` for the blocks, `warehouse/trips` under it the demo table."""
    prefix = f"docs-{uuid.uuid4().hex[:8]}/"
    system = pafs.S3FileSystem(**s3.storage_options())
    pafs.copy_files(str(data / "warehouse" / "trips"), f"lake/{prefix}warehouse/trips", destination_filesystem=system)
    return prefix


def _places(data: Path, url: str) -> docskit.Places:
    return docskit.Places(root=data, catalog_port=urlparse(url).port or 80, token=TOKEN,
                          environment={"HUDI_SHIM_TOKEN": TOKEN})


def _run(snippet: docskit.Snippet, places: docskit.Places, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in places.environment.items():
        monkeypatch.setenv(name, value)
    if snippet.language == "python":
        monkeypatch.chdir(workdir)
        docskit.run_python(snippet, places)
    elif snippet.language == "sh":
        docskit.run_sh(snippet, places, workdir)
    else:
        raise AssertionError(f"{snippet.where()}: a {snippet.language} block cannot be of kind {snippet.kind}")


LOCAL = docskit.snippets("local")
S3 = docskit.snippets("s3")


@pytest.mark.parametrize("snippet", LOCAL, ids=docskit.ids(LOCAL))
def test_local_snippet_runs(snippet, data, live, tmp_path, monkeypatch):
    _run(snippet, _places(data, live), tmp_path, monkeypatch)


@pytest.mark.parametrize("snippet", S3, ids=docskit.ids(S3))
def test_s3_snippet_runs(snippet, data, live, s3, s3_prefix, tmp_path, monkeypatch):
    if shutil.which("java") is None:
        pytest.skip("s3proxy needs Java 17 or newer")
    places = _places(data, live)
    places.s3_endpoint, places.s3_prefix = s3.endpoint, s3_prefix
    places.access_key, places.secret_key = s3.access_key, s3.secret_key
    places.environment.update(s3.environment())
    _run(snippet, places, tmp_path, monkeypatch)
