"""A write Apache Hudi fails, and its rollback, on a copy of a recipe's table (cached by digest).

The write is an UPDATE whose pre-commit validation fails (Hudi's
`SqlQuerySingleResultPreCommitValidator`, asking for a row that is not there): Hudi has written
its files (new log files, or on table version 6 blocks appended to existing ones) and leaves the
instant inflight, its metadata table untouched. The next write, an UPDATE of other rows, rolls it
back first (Hudi's eager rollback of failed writes: a rollback instant, the files deleted or, on
version 6, a rollback command block appended) and commits. The copy keeps both.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from shim.local_cache import cache_dir
from tests.oracle.env import OracleEnv, OracleError, cache_lock, ensure_env, run_driver
from tests.oracle.generate import generate
from tests.oracle.recipes import RECIPES

VALIDATOR = "org.apache.hudi.client.validator.SqlQuerySingleResultPreCommitValidator"
FAILING = {"hoodie.precommit.validators": VALIDATOR,
           "hoodie.precommit.validators.single.value.sql.queries": "select count(*) from <TABLE_NAME> where id = -1#1"}
WRITES = {"mor_metadata_indexes": ("UPDATE {table} SET price = 99.5, ts = 50 WHERE id IN (3, 40)",
                                   "UPDATE {table} SET qty = 7, ts = 51 WHERE id = 4"),
          "mor_v6_parquet": ("UPDATE {table} SET score = 99, ts = 50 WHERE id IN (1, 8)",
                             "UPDATE {table} SET score = 7, ts = 51 WHERE id = 9")}


def failed_write_table(recipe: str, env: OracleEnv | None = None) -> Path:
    """The copy of `recipe`'s table with a failed write and its rollback after it (built with
    Apache Hudi where not cached)."""
    env = env or ensure_env()
    failing, then = WRITES[recipe]
    source = RECIPES[recipe]
    digest = hashlib.sha256(json.dumps([source.digest(), failing, then, FAILING]).encode()).hexdigest()[:16]
    folder = cache_dir("hudi-oracle", "failed-writes") / f"{recipe}-{digest}-{env.fingerprint}"
    table = folder / "table"
    if (folder / ".ready").is_file():
        return table
    original = generate([recipe], env=env)[recipe].path
    with cache_lock("failed-writes"):
        if (folder / ".ready").is_file():
            return table
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(original, table)
        session = dict(source.session)
        register = f"CREATE TABLE IF NOT EXISTS {recipe} USING hudi LOCATION '{table}'"
        jobs: list[dict[str, Any]] = [
            {"kind": "steps", "path": str(table), "table": recipe, "session": session, "steps": [{"sql": register}]},
            {"kind": "steps", "path": str(table), "table": recipe, "session": {**session, **FAILING},
             "steps": [{"sql": failing}], "stop_on_error": False},
            {"kind": "steps", "path": str(table), "table": recipe, "session": session, "steps": [{"sql": then}]},
            {"kind": "oracle", "path": str(table), "out": str(folder / "reads"), "table_type": source.table_type,
             "incremental": False}]
        try:
            run_driver(env, jobs)
            raise OracleError(f"Apache Hudi committed the write meant to fail on {table}")
        except OracleError as exc:
            if "validat" not in str(exc).lower():
                raise
        if not (folder / "reads" / "snapshot.parquet").is_file():
            raise OracleError(f"Apache Hudi did not roll back and write again after the failed write on {table}")
        (folder / ".ready").write_text(digest + "\n")
    return table
