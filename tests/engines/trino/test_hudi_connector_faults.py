"""The fault hudi-shim exists to fix, documented against the engines' own connectors on the
evolved tables of `evolvedkit`: Trino 476's and Presto 0.287's Hudi connectors match Parquet
columns by name (catalog `native`); by position (catalog `native_by_position`) are Trino's Hudi
connector with `hudi.parquet.use-column-names=false` and Presto's Hive connector with
`hive.parquet.use-column-names=false` (Presto's Hudi connector has no such setting).

The tables are registered as Hive sync registers them after the last schema change
(`engines.trino.metastore`): `rides_cow`, and the merge-on-read `rides` as `rides_ro` (Hudi's
input format) and `rides_rt` (its realtime input format). Each test pins what the connector
returns beside the right rows: the shim's `Table.read`, and the same engine reading the shim's
Iceberg publication (catalog `hudi`). A test of a wrong answer fails saying so when the engine
answers right.

Where the faults are:
- `rides_ro`: the base files of a..e were written before the evolution (`rider`, an int `tip`,
  an int `fare`, ...). By name, the renamed `passenger` reads null; Trino returns the dropped
  column's ints as text in the re-added `tip`, Presto fails on `tip`. By position, a column
  reads its neighbour in the old files, or the query fails where the types differ.
- `rides_rt`: Trino serves it as read-optimized (base files only: the deleted c is back, the
  updates of b, d, e are missing); Presto reads it with Hudi's own realtime record reader, which
  resolves columns by id: right.
- `rides_cow`: every file group was rewritten after the last schema change, so every latest base
  file has the current schema and the by-name connectors are right; by position is still wrong,
  since Hive's columns leave out the partition column `city`, which the files keep.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest

import shim
from engines.trino import EngineError, EngineServer
from engines.trino.metastore import register_table
from shim.scan_options import ScanMode
from tests.engines.trino.conftest import Stack

QUERY = "SELECT id, passenger, fare, qty, CAST(price AS varchar) AS price, tip FROM {table} ORDER BY id"
COLUMNS = ("id", "passenger", "fare", "qty", "price", "tip")
#: native table -> (evolved table, view, name in the shim's Iceberg catalog)
NATIVE: dict[str, tuple[str, ScanMode, str]] = {"rides_ro": ("rides", "read_optimized", "rides_ro"), "rides_rt": ("rides", "snapshot", "rides"),
          "rides_cow": ("rides_cow", "snapshot", "rides_cow")}

#: Both Hudi connectors (by name) on `rides_ro`: the renamed column null in the old files; Trino
#: also shows the dropped int `tip` as text (Presto fails on it, see below). Pinned rows are those
#: of every row the read-optimized view may hold: the merge-on-read insert puts the rows of a file
#: group that Spark tasks hand over after its first one into a log file, not the base file, so
#: which of a..e the view holds varies from build to build (`pinned`).
BY_NAME_RO = [
    ("a", None, 10.0, 1, "1.50", "1"),
    ("b", None, 20.0, 2, "2.25", "2"),
    ("c", None, 30.0, 3, "3.00", "3"),
    ("d", None, 40.0, 4, "4.75", "4"),
    ("e", None, 50.0, 5, "5.10", "5"),
    ("f", "fay", 7.5, 1, "0.99", None),
]


@pytest.fixture(scope="module")
def native(stack: Stack) -> Stack:
    """The stack with `rides_cow`, `rides_ro` and `rides_rt` in both engines' metastores."""
    for flavor, folder in stack.metastores.items():
        register_table(folder, flavor, stack.tables["rides_cow"], "rides_cow")
        register_table(folder, flavor, stack.tables["rides"], "rides_ro", view="read_optimized")
        register_table(folder, flavor, stack.tables["rides"], "rides_rt", view="snapshot")
    return stack


def _rows(server: EngineServer, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in server.query(sql)]


def right_rows(stack: Stack, table: str, columns: tuple[str, ...] = COLUMNS, *, where: str | None = None,
               sql: str = QUERY) -> list[tuple[Any, ...]]:
    """The right rows of `sql` on a native table: the shim's read (decimals as the engines cast
    them to text), checked against both engines reading the shim's Iceberg publication."""
    evolved, view, iceberg = NATIVE[table]
    read = shim.open_table(str(stack.tables[evolved])).read(mode=view, filter=where, columns=list(columns))
    rows = sorted(tuple(str(row[c]) if isinstance(row[c], Decimal) else row[c] for c in columns)
                  for row in read.to_pylist())
    for flavor in ("trino", "presto"):
        published = _rows(stack.engine(flavor), sql.format(table=f'hudi."default"."{iceberg}"'))
        assert published == rows, f"{flavor} reads the shim's Iceberg {iceberg} otherwise: {published}"
    return rows


def assert_wrong(what: str, got: list[tuple[Any, ...]], pinned: list[tuple[Any, ...]],
                 right: list[tuple[Any, ...]], *, ids: set[str] | None = None) -> None:
    """`got` is the pinned wrong answer (its rows of `ids`, by default those `right` has); when
    it is the right one, the fault is fixed."""
    ids = {row[0] for row in right} if ids is None else ids
    wrong = [row for row in pinned if row[0] in ids]
    assert wrong != right and len(wrong) == len(ids)
    if got == right:
        pytest.fail(f"{what} returns the right rows now: this engine version fixed the fault; make this test "
                    "check that it is right, and update the README's side-by-side")
    assert got == wrong, f"{what} is wrong in another way now:\n   got {got}\npinned {wrong}\n right {right}"


def assert_fails(what: str, server: EngineServer, sql: str, pattern: str) -> None:
    """`sql` fails with an engine error matching `pattern`."""
    try:
        rows = _rows(server, sql)
    except EngineError as error:
        assert re.search(pattern, str(error)), f"{what} fails otherwise now: {error}"
        return
    pytest.fail(f"{what} no longer fails: it returns {rows}; this engine version reads it, pin what it returns")


# ---- by name --------------------------------------------------------------------------------


def test_trino_hudi_connector_reads_renamed_column_null_and_dropped_ints_as_text(native):
    right = right_rows(native, "rides_ro")
    assert all(row[1] is not None and row[5] is None for row in right)  # passengers all named, no tips
    got = _rows(native.trino, QUERY.format(table='native."default".rides_ro'))
    assert_wrong("Trino's Hudi connector on rides_ro", got, BY_NAME_RO, right)


def test_presto_hudi_connector_reads_renamed_column_null_and_fails_on_readded_column(native):
    assert_fails("Presto's Hudi connector reading the dropped int tip as the new varchar tip", native.presto,
                 QUERY.format(table='native."default".rides_ro'),
                 r"failed .*: com\.facebook\.presto\.common\.type\.VarcharType$")
    without_tip = "SELECT id, passenger, fare, qty, CAST(price AS varchar) AS price FROM {table} ORDER BY id"
    right = right_rows(native, "rides_ro", COLUMNS[:-1], sql=without_tip)
    got = _rows(native.presto, without_tip.format(table='native."default".rides_ro'))
    assert_wrong("Presto's Hudi connector on rides_ro", got, [row[:-1] for row in BY_NAME_RO], right)


def test_trino_hudi_connector_serves_realtime_table_as_read_optimized(native):
    right = right_rows(native, "rides_rt")
    assert [row[0] for row in right] == ["a", "b", "d", "e", "f"] and right[1][1:3] == ("bo", 24.5)
    base_files = {row[0] for row in right_rows(native, "rides_ro")}  # what the read-optimized view holds
    got = _rows(native.trino, QUERY.format(table='native."default".rides_rt'))
    assert_wrong("Trino's Hudi connector on rides_rt (merge-on-read snapshot)", got, BY_NAME_RO, right,
                 ids=base_files)


@pytest.mark.parametrize("catalog", ["native", "native_by_position"])
def test_presto_reads_merge_on_read_snapshot_right_with_hudis_realtime_reader(native, catalog):
    """Both Presto connectors hand a realtime table to Hudi's record reader, which resolves each
    file's columns by id and merges the logs."""
    got = _rows(native.presto, QUERY.format(table=f'{catalog}."default".rides_rt'))
    assert got == right_rows(native, "rides_rt")


@pytest.mark.parametrize("flavor", ["trino", "presto"])
def test_hudi_connectors_read_copy_on_write_table_right_all_files_rewritten(native, flavor):
    """Right only because no latest base file of rides_cow predates the last schema change."""
    got = _rows(native.engine(flavor), QUERY.format(table='native."default".rides_cow'))
    assert got == right_rows(native, "rides_cow")


# ---- by position ----------------------------------------------------------------------------


@pytest.mark.parametrize(("flavor", "table", "pattern"), [
    # Trino checks the file column's type against the table's: fare (9th) is a string in every
    # old file; in the current one (f's), tip (13th) is the struct info: whichever split it opens
    # first fails
    ("trino", "rides_ro", (r"Unsupported Trino column type \(double\) for Parquet column "
                           r"\(\[(rider|city)\] optional binary (rider|city) \(STRING\)\)"
                           r"|class org\.apache\.parquet\.io\.GroupColumnIO cannot "
                           r"be cast to class org\.apache\.parquet\.io\.PrimitiveColumnIO")),
    # ... the 13th column (tip) of the current files is the struct info
    ("trino", "rides_cow", (r"Error opening Hudi split .*: class org\.apache\.parquet\.io\.GroupColumnIO cannot "
                            r"be cast to class org\.apache\.parquet\.io\.PrimitiveColumnIO")),
    # Presto too: passenger (7th) is the old files' int64 ts, fare (9th) the current files' city
    ("presto", "rides_ro", (r"The column (passenger|fare) of table default\.rides_ro is declared as type "
                            r"(string|double), but the Parquet file \(.*\) declares the column as type "
                            r"(INT64|BINARY)")),
    ("presto", "rides_cow", (r"The column fare of table default\.rides_cow is declared as type double, but the "
                             r"Parquet file \(.*\) declares the column as type BINARY")),
])
def test_by_position_reads_fail_where_neighbouring_types_differ(native, flavor, table, pattern):
    assert_fails(f"{flavor} by position on {table}", native.engine(flavor),
                 QUERY.format(table=f'native_by_position."default".{table}'), pattern)


SHIFTED = [
    # Trino: passenger is the old files' 7th column, ts
    pytest.param("trino", "rides_ro", ("id", "passenger"), None,
                 [("a", "1"), ("b", "1"), ("c", "1"), ("d", "1"), ("e", "1"), ("f", "fay")], id="trino-ro-passenger"),
    # Presto: price is the old files' 11th column, the dropped int tip, read as unscaled decimals
    # (and la's current file's qty)
    pytest.param("presto", "rides_ro", ("id", "price"), None,
                 [("a", "0.01"), ("b", "0.02"), ("c", "0.03"), ("d", "0.04"), ("e", "0.05"), ("f", "0.01")],
                 id="presto-ro-price"),
    # ... qty is the old files' int fare
    pytest.param("presto", "rides_ro", ("id", "qty"), "city != 'la'",
                 [("a", 10), ("b", 20), ("c", 30), ("d", 40), ("e", 50)], id="presto-ro-qty"),
    # ... and in the current files, with the partition column city among them, price is qty
    pytest.param("presto", "rides_cow", ("id", "price"), None,
                 [("a", "0.01"), ("b", "50000000.00"), ("d", "0.44"), ("e", "0.06"), ("f", "0.01")],
                 id="presto-cow-price"),
]


@pytest.mark.parametrize(("flavor", "table", "columns", "where", "wrong"), SHIFTED)
def test_by_position_reads_shift_values_into_neighbouring_columns(native, flavor, table, columns, where, wrong):
    selected = ", ".join("CAST(price AS varchar) AS price" if c == "price" else c for c in columns)
    sql = f"SELECT {selected} FROM {{table}}{f' WHERE {where}' if where else ''} ORDER BY id"
    right = right_rows(native, table, columns, where=where, sql=sql)
    got = _rows(native.engine(flavor), sql.format(table=f'native_by_position."default".{table}'))
    assert_wrong(f"{flavor} by position on {table}", got, wrong, right)


# ---- through the Hive Metastore the catalog keeps ---------------------------------------------


def test_hudi_connectors_read_the_tables_synced_into_the_metastore_as_wrong(stack):
    """The server registers `rides` in the real metastore as Hudi's Hive sync would (`hudi.rides_ro`,
    `hudi.rides_rt`): the engines' own Hudi connectors give there the same wrong answers as above,
    while the Iceberg tables beside them (`hms."default"`) are right."""
    right = right_rows(stack, "rides_ro")
    got = _rows(stack.trino, QUERY.format(table="hms_hudi.hudi.rides_ro"))
    assert_wrong("Trino's Hudi connector on the synced rides_ro", got, BY_NAME_RO, right)
    assert_fails("Presto's Hudi connector on the synced rides_ro", stack.presto,
                 QUERY.format(table="hms_hudi.hudi.rides_ro"), r"failed .*: com\.facebook\.presto\.common\.type\.VarcharType$")
    for flavor in ("trino", "presto"):
        assert _rows(stack.engine(flavor), QUERY.format(table='hms."default".rides_ro')) == right
