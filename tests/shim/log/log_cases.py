"""Shared helpers of the log tests: the real Hudi tables, unzipped into a temporary directory."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from tests.conftest import shared_tables_dir

SHARED = shared_tables_dir() or Path("/nonexistent/shared/hudi-tables")
needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(), reason="needs the real Hudi tables in /work/shared/hudi-tables"
)


def unzip_table(zip_stem: str, dest: Path) -> Path:
    """Extract `<zip_stem>.zip` (without __MACOSX) under `dest`; returns the table directory."""
    target = dest / zip_stem
    with zipfile.ZipFile(SHARED / f"{zip_stem}.zip") as archive:
        members = [m for m in archive.namelist() if not m.startswith("__MACOSX")]
        archive.extractall(target, members)
    tables = [p for p in target.iterdir() if p.is_dir()]
    assert len(tables) == 1, tables
    return tables[0]


def unzip_all(dest: Path) -> dict[str, Path]:
    """Every shared table, by zip name."""
    return {z.stem: unzip_table(z.stem, dest) for z in sorted(SHARED.glob("*.zip"))}


def log_files(root: Path) -> list[Path]:
    """Every log file under `root`, metadata table included, in a stable order."""
    found = []
    for directory, _, names in os.walk(root):
        found += [Path(directory) / n for n in names if n.startswith(".") and ".log." in n]
    return sorted(found)


def snapshot_rows(table_dir: Path) -> dict[str, dict[str, object]]:
    """hudi-rs's snapshot rows of a table, by record key."""
    import hudi
    import pyarrow as pa

    table = hudi.HudiTableBuilder.from_base_uri(str(table_dir)).build()
    rows = pa.Table.from_batches(table.read()).to_pylist()
    return {str(row["_hoodie_record_key"]): row for row in rows}
