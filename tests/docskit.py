"""The fenced code blocks of README.md and docs/**/*.md, as the suite runs them.

Every block names its language. `python`, `sh`, `properties` and `sql` blocks are snippets and
run in the suite; `text` blocks (output, folder listings) are shown only. A snippet runs against
the fixtures its kind names, given by an HTML comment on the line before its fence:

    <!-- snippet: local -->      the default for python and sh blocks: a warehouse `/data/warehouse`
                                 holding the demo table `trips`, a live `hudi-shim serve` on it at
                                 http://127.0.0.1:8080 asking for the token in HUDI_SHIM_TOKEN, and
                                 a Spark session (tests/engines/test_docs_snippets.py)
    <!-- snippet: s3 -->         the same, with an S3-compatible server (s3proxy) at 127.0.0.1:9000
                                 holding the bucket `lake`, its AWS_* variables exported, as
                                 `hudi-shim s3proxy` prints them
    <!-- snippet: trino -->      the session's Trino 476 and Presto 0.287 on the catalog
    <!-- snippet: presto -->     (tests/engines/trino/test_engine_docs_snippets.py, marker `engines`)
    <!-- snippet: skip (why) --> not run; the reason is required

What the reader types stands for the fixtures' own paths, ports and secrets (`PLACES`): `/data/`
is a folder of the test's, 127.0.0.1:8080, :8081, :8082 and :9000 (and `port=8081`,
`port=8082`) the catalog, Trino, Presto and s3proxy, `s3://lake/` a prefix of the test's in the
bucket, `<the server's token>`, `<access key>` and `<secret key>` the fixtures' secrets.

Python blocks run in the test's process, each in a namespace of its own, compiled so that a
traceback names the document and its line. An `sh` block runs in bash (`set -euo pipefail`) in
the clone's root folder, as a reader types the README's commands there, its lines in order; a line starting a server (`hudi-shim serve`, `trino`, `presto`, `s3proxy`) runs
in the background on a free port (`--port` added where the line leaves it to the default), the
block goes on once it is up, and at the block's end it is stopped with SIGTERM and must exit 0 (or
by that signal, which uvicorn raises again after shutting down cleanly).
A `properties` block is an engine's catalog file: it must be the one the suite's engines read
(`engines.trino.catalogs`; tests/test_docs.py). A `sql` block runs in the engine its kind names.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RUN_LANGUAGES = ("python", "sh", "properties", "sql")
SHOWN_LANGUAGES = ("text",)
KINDS = ("local", "s3", "trino", "presto", "skip")
DEFAULT_KIND = {"python": "local", "sh": "local"}

_FENCE = re.compile(r"^(\s*)(`{3,})\s*([\w-]*)\s*$")
_ANNOTATION = re.compile(r"^<!--\s*snippet:\s*([\w-]+)\s*(?:\((.+)\))?\s*-->$")
_SERVER = re.compile(r"^\s*(?:[A-Z_][A-Z0-9_]*=\S*\s+)*hudi-shim\s+(serve|trino|presto|s3proxy)\b")
_PORT = {"serve": 8080, "trino": 8081, "presto": 8082, "s3proxy": 9000}
_UP = {"trino": "is up at", "presto": "is up at", "s3proxy": "s3proxy is up at"}


def documents() -> list[Path]:
    """README.md and every page of the docs site, in the site's order (mkdocs.yml's nav), so a
    page's blocks may use what an earlier page's wrote; pages outside the nav last."""
    site = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    nav = re.findall(r"^\s*-\s*[^:\n]+:\s*(\S+\.md)\s*$", site, re.MULTILINE)
    pages = sorted((REPO / "docs").rglob("*.md"))
    place = {page: nav.index(str(page.relative_to(REPO / "docs"))) for page in pages
             if str(page.relative_to(REPO / "docs")) in nav}
    pages.sort(key=lambda page: place.get(page, len(nav)))
    return [REPO / "README.md", *pages]


@dataclass(frozen=True, slots=True)
class Snippet:
    """One fenced block: where it is, its language, code and kind (and why, when skipped)."""

    path: str
    line: int
    language: str
    code: str
    kind: str
    reason: str = ""

    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True, slots=True)
class Block:
    """A fenced block as found, before its annotation is checked."""

    path: str
    line: int
    language: str
    code: str
    annotation: str | None


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of one Markdown file (line: the opening fence's, 1-based)."""
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    relative = str(path.relative_to(REPO))
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        indent, fence, language = opening.groups()
        end = index + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        code = "\n".join(line.removeprefix(indent) for line in lines[index + 1:end])
        previous = next((lines[i].strip() for i in range(index - 1, -1, -1) if lines[i].strip()), "")
        found.append(Block(relative, index + 1, language, code + "\n",
                           previous if previous.startswith("<!-- snippet") else None))
        index = end + 1
    return found


def problems() -> list[str]:
    """What breaks the convention above, one message per block (file:line first)."""
    found = []
    for path in documents():
        for block in blocks(path):
            where = f"{block.path}:{block.line}"
            if block.language not in RUN_LANGUAGES + SHOWN_LANGUAGES:
                found.append(f"{where}: a fence names no language this suite knows ({block.language!r}): "
                             f"one of {', '.join(RUN_LANGUAGES + SHOWN_LANGUAGES)}")
                continue
            if block.annotation is None:
                if block.language in ("properties", "sql"):
                    found.append(f"{where}: a {block.language} block needs <!-- snippet: trino|presto -->")
                continue
            match = _ANNOTATION.match(block.annotation)
            if match is None or match.group(1) not in KINDS:
                found.append(f"{where}: not an annotation of a known kind ({', '.join(KINDS)}): {block.annotation}")
            elif match.group(1) == "skip" and not (match.group(2) or "").strip():
                found.append(f"{where}: a skipped block must say why: <!-- snippet: skip (reason) -->")
            elif block.language in SHOWN_LANGUAGES:
                found.append(f"{where}: a {block.language} block is not run; drop its annotation")
    return found


def snippets(kind: str | None = None) -> list[Snippet]:
    """The snippets of every document, in document order; only those of `kind` when given."""
    found = []
    for path in documents():
        for block in blocks(path):
            if block.language not in RUN_LANGUAGES:
                continue
            match = _ANNOTATION.match(block.annotation or "")
            name = match.group(1) if match else DEFAULT_KIND.get(block.language, "unknown")
            reason = (match.group(2) or "").strip() if match else ""
            found.append(Snippet(block.path, block.line, block.language, block.code, name, reason))
    return [s for s in found if kind is None or s.kind == kind]


def ids(items: list[Snippet]) -> list[str]:
    return [f"{s.where()}-{s.language}" for s in items]


@dataclass
class Places:
    """What the placeholders stand for in one test's run of a snippet."""

    root: Path
    catalog_port: int = 8080
    trino_port: int = 8081
    presto_port: int = 8082
    s3_endpoint: str = "http://127.0.0.1:9000"
    s3_prefix: str = ""
    token: str = "<the server's token>"
    access_key: str = "<access key>"
    secret_key: str = "<secret key>"
    environment: dict[str, str] = field(default_factory=dict)

    def substitute(self, code: str) -> str:
        replacements = {
            "/data/": f"{self.root}/",
            "127.0.0.1:8080": f"127.0.0.1:{self.catalog_port}",
            "127.0.0.1:8081": f"127.0.0.1:{self.trino_port}",
            "127.0.0.1:8082": f"127.0.0.1:{self.presto_port}",
            "port=8081": f"port={self.trino_port}",
            "port=8082": f"port={self.presto_port}",
            "http://127.0.0.1:9000": self.s3_endpoint,
            "s3://lake/": f"s3://lake/{self.s3_prefix}" if self.s3_prefix else "s3://lake/",
            "<the server's token>": self.token,
            "<access key>": self.access_key,
            "<secret key>": self.secret_key,
        }
        pattern = re.compile("|".join(re.escape(k) for k in sorted(replacements, key=len, reverse=True)))
        return pattern.sub(lambda m: replacements[m.group(0)], code)


class SnippetFailed(AssertionError):
    """A snippet failed; the message starts with its file and line."""


def run_python(snippet: Snippet, places: Places) -> dict[str, object]:
    """Execute a python block in a namespace of its own; returns the namespace."""
    code = places.substitute(snippet.code)
    namespace: dict[str, object] = {"__name__": "__snippet__"}
    try:
        compiled = compile("\n" * snippet.line + code, snippet.path, "exec")
        exec(compiled, namespace)  # noqa: S102 - the documents' own code, which is what is tested
    except Exception as exc:
        raise SnippetFailed(f"{snippet.where()}: {type(exc).__name__}: {exc}\n{traceback.format_exc()}") from exc
    return namespace


def run_sh(snippet: Snippet, places: Places, workdir: Path, *, timeout: float = 900.0) -> str:
    """Run an sh block as described in the module; returns what it printed."""
    environment = {**os.environ, **places.environment, "PYTHONPATH": str(REPO),
                   "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    ports = {name: _free_port() for name in _PORT}
    if snippet.kind not in ("trino", "presto"):
        ports.pop("trino")
        ports.pop("presto")
    own = [name for name in _PORT if any(_starts(line, name) for line in _logical_lines(snippet.code))]
    block_places = Places(**{**places.__dict__,
                             "catalog_port": ports["serve"] if "serve" in own else places.catalog_port,
                             "trino_port": ports.get("trino", 0) if "trino" in own else places.trino_port,
                             "presto_port": ports.get("presto", 0) if "presto" in own else places.presto_port,
                             "s3_endpoint": (f"http://127.0.0.1:{ports['s3proxy']}" if "s3proxy" in own
                                             else places.s3_endpoint)})
    printed: list[str] = []
    pending: list[str] = []
    with _servers(snippet, printed, environment, workdir) as start:
        for line in _logical_lines(block_places.substitute(snippet.code)):
            server = next((name for name in _PORT if _starts(line, name)), None)
            if server is None:
                pending.append(line)
                continue
            environment = _run_script(snippet, pending, environment, workdir, printed, timeout)
            pending = []
            start(server, _with_port(line, server, {"serve": block_places.catalog_port,
                                                    "trino": block_places.trino_port,
                                                    "presto": block_places.presto_port,
                                                    "s3proxy": ports["s3proxy"]}[server]), environment)
        _run_script(snippet, pending, environment, workdir, printed, timeout)
    return "".join(printed)


def _logical_lines(code: str) -> list[str]:
    """Lines with backslash continuations joined."""
    joined: list[str] = []
    current = ""
    for line in code.splitlines():
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        joined.append(current + line)
        current = ""
    if current:
        joined.append(current)
    return joined


def _starts(line: str, server: str) -> bool:
    match = _SERVER.match(line)
    return bool(match and match.group(1) == server)


def _with_port(line: str, server: str, port: int) -> str:
    """The server line without its comment, on `port`."""
    words = shlex.split(line, comments=True)
    if "--port" in words:
        words[words.index("--port") + 1] = str(port)
    else:
        words += ["--port", str(port)]
    return shlex.join(words)


def _run_script(snippet: Snippet, lines: list[str], environment: dict[str, str], workdir: Path,
                printed: list[str], timeout: float) -> dict[str, str]:
    """Run `lines` in bash; returns the environment they leave (their exports)."""
    if not any(line.strip() and not line.strip().startswith("#") for line in lines):
        return environment
    with tempfile.NamedTemporaryFile(dir=workdir, suffix=".env", delete=False) as handle:
        left = Path(handle.name)
    script = "set -euo pipefail\n" + "\n".join(lines) + f"\nenv -0 > {shlex.quote(str(left))}\n"
    try:
        done = subprocess.run(["bash", "-c", script], env=environment, cwd=REPO, capture_output=True,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise SnippetFailed(f"{snippet.where()}: took over {timeout:.0f} s:\n{script}") from exc
    printed.append(done.stdout + done.stderr)
    if done.returncode != 0:
        raise SnippetFailed(f"{snippet.where()}: exit {done.returncode}:\n{script}\n--- output ---\n"
                            f"{done.stdout[-4000:]}{done.stderr[-4000:]}")
    pairs = [item.split("=", 1) for item in left.read_text().split("\0") if "=" in item]
    left.unlink()
    return dict(pairs)


@contextmanager
def _servers(snippet: Snippet, printed: list[str], environment: dict[str, str],
             workdir: Path) -> Iterator[object]:
    """Start server lines in the background; stop them all (SIGTERM, exit 0) at the end."""
    started: list[tuple[str, subprocess.Popen[bytes], Path]] = []

    def start(server: str, line: str, env: Mapping[str, str]) -> None:
        log = workdir / f"{server}-{len(started)}.log"
        with open(log, "wb") as output:
            process = subprocess.Popen(["bash", "-c", f"exec {line}"], env=dict(env), cwd=REPO, stdout=output,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        started.append((line, process, log))
        port = int(shlex.split(line)[shlex.split(line).index("--port") + 1])
        deadline = time.monotonic() + (900 if server in ("trino", "presto") else 180)
        while not _is_up(server, port, log):
            if process.poll() is not None:
                raise SnippetFailed(f"{snippet.where()}: `{line}` exited {process.returncode} before it was up:\n"
                                    f"{log.read_text(errors='replace')[-4000:]}")
            if time.monotonic() > deadline:
                raise SnippetFailed(f"{snippet.where()}: `{line}` was not up in time:\n"
                                    f"{log.read_text(errors='replace')[-4000:]}")
            time.sleep(0.3)

    failure: BaseException | None = None
    try:
        yield start
    except BaseException as exc:
        failure = exc
        raise
    finally:
        for line, process, log in reversed(started):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            try:
                code = process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                code = process.wait()
            output = log.read_text(errors="replace")
            printed.append(output)
            if code not in (0, -signal.SIGTERM) and failure is None:  # uvicorn re-raises it after a clean shutdown
                raise SnippetFailed(f"{snippet.where()}: `{line}` exited {code} on SIGTERM:\n{output[-4000:]}")


def _is_up(server: str, port: int, log: Path) -> bool:
    if server in _UP:
        return _UP[server] in log.read_text(errors="replace")
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def properties(code: str) -> dict[str, str]:
    """A catalog file's properties (comment lines left out)."""
    found = {}
    for line in code.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            found[key.strip()] = value.strip()
    return found
