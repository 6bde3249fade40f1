"""Generate the tables Apache Hudi writes from the recipes, with Hudi's own reads of them.

    python -m tests.oracle [--recipe NAME ...] [--out DIR] [--rebuild] [--list]

Tables are built where not cached (`$HUDI_SHIM_CACHE`, default ~/.cache/hudi-shim; the first run
makes a venv with PySpark 3.5 and fetches Hudi's Spark bundle from Maven Central) and, with
`--out`, copied to DIR/<recipe> (the table) and DIR/<recipe>.reads/ (Hudi's reads, Parquet).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from shim.errors import HudiShimError
from tests.oracle.recipes import RECIPES


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m tests.oracle", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recipe", action="append", choices=sorted(RECIPES), help="only this recipe (repeatable)")
    parser.add_argument("--out", type=Path, help="copy the tables and Hudi's reads here")
    parser.add_argument("--rebuild", action="store_true", help="build even when cached")
    parser.add_argument("--list", action="store_true", help="list the recipes and what they cover")
    args = parser.parse_args(argv)
    if args.list:
        for recipe in RECIPES.values():
            print(f"{recipe.name}: {', '.join(recipe.features)}")
        return 0
    from tests.oracle.generate import generate

    started = time.monotonic()
    try:
        tables = generate(args.recipe, rebuild=args.rebuild)
    except HudiShimError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for name, table in tables.items():
        failed = sorted(r.name for r in table.reads.values() if r.error)
        where = table.path
        if args.out is not None:
            where = args.out / name
            shutil.rmtree(where, ignore_errors=True)
            shutil.copytree(table.path, where)
            shutil.rmtree(args.out / f"{name}.reads", ignore_errors=True)
            shutil.copytree(table.path.parent / "reads", args.out / f"{name}.reads")
        state = "cached" if table.cached else f"built in {table.seconds:.0f} s"
        print(f"{name}: {where} ({state}; {len(table.completed_writes())} writes, "
              f"{len(table.reads)} Hudi reads, {len(failed)} refused or failed by Hudi)")
    print(f"done in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
