"""Recipes: evolving tables that Apache Hudi itself writes, a handful of features each.

A recipe is data: Spark SQL statements and DataFrame API writes (see `driver.py`), run in order
on one table. Together the recipes cover copy-on-write and merge-on-read, table version 6 and
Hudi's default (9), Avro and Parquet log blocks, every kind of schema change Spark SQL makes
(ADD COLUMNS with AFTER/FIRST, RENAME, DROP, a dropped name re-added with another type, the type
changes Hudi allows, nested struct fields, ALTER COLUMN ... AFTER), INSERT/UPDATE/DELETE/MERGE
INTO and DataFrame upserts and deletes, inline and scheduled compaction, clustering, cleaning,
archival (the LSM timeline on version 9), the metadata table on and off, and one, several or no
partition fields.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

# Archive early (Hudi archives once more than keep.max commits are active, down to keep.min).
_ARCHIVE_SOON = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}


@dataclass(frozen=True, slots=True)
class Recipe:
    """One table Apache Hudi writes: its name, type, features and steps."""

    name: str
    table_type: str  # "cow" | "mor"
    version: int  # 6, or 9 (Hudi's default)
    features: tuple[str, ...]
    steps: tuple[dict[str, Any], ...]
    incremental: bool = True

    def digest(self) -> str:
        """A short digest of everything that shapes the table."""
        text = json.dumps([self.name, self.table_type, self.version, list(self.steps), self.incremental],
                          sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _sql(text: str) -> dict[str, Any]:
    return {"sql": " ".join(text.split())}


def _values(rows: list[tuple[Any, ...]]) -> str:
    return ", ".join("(" + ", ".join(_literal(v) for v in row) + ")" for row in rows)


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, str) and value.startswith("@"):  # an SQL expression, as is
        return value[1:]
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


def _props(props: dict[str, str]) -> str:
    return ", ".join(f"'{k}' = '{v}'" for k, v in props.items())


def _mor_evolve() -> Recipe:
    """Merge-on-read, Hudi's default table version, Avro log blocks, one partition field, metadata
    table on; Spark SQL DML and every kind of DDL; inline compaction; LSM archive."""
    # The metadata table's partition stats fail on this table's evolved nested column ("Error while
    # completing streaming commit to metadata", Hudi 1.2.0): the files index stays on, stats off.
    props = {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "4",
             "hoodie.clean.automatic": "false", "hoodie.metadata.index.partition.stats.enable": "false",
             "hoodie.metadata.index.column.stats.enable": "false", **_ARCHIVE_SOON}
    regions = ["eu", "us", "ap"]
    first = [(i, f"name{i}", 1.5 * i, i, 100, f"@named_struct('color', 'c{i % 3}', 'size', {i})", regions[i % 3])
             for i in range(1, 13)]
    steps = [
        _sql(f"""CREATE TABLE {{table}} (id INT, name STRING, price FLOAT, qty INT, ts BIGINT,
                 tags STRUCT<color: STRING, size: INT>, region STRING) USING hudi PARTITIONED BY (region)
                 LOCATION '{{path}}' TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts',
                 {_props(props)})"""),
        _sql("INSERT INTO {table} (id, name, price, qty, ts, tags, region) VALUES "
             + _values([(r[0], r[1], f"@CAST({r[2]} AS FLOAT)", r[3] * 10, r[4], r[5], r[6]) for r in first])),
        _sql("UPDATE {table} SET price = price * 2, ts = 200 WHERE id % 4 = 0"),
        _sql("DELETE FROM {table} WHERE id = 5"),
        _sql("ALTER TABLE {table} ADD COLUMNS (note STRING AFTER name)"),
        _sql("ALTER TABLE {table} ADD COLUMNS (tags.rank INT FIRST)"),  # FIRST: nested fields only
        _sql("INSERT INTO {table} (id, name, note, price, qty, ts, tags, region) VALUES "
             + _values([(20, "twenty", "n20", "@CAST(2.25 AS FLOAT)", 1, 300,
                         "@named_struct('rank', 7, 'color', 'red', 'size', 20)", "eu"),
                        (3, "three-b", "n3", "@CAST(3.75 AS FLOAT)", 2, 300,
                         "@named_struct('rank', 8, 'color', 'blue', 'size', 3)", "ap")])),
        _sql("ALTER TABLE {table} RENAME COLUMN name TO title"),
        _sql("ALTER TABLE {table} ALTER COLUMN qty TYPE BIGINT"),
        _sql("ALTER TABLE {table} ALTER COLUMN price TYPE DOUBLE"),
        _sql("UPDATE {table} SET qty = 5000000000, ts = 400 WHERE id IN (1, 2, 20)"),
        _sql("ALTER TABLE {table} DROP COLUMN note"),
        _sql("ALTER TABLE {table} ADD COLUMNS (note INT)"),
        _sql("ALTER TABLE {table} ADD COLUMNS (tags.weight DOUBLE)"),
        _sql("ALTER TABLE {table} RENAME COLUMN tags.color TO colour"),
        _sql("ALTER TABLE {table} ALTER COLUMN title AFTER price"),
        # Partial updates (an UPDATE SET of some columns) are refused on schema-evolved MOR tables:
        # every column is assigned.
        _sql("SET hoodie.spark.sql.merge.into.partial.updates=false"),
        _sql("""MERGE INTO {table} AS t USING (
                 SELECT 2 AS id, 2.5D AS price, 'two-m' AS title, 2L AS qty, 500L AS ts,
                   named_struct('rank', 1, 'colour', 'pink', 'size', 2, 'weight', 0.25D) AS tags,
                   'ap' AS region, 42 AS note, 'upd' AS op
                 UNION ALL SELECT 30, 9.5D, 'thirty', 3L, 500L,
                   named_struct('rank', 1, 'colour', 'green', 'size', 30, 'weight', 1.5D), 'us', 7, 'ins'
                 UNION ALL SELECT 9, 0D, 'nine', 0L, 500L, named_struct('rank', 0, 'colour', '', 'size', 0,
                   'weight', 0D), 'us', 0, 'del') AS s
                 ON t.id = s.id
                 WHEN MATCHED AND s.op = 'del' THEN DELETE
                 WHEN MATCHED THEN UPDATE SET t.id = s.id, t.price = s.price, t.title = s.title, t.qty = s.qty,
                   t.ts = s.ts, t.tags = s.tags, t.region = s.region, t.note = s.note
                 WHEN NOT MATCHED THEN INSERT (id, price, title, qty, ts, tags, region, note)
                   VALUES (s.id, s.price, s.title, s.qty, s.ts, s.tags, s.region, s.note)"""),
        _sql("UPDATE {table} SET tags = named_struct('rank', tags.rank, 'colour', tags.colour, 'size', tags.size, "
             "'weight', 2.5D), ts = 600 WHERE region = 'eu'"),
        _sql("INSERT INTO {table} (id, price, title, qty, ts, tags, region, note) VALUES "
             + _values([(40 + i, 4.0 + i, f"t{40 + i}", i, 700,
                         f"@named_struct('rank', 2, 'colour', 'k', 'size', {i}, 'weight', 0.5D)", regions[i % 3], i)
                        for i in range(4)])),
        _sql("DELETE FROM {table} WHERE id = 41"),
    ]
    return Recipe("mor_evolve", "mor", 9, (
        "merge-on-read", "table version 9", "avro log blocks", "one partition field", "metadata table on",
        "insert/update/delete/merge into", "add columns after, nested first", "rename", "drop", "re-add with new type",
        "int->bigint", "float->double", "nested add/rename", "alter column after", "inline compaction",
        "lsm archive"), tuple(steps))


RECIPES: dict[str, Recipe] = {r.name: r for r in (_mor_evolve(),)}
