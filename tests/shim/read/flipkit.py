"""Flip bytes of a table's files one at a time and record what a read makes of each flip.

Run as a program (`python -m tests.shim.read.flipkit SPEC`), in a process of its own under an
address-space limit, so that a reader allocating without bound fails with MemoryError there
(and is reported) instead of taking the test run down. Each read also gets a time limit. The
spec (JSON) names the table, the files and the XOR masks; the program prints one JSON outcome
per flip: what came back (the rows, or the error's class, path and offset) in the default
mode, and whether `corrupt="skip"` then reads with a report of what it skipped.
"""

from __future__ import annotations

import json
import resource
import signal
import sys
import traceback
import warnings
from pathlib import Path
from typing import Any

ADDRESS_SPACE = 6 << 30
"""The limit on the flipping process's address space (Arrow's allocator reserves address space
ahead: the limit is far above what a read of a tiny table needs, far below a runaway one)."""
SECONDS_PER_READ = 20


class _Hung(Exception):
    pass


def _on_alarm(*_: object) -> None:
    raise _Hung()


def _rows(table_path: str, corrupt: str) -> tuple[list[str], int]:
    import shim
    from shim.read import SKIPPED_BLOCKS_KEY

    read = shim.open_table(table_path).read(include_meta=True, corrupt=corrupt)  # type: ignore[arg-type]
    kept = read.drop_columns([c for c in ("_hoodie_commit_seqno", "_hoodie_file_name") if c in read.column_names])
    rows = sorted(json.dumps(row, sort_keys=True, default=str) for row in kept.to_pylist())
    report = (read.schema.metadata or {}).get(SKIPPED_BLOCKS_KEY)
    return rows, json.loads(report)["count"] if report else 0


def _outcome(table_path: str) -> dict[str, Any]:
    from shim.errors import HudiShimError

    signal.alarm(SECONDS_PER_READ)
    try:
        rows, _ = _rows(table_path, "error")
        return {"rows": rows}
    except HudiShimError as exc:
        return {"error": type(exc).__name__, "path": exc.path, "offset": getattr(exc, "offset", None),
                "instant": exc.instant, "message": exc.message}
    except BaseException as exc:  # noqa: BLE001 - what escapes is what the test is after
        return {"escaped": type(exc).__name__, "message": str(exc)[:300], "trace": traceback.format_exc()[-1500:]}
    finally:
        signal.alarm(0)


def _skipping(table_path: str) -> dict[str, Any]:
    signal.alarm(SECONDS_PER_READ)
    try:
        rows, count = _rows(table_path, "skip")
        return {"skip_rows": rows, "skip_count": count}
    except BaseException as exc:  # noqa: BLE001
        return {"skip_error": type(exc).__name__, "skip_message": str(exc)[:300]}
    finally:
        signal.alarm(0)


def main(spec_path: str) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    signal.signal(signal.SIGALRM, _on_alarm)
    warnings.simplefilter("ignore")
    spec = json.loads(Path(spec_path).read_text())
    table = spec["table"]
    print(json.dumps({"baseline": _outcome(table)}), flush=True)
    for name in spec["files"]:
        path = Path(name)
        original = path.read_bytes()
        try:
            for offset in range(len(original)):
                for mask in spec["masks"]:
                    flipped = bytearray(original)
                    flipped[offset] ^= mask
                    path.write_bytes(bytes(flipped))
                    outcome = {"file": name, "offset": offset, "mask": mask, **_outcome(table)}
                    if "error" in outcome:
                        outcome.update(_skipping(table))
                    print(json.dumps(outcome), flush=True)
        finally:
            path.write_bytes(original)


if __name__ == "__main__":
    main(sys.argv[1])
