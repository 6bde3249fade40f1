"""Tables Apache Hudi writes from the recipes, with Hudi's own reads of them, cached by digest.

Each recipe's table lives under `cache_dir("hudi-oracle", "tables", "<name>-<digest>")`: the table
(`table/`), Hudi's reads of it as Parquet files (`reads/`) and `result.json` (Hudi's timeline, which
reads failed and how, seconds taken). The digest covers the recipe, the bundle, the oracle's
pinned requirements and the driver's code, so a change to any of them builds the table anew; a
folder without its `.ready` marker (an interrupted build) is built again. Missing tables are built
in two Spark sessions side by side (most of Hudi's time per commit is spent on one thread).
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shim.local_cache import cache_dir
from tests.oracle.env import OracleEnv, OracleError, cache_lock, check_response, ensure_env, run_driver
from tests.oracle.recipes import RECIPES, Recipe


@dataclass(frozen=True, slots=True)
class OracleRead:
    """One read Apache Hudi made: its options and its rows (a Parquet file) or its error."""

    name: str
    options: Mapping[str, str]
    file: Path | None
    error: str | None


@dataclass(frozen=True, slots=True)
class GeneratedTable:
    """A table Apache Hudi wrote from a recipe, and Hudi's reads of it."""

    recipe: Recipe
    path: Path
    reads: Mapping[str, OracleRead]
    timeline: Mapping[str, Any]
    seconds: float
    cached: bool = field(default=True, compare=False)
    steps: tuple[Mapping[str, Any], ...] = field(default=(), compare=False)
    """What each step did: its seconds, and for client and concurrent steps their outcome."""

    def completed_writes(self) -> list[dict[str, Any]]:
        """Hudi's completed writes (archived and active), oldest first: requested, completed, action."""
        writes = [i for i in [*self.timeline["archived"], *self.timeline["active"]]
                  if i["action"] in ("commit", "deltacommit", "replacecommit")]
        return sorted(writes, key=lambda i: str(i["requested"]))


def table_folder(recipe: Recipe, env: OracleEnv, root: Path | None = None) -> Path:
    """Where the recipe's table and reads are kept."""
    base = root if root is not None else cache_dir("hudi-oracle", "tables")
    return base / f"{recipe.name}-{recipe.digest()}-{env.fingerprint}"


def generate(recipes: Iterable[Recipe | str] | None = None, *, root: Path | None = None,
             env: OracleEnv | None = None, rebuild: bool = False) -> dict[str, GeneratedTable]:
    """The tables of the recipes (default: all), built by Apache Hudi where not cached.

    Raises:
        OracleError: the oracle could not be set up or Hudi failed a step (naming it).
    """
    chosen = [RECIPES[r] if isinstance(r, str) else r for r in (recipes or RECIPES.values())]
    env = env or ensure_env()
    folders = {recipe.name: table_folder(recipe, env, root) for recipe in chosen}  # one fingerprint throughout
    found: dict[str, GeneratedTable] = {}
    with cache_lock("tables"):
        missing = [recipe for recipe in chosen if rebuild or not (folders[recipe.name] / ".ready").is_file()]
        if missing:
            _build(missing, env, folders)
        for recipe in chosen:
            found[recipe.name] = _load(recipe, folders[recipe.name], cached=recipe not in missing)
    return found


def _build(recipes: list[Recipe], env: OracleEnv, folders: Mapping[str, Path]) -> None:
    groups: list[list[Recipe]] = [[], []]
    for recipe in sorted(recipes, key=lambda r: -len(r.steps)):  # the longest first, to the lighter group
        min(groups, key=lambda g: sum(len(r.steps) for r in g)).append(recipe)
    with ThreadPoolExecutor(max_workers=2) as pool:
        for done in [pool.submit(_build_group, group, env, folders) for group in groups if group]:
            done.result()


def _build_group(recipes: list[Recipe], env: OracleEnv, folders: Mapping[str, Path]) -> None:
    """Build the recipes in one Spark session. Hudi's reads of some tables kill its Spark driver
    (see `tests/hudi/test_oracle_reads.py`): the recipes after such a one, and a recipe failing
    after another in the same session, are built again in a new session; a recipe failing first
    in its session is Hudi's error."""
    remaining = list(recipes)
    while remaining:
        jobs: list[dict[str, Any]] = []
        for recipe in remaining:
            folder = folders[recipe.name]
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            path = str(folder / "table")
            jobs.append({"kind": "steps", "path": path, "table": recipe.name, "steps": list(recipe.steps),
                         "session": dict(recipe.session)})
            jobs.append({"kind": "oracle", "path": path, "out": str(folder / "reads"),
                         "table_type": recipe.table_type, "incremental": recipe.incremental})
        started = time.monotonic()
        response = run_driver(env, jobs, check=False)
        pairs = zip(response["jobs"][::2], response["jobs"][1::2], strict=False)
        built = 0
        for recipe, (steps, oracle) in zip(remaining, pairs, strict=False):
            if "error" in steps or "error" in oracle:
                break
            result = {"recipe": recipe.name, "steps": steps["steps"], "timeline": oracle["timeline"],
                      "reads": oracle["reads"], "seconds": steps["seconds"] + oracle["seconds"],
                      "session_seconds": response["session_seconds"], "build_seconds": time.monotonic() - started}
            (folders[recipe.name] / "result.json").write_text(json.dumps(result, indent=1))
            (folders[recipe.name] / ".ready").write_text(recipe.digest() + "\n")
            built += 1
        if built == 0 and len(response["jobs"]) > 0:
            check_response(response)  # the first recipe of a fresh session failed: Hudi's error
        if built == 0:
            raise OracleError(f"the Apache Hudi oracle built none of {[r.name for r in remaining]}")
        remaining = remaining[built:]


def _load(recipe: Recipe, folder: Path, *, cached: bool) -> GeneratedTable:
    result = json.loads((folder / "result.json").read_text())
    reads = {}
    for name, read in result["reads"].items():
        file = Path(read["file"]) if "file" in read else None
        if file is not None and not file.is_absolute():
            file = folder / file
        reads[name] = OracleRead(name, read.get("options", {}), file, read.get("error"))
    return GeneratedTable(recipe, folder / "table", reads, result["timeline"], float(result["seconds"]), cached,
                          tuple(result.get("steps", ())))
