"""moto's S3 server on 127.0.0.1, one request at a time: `python -m engines.moto_s3 --port N`.

moto (PyPI, Apache 2.0; the `test` extra) honours `If-None-Match: *` and `If-Match` on PUT (and
`If-None-Match` on completing a multipart upload), as AWS S3 does since 2024. It checks the
precondition and stores the object in separate steps of Python code, so two requests served on
two threads at once could both pass the check; serving one request at a time makes the pair
atomic, as it is on S3. Objects live in memory. `engines.s3server.start_moto` starts it.
"""

from __future__ import annotations

import argparse
import threading
from collections.abc import Callable, Iterable
from typing import Any

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import make_server

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


if __name__ == "__main__":
    main()
