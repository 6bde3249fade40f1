"""Trino and Presto, from Maven Central, reading the shim's tables through its catalog.

`distribution` fetches and unpacks the servers, `configuration` writes a single-node server's
`etc/` and its Java command, `catalogs` the catalog properties, `server` runs a server as a
local process and queries it with the engine's own Python client, `cluster` a Trino coordinator
and its workers as processes, `metastore` registers tables
for the engines' own Hudi connectors in a file-based Hive metastore.
"""

from engines.trino.distribution import PRESTO, TRINO, Distribution
from engines.trino.server import EngineError, EngineServer, start_process

__all__ = ["PRESTO", "TRINO", "Distribution", "EngineError", "EngineServer", "start_process"]
