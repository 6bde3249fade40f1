"""Running a local server in the foreground until Ctrl-C or SIGTERM (`hudi-shim trino`,
`presto`, `s3proxy`): the server is stopped on the way out, whenever the interruption comes,
and a temporary folder it worked in is removed."""

from __future__ import annotations

import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

S = TypeVar("S")


def stop_process(process: subprocess.Popen[bytes], seconds: float = 30.0) -> None:
    """Stop a server's process: SIGTERM, then SIGKILL when it is still running after `seconds`."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run_until_interrupted(start: Callable[[Path], S], stop: Callable[[S], None], announce: Callable[[S], None],
                          folder: str | None, prefix: str) -> int:
    """`start` a server in `folder` (default: a temporary one named `prefix...`), `announce` it,
    then wait; on Ctrl-C or SIGTERM (during the start too) `stop` it and remove the temporary
    folder. Returns the exit code, 0."""
    base = Path(folder or tempfile.mkdtemp(prefix=prefix))
    previous = signal.signal(signal.SIGTERM, _interrupted)
    server: S | None = None
    try:
        server = start(base)
        announce(server)
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        if server is not None:
            stop(server)
        signal.signal(signal.SIGTERM, previous)
        if folder is None:
            shutil.rmtree(base, ignore_errors=True)
    return 0


def _interrupted(signum: int, frame: object) -> None:
    """SIGTERM as Ctrl-C."""
    raise KeyboardInterrupt
