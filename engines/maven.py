"""Artifacts from Maven Central (engine distributions, Spark bundles), fetched once and cached.

Maven's own local repository (`~/.m2/repository`, or `$HUDI_SHIM_M2`) is the cache: an artifact
already there is used as it is; otherwise `mvn dependency:get` downloads it. Unpacked copies and
other derived files live under `shim.local_cache.cache_dir()` (`$HUDI_SHIM_CACHE`, default `~/.cache/hudi-shim`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from shim.errors import HudiShimError


class ArtifactError(HudiShimError):
    """A Maven artifact could not be fetched (no `mvn`, not served, no network)."""


@dataclass(frozen=True, slots=True)
class Artifact:
    """A Maven coordinate: `group:artifact:version[:packaging[:classifier]]`."""

    group: str
    artifact: str
    version: str
    packaging: str = "jar"
    classifier: str = ""

    @classmethod
    def parse(cls, coordinate: str) -> Artifact:
        parts = coordinate.split(":")
        if not 3 <= len(parts) <= 5 or not all(parts[:3]):
            raise ArtifactError(f"not a Maven coordinate (group:artifact:version[:type[:classifier]]): {coordinate!r}")
        return cls(*parts)

    def __str__(self) -> str:
        tail = f":{self.packaging}" + (f":{self.classifier}" if self.classifier else "")
        return f"{self.group}:{self.artifact}:{self.version}{tail}"

    def file_name(self) -> str:
        suffix = f"-{self.classifier}" if self.classifier else ""
        return f"{self.artifact}-{self.version}{suffix}.{self.packaging}"

    def local_path(self) -> Path:
        """Where the artifact lies in the local Maven repository."""
        return local_repository().joinpath(*self.group.split("."), self.artifact, self.version, self.file_name())


def local_repository() -> Path:
    """The local Maven repository (`$HUDI_SHIM_M2`, else `~/.m2/repository`)."""
    return Path(os.environ.get("HUDI_SHIM_M2") or Path.home() / ".m2" / "repository")


def fetch(coordinate: str | Artifact, *, timeout: float = 1800.0) -> Path:
    """The artifact's file in the local repository, downloaded from Maven Central when missing."""
    artifact = coordinate if isinstance(coordinate, Artifact) else Artifact.parse(coordinate)
    path = artifact.local_path()
    if path.is_file():
        return path
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ArtifactError(f"{artifact} is not in {local_repository()} and `mvn` is not installed to fetch it")
    command = [mvn, "-q", "-B", "dependency:get", f"-Dartifact={artifact}", "-Dtransitive=false",
               f"-Dmaven.repo.local={local_repository()}"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise ArtifactError(f"fetching {artifact} from Maven Central took over {timeout:.0f} s") from exc
    if done.returncode != 0 or not path.is_file():
        output = (done.stdout + done.stderr).strip().splitlines()
        raise ArtifactError(f"could not fetch {artifact} from Maven Central: " + " | ".join(output[-5:]))
    return path
