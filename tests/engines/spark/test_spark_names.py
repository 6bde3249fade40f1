"""`engines.spark`'s names that need no Spark are the writer's own (the writer's tests in
tests/shim/write call them from `shim.write`), importable without PySpark."""

from __future__ import annotations

import engines.spark
from shim.write import ddl
from shim.write.services import archiving, cleaning, compaction
from tests.writekit import shim_rows, write


def test_the_names_that_need_no_spark_are_the_writers():
    assert engines.spark.alter_table is ddl.alter_table and engines.spark.AlterTable is ddl.AlterTable
    assert engines.spark.clean is cleaning.clean and engines.spark.archive is archiving.archive
    assert engines.spark.schedule_compaction is compaction.schedule_compaction


def test_compact_without_a_session_compacts_in_this_process(tmp_path):
    mor = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    write(tmp_path, [{"id": "k1", "ts": 1, "region": "eu", "fare": 1.0}], **mor)
    write(tmp_path, [{"id": "k1", "ts": 2, "region": "eu", "fare": 2.0}], **mor)
    assert engines.spark.compact(str(tmp_path)) is not None
    assert shim_rows(tmp_path) == [{"id": "k1", "ts": 2, "region": "eu", "fare": 2.0}]
