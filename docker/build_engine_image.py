"""Build a Trino or Presto server image without any registry.

The image holds the server's distribution from Maven Central (`engines.trino.distribution`:
only the Iceberg, Hive and Hudi plugins) at `/opt/<flavor>`, the Java installation it runs on
(Temurin 25 for Trino, Java 11 for Presto) at `/opt/java`, and the shared libraries Java loads
(found with `ldd`), streamed into `docker import`. It has no shell and no entry point: the
caller runs the server's Java command (`engines.trino.configuration.ServerLayout`) with its
configuration folder mounted at `/etc/<flavor>`. Trino runs on the host's network (it reaches
the catalog's REST endpoint on 127.0.0.1) and listens on 127.0.0.1 only. Presto opens more
listeners, on every address (its Thrift server, JMX), so it runs in a network of its own, bound
to 0.0.0.0 there, with only its HTTP port published on the host's 127.0.0.1 (it reads files only).

    python docker/build_engine_image.py trino [--force]     # prints the image tag
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_image import _is_elf, add_tree, docker_import, image_exists, shared_libraries, tree_digest

from engines.trino.configuration import ServerLayout
from engines.trino.distribution import DISTRIBUTIONS, Distribution, install, java_home

JAVA = "/opt/java"
_ACCOUNTS = {"etc/passwd": b"root:x:0:0:root:/root:/nonexistent\nnobody:x:65534:65534:nobody:/nonexistent:/nonexistent\n",
             "etc/group": b"root:x:0:\nnogroup:x:65534:\n"}
#: Libraries that native code inside the servers' jars (snappy, Hadoop's native code, zstd...)
#: loads when it is unpacked at run time, which `ldd` of the Java installation cannot see.
#: Programs a server runs: Hadoop's local file system runs `/bin/ls -ld` for each file's
#: permissions when Presto's Hive connector lists a table's files.
PROGRAMS = ("/bin/ls",)
JAR_NATIVE_NEEDS = ("libstdc++.so.6", "libgcc_s.so.1", "libz.so.1", "libm.so.6", "librt.so.1", "libdl.so.2",
                    "libpthread.so.0")


def layout(distribution: Distribution) -> ServerLayout:
    """Where the server's pieces are inside the image."""
    return ServerLayout(f"{JAVA}/bin/java", f"/opt/{distribution.flavor}", f"/etc/{distribution.flavor}")


def own_network(distribution: Distribution) -> bool:
    """Whether the server runs in a network of its own, its HTTP port published on 127.0.0.1
    (else on the host's network, listening on 127.0.0.1)."""
    return distribution.flavor == "presto"


def data_folder(distribution: Distribution) -> str:
    return f"/var/{distribution.flavor}/data"


def _tree(source: Path, target: str) -> Iterator[tuple[str, Path]]:
    for root, dirs, files in os.walk(source):
        dirs.sort()
        for name in sorted(files):
            path = Path(root) / name
            yield f"{target}/{path.relative_to(source).as_posix()}", path


def image_files(distribution: Distribution) -> dict[str, Path]:
    """Path in the image -> file here."""
    java = Path(os.path.realpath(java_home(distribution)))
    files = dict(_tree(java, JAVA))
    files.update(_tree(install(distribution), f"/opt/{distribution.flavor}"))
    binaries = [p for target, p in files.items() if target.startswith(JAVA) and (
        target.endswith(("/bin/java", ".so")) or ".so." in target) and _is_elf(p)]
    for program in PROGRAMS:
        files[os.path.join(os.path.realpath(os.path.dirname(program)), os.path.basename(program))] = Path(program)
    bundled = {os.path.realpath(p) for p in files.values()}
    extra = [path for path in map(_system_library, JAR_NATIVE_NEEDS) if path is not None]
    for library in shared_libraries(binaries + extra + [Path(p) for p in PROGRAMS]) | set(extra):
        if os.path.realpath(library) not in bundled:  # the JDK's own, found through $ORIGIN
            files.setdefault(os.path.join(os.path.realpath(library.parent), library.name), library)
    return files


def _system_library(name: str) -> Path | None:
    """Where the dynamic loader finds library `name` here (from `ldconfig -p`), if it does."""
    listing = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=False).stdout
    for line in listing.splitlines():
        parts = line.strip().split(" => ")
        if len(parts) == 2 and parts[0].split(" ")[0] == name and "x86-64" in parts[0]:
            return Path(parts[1])
    return None


def content_tag(distribution: Distribution, files: dict[str, Path]) -> str:
    """A tag that changes with the files and with how this script lays them out."""
    return f"hudi-shim-{distribution.flavor}:{distribution.version}-{tree_digest(files, Path(__file__).read_bytes())}"


def write_tar(distribution: Distribution, files: dict[str, Path], out: object) -> None:
    """The image's tree as a tar stream; files the server tree links together stay hard links."""
    with tarfile.open(fileobj=out, mode="w|") as tar:  # type: ignore[call-overload]
        for folder, mode in (("tmp", 0o1777), (f"etc/{distribution.flavor}", 0o755),
                             (data_folder(distribution).lstrip("/"), 0o777)):
            info = tarfile.TarInfo(folder)
            info.type, info.mode = tarfile.DIRTYPE, mode
            tar.addfile(info)
        for name, text in _ACCOUNTS.items():  # Java looks the user up (Hadoop's login needs a name)
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(text), 0o644
            tar.addfile(info, io.BytesIO(text))
        add_tree(tar, files)


def build(flavor: str, force: bool = False) -> str:
    """Build (or reuse) the image of `flavor` ("trino" or "presto"); returns its tag."""
    distribution = DISTRIBUTIONS[flavor]
    files = image_files(distribution)
    tag = content_tag(distribution, files)
    if image_exists(tag) and not force:
        return tag
    changes = [f"WORKDIR {data_folder(distribution)}", "ENV LANG=C.UTF-8"]
    docker_import(tag, changes, lambda out: write_tar(distribution, files, out))
    _remove_older(tag)
    return tag


def _remove_older(tag: str) -> None:
    """Remove the other images of the same repository (earlier builds); one in use stays."""
    repository = tag.split(":")[0]
    listed = subprocess.run(["docker", "images", repository, "--format", "{{.Repository}}:{{.Tag}}"],
                            capture_output=True, text=True, check=False).stdout.split()
    for old in listed:
        if old != tag:
            subprocess.run(["docker", "rmi", old], capture_output=True, check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("flavor", choices=sorted(DISTRIBUTIONS))
    parser.add_argument("--force", action="store_true", help="rebuild even when the image exists")
    args = parser.parse_args()
    print(build(args.flavor, args.force))


if __name__ == "__main__":
    main()
