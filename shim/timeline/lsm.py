"""The archived timeline of table versions 8 and 9: Hudi's LSM timeline in `.hoodie/timeline/history/`.

Layout (Hudi's `LSMTimeline`): `_version_` holds the number N of the current manifest;
`manifest_N` is JSON `{"files": [{"fileName", "fileLen"}, ...]}` listing the Parquet files that
make up the timeline now (files a compaction of the LSM tree replaced are no longer listed, though
they may still lie there until cleaned). Each file, named `<min instant>_<max instant>_<level>.parquet`,
holds one row per completed instant (`HoodieLSMTimelineInstant`): `instantTime`, `completionTime`,
`action`, `metadata` (the instant's completed content, Avro container bytes), `plan` (its requested
content, if any) and `version`. Only completed instants are archived.
"""

from __future__ import annotations

import io
import json
import os
from typing import Any

import pyarrow.parquet as pq

from shim.errors import FileGoneError, InvalidTableError
from shim.storage import Storage, decode_text
from shim.timeline.metadata import decode_instant_content

HISTORY_FOLDER = "history"
VERSION_FILE = "_version_"
_COLUMNS = ["instantTime", "completionTime", "action", "metadata", "plan"]


def lsm_files(storage: Storage, history: str) -> list[str]:
    """Paths of the Parquet files the current manifest of `history` lists ([] when none)."""
    version_path = os.path.join(history, VERSION_FILE)
    try:
        text = decode_text(storage.read_bytes(version_path), version_path).strip()
    except (FileNotFoundError, FileGoneError):  # as Hudi: then the newest manifest there is current
        versions = [int(n[len("manifest_"):]) for n in storage.list_names(history)
                    if n.startswith("manifest_") and n[len("manifest_"):].isdigit()]
        if not versions:
            return []
        text = str(max(versions))
    if not text.isdigit():
        raise InvalidTableError(f"{version_path}: expected a manifest number, found {text[:40]!r}", path=version_path)
    manifest_path = os.path.join(history, f"manifest_{text}")
    try:
        manifest = json.loads(storage.read_bytes(manifest_path))
        names = [str(entry["fileName"]) for entry in manifest["files"]]
    except (FileNotFoundError, FileGoneError) as exc:
        raise InvalidTableError(f"{version_path} names manifest {text}, but {manifest_path} is missing",
                                path=manifest_path) from exc
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidTableError(f"{manifest_path}: not an LSM timeline manifest ({exc})", path=manifest_path) from exc
    return [os.path.join(history, name) for name in names]


def read_lsm_instants(storage: Storage, history: str) -> list[dict[str, Any]]:
    """Every archived instant of the LSM timeline in `history`: requested and completion time,
    action, and its decoded metadata and plan (None when absent), oldest first."""
    found: list[dict[str, Any]] = []
    for path in lsm_files(storage, history):
        try:
            rows = pq.read_table(io.BytesIO(storage.read_bytes(path)), columns=_COLUMNS).to_pylist()
        except (FileNotFoundError, FileGoneError) as exc:
            raise InvalidTableError(f"{path}: listed by the LSM timeline's manifest but missing", path=path) from exc
        except (OSError, ValueError, KeyError) as exc:
            raise InvalidTableError(f"{path}: not an LSM timeline file ({exc})", path=path) from exc
        for row in rows:
            where = f"{path} (instant {row['instantTime']})"
            found.append({
                "requested_time": str(row["instantTime"]),
                "completion_time": str(row["completionTime"]) if row["completionTime"] else None,
                "action": str(row["action"]),
                "metadata": decode_instant_content(row["metadata"], where) if row["metadata"] else None,
                "plan": decode_instant_content(row["plan"], where) if row["plan"] else None,
            })
    found.sort(key=lambda entry: entry["requested_time"])
    return found


def lsm_completion_times(storage: Storage, history: str) -> dict[str, str]:
    """Requested time -> completion time of every archived instant of the LSM timeline in
    `history` (only those two columns are read)."""
    found: dict[str, str] = {}
    for path in lsm_files(storage, history):
        try:
            rows = pq.read_table(io.BytesIO(storage.read_bytes(path)), columns=_COLUMNS[:2]).to_pylist()
        except (FileNotFoundError, FileGoneError) as exc:
            raise InvalidTableError(f"{path}: listed by the LSM timeline's manifest but missing", path=path) from exc
        except (OSError, ValueError, KeyError) as exc:
            raise InvalidTableError(f"{path}: not an LSM timeline file ({exc})", path=path) from exc
        for row in rows:
            if row["completionTime"]:
                found[str(row["instantTime"])] = str(row["completionTime"])
    return found
