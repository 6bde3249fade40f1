"""Catalog properties (`etc/catalog/<name>.properties`) for reading the shim's tables.

- Trino: the Iceberg connector on the shim's Iceberg REST catalog (`iceberg_rest`); Hudi base
  files and the catalog's published files are read as local files (`fs.native-local.enabled`,
  rooted at `/`, so the catalog's `file:///...` locations resolve as they are).
- Presto 0.287, the newest Maven Central serves, has no REST catalog client: its Iceberg
  connector reads a Hadoop catalog folder that `hudi-shim serve --hadoop-catalog-dir` keeps
  current (`iceberg_hadoop`), with files that carry field ids (Presto matches files without
  them by the current column name).
- Both: the Iceberg connector on a Hive Metastore the server keeps (`iceberg_metastore`), and
  the engines' own Hudi connectors over a Hive Metastore or a file-based one (`hudi_connector`),
  which show what reading evolved tables by name or by position gets wrong (Presto's by
  position is its Hive connector).
"""

from __future__ import annotations

import os

from shim.errors import UnsupportedFeatureError
from shim.storage import as_uri, resolve_table_path


def s3_files(endpoint: str | None, access_key: str | None = None, secret_key: str | None = None, *,
             region: str = "us-east-1", path_style: bool = True) -> dict[str, str]:
    """Trino's native S3 file system (for tables and published files on `s3://`): `endpoint`
    None for AWS itself, else an S3-compatible server's URL (path-style addressing); no keys when
    the catalog vends them (`iceberg_rest(..., vended_credentials=True)`)."""
    properties = {"fs.native-s3.enabled": "true", "s3.region": region}
    if access_key is not None and secret_key is not None:
        properties |= {"s3.aws-access-key": access_key, "s3.aws-secret-key": secret_key}
    if endpoint:
        properties |= {"s3.endpoint": endpoint, "s3.path-style-access": str(path_style).lower()}
    return properties


def iceberg_rest(flavor: str, uri: str, *, token: str | None = None, credential: str | None = None,
                 vended_credentials: bool = False, s3: dict[str, str] | None = None) -> dict[str, str]:
    """The Iceberg connector on the shim's REST catalog (`uri` ends in `/iceberg`): with the
    server's static `token`, or an OAuth2 client's `credential` (`id:secret`, for which Trino
    asks the server's token endpoint for tokens and renews them); `vended_credentials`: read S3
    with the keys the catalog hands out per table (`serve --vend-credentials`); `s3`: the
    properties of `s3_files` when the tables and the catalog's published files are on S3."""
    if flavor != "trino":
        raise UnsupportedFeatureError(
            f"{flavor} 0.287 has no Iceberg REST catalog client: serve it a Hadoop catalog folder "
            "(hudi-shim serve --hadoop-catalog-dir DIR) and use engines.trino.catalogs.iceberg_hadoop",
            feature="iceberg-rest-client")
    properties = {"connector.name": "iceberg", "iceberg.catalog.type": "rest", "iceberg.rest-catalog.uri": uri}
    if token is not None:
        properties |= {"iceberg.rest-catalog.security": "OAUTH2", "iceberg.rest-catalog.oauth2.token": token}
    elif credential is not None:
        properties |= {"iceberg.rest-catalog.security": "OAUTH2", "iceberg.rest-catalog.oauth2.credential": credential,
                       "iceberg.rest-catalog.oauth2.server-uri": f"{uri.rstrip('/')}/v1/oauth/tokens"}
    if vended_credentials:
        properties["iceberg.rest-catalog.vended-credentials-enabled"] = "true"
    return properties | _local_files(flavor) | (s3 or {})


def iceberg_hadoop(flavor: str, warehouse: str, *, s3: dict[str, str] | None = None) -> dict[str, str]:
    """The Iceberg connector on a Hadoop catalog folder (`<warehouse>/default/<table>/metadata`,
    a local folder or `s3://...`); `s3`: the properties of `presto_s3_files` when it, the tables
    or the published files are on S3."""
    if flavor != "presto":
        raise UnsupportedFeatureError(f"{flavor}'s Iceberg connector has no Hadoop catalog: use iceberg_rest",
                                      feature="iceberg-hadoop-catalog")
    location = as_uri(resolve_table_path(warehouse))
    return {"connector.name": "iceberg", "iceberg.catalog.type": "hadoop",
            "iceberg.catalog.warehouse": location} | (s3 or {})


def presto_s3_files(endpoint: str | None, access_key: str, secret_key: str) -> dict[str, str]:
    """Presto's S3 file system (its Hive S3 settings, which its Iceberg connector shares)."""
    properties = {"hive.s3.aws-access-key": access_key, "hive.s3.aws-secret-key": secret_key}
    if endpoint:
        properties |= {"hive.s3.endpoint": endpoint, "hive.s3.path-style-access": "true",
                       "hive.s3.ssl.enabled": str(endpoint.startswith("https://")).lower()}
    return properties


def iceberg_metastore(flavor: str, uri: str, *, s3: dict[str, str] | None = None) -> dict[str, str]:
    """The Iceberg connector on a Hive Metastore (`thrift://host:port`) that `hudi-shim serve
    --hive-metastore` keeps: Trino's `hive_metastore` catalog, Presto's `hive` catalog. `s3`: the
    properties of `s3_files` (Trino) or `presto_s3_files` (Presto) for tables on S3."""
    if flavor == "trino":
        return {"connector.name": "iceberg", "iceberg.catalog.type": "hive_metastore",
                "hive.metastore.uri": uri} | _local_files(flavor) | (s3 or {})
    return {"connector.name": "iceberg", "iceberg.catalog.type": "hive", "hive.metastore.uri": uri} | (s3 or {})


def hudi_connector(flavor: str, metastore: str, *, by_position: bool = False) -> dict[str, str]:
    """The engine's own Hudi connector, its tables registered in a Hive Metastore (`thrift://...`,
    the tables `hudi-shim serve --hive-metastore` syncs as Hudi's Hive sync would) or in a
    file-based metastore folder (`engines.trino.metastore`). Both match Parquet columns by name.

    `by_position` matches them by position instead: Trino's Hudi connector with
    `hudi.parquet.use-column-names=false`; Presto 0.287's Hudi connector has no such setting (it
    always matches by name), so there it is Presto's Hive connector, which reads the same
    registered Hudi tables (chosen by Hudi's input format) with `hive.parquet.use-column-names=false`.
    """
    thrift = metastore.startswith("thrift://")
    folder = os.path.abspath(metastore) if not thrift else ""
    if flavor == "trino":
        # A metastore keeps locations as `file:/...`, which Trino's native local file system
        # cannot list Hudi's timeline under ("Cannot get parent path of a root path"): the
        # Hadoop file system reads them.
        where = {"hive.metastore.uri": metastore, "fs.hadoop.enabled": "true"} if thrift else \
            {"hive.metastore": "file", "hive.metastore.catalog.dir": "local://" + folder} | _local_files(flavor)
        return ({"connector.name": "hudi"} | where
                | ({"hudi.parquet.use-column-names": "false"} if by_position else {}))
    metastore_properties = {"hive.metastore.uri": metastore} if thrift else \
        {"hive.metastore": "file", "hive.metastore.catalog.dir": "file://" + folder}
    if by_position:
        return {"connector.name": "hive-hadoop2"} | metastore_properties | {"hive.parquet.use-column-names": "false"}
    return {"connector.name": "hudi"} | metastore_properties


def _local_files(flavor: str) -> dict[str, str]:
    if flavor == "trino":
        # Trino's native local file system, rooted at `/`, serves the `file:///...` locations
        # the catalog publishes.
        return {"fs.native-local.enabled": "true", "local.location": "/"}
    return {}
