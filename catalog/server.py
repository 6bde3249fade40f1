"""Run the HTTP API with uvicorn (what `hudi-shim serve` does)."""

from __future__ import annotations

import ipaddress
import logging

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

    Catalog(settings).close()  # fail here, with the shim's message, rather than inside the server's startup
    if not is_loopback(settings.host) and settings.token is None:
        log.warning("serving on %s without a token: anyone who can reach it can read every registered table",
                    settings.host)
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level="info")
    return 0


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
