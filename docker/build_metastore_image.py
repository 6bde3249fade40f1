"""Build a Hive Metastore image without any registry: the metastore's jars from Maven Central
(`engines.hms.install`) at `/opt/hms/lib`, the Java it runs on at `/opt/java`, and the shared
libraries Java loads, streamed into `docker import`. No shell, no entry point: the caller runs
`engines.hms.command` with `metastore-site.xml` mounted at `/etc/hms` and the Derby database
under `/var/hms` (inside the container: it lives as long as the container).

    python docker/build_metastore_image.py [--version 4.0.1] [--force]     # prints the image tag
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_engine_image import _ACCOUNTS, JAR_NATIVE_NEEDS, JAVA, _remove_older, _system_library, _tree
from build_image import _is_elf, add_tree, docker_import, image_exists, shared_libraries, tree_digest

from engines.hms import DEFAULT_VERSION, install, java_home

LIB = "/opt/hms/lib"
CONF = "/etc/hms"
DATA = "/var/hms"
#: Programs Hadoop's local file system runs: `chmod` when the metastore makes a table's folder,
#: `ls` for permissions, `id` and `bash` for the user's groups.
PROGRAMS = ("/bin/chmod", "/bin/ls", "/usr/bin/id", "/bin/bash")


def image_files(version: str) -> dict[str, Path]:
    """Path in the image -> file here: Java (without dangling links, such as a JDK's src.zip
    without its sources), the jars, and the system libraries Java and the jars' native code load."""
    java = Path(os.path.realpath(java_home()))
    files = {target: path for target, path in _tree(java, JAVA) if path.exists()}
    files.update(_tree(install(version), LIB))
    binaries = [p for target, p in files.items()
                if target.startswith(JAVA) and (target.endswith(("/bin/java", ".so")) or ".so." in target) and _is_elf(p)]
    bundled = {os.path.realpath(p) for p in files.values()}
    programs = [Path(p) for p in PROGRAMS if os.path.exists(p)]
    for program in programs:
        files[os.path.join(os.path.realpath(program.parent), program.name)] = program
    extra = [path for path in map(_system_library, JAR_NATIVE_NEEDS) if path is not None]
    for library in shared_libraries(binaries + extra + programs) | set(extra):
        if os.path.realpath(library) not in bundled:
            files.setdefault(os.path.join(os.path.realpath(library.parent), library.name), library)
    return files


def write_tar(files: dict[str, Path], out: object) -> None:
    with tarfile.open(fileobj=out, mode="w|") as tar:  # type: ignore[call-overload]
        for folder, mode in (("tmp", 0o1777), (CONF.lstrip("/"), 0o755), (DATA.lstrip("/"), 0o777)):
            info = tarfile.TarInfo(folder)
            info.type, info.mode = tarfile.DIRTYPE, mode
            tar.addfile(info)
        for name, text in _ACCOUNTS.items():  # Hadoop's login looks the user up
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(text), 0o644
            tar.addfile(info, io.BytesIO(text))
        add_tree(tar, files)


def build(version: str = DEFAULT_VERSION, force: bool = False) -> str:
    """Build (or reuse) the metastore image of `version`; returns its tag."""
    files = image_files(version)
    tag = f"hudi-shim-hms:{version}-{tree_digest(files, Path(__file__).read_bytes())}"
    if image_exists(tag) and not force:
        return tag
    docker_import(tag, [f"WORKDIR {DATA}", "ENV LANG=C.UTF-8", "ENV HADOOP_USER_NAME=root"],
                  lambda out: write_tar(files, out))
    _remove_older(tag)
    return tag


def java_path() -> str:
    """The `java` binary inside the image."""
    return f"{JAVA}/bin/java"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", default=DEFAULT_VERSION)
    parser.add_argument("--force", action="store_true", help="rebuild even when the image exists")
    args = parser.parse_args()
    print(build(args.version, args.force))


if __name__ == "__main__":
    main()
