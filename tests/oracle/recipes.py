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

# SQL statements on a version-6 table would upgrade it to Hudi's current version.
_STAY_V6 = (("hoodie.write.table.version", "6"), ("hoodie.write.auto.upgrade", "false"))
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
    session: tuple[tuple[str, str], ...] = ()  # Spark SQL SETs in force for every step
    incremental: bool = True

    def digest(self) -> str:
        """A short digest of everything that shapes the table."""
        text = json.dumps([self.name, self.table_type, self.version, list(self.steps), list(self.session),
                           self.incremental], sort_keys=True)
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
    table on; Spark SQL DML and every kind of DDL (type changes: int -> bigint, float -> double,
    int -> string, double -> decimal); inline compaction; LSM archive."""
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
        _sql("ALTER TABLE {table} ALTER COLUMN note TYPE STRING"),
        _sql("ALTER TABLE {table} ALTER COLUMN price TYPE DECIMAL(20, 4)"),
        _sql("UPDATE {table} SET note = 'n', price = 1.125, ts = 800 WHERE id = 42"),
    ]
    return Recipe("mor_evolve", "mor", 9, (
        "merge-on-read", "table version 9", "avro log blocks", "one partition field", "metadata table on",
        "insert/update/delete/merge into", "add columns after, nested first", "rename", "drop", "re-add with new type",
        "int->bigint", "float->double", "int->string", "double->decimal", "nested add/rename", "alter column after", "inline compaction",
        "lsm archive"), tuple(steps))


def _write(select: str, options: dict[str, str], operation: str = "upsert") -> dict[str, Any]:
    return {"write": {"select": " ".join(select.split()),
                      "options": {**options, "hoodie.datasource.write.operation": operation}}}


def _cow_v6_frames() -> Recipe:
    """Copy-on-write, table version 6, two partition fields, metadata table off; DataFrame API
    writes (insert, upsert, delete) and SQL DDL (decimal widening, int -> double, string -> date,
    rename, drop); clustering; cleaning; archive logs."""
    options = {"hoodie.table.name": "cow_v6_frames", "hoodie.write.table.version": "6",
               "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
               "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.partitionpath.field": "region,day",
               "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
               "hoodie.datasource.write.hive_style_partitioning": "true", "hoodie.metadata.enable": "false",
               "hoodie.schema.on.read.enable": "true", "hoodie.cleaner.commits.retained": "3",
               "hoodie.keep.min.commits": "4", "hoodie.keep.max.commits": "5",
               "hoodie.parquet.small.file.limit": "0",
               # one key field under the complex key generator: Hudi 1.2 asks to confirm the key encoding
               "hoodie.write.complex.keygen.validation.enable": "false"}
    first = """SELECT CAST(id AS STRING) AS id, concat('n', id) AS name, CAST(id * 10 AS INT) AS amount,
               CAST(id * 1.25 AS DECIMAL(10, 2)) AS price, concat('2024-01-0', id % 3 + 1) AS event_date,
               IF(id % 2 = 0, 'eu', 'us') AS region, concat('d', id % 3) AS day, 1L AS ts FROM range(1, 13)"""
    steps = [
        _write(first, options, "insert"),
        _sql("CREATE TABLE {table} USING hudi LOCATION '{path}'"),
        _write("""SELECT CAST(id AS STRING) AS id, concat('u', id) AS name, CAST(id AS INT) AS amount,
                  CAST(id AS DECIMAL(10, 2)) AS price, '2024-02-01' AS event_date, IF(id % 2 = 0, 'eu', 'us') AS region,
                  concat('d', id % 3) AS day, 2L AS ts FROM range(1, 5)""", options),
        _sql("ALTER TABLE {table} ADD COLUMNS (city STRING AFTER name)"),
        _sql("ALTER TABLE {table} ALTER COLUMN amount TYPE DOUBLE"),
        _sql("ALTER TABLE {table} ALTER COLUMN price TYPE DECIMAL(12, 2)"),
        _sql("ALTER TABLE {table} ALTER COLUMN event_date TYPE DATE"),
        _write("""SELECT CAST(id AS STRING) AS id, concat('v', id) AS name, 'paris' AS city, id * 0.5D AS amount,
                  CAST(id * 100.01 AS DECIMAL(12, 2)) AS price, DATE'2024-03-01' AS event_date,
                  IF(id % 2 = 0, 'eu', 'us') AS region, concat('d', id % 3) AS day, 3L AS ts
                  FROM range(3, 16)""", options),
        _sql("DELETE FROM {table} WHERE id = '4'"),
        _write("""SELECT '6' AS id, 'x' AS name, 'x' AS city, 0D AS amount, CAST(0 AS DECIMAL(12, 2)) AS price,
                  DATE'2024-01-01' AS event_date, 'eu' AS region, 'd0' AS day, 9L AS ts""", options, "delete"),
        # Clustering after the rename and the re-added column fails in Hudi 1.2 (a NullPointerException
        # in its row writer): it runs before them.
        _sql("CALL run_clustering(table => '{table}')"),
        _sql("ALTER TABLE {table} RENAME COLUMN name TO full_name"),
        _sql("ALTER TABLE {table} DROP COLUMN city"),
        _sql("ALTER TABLE {table} ADD COLUMNS (city INT)"),
        _sql("UPDATE {table} SET city = 75, ts = 10 WHERE region = 'eu'"),
        _sql("INSERT INTO {table} (id, full_name, amount, price, event_date, ts, city, region, day) VALUES "
             "('20', 'twenty', 2.5D, 3.25, DATE'2024-04-01', 11, 1, 'us', 'd2')"),
        _sql("UPDATE {table} SET amount = amount + 1, ts = 12 WHERE day = 'd1'"),
    ]
    return Recipe("cow_v6_frames", "cow", 6, (
        "copy-on-write", "table version 6", "two partition fields", "metadata table off", "dataframe api",
        "insert/upsert/delete operations", "sql delete/update/insert", "int->double", "decimal widening",
        "string->date", "add column after", "rename", "drop", "re-add with new type", "clustering", "cleaning",
        "archive logs"), tuple(steps), (*_STAY_V6, ("hoodie.write.complex.keygen.validation.enable", "false")))


def _mor_v6_parquet() -> Recipe:
    """Merge-on-read, table version 6, Parquet log blocks, not partitioned, metadata table on;
    scheduled compaction run later (logs written while it is pending); nested struct changes;
    a dropped name re-added with another type."""
    options = {"hoodie.table.name": "mor_v6_parquet", "hoodie.write.table.version": "6",
               "hoodie.datasource.write.table.type": "MERGE_ON_READ",
               "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.partitionpath.field": "",
               "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
               "hoodie.logfile.data.block.format": "parquet", "hoodie.schema.on.read.enable": "true",
               "hoodie.compact.inline": "false", "hoodie.clean.automatic": "false",
               "hoodie.metadata.index.column.stats.enable": "false",
               "hoodie.metadata.index.partition.stats.enable": "false", **_ARCHIVE_SOON}
    steps = [
        _write("""SELECT CAST(id AS INT) AS id, concat('n', id) AS name, CAST(id AS INT) AS score, 1L AS ts,
                  named_struct('a', CAST(id AS INT), 'b', concat('b', id)) AS payload FROM range(1, 11)""",
               options, "insert"),
        _sql("CREATE TABLE {table} USING hudi LOCATION '{path}'"),
        _write("""SELECT CAST(id AS INT) AS id, concat('m', id) AS name, CAST(id * 2 AS INT) AS score, 2L AS ts,
                  named_struct('a', CAST(id * 2 AS INT), 'b', 'bb') AS payload FROM range(1, 4)""", options),
        _sql("ALTER TABLE {table} ADD COLUMNS (payload.c STRING)"),
        _sql("ALTER TABLE {table} ALTER COLUMN payload.a TYPE BIGINT"),
        _write("""SELECT CAST(id AS INT) AS id, concat('p', id) AS name, CAST(id * 3 AS INT) AS score, 3L AS ts,
                  named_struct('a', id * 3, 'b', 'b3', 'c', concat('c', id)) AS payload FROM range(2, 6)""", options),
        _sql("CALL run_compaction(op => 'schedule', table => '{table}')"),
        _write("""SELECT CAST(id AS INT) AS id, concat('q', id) AS name, CAST(id * 4 AS INT) AS score, 4L AS ts,
                  named_struct('a', id * 4, 'b', 'b4', 'c', 'c4') AS payload FROM range(5, 8)""", options),
        _sql("CALL run_compaction(op => 'run', table => '{table}')"),
        _sql("ALTER TABLE {table} RENAME COLUMN payload.b TO bee"),
        _sql("DELETE FROM {table} WHERE id = 2"),
        _sql("ALTER TABLE {table} DROP COLUMN name"),
        _sql("ALTER TABLE {table} ADD COLUMNS (name INT)"),
        _write("""SELECT CAST(id AS INT) AS id, CAST(id * 5 AS INT) AS score, 5L AS ts,
                  named_struct('a', id * 5, 'bee', 'b5', 'c', 'c5') AS payload, CAST(id AS INT) AS name
                  FROM range(8, 12)""", options),
        _sql("UPDATE {table} SET score = -1, ts = 6 WHERE id = 1"),
    ]
    return Recipe("mor_v6_parquet", "mor", 6, (
        "merge-on-read", "table version 6", "parquet log blocks", "not partitioned", "metadata table on",
        "dataframe api", "scheduled compaction", "logs during pending compaction", "nested add/rename",
        "nested int->bigint", "drop", "re-add with new type", "archive logs"), tuple(steps),
        # SQL statements commit too: they archive as early, and compact only when asked; the
        # metadata table compacts soon, or the data table's archival waits for it.
        (*_STAY_V6, *_ARCHIVE_SOON.items(), ("hoodie.compact.inline", "false"),
         ("hoodie.metadata.compact.max.delta.commits", "2")))


def _mor_partial() -> Recipe:
    """Merge-on-read, Hudi's default table version, two partition fields, metadata table off,
    no schema-on-read: MERGE INTO assigning the key too, and UPDATE, of some columns (Hudi writes
    them as whole records: `_mor_partial_updates` has partial-update blocks), a compaction and a
    clustering called as procedures, cleaning, LSM archive."""
    props = {"hoodie.metadata.enable": "false", "hoodie.compact.inline": "false",
             "hoodie.cleaner.commits.retained": "3", "hoodie.keep.min.commits": "4", "hoodie.keep.max.commits": "5"}
    places = [("fr", "paris"), ("fr", "lyon"), ("de", "berlin")]
    steps = [
        _sql(f"""CREATE TABLE {{table}} (id INT, name STRING, price DOUBLE, qty INT, ts BIGINT, country STRING,
                 city STRING) USING hudi PARTITIONED BY (country, city) LOCATION '{{path}}'
                 TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts', {_props(props)})"""),
        _sql("INSERT INTO {table} VALUES " + _values(
            [(i, f"n{i}", i * 1.5, i, 1, *places[i % 3]) for i in range(1, 13)])),
        _sql("""MERGE INTO {table} AS t USING (SELECT 2 AS id, 20.5D AS price, 5L AS ts
                 UNION ALL SELECT 3, 30.5D, 5L UNION ALL SELECT 7, 70.5D, 0L) AS s ON t.id = s.id
                 WHEN MATCHED THEN UPDATE SET t.id = s.id, t.price = s.price, t.ts = s.ts"""),
        _sql("UPDATE {table} SET qty = qty + 100, ts = 6 WHERE id IN (3, 4, 5)"),
        _sql("DELETE FROM {table} WHERE id = 6"),
        _sql("""MERGE INTO {table} AS t USING (SELECT 3 AS id, 'three' AS name, 7L AS ts, 'fr' AS country,
                 'paris' AS city UNION ALL SELECT 40, 'forty', 7L, 'de', 'berlin') AS s ON t.id = s.id
                 WHEN MATCHED THEN UPDATE SET t.id = s.id, t.name = s.name, t.ts = s.ts
                 WHEN NOT MATCHED THEN INSERT (id, name, price, qty, ts, country, city)
                   VALUES (s.id, s.name, 0.5D, 1, s.ts, s.country, s.city)"""),
        _sql("CALL run_compaction(op => 'scheduleandexecute', table => '{table}')"),
        _sql("CALL run_clustering(table => '{table}')"),
        _sql("UPDATE {table} SET price = -1, ts = 8 WHERE city = 'lyon'"),
        _sql("INSERT INTO {table} VALUES " + _values([(50 + i, f"n{50 + i}", 1.0, i, 9, *places[i % 3])
                                                       for i in range(3)])),
        _sql("""MERGE INTO {table} AS t USING (SELECT 8 AS id, 1L AS qty, 10L AS ts) AS s ON t.id = s.id
                 WHEN MATCHED THEN UPDATE SET t.id = s.id, t.qty = s.qty, t.ts = s.ts"""),
        _sql("INSERT INTO {table} VALUES (60, 'sixty', 6.0, 6, 11, 'fr', 'paris')"),
    ]
    return Recipe("mor_partial", "mor", 9, (
        "merge-on-read", "table version 9", "two partition fields", "metadata table off", "partial updates",
        "merge into", "compaction procedure", "clustering", "cleaning", "lsm archive"), tuple(steps),
        (("hoodie.schema.on.read.enable", "false"),))


def _mor_partial_updates() -> Recipe:
    """Merge-on-read with Hudi's defaults (table version 9, not partitioned, metadata table on,
    event-time ordering): MERGE INTO ... UPDATE SET of some columns writes partial-update log
    blocks (IS_PARTIAL, with record positions): several in a row, one losing on its ordering
    value, whole-record UPDATEs and a DELETE between them, partial blocks after ADD COLUMNS, a
    compaction merging them, and more partial blocks on the compacted slice."""
    props = {"hoodie.compact.inline": "false", "hoodie.clean.commits.retained": "4",
             "hoodie.keep.min.commits": "5", "hoodie.keep.max.commits": "6"}
    steps = [
        _sql(f"""CREATE TABLE {{table}} (id INT, name STRING, price DOUBLE, qty INT, ts BIGINT) USING hudi
                 LOCATION '{{path}}' TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts',
                 {_props(props)})"""),
        _sql("INSERT INTO {table} VALUES " + _values([(i, f"n{i}", i * 1.5, i, 1) for i in range(1, 13)])),
        _sql("""MERGE INTO {table} t USING (SELECT 2 AS id, 20.5D AS price, 5L AS ts UNION ALL SELECT 3, 30.5D, 5L
                 UNION ALL SELECT 7, 70.5D, 0L) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET price = s.price, ts = s.ts"""),
        _sql("""MERGE INTO {table} t USING (SELECT 3 AS id, 'three' AS name, 4L AS ts UNION ALL SELECT 4, 'four', 6L) s
                 ON t.id = s.id WHEN MATCHED THEN UPDATE SET name = s.name, ts = s.ts"""),
        _sql("UPDATE {table} SET qty = qty + 100 WHERE id IN (3, 5)"),
        _sql("DELETE FROM {table} WHERE id = 6"),
        _sql("""MERGE INTO {table} t USING (SELECT 2 AS id, 22 AS qty, 7L AS ts UNION ALL SELECT 8, 88, 7L) s
                 ON t.id = s.id WHEN MATCHED THEN UPDATE SET qty = s.qty, ts = s.ts"""),
        _sql("ALTER TABLE {table} ADD COLUMNS (note STRING)"),
        _sql("""MERGE INTO {table} t USING (SELECT 2 AS id, 'two' AS note, 8L AS ts UNION ALL SELECT 9, 'nine', 8L) s
                 ON t.id = s.id WHEN MATCHED THEN UPDATE SET note = s.note, ts = s.ts"""),
        _sql("CALL run_compaction(op => 'scheduleandexecute', table => '{table}')"),
        _sql("""MERGE INTO {table} t USING (SELECT 10 AS id, 100.5D AS price, 9L AS ts UNION ALL SELECT 2, -2.0D, 9L) s
                 ON t.id = s.id WHEN MATCHED THEN UPDATE SET price = s.price, ts = s.ts"""),
        _sql("INSERT INTO {table} VALUES (20, 'twenty', 2.0, 2, 10, 'new')"),
        _sql("""MERGE INTO {table} t USING (SELECT 20 AS id, 'xx' AS note, 11L AS ts UNION ALL SELECT 11, 'eleven', 3L) s
                 ON t.id = s.id WHEN MATCHED THEN UPDATE SET note = s.note, ts = s.ts"""),
    ]
    return Recipe("mor_partial_updates", "mor", 9, (
        "merge-on-read", "table version 9", "not partitioned", "metadata table on", "partial-update log blocks",
        "record positions", "event-time ordering", "add columns", "compaction procedure", "lsm archive"),
        tuple(steps), (("hoodie.schema.on.read.enable", "false"),))


def _mor_partial_commit_time() -> Recipe:
    """Merge-on-read, commit-time ordering, two partition fields: partial updates win whatever
    their ordering value, over whole records and over each other, across partitions; cleaning."""
    props = {"hoodie.compact.inline": "false", "hoodie.clean.commits.retained": "3",
             "hoodie.keep.min.commits": "4", "hoodie.keep.max.commits": "5",
             "hoodie.record.merge.mode": "COMMIT_TIME_ORDERING"}
    places = [("fr", "paris"), ("fr", "lyon"), ("de", "berlin")]
    steps = [
        _sql(f"""CREATE TABLE {{table}} (id INT, name STRING, price DOUBLE, qty INT, ts BIGINT, country STRING,
                 city STRING) USING hudi PARTITIONED BY (country, city) LOCATION '{{path}}'
                 TBLPROPERTIES (type = 'mor', primaryKey = 'id', {_props(props)})"""),
        _sql("INSERT INTO {table} VALUES " + _values(
            [(i, f"n{i}", i * 1.5, i, 10, *places[i % 3]) for i in range(1, 13)])),
        # (The source names each row's partition: without it Hudi's MERGE INTO updates nothing.)
        _sql("""MERGE INTO {table} t USING (SELECT 2 AS id, 20.5D AS price, 1L AS ts, 'de' AS country, 'berlin' AS city
                 UNION ALL SELECT 3, 30.5D, 1L, 'fr', 'paris') s
                 ON t.id = s.id WHEN MATCHED THEN UPDATE SET price = s.price, ts = s.ts"""),
        _sql("""MERGE INTO {table} t USING (SELECT 3 AS id, 'three' AS name, 'fr' AS country, 'paris' AS city
                 UNION ALL SELECT 4, 'four', 'fr', 'lyon') s ON t.id = s.id WHEN MATCHED THEN UPDATE SET name = s.name"""),
        _sql("UPDATE {table} SET qty = 100, ts = 0 WHERE id = 4"),
        _sql("""MERGE INTO {table} t USING (SELECT 4 AS id, 44 AS qty, 'fr' AS country, 'lyon' AS city
                 UNION ALL SELECT 5, 55, 'de', 'berlin') s ON t.id = s.id WHEN MATCHED THEN UPDATE SET qty = s.qty"""),
        _sql("DELETE FROM {table} WHERE id = 7"),
        _sql("INSERT INTO {table} VALUES (30, 'thirty', 3.0, 3, 1, 'de', 'berlin')"),
        _sql("""MERGE INTO {table} t USING (SELECT 30 AS id, 'x' AS name, -5.0D AS price, 'de' AS country,
                 'berlin' AS city) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET name = s.name, price = s.price"""),
    ]
    return Recipe("mor_partial_commit_time", "mor", 9, (
        "merge-on-read", "table version 9", "two partition fields", "commit-time ordering",
        "partial-update log blocks", "cleaning", "lsm archive"), tuple(steps),
        (("hoodie.schema.on.read.enable", "false"),))


def _client(options: dict[str, str], fields: list[tuple[str, str]], actions: list[dict[str, Any]],
            writers: dict[str, dict[str, str]] | None = None) -> dict[str, Any]:
    """A step of Hudi's write client (`tests/oracle/writers.py`): the record's fields (name, Avro
    type; "?" makes one nullable; named as Spark names a table's record) and the actions of its
    writers."""
    table = options["hoodie.table.name"]
    schema = {"type": "record", "name": f"{table}_record", "namespace": f"hoodie.{table}",
              "fields": [{"name": name, "type": ["null", kind[:-1]], "default": None} if kind.endswith("?")
                         else {"name": name, "type": kind} for name, kind in fields]}
    return {"client": {"options": options, "schema": schema, "writers": writers or {}, "actions": actions}}


def _change(op: str, id_: int, name: str | None, ts: int, **more: Any) -> dict[str, Any]:
    """One record of a changelog: its operation (I, U, -U, D) and its values."""
    return {"_op": op, "id": id_, "name": name, "ts": ts, **more}


# Hudi's Flink writer keeps changes (`changelog.enabled`) so: the operation meta column, no
# pre-combining of a key's changes within a write.
_CHANGELOG = {"hoodie.allow.operation.metadata.field": "true", "hoodie.combine.before.upsert": "false",
              "hoodie.combine.before.insert": "false"}


def _client_options(table: str, partition: str, more: dict[str, str]) -> dict[str, str]:
    return {"hoodie.table.name": table, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": partition,
            "hoodie.datasource.write.hive_style_partitioning": "true" if partition else "false",
            "hoodie.table.type": "MERGE_ON_READ", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.compact.inline": "false", **more}


def _mor_changelog() -> Recipe:
    """Merge-on-read as Hudi's Flink writer leaves it in changelog mode (emulated with Hudi's write
    client): the simple bucket index, `_hoodie_operation` kept, every change of a key written
    (I, -U and U pairs, D, a lone -U, changes older than the record they meet), a compaction;
    cleaning; LSM archive."""
    bucket = {"hoodie.index.type": "BUCKET", "hoodie.index.bucket.engine": "SIMPLE", "hoodie.bucket.index.num.buckets": "2"}
    props = {**bucket, "hoodie.metadata.enable": "false", "hoodie.clean.commits.retained": "2",
             "hoodie.keep.min.commits": "3", "hoodie.keep.max.commits": "4"}
    options = _client_options("mor_changelog", "region", {**props, **_CHANGELOG})
    fields = [("id", "int"), ("name", "string?"), ("qty", "int"), ("ts", "int"), ("region", "string")]
    regions = {i: ("eu" if i % 2 == 0 else "us") for i in range(1, 30)}

    def c(op: str, id_: int, name: str | None, ts: int, qty: int = 0) -> dict[str, Any]:
        return _change(op, id_, name, ts, qty=qty, region=regions[id_])

    actions: list[dict[str, Any]] = [
        {"writer": "a", "write": "insert", "rows": [c("I", i, f"n{i}", 10, i) for i in range(1, 11)]},
        # an update as Flink hands it over: the old row (-U), then the new (U); a delete; a new key
        {"writer": "a", "write": "upsert", "rows": [
            c("-U", 1, "n1", 10, 1), c("U", 1, "u1", 20, 11), c("-U", 2, "n2", 10, 2), c("U", 2, "u2", 20, 12),
            c("D", 3, "n3", 20, 3), c("I", 11, "i11", 20, 110)]},
        # a lone -U deletes; a -U and a U older than the record they meet lose to it; a D with the
        # default ordering value (0) deletes whatever the record's (Hudi's commit-time delete)
        {"writer": "a", "write": "upsert", "rows": [
            c("-U", 4, "n4", 10, 4), c("-U", 5, "old5", 5, 5), c("D", 6, "old6", 0, 6), c("U", 7, "old7", 5, 7)]},
        # deleted, then inserted again in the same write; updated twice in one write
        {"writer": "a", "write": "upsert", "rows": [
            c("D", 10, "n10", 20, 10), c("I", 10, "again10", 30, 100), c("-U", 8, "n8", 10, 8),
            c("U", 8, "u8", 20, 18), c("-U", 8, "u8", 20, 18), c("U", 8, "v8", 30, 28), c("I", 12, "i12", 30, 120)]},
        {"writer": "c", "schedule": "compaction"},
        {"writer": "c", "run": "compaction"},
        {"writer": "a", "write": "upsert", "rows": [
            c("-U", 11, "i11", 20, 110), c("U", 11, "u11", 40, 111), c("D", 1, "u1", 40, 11),
            c("I", 3, "back3", 40, 33)]},
        {"writer": "a", "write": "upsert", "rows": [
            c("-U", 9, "n9", 10, 9), c("U", 9, "u9", 50, 19), c("D", 12, "i12", 50, 120)]},
        {"writer": "a", "write": "upsert", "rows": [c("-U", 2, "u2", 20, 12), c("U", 2, "v2", 60, 22)]},
    ]
    steps = [
        _sql(f"""CREATE TABLE {{table}} (id INT, name STRING, qty INT, ts INT, region STRING) USING hudi
                 PARTITIONED BY (region) LOCATION '{{path}}' TBLPROPERTIES (type = 'mor', primaryKey = 'id',
                 preCombineField = 'ts', {_props(props)})"""),
        _client(options, fields, actions, {"c": {"hoodie.compact.inline.max.delta.commits": "1"}}),
    ]
    return Recipe("mor_changelog", "mor", 9, (
        "merge-on-read", "table version 9", "one partition field", "simple bucket index", "operation meta field",
        "flink changelog (-U/U/D/I)", "write client", "compaction", "cleaning", "lsm archive"), tuple(steps),
        (("hoodie.schema.on.read.enable", "false"),))


def _mor_nbcc() -> Recipe:
    """Merge-on-read under non-blocking concurrency control, as Hudi's Flink writers leave it
    (emulated with Hudi's write client): two writers' log files in one file slice, a compaction
    planned while one writer's commit is in flight (its log, completed after the plan, belongs to
    the compacted slice), instants completed in another order than begun, delete blocks; LSM archive."""
    bucket = {"hoodie.index.type": "BUCKET", "hoodie.index.bucket.engine": "SIMPLE", "hoodie.bucket.index.num.buckets": "2"}
    props = {**bucket, "hoodie.metadata.enable": "false", "hoodie.clean.automatic": "false",
             "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}
    nbcc = {"hoodie.write.concurrency.mode": "NON_BLOCKING_CONCURRENCY_CONTROL",
            "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.InProcessLockProvider",
            "hoodie.cleaner.policy.failed.writes": "LAZY"}
    options = _client_options("mor_nbcc", "", {**props, **nbcc})
    fields = [("id", "int"), ("name", "string?"), ("ts", "int")]

    def c(op: str, id_: int, name: str | None, ts: int) -> dict[str, Any]:
        return _change(op, id_, name, ts)

    actions: list[dict[str, Any]] = [
        {"writer": "a", "write": "insert", "rows": [c("I", i, f"n{i}", 1) for i in range(1, 11)]},
        {"writer": "a", "begin": "upsert", "rows": [c("U", 1, "a1", 5), c("U", 2, "a2", 5), c("U", 3, "a3", 2)]},
        {"writer": "b", "begin": "upsert", "rows": [c("U", 1, "b1", 5), c("U", 3, "b3", 6), c("U", 4, "b4", 3)]},
        {"writer": "b", "commit": True},
        {"writer": "c", "schedule": "compaction"},  # while a's commit is in flight
        {"writer": "a", "commit": True},
        {"writer": "b", "write": "upsert", "rows": [c("U", 2, "b2", 4), c("U", 5, "b5", 7), c("D", 6, None, 7)]},
        {"writer": "c", "run": "compaction"},
        # begun a then b, completed b then a: equal ordering values in one slice
        {"writer": "a", "begin": "upsert", "rows": [c("U", 7, "a7", 8), c("U", 8, "a8", 8), c("D", 9, None, 8)]},
        {"writer": "b", "begin": "upsert", "rows": [c("U", 7, "b7", 8), c("U", 8, "b8", 9), c("U", 9, "b9", 7)]},
        {"writer": "b", "commit": True},
        {"writer": "a", "commit": True},
        {"writer": "a", "write": "upsert", "rows": [c("U", 10, "a10", 9), c("I", 11, "a11", 9)]},
        {"writer": "b", "write": "upsert", "rows": [c("D", 10, None, 9), c("U", 11, "b11", 10)]},
    ]
    steps = [
        _sql(f"""CREATE TABLE {{table}} (id INT, name STRING, ts INT) USING hudi LOCATION '{{path}}'
                 TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts', {_props(props)})"""),
        _client(options, fields, actions, {"c": {"hoodie.compact.inline.max.delta.commits": "1"}}),
    ]
    return Recipe("mor_nbcc", "mor", 9, (
        "merge-on-read", "table version 9", "not partitioned", "simple bucket index", "non-blocking concurrency control",
        "two writers", "log files sliced by completion time", "compaction planned mid-write", "delete blocks",
        "write client", "lsm archive"), tuple(steps), (("hoodie.schema.on.read.enable", "false"),))


def _mor_consistent_hashing() -> Recipe:
    """Merge-on-read with the consistent hashing bucket index (`.hoodie/.bucket_index`): inserts
    into log-only file groups, a clustering splitting every bucket planned, an upsert while it is
    pending (written to the old and the new file groups), the clustering run, another merging
    buckets, a compaction; LSM archive."""
    options = {"hoodie.table.name": "mor_consistent_hashing", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
               "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.partitionpath.field": "region",
               "hoodie.index.type": "BUCKET", "hoodie.index.bucket.engine": "CONSISTENT_HASHING",
               "hoodie.bucket.index.num.buckets": "2", "hoodie.bucket.index.max.num.buckets": "8",
               "hoodie.bucket.index.min.num.buckets": "1",
               "hoodie.clustering.plan.strategy.class":
                   "org.apache.hudi.client.clustering.plan.strategy.SparkConsistentBucketClusteringPlanStrategy",
               "hoodie.clustering.execution.strategy.class":
                   "org.apache.hudi.client.clustering.run.strategy.SparkConsistentBucketClusteringExecutionStrategy",
               "hoodie.clustering.updates.strategy":
                   "org.apache.hudi.client.clustering.update.strategy.SparkConsistentBucketDuplicateUpdateStrategy",
               "hoodie.compact.inline": "false", "hoodie.metadata.enable": "false", "hoodie.clean.automatic": "false",
               **_ARCHIVE_SOON}
    # buckets over 0.5 x 2 kB split (all of them), under 0.2 x 100 MB merge (all of them)
    split = ",".join(f"{k}={v}" for k, v in {**options, "hoodie.parquet.max.file.size": "2000",
                                             "hoodie.bucket.index.split.threshold": "0.5"}.items())
    merge = ",".join(f"{k}={v}" for k, v in {**options, "hoodie.parquet.max.file.size": "100000000"}.items())

    def rows(name: str, ts: int, first: int, last: int) -> str:
        return (f"SELECT CAST(id AS INT) AS id, concat('{name}', id) AS name, {ts}L AS ts, "
                f"IF(id % 2 = 0, 'eu', 'us') AS region FROM range({first}, {last + 1})")

    steps = [
        _write(rows("n", 1, 1, 16), options),
        _sql("CREATE TABLE {table} USING hudi LOCATION '{path}'"),
        _write(rows("u", 2, 1, 5), options),
        _write(rows("d", 3, 6, 6), options, "delete"),
        _sql(f"CALL run_clustering(table => '{{table}}', op => 'schedule', options => '{split}')"),
        _write(rows("p", 4, 2, 5), options),  # while the split is pending
        _sql(f"CALL run_clustering(table => '{{table}}', op => 'execute', options => '{split}')"),
        _write(rows("w", 5, 7, 12), options),
        _sql(f"CALL run_clustering(table => '{{table}}', options => '{merge}')"),
        _write(rows("z", 6, 11, 18), options),
        _sql("CALL run_compaction(op => 'scheduleandexecute', table => '{table}')"),
        _write(rows("y", 7, 1, 3), options),
    ]
    return Recipe("mor_consistent_hashing", "mor", 9, (
        "merge-on-read", "table version 9", "one partition field", "consistent hashing bucket index",
        "log-only file groups", "bucket split (clustering)", "upsert during pending clustering", "bucket merge",
        "compaction procedure", "lsm archive"), tuple(steps), (("hoodie.schema.on.read.enable", "false"),))


def _mor_two_writers() -> Recipe:
    """Merge-on-read written by two Spark jobs at once under optimistic concurrency control:
    writes to separate partitions both complete; of two writes to the same file groups one
    aborts on the conflict (which one, Spark's timing decides). Then, deterministically, two
    writers of Hudi's write client begin, one commits, the other's commit conflicts and aborts
    (its log files stay until a later writer rolls it back; the last write's stay for good);
    cleaning; LSM archive.

    The lock is Hudi's in-process one (the jobs share the driver's JVM): with its
    FileSystemBasedLockProvider, Hudi 1.2's writers in one driver never overlap (the second
    starts its instant only after the first completed), so they never conflict."""
    occ = {"hoodie.write.concurrency.mode": "OPTIMISTIC_CONCURRENCY_CONTROL",
           "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.InProcessLockProvider",
           "hoodie.cleaner.policy.failed.writes": "LAZY",
           # an aborted writer's heartbeat expires soon: a later writer rolls it back
           "hoodie.client.heartbeat.interval_in_ms": "2000", "hoodie.client.heartbeat.tolerable.misses": "2"}
    options = {"hoodie.table.name": "mor_two_writers", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
               "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.partitionpath.field": "region", **occ,
               "hoodie.compact.inline": "false", "hoodie.metadata.enable": "false", "hoodie.clean.commits.retained": "4",
               "hoodie.keep.min.commits": "5", "hoodie.keep.max.commits": "6"}

    def rows(name: str, ts: int, first: int, last: int, region: str | None = None) -> str:
        where = f" WHERE IF(id % 2 = 0, 'eu', 'us') = '{region}'" if region else ""
        return (f"SELECT * FROM (SELECT CAST(id AS INT) AS id, concat('{name}', id) AS name, CAST({ts} AS INT) AS ts, "
                f"IF(id % 2 = 0, 'eu', 'us') AS region FROM range({first}, {last + 1})){where}")

    def c(id_: int, name: str, ts: int) -> dict[str, Any]:
        return _change("U", id_, name, ts, region="eu" if id_ % 2 == 0 else "us")

    def conflict(ts: int) -> list[dict[str, Any]]:
        return [{"writer": "a", "begin": "upsert", "rows": [c(1, "ca1", ts), c(2, "ca2", ts)]},
                {"writer": "b", "begin": "upsert", "rows": [c(2, "cb2", ts + 1), c(3, "cb3", ts + 1)]},
                {"writer": "a", "commit": True},
                {"writer": "b", "commit": True, "expect": "conflict"}]

    client_options = {k: v for k, v in options.items() if not k.startswith("hoodie.datasource.write.table")}
    fields = [("id", "int"), ("name", "string"), ("ts", "int"), ("region", "string")]
    steps = [
        _write(rows("n", 1, 1, 12), options, "insert"),
        _write(rows("u", 2, 1, 4), options),
        {"concurrent": [_write(rows("e", 3, 1, 8, "eu"), options), _write(rows("s", 3, 1, 8, "us"), options)]},
        {"concurrent": [_write(rows("a", 4, 1, 6), options), _write(rows("b", 5, 3, 10), options)]},
        _client({**client_options, "hoodie.table.type": "MERGE_ON_READ"}, fields, conflict(6)),
        _write(rows("v", 8, 5, 14), options),
        {"concurrent": [_write(rows("x", 9, 2, 3), options, "delete"), _write(rows("y", 10, 1, 12), options)]},
        _write(rows("w", 11, 10, 16), options),
        _write(rows("z", 12, 1, 2), options),
        # the last write aborted: no later writer rolls it back, its log files stay
        _client({**client_options, "hoodie.table.type": "MERGE_ON_READ"}, fields, conflict(13)),
    ]
    return Recipe("mor_two_writers", "mor", 9, (
        "merge-on-read", "table version 9", "one partition field", "optimistic concurrency control",
        "in-process lock", "two spark jobs at once", "write conflicts", "aborted writer", "rolled back writes",
        "cleaning", "lsm archive"), tuple(steps))


def _mor_metadata_indexes() -> Recipe:
    """Merge-on-read, Hudi's default table version, one partition field, the metadata table with
    every index a reader can use: files, column stats (columns of nine types, nulls among them),
    partition stats, the record index and bloom filters. Inline compaction every three delta
    commits, the metadata table compacted every three of its own, cleaning (two commits kept),
    LSM archive."""
    props = {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "3",
             "hoodie.clean.commits.retained": "2", "hoodie.keep.min.commits": "4", "hoodie.keep.max.commits": "5"}
    session = (("hoodie.metadata.enable", "true"), ("hoodie.metadata.record.index.enable", "true"),
               ("hoodie.metadata.index.bloom.filter.enable", "true"),
               ("hoodie.metadata.index.column.stats.enable", "true"),
               ("hoodie.metadata.index.partition.stats.enable", "true"),
               ("hoodie.metadata.compact.max.delta.commits", "3"), ("hoodie.schema.on.read.enable", "false"))
    regions = ["eu", "us", "ap"]

    def row(i: int, ts: int, name: str | None = None) -> tuple[Any, ...]:
        return (i, name if name is not None else f"n{i}", i * 1.25, i * 1000, f"@DATE'2024-01-{i % 28 + 1:02d}'",
                f"@CAST({i}.5 AS DECIMAL(10, 2))", i % 2 == 0, f"@TIMESTAMP'2024-01-01 00:00:{i % 60:02d}'", ts,
                regions[i % 3])

    columns = "(id, name, price, qty, day, amount, flag, at, ts, region)"
    steps = [
        _sql(f"""CREATE TABLE {{table}} (id INT, name STRING, price DOUBLE, qty BIGINT, day DATE, amount DECIMAL(10, 2),
                 flag BOOLEAN, at TIMESTAMP, ts BIGINT, region STRING) USING hudi PARTITIONED BY (region)
                 LOCATION '{{path}}' TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts',
                 {_props(props)})"""),
        _sql(f"INSERT INTO {{table}} {columns} VALUES " + _values([row(i, 1) for i in range(1, 13)])),
        _sql("UPDATE {table} SET price = price * 2, ts = 2 WHERE id % 4 = 0"),
        _sql("DELETE FROM {table} WHERE id = 5"),
        _sql(f"INSERT INTO {{table}} {columns} VALUES " + _values([row(i, 3) for i in range(20, 24)])),
        _sql("""MERGE INTO {table} AS t USING (
                 SELECT 2 AS id, 'two' AS name, 2.5D AS price, 2L AS qty, DATE'2024-02-02' AS day,
                   CAST(2.25 AS DECIMAL(10, 2)) AS amount, true AS flag, TIMESTAMP'2024-02-02 02:02:02' AS at,
                   4L AS ts, 'ap' AS region, 'upd' AS op
                 UNION ALL SELECT 30, 'thirty', 30.5D, 30L, DATE'2024-03-30', CAST(30.5 AS DECIMAL(10, 2)), false,
                   TIMESTAMP'2024-03-30 00:00:00', 4L, 'us', 'ins'
                 UNION ALL SELECT 9, NULL, 0D, 0L, NULL, NULL, NULL, NULL, 4L, 'eu', 'del') AS s
                 ON t.id = s.id
                 WHEN MATCHED AND s.op = 'del' THEN DELETE
                 WHEN MATCHED THEN UPDATE SET t.id = s.id, t.name = s.name, t.price = s.price, t.qty = s.qty,
                   t.day = s.day, t.amount = s.amount, t.flag = s.flag, t.at = s.at, t.ts = s.ts, t.region = s.region
                 WHEN NOT MATCHED THEN INSERT (id, name, price, qty, day, amount, flag, at, ts, region)
                   VALUES (s.id, s.name, s.price, s.qty, s.day, s.amount, s.flag, s.at, s.ts, s.region)"""),
        _sql("UPDATE {table} SET qty = qty + 1, name = NULL, ts = 5 WHERE region = 'eu'"),
        _sql("DELETE FROM {table} WHERE id = 21"),
        _sql(f"INSERT INTO {{table}} {columns} VALUES " + _values(
            [row(40, 6), row(41, 6, "forty-one"), (42, None, None, None, None, None, None, None, 6, "eu")])),
        _sql("UPDATE {table} SET price = -1.5, amount = -1.25, ts = 7 WHERE id IN (40, 3)"),
    ]
    return Recipe("mor_metadata_indexes", "mor", 9, (
        "merge-on-read", "table version 9", "one partition field", "metadata table on", "record index",
        "bloom filter index", "column stats", "partition stats", "inline compaction", "metadata table compaction",
        "cleaning", "lsm archive"), tuple(steps), session)


def _cow_partitions(partitions: int, rows_per_partition: int) -> Recipe:
    """Copy-on-write with every default of Hudi 1.2 (table version 9, the metadata table with its
    files, column stats and partition stats), `partitions` partitions of consecutive ids (`part` =
    id div rows_per_partition, as 'p0000'), inserted in one write, then an UPDATE of one partition's
    rows (a second version of its file). A filter on a range of ids matches rows of one file."""
    rows = partitions * rows_per_partition
    name = f"cow_{partitions}_partitions"
    steps = [
        _sql("""CREATE TABLE {table} (id INT, name STRING, price DOUBLE, ts BIGINT, part STRING) USING hudi
                PARTITIONED BY (part) LOCATION '{path}' TBLPROPERTIES (type = 'cow', primaryKey = 'id',
                preCombineField = 'ts')"""),
        _sql(f"""INSERT INTO {{table}} SELECT CAST(id AS INT), concat('n', id), id * 0.5D, 1L,
                 concat('p', lpad(CAST(id DIV {rows_per_partition} AS STRING), 4, '0')) FROM range({rows})"""),
        _sql("UPDATE {table} SET price = price + 1000, ts = 2 WHERE part = 'p0000'"),
    ]
    return Recipe(name, "cow", 9, ("copy-on-write", "table version 9", "hudi defaults", "metadata table on",
                                   f"{partitions} partitions"), tuple(steps), incremental=False)


BENCH_RECIPES: dict[str, Recipe] = {r.name: r for r in (_cow_partitions(40, 100), _cow_partitions(1000, 2))}
"""Tables for benchmarks and the metadata table's differential tests (not in `RECIPES`: many
partitions, Hudi's defaults, nothing archived)."""


RECIPES: dict[str, Recipe] = {r.name: r for r in (_mor_evolve(), _cow_v6_frames(), _mor_v6_parquet(), _mor_partial(),
                                                  _mor_partial_updates(), _mor_partial_commit_time(),
                                                  _mor_changelog(), _mor_nbcc(), _mor_consistent_hashing(),
                                                  _mor_two_writers(), _mor_metadata_indexes())}
