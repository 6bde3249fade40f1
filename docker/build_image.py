"""Build the hudi-shim catalog server image without any registry or network.

No base image can be pulled here, so the image is assembled from this machine: the running Python
interpreter and its standard library, the installed distributions `hudi-shim[serve,lance]` needs (found
through their metadata), the project's packages, and every shared library those link against
(found with `ldd`). The tree is streamed into `docker import`.

    python docker/build_image.py [--force]      # prints the image tag

The tag is derived from the content, so an unchanged tree reuses the existing image.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
from collections.abc import Callable, Iterable, Iterator
from importlib import metadata
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("shim", "catalog", "engines")
ROOT_DISTRIBUTIONS = ("pyarrow", "fastavro", "numpy", "fastapi", "uvicorn", "httptools", "uvloop",
                      "pylance", "datasketches",  # Lance base files, statistics sketches: when installed
                      "boto3")  # STS credentials vended per table (serve --vend-role-arn), when installed
APP = "/opt/hudi-shim/app"
SITE = "/opt/hudi-shim/site-packages"
PORT = 8080
_SKIPPED_STDLIB = {"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "site-packages",
                   "__pycache__"}
_SKIPPED_MODULES = ("_tkinter",)  # would drag in X11 libraries
_LDD_PATH = re.compile(r"(/\S+)")


def distribution_closure(roots: Iterable[str]) -> list[metadata.Distribution]:
    """The installed distributions `roots` need, following their unconditional requirements."""
    seen: dict[str, metadata.Distribution] = {}
    pending = list(roots)
    while pending:
        name = _normalize(pending.pop())
        if name in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen[name] = dist
        for requirement in dist.requires or ():
            if "extra ==" in requirement:
                continue
            pending.append(re.split(r"[\s;<>=!~\[(]", requirement, maxsplit=1)[0])
    return list(seen.values())


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def image_files() -> Iterator[tuple[str, Path]]:
    """(path in the image, path here) for everything but shared libraries."""
    prefix = Path(sys.base_prefix)
    interpreter = Path(os.path.realpath(sys.executable))
    yield str(prefix / "bin" / "python3"), interpreter
    libdir = Path(sysconfig.get_config_var("LIBDIR") or prefix / "lib")
    for shared in libdir.glob("libpython3*.so*"):
        yield str(shared), shared
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in _walk(stdlib):
        parts = path.relative_to(stdlib).parts
        if parts and parts[0] not in _SKIPPED_STDLIB and "__pycache__" not in parts \
                and not path.name.startswith(_SKIPPED_MODULES):
            yield str(path), path
    for dist in distribution_closure(ROOT_DISTRIBUTIONS):
        for file in dist.files or ():
            source = Path(str(dist.locate_file(file)))
            if source.is_file() and "__pycache__" not in file.parts and not str(file).startswith(".."):
                yield f"{SITE}/{file.as_posix()}", source
    for package in PACKAGES:
        for path in _walk(REPO / package):
            if path.suffix in (".py", ".js", ".css"):  # the web UI's static files too
                yield f"{APP}/{path.relative_to(REPO).as_posix()}", path


def _walk(folder: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            yield Path(root) / name


def shared_libraries(binaries: Iterable[Path]) -> set[Path]:
    """Every library the binaries load, and the dynamic loader, as `ldd` resolves them here."""
    libraries: set[Path] = set()
    for binary in binaries:
        result = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=False)
        for line in result.stdout.splitlines():
            if "not found" in line:
                continue
            match = _LDD_PATH.search(line.split("=>")[-1])
            if match:
                libraries.add(Path(match.group(1)))
    return libraries


def _is_elf(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(4) == b"\x7fELF"


def build_tree() -> dict[str, Path]:
    """Path in the image -> file here. System libraries keep the name the loader asks for, in
    their real folder (`/lib` and `/lib64` become links to `/usr/...` as on this machine)."""
    files = dict(image_files())
    binaries = [p for target, p in files.items() if target.endswith((".so", "python3")) or ".so." in target]
    bundled = {os.path.realpath(p) for p in files.values()}
    for library in shared_libraries(p for p in binaries if _is_elf(p)):
        if os.path.realpath(library) in bundled:  # wheels' own libraries, found through $ORIGIN
            continue
        target = os.path.join(os.path.realpath(library.parent), library.name)
        files.setdefault(target, library)
    return files


def _merged_usr_links() -> dict[str, str]:
    """Top-level folders that are links on this machine (merged /usr): name -> link target."""
    return {name: os.readlink(f"/{name}") for name in ("lib", "lib64", "bin", "sbin")
            if os.path.islink(f"/{name}")}


def tree_digest(files: dict[str, Path], seed: bytes = b"") -> str:
    """A short digest of the files' image paths, sizes and times (and `seed`)."""
    digest = hashlib.sha256(seed)
    for target in sorted(files):
        stat = files[target].stat()
        digest.update(f"{target}\0{stat.st_size}\0{int(stat.st_mtime)}\n".encode())
    return digest.hexdigest()[:12]


def content_tag(files: dict[str, Path]) -> str:
    return f"hudi-shim-catalog:{tree_digest(files)}"


def image_exists(tag: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", tag], capture_output=True, check=False).returncode == 0


def docker_import(tag: str, changes: list[str], write: Callable[[IO[bytes]], None]) -> None:
    """`docker import` of the tar stream `write` produces, as `tag`, with Dockerfile `changes`."""
    command = ["docker", "import", *[arg for change in changes for arg in ("-c", change)], "-", tag]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert process.stdin is not None
    try:
        write(process.stdin)
    finally:
        process.stdin.close()
    if process.wait() != 0:
        raise RuntimeError(f"docker import failed for {tag}")


def write_tar(files: dict[str, Path], out: io.BufferedIOBase) -> None:
    with tarfile.open(fileobj=out, mode="w|") as tar:
        for folder in ("tmp", "warehouse"):
            info = tarfile.TarInfo(folder)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777
            tar.addfile(info)
        add_tree(tar, files)


def add_tree(tar: tarfile.TarFile, files: dict[str, Path]) -> None:
    """Add the merged-/usr links (/bin -> usr/bin...) and `files` (target path -> source) to `tar`."""
    for name, link in _merged_usr_links().items():
        info = tarfile.TarInfo(name)
        info.type, info.linkname = tarfile.SYMTYPE, link
        tar.addfile(info)
    for target in sorted(files):
        tar.add(os.path.realpath(files[target]), arcname=target.lstrip("/"), recursive=False)


def build(force: bool = False) -> str:
    """Build (or reuse) the image; returns its tag."""
    files = build_tree()
    tag = content_tag(files)
    if image_exists(tag) and not force:
        return tag
    python = str(Path(sys.base_prefix) / "bin" / "python3")
    changes = [
        f"ENV PYTHONPATH={APP}:{SITE}",
        "ENV PYTHONDONTWRITEBYTECODE=1",
        f'ENTRYPOINT ["{python}", "-m", "engines.cli"]',
        (f'CMD ["serve", "--warehouse", "/warehouse", "--host", "0.0.0.0", "--port", "{PORT}", '
         '"--catalog-db", ":memory:"]'),
        f"EXPOSE {PORT}",
        "WORKDIR /tmp",
    ]
    docker_import(tag, changes, lambda out: write_tar(files, out))  # type: ignore[arg-type]
    return tag


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--force", action="store_true", help="rebuild even when the image exists")
    print(build(parser.parse_args().force))


if __name__ == "__main__":
    main()
