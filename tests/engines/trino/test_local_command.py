"""`hudi-shim trino` as a user runs it, the line README.md and docs/engines.md give (`LINE`): a real
Trino 476 on the shim's catalog, stopped by SIGTERM as by Ctrl-C, its JVM with it and its
temporary folder removed."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from engines.trino.server import free_port
from tests import docskit
from tests.engines.trino.conftest import TOKEN

REPO = Path(__file__).resolve().parents[3]
LINE = next(s for s in docskit.snippets("trino") if s.language == "sh" and s.code.startswith("hudi-shim trino "))
"""The documents' `hudi-shim trino` block (tests/engines/trino/test_engine_docs_snippets.py leaves it to this test)."""


def _processes_naming(text: str) -> list[int]:
    """The processes whose command line holds `text`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_sigterm_stops_trino_and_removes_its_temporary_folder(stack):
    port = free_port()
    env = {**os.environ, "HUDI_SHIM_TOKEN": TOKEN, "PYTHONPATH": str(REPO)}
    places = docskit.Places(root=REPO, catalog_port=int(stack.catalog.url.rsplit(":", 1)[1]))
    words = shlex.split(places.substitute(LINE.code), comments=True)
    assert words[:2] == ["hudi-shim", "trino"] and "--port" not in words, LINE.where()
    command = subprocess.Popen([sys.executable, "-m", "engines.cli", *words[1:], "--port", str(port)], env=env,
                               cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert command.stdout is not None
        said = []
        for line in command.stdout:
            said.append(line)
            if "is up at" in line:
                break
        folder = re.search(r"configuration and log in (\S+)\)", "".join(said))
        assert folder is not None and "is up at" in said[-1], "".join(said)
        jvm = _processes_naming(folder.group(1))
        assert jvm, "Trino's JVM runs with its configuration in the folder"
        command.send_signal(signal.SIGTERM)
        assert command.wait(timeout=90) == 0
        deadline = time.monotonic() + 30
        while _processes_naming(folder.group(1)) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not _processes_naming(folder.group(1)), "Trino's JVM outlived the command"
        assert not Path(folder.group(1)).exists(), "the temporary folder was left behind"
    finally:
        if command.poll() is None:
            command.kill()
