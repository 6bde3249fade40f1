"""The browser UI at `/ui`: per table, its schema history, timeline, files (with what by-name and
by-position readers would misread) and a scan's plan, read-only, behind the server's token.

Plain HTML, CSS and JavaScript from `static/` (no build step); the tables list is rendered on the
server, so it shows without JavaScript. `mount(app)` adds it to the catalog's application.
"""

from __future__ import annotations

from catalog.ui.routes import mount

__all__ = ["mount"]
