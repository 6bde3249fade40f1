"""The README's main job, end to end: PySpark write, evolution, catalog, DuckDB, HTTP, Iceberg REST,
real Trino (`--trino`), hudi-rs."""

from __future__ import annotations

import shutil

import pytest


@pytest.mark.spark
def test_demo_answers_right_through_duckdb_http_iceberg_and_trino_and_shows_hudi_rs_wrong(tmp_path, capsys):
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Java 17 is needed for the PySpark writer")
    from engines.demo import run_demo

    assert run_demo(str(tmp_path / "wh"), trino=True) == 0
    out = capsys.readouterr().out
    duckdb_part = out.split("3a. DuckDB")[1].split("3b.")[0]
    http_part = out.split("3b. HTTP")[1].split("3c.")[0]
    iceberg_part = out.split("3c. Iceberg")[1].split("3d. Trino")[0]
    trino_part = out.split("3d. Trino")[1].split("4. hudi-rs")[0]
    hudi_rs_part = out.split("4. hudi-rs")[1]
    for part in (duckdb_part, http_part, iceberg_part, trino_part):
        assert "t1      | sf   | ana       | 10.0 | NULL" in part
        assert "t2      | sf   | bo        | 24.5 | cash" in part
        assert "(5 rows)" in part
    assert "t1      | sf   | NULL      | 10.0 | 1" in hudi_rs_part
    assert "/ui/tables/trips" in out.split("5. why, in a browser")[1]
