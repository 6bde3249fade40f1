"""moto's S3 server on 127.0.0.1, one request at a time: `python -m tests.moto_s3 --port N`.

moto (PyPI, Apache 2.0; the `test` extra) honours `If-None-Match: *` and `If-Match` on PUT (and
`If-None-Match` on completing a multipart upload), as AWS S3 does since 2024. It checks the
precondition and stores the object in separate steps of Python code, so two requests served on
two threads at once could both pass the check; serving one request at a time makes the pair
atomic, as it is on S3. Objects live in memory. `start_moto` starts it.
"""

from __future__ import annotations

import argparse
import os
import secrets
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import make_server

from engines.s3server import S3Server, free_port, wait_until_answering

Application = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def one_at_a_time(app: Application) -> Application:
    """`app`, answering one request at a time (the whole response made under one lock)."""
    lock = threading.Lock()

    def serve(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        with lock:
            response = app(environ, start_response)
            try:
                return [b"".join(response)]
            finally:
                close = getattr(response, "close", None)
                if close is not None:
                    close()

    return serve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args()
    app = one_at_a_time(DomainDispatcherApplication(create_backend_app))
    server = make_server(args.host, args.port, app, threaded=True, request_handler=MotoRequestHandler)
    server.serve_forever()


def start_moto(folder: Path, *, port: int | None = None, startup_seconds: float = 60.0) -> S3Server:
    """Start moto's S3 server (this module: one request at a time, objects in memory) on
    127.0.0.1 with this Python; it takes any keys."""
    folder.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    log_path = folder / "moto.log"
    root = str(Path(__file__).resolve().parent.parent)
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])}
    with open(log_path, "wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "tests.moto_s3", "--port", str(port)], stdout=log,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=environment, cwd=folder)
    server = S3Server(port, "hudi-shim", secrets.token_hex(16), folder, log_path, process)
    return wait_until_answering("moto", server, startup_seconds)



if __name__ == "__main__":
    main()
