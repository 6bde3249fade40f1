"""A real table with a metadata table (`trips__mor__avro__v8_trips_8i3u1d`) on a real S3-compatible
server, behind a counting tap: listed from the metadata table with a fixed number of LIST
requests, pruned by its stats without fetching the files ruled out, the same rows as a storage
listing."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow.fs as pafs
import pytest

import shim
from tests.s3tap import S3Tap

pytestmark = pytest.mark.shared

TRIPS = "trips__mor__avro__v8_trips_8i3u1d"


@pytest.fixture(scope="module")
def tapped(s3, shared_tables) -> Iterator[tuple[S3Tap, str, dict[str, str]]]:
    pafs.copy_files(str(shared_tables[TRIPS]), "lake/trips-mdt", destination_filesystem=pafs.S3FileSystem(**s3.storage_options()))
    tap = S3Tap(s3.endpoint).start()
    try:
        yield tap, "s3://lake/trips-mdt", {**s3.storage_options(), "endpoint_override": tap.endpoint}
    finally:
        tap.stop()


def _read(tap: S3Tap, uri: str, options: dict[str, str], *, metadata: bool, where: str | None = None) -> tuple:
    tap.counts.reset()
    table = shim.open_table(uri, storage_options=options, metadata=metadata, merge_cache_bytes=0)
    rows = table.read(filter=where).sort_by("uuid")
    return rows, tap.counts.snapshot().get("LIST", 0), tap.counts.paths("GET", "GET_RANGE")


def test_a_full_read_lists_four_times_from_the_metadata_table(tapped) -> None:
    tap, uri, options = tapped
    rows, lists, _ = _read(tap, uri, options, metadata=True)
    listed = tap.counts.paths("LIST")
    stored_rows, stored_lists, _ = _read(tap, uri, options, metadata=False)
    assert rows == stored_rows and rows.num_rows == 6
    # the timeline, the schema history, the MDT's timeline and its files partition
    assert lists == 4, listed
    # the timeline and the schema history, the table's folder, each partition's folder twice (walked
    # to find the partitions, then listed for its files): a LIST more per partition, twice
    assert stored_lists == 2 + 1 + 2 * 3


def test_a_selective_read_fetches_only_the_files_the_stats_keep(tapped) -> None:
    tap, uri, options = tapped
    rows, _, fetched = _read(tap, uri, options, metadata=True, where="fare > 50")
    stored_rows, _, stored_fetched = _read(tap, uri, options, metadata=False, where="fare > 50")
    assert rows == stored_rows and rows.column("fare").to_pylist() == [93.5]
    data = {path.rsplit("/", 2)[-2] for path in fetched if "/.hoodie/" not in path}
    assert data == {"city=san_francisco"}
    assert {path.rsplit("/", 2)[-2] for path in stored_fetched if "/.hoodie/" not in path} == {
        "city=chennai", "city=san_francisco", "city=sao_paulo"}
