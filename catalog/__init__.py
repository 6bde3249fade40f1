"""The hudi-shim catalog: a table registry, published name-mapped views and the HTTP scan API.

    from catalog import Catalog, Settings
    catalog = Catalog(Settings(warehouse="/data/warehouse"))
    catalog.view("trips", "snapshot").files          # per-file schema and name mapping

    from catalog.app import create_app               # needs the `serve` extra (FastAPI)
    app = create_app(Settings(warehouse="/data/warehouse", token="..."))
"""

from __future__ import annotations

from catalog.registry import RegisteredTable, Registry
from catalog.service import Catalog, ScanRequest, TableInfo
from catalog.settings import Settings
from catalog.views import View

__all__ = ["Catalog", "RegisteredTable", "Registry", "ScanRequest", "Settings", "TableInfo", "View"]
