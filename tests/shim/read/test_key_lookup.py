"""Point lookups by record key skip base files whose bloom filter rules the keys out, and give the
same rows as reading every file."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import shim
import shim.read.scan_stream as scan_module
from shim.filters import parse_filter
from shim.properties import TableConfig
from shim.read.key_lookup import pinned_keys
from tests.local import LOCAL
from tests.spies import spy_on
from tests.tablekit import TinyTable

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.int64())])


@pytest.fixture
def files_read(monkeypatch):
    """Paths of every base file read without merging (in this process)."""
    return spy_on(monkeypatch, scan_module, "scan_parquet")


@pytest.fixture
def cow(tmp_path) -> TinyTable:
    table = TinyTable(tmp_path / "t", SCHEMA, mor=False)
    for group in range(4):
        table.base([{"id": f"k{group}-{i}", "ts": 1, "v": group * 100 + i} for i in range(50)], file_id=f"fg{group}-0")
    return table


def test_equality_on_the_key_reads_only_the_file_that_holds_it(cow, files_read):
    table = shim.open_table(cow.path)
    result = table.read(filter="id = 'k2-7'")
    assert result.column("v").to_pylist() == [207]
    assert len(files_read) == 1 and "fg2-0" in files_read[0]


@pytest.mark.parametrize("where", ["id IN ('k1-3', 'k3-49', 'nope')", "_hoodie_record_key = 'k1-3' OR id = 'k3-49'",
                                   "_hoodie_record_key IN ('k1-3', 'k3-49') AND v > 0"])
def test_lookups_equal_full_reads(cow, files_read, where):
    looked_up = sorted(shim.open_table(cow.path).read(filter=where).column("v").to_pylist())
    read_for_lookup = [path.split("/")[-1][:3] for path in files_read]
    everything = shim.open_table(cow.path).read(include_meta=True)
    expected = sorted(everything.filter(_arrow(where, everything.schema)).column("v").to_pylist())
    assert looked_up == expected and looked_up
    if " OR " not in where:  # an OR of two terms pins nothing: every file is read
        assert sorted(read_for_lookup) == ["fg1", "fg3"]
    else:
        assert len(read_for_lookup) == 4


def _arrow(where: str, schema: pa.Schema) -> pc.Expression:
    from shim.filters import bind, to_arrow_expression

    return to_arrow_expression(bind(parse_filter(where), schema))


def test_arrow_filters_from_duckdb_look_up_too(cow, files_read):
    result = shim.open_table(cow.path).read(filter=pc.field("id") == "k0-0")
    assert result.column("v").to_pylist() == [0] and len(files_read) == 1


def test_no_key_in_any_file_reads_none(cow, files_read):
    assert shim.open_table(cow.path).read(filter="id = 'absent'").num_rows == 0
    assert files_read == []
    assert shim.open_table(cow.path).read(filter="id = ''").num_rows == 0  # pins nothing: every file read
    assert len(files_read) == 4


def test_files_without_a_filter_are_read(tmp_path, files_read):
    table = TinyTable(tmp_path / "t", SCHEMA, mor=False)
    table.base([{"id": "a", "ts": 1, "v": 1}], file_id="fg1-0")
    [path] = [p for p in (tmp_path / "t").rglob("*.parquet")]
    import pyarrow.parquet as pq

    data = pq.read_table(path)
    pq.write_table(data.replace_schema_metadata({k: v for k, v in data.schema.metadata.items()
                                                 if b"bloom" not in k}), path)
    assert shim.open_table(table.path).read(filter="id = 'zzz'").num_rows == 0
    assert len(files_read) == 1


def test_merged_slices_are_read_whole(tmp_path):
    table = TinyTable(tmp_path / "t", SCHEMA)
    base = table.base([{"id": "a", "ts": 1, "v": 1}])
    table.log([{"id": "b", "ts": 1, "v": 2}], base_instant=base)  # b lives only in the log
    assert shim.open_table(table.path).read(filter="id = 'b'").column("v").to_pylist() == [2]


def config(**raw: str) -> TableConfig:
    return TableConfig({"hoodie.table.name": "t", "hoodie.table.recordkey.fields": "id", **raw}, "/t")


@pytest.mark.parametrize(("where", "keys"), [
    ("id = 'a'", {"a"}), ("id IN ('a', 'b') AND id = 'b'", {"b"}), ("n = 7", None), ("id > 'a'", None),
    ("id != 'a'", None), ("id NOT IN ('a')", None), ("_hoodie_record_key = 'x:1'", {"x:1"}), ("v = 'a'", None),
    ("id = ''", None), ("id IN ('a', '')", None),
])
def test_pinned_keys(where, keys):
    schema = pa.schema([("_hoodie_record_key", pa.string()), ("id", pa.string()), ("n", pa.int32()),
                        ("v", pa.string())])
    found = pinned_keys(parse_filter(where), config(), schema)
    assert found == (frozenset(keys) if keys is not None else None)


def test_integer_keys_pin_their_text_and_complex_keys_pin_nothing():
    schema = pa.schema([("id", pa.int64())])
    assert pinned_keys(parse_filter("id = 42"), config(), schema) == frozenset({"42"})
    complex_keys = config(**{"hoodie.table.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator"})
    assert pinned_keys(parse_filter("id = 42"), complex_keys, schema) is None


def test_real_tables_lookups_read_only_files_whose_filters_hold_the_key(shared_tables, files_read):
    import pyarrow.parquet as pq

    from shim.bloom import BLOOM_FILTER_KEY, DynamicBloomFilter

    skipped = 0
    for path in shared_tables.values():
        table = shim.open_table(path)
        everything = table.read(mode="read_optimized", include_meta=True)
        filters = {f: DynamicBloomFilter.parse(pq.read_metadata(f).metadata[BLOOM_FILTER_KEY]) for f in files_read}
        files_read.clear()
        for key in sorted(set(everything.column("_hoodie_record_key").to_pylist()))[:3]:
            quoted = key.replace("'", "''")
            got = table.read(mode="read_optimized", filter=f"_hoodie_record_key = '{quoted}'", include_meta=True)
            expected = everything.filter(pc.field("_hoodie_record_key") == key)
            assert sorted(got.column("_hoodie_commit_seqno").to_pylist()) == sorted(
                expected.column("_hoodie_commit_seqno").to_pylist())
            assert sorted(files_read) == sorted(f for f, bloom in filters.items() if bloom.might_contain(key))
            skipped += len(filters) - len(files_read)
            files_read.clear()
    assert skipped > 0


@pytest.fixture
def bases_read(monkeypatch):
    """Paths of base files read while merging slices with their logs."""
    import shim.read.merged_slice as merged_module

    return spy_on(monkeypatch, merged_module, "iter_parquet_in_order")


@pytest.fixture
def mor(tmp_path) -> TinyTable:
    """Two file groups with logs: updates (one losing on event time), a log-only insert, a delete."""
    table = TinyTable(tmp_path / "m", SCHEMA)  # event-time ordering on ts
    one = table.base([{"id": f"a{i}", "ts": 5, "v": i} for i in range(20)], file_id="fg1-0")
    two = table.base([{"id": f"b{i}", "ts": 5, "v": 100 + i} for i in range(20)], file_id="fg2-0")
    table.log([{"id": "a1", "ts": 6, "v": -1}, {"id": "a2", "ts": 1, "v": -2}, {"id": "new", "ts": 1, "v": 999}],
              file_id="fg1-0", base_instant=one)
    table.log(deletes=["b3"], delete_ordering=[pa.array([9], pa.int64())], file_id="fg2-0", base_instant=two)
    return table


@pytest.mark.parametrize("warm", [False, True])
def test_merged_slices_skip_base_files_without_the_keys_and_give_the_merged_rows(mor, bases_read, warm):
    table = shim.open_table(mor.path)
    everything = table.read()
    if warm:
        table.read()  # merge states remembered: lookups take the remembered path
    bases_read.clear()
    keys = sorted(everything.column("id").to_pylist()) + ["b3", "absent"]
    for key in keys:
        got = table.read(filter=f"id = '{key}'").to_pylist()
        assert got == everything.filter(pc.field("id") == key).to_pylist(), key
    assert {r["id"]: r["v"] for r in table.read(filter="id IN ('a1', 'a2', 'new', 'b3')").to_pylist()} == {
        "a1": -1, "a2": 2, "new": 999}
    for key, groups in [("a5", ["fg1"]), ("b5", ["fg2"]), ("new", []), ("absent", []), ("a1", ["fg1"])]:
        bases_read.clear()
        table.read(filter=f"id = '{key}'")
        assert [path.split("/")[-1][:3] for path in bases_read] == groups, key


def test_a_file_that_cannot_be_looked_at_is_kept_for_the_read_to_report(tmp_path):
    from shim.read.key_lookup import files_with_any

    missing = str(tmp_path / "gone.parquet")
    assert files_with_any(LOCAL, [missing], frozenset({"k"})) == [missing]
