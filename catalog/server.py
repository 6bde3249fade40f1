"""Run the HTTP API with uvicorn (what `hudi-shim serve` does)."""

from __future__ import annotations

import ipaddress
import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from catalog.auth.oauth import Authenticator
from catalog.service import Catalog
from catalog.settings import Settings

log = logging.getLogger(__name__)


def run(settings: Settings) -> int:
    """Check the settings (warehouse, registry), then serve until interrupted; returns an exit code."""
    try:
        import uvicorn
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise ImportError("hudi-shim serve needs uvicorn: pip install 'hudi-shim[serve]'") from exc
    from catalog.app import create_app
    from catalog.connections import guarded_protocol

    catalog = Catalog(settings)  # fail here, with the shim's message, rather than inside the server's startup
    try:
        print(startup_summary(settings, catalog.names()), flush=True)
    finally:
        catalog.close()
    Authenticator.from_settings(settings)  # a clients file that cannot be read, too
    if not is_loopback(settings.host) and settings.token is None and not settings.oauth_clients:
        log.warning("serving on %s without a token: anyone who can reach it can read every registered table",
                    settings.host)
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level="info",
                http=guarded_protocol(settings.request_timeout_seconds))
    return 0


def startup_summary(settings: Settings, tables: list[str]) -> str:
    """What `hudi-shim serve` says as it starts: the tables found, whether a token is asked for
    (and where OAuth2 clients get theirs), the addresses of the scan API, the Iceberg REST catalog
    and the web UI, and whether credentials are vended and to which metastore it publishes."""
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    url = f"http://{host}:{settings.port}"
    shown = ", ".join(tables[:20]) + (f", ... ({len(tables)} in all)" if len(tables) > 20 else "")
    if settings.token or settings.oauth_clients:
        token = "required (Authorization: Bearer ...)" + (
            f"; OAuth2 clients get tokens at {url}/iceberg/v1/oauth/tokens" if settings.oauth_clients else "")
    else:
        token = "none (anyone who reaches it reads)"
    lines = [f"hudi-shim serve: {len(tables)} table(s): {shown or '(none yet)'}", f"  token: {token}",
             f"  scan API {url}/v1, Iceberg REST catalog {url}/iceberg, web UI {url}/ui"]
    if settings.vend_credentials:
        lines.append("  vends S3 credentials to Iceberg readers that ask: "
                     + (f"STS AssumeRole of {settings.vend_role_arn}" if settings.vend_role_arn else "the tables' own keys"))
    if settings.hive_metastore:
        lines.append(f"  publishes to the Hive Metastore {settings.hive_metastore}")
    return "\n".join(lines)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class RunningServer:
    """A catalog server running in this process."""

    url: str
    app: Any
    server: Any

    @property
    def catalog(self) -> Catalog:
        catalog: Catalog = self.app.state.catalog
        return catalog


@contextmanager
def running(settings: Settings, *, port: int = 0, startup_seconds: float = 10.0,
            send_buffer: int | None = None) -> Iterator[RunningServer]:
    """Serve `create_app(settings)` from a background thread on 127.0.0.1 (port 0: a free one).
    `send_buffer`: the kernel send buffer of the connections accepted, in bytes (a test of a slow
    client, whose progress the kernel's own buffering of megabytes would otherwise hide)."""
    import uvicorn

    from catalog.app import create_app
    from catalog.connections import guarded_protocol

    app = create_app(settings)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if send_buffer is not None:  # accepted connections inherit it
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
    sock.bind(("127.0.0.1", port))
    bound = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on",
                                           http=guarded_protocol(settings.request_timeout_seconds)))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_seconds
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            sock.close()
            raise RuntimeError("the catalog server did not start")
        time.sleep(0.01)
    try:
        yield RunningServer(f"http://127.0.0.1:{bound}", app, server)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
