"""Whether the container tests can use Docker here."""

from __future__ import annotations

import shutil
import subprocess


def docker_unavailable() -> str | None:
    """Why Docker cannot be used here (no CLI, no daemon answering), or None."""
    if shutil.which("docker") is None:
        return "the docker CLI is not installed"
    result = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True,
                            check=False, timeout=60)
    return None if result.returncode == 0 else f"no Docker daemon: {result.stderr.strip()[:200]}"
