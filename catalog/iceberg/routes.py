"""The Iceberg REST catalog endpoints (read-only), under `/iceberg`.

Engines with an Iceberg REST client (Trino's and Presto's Iceberg connectors, Spark, DuckDB's
iceberg extension, PyIceberg) list and load the shim's tables here, then read their data files
themselves; `catalog.iceberg.names` says which tables the namespace `default` holds.

    trino:    iceberg.catalog.type=rest, iceberg.rest-catalog.uri=http://127.0.0.1:8080/iceberg
    duckdb:   ATTACH 'shim' AS shim (TYPE iceberg, ENDPOINT 'http://127.0.0.1:8080/iceberg', ...)

Query parameters Iceberg clients send (`warehouse`, `pageToken`, `pageSize`, `snapshots`) are
accepted and ignored: one page holds every table, and a table has one snapshot.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from catalog.errors import redact_paths
from catalog.iceberg.credentials import CredentialVendor
from catalog.iceberg.names import NAMESPACE, iceberg_names, resolve
from catalog.iceberg.publish import IcebergPublisher
from catalog.models import ErrorBody
from catalog.publication import Publication, Published
from catalog.routes import allow_everything, allow_table, principal_of, require_token
from catalog.service import Catalog
from shim.errors import TableNotFoundError

log = logging.getLogger(__name__)
#: The header by which a client asks for storage credentials, and the value that asks.
DELEGATION_HEADER, VENDED = "x-iceberg-access-delegation", "vended-credentials"

SUPPORTED = (
    "GET /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "HEAD /v1/{prefix}/namespaces/{namespace}",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
)


class NamespaceNotFoundError(TableNotFoundError):
    """The Iceberg catalog has no namespace of that name (it has one: `default`)."""


class CatalogConfig(BaseModel):
    defaults: dict[str, str]
    overrides: dict[str, str]
    endpoints: list[str]


class NamespaceList(BaseModel):
    namespaces: list[list[str]]


class NamespaceInfo(BaseModel):
    namespace: list[str]
    properties: dict[str, str]


class TableIdentifier(BaseModel):
    namespace: list[str]
    name: str


class TableIdentifiers(BaseModel):
    identifiers: list[TableIdentifier]


class StorageCredential(BaseModel):
    """Storage configuration for the files under a prefix (vended credentials)."""

    prefix: str
    config: dict[str, str]


class LoadTableResult(BaseModel):
    """Where the table's metadata file is, and its content (Iceberg table metadata, format v2)."""

    model_config = ConfigDict(populate_by_name=True)

    metadata_location: str = Field(alias="metadata-location")
    metadata: dict[str, Any]
    config: dict[str, str]
    storage_credentials: list[StorageCredential] | None = Field(default=None, alias="storage-credentials")


router = APIRouter(prefix="/iceberg/v1", tags=["iceberg"], dependencies=[Depends(require_token)],
                   responses={401: {"model": ErrorBody, "description": "missing, wrong or expired token"},
                              403: {"model": ErrorBody, "description": "the token's client may not read that table"},
                              404: {"model": ErrorBody, "description": "no such namespace or table"}})


def _catalog(request: Request) -> Catalog:
    catalog: Catalog = request.app.state.catalog
    return catalog


def _publisher(request: Request) -> IcebergPublisher:
    publisher: IcebergPublisher = request.app.state.iceberg
    return publisher


def _check_namespace(namespace: str) -> None:
    if namespace != NAMESPACE:
        raise NamespaceNotFoundError(f"no namespace {namespace!r}: the catalog's tables are in {NAMESPACE!r}")


@router.get("/config", response_model=CatalogConfig, summary="Iceberg REST: catalog configuration")
def get_config() -> CatalogConfig:
    return CatalogConfig(defaults={}, overrides={}, endpoints=list(SUPPORTED))


@router.get("/namespaces", response_model=NamespaceList, summary="Iceberg REST: list namespaces")
def list_namespaces(request: Request) -> NamespaceList:
    return NamespaceList(namespaces=[] if request.query_params.get("parent") else [[NAMESPACE]])


@router.get("/namespaces/{namespace}", response_model=NamespaceInfo, summary="Iceberg REST: load a namespace")
def load_namespace(namespace: str) -> NamespaceInfo:
    _check_namespace(namespace)
    return NamespaceInfo(namespace=[NAMESPACE], properties={})


@router.head("/namespaces/{namespace}", status_code=204, summary="Iceberg REST: namespace exists")
def namespace_exists(namespace: str) -> Response:
    _check_namespace(namespace)
    return Response(status_code=204)


@router.get("/namespaces/{namespace}/tables", response_model=TableIdentifiers,
            summary="Iceberg REST: list tables")
def list_tables(request: Request, namespace: str) -> TableIdentifiers:
    _check_namespace(namespace)
    principal = principal_of(request)
    return TableIdentifiers(identifiers=[TableIdentifier(namespace=[NAMESPACE], name=name)
                                         for name in iceberg_names(_catalog(request)) if principal.may_read(name)])


@router.get("/namespaces/{namespace}/tables/{table}", response_model=LoadTableResult, response_model_by_alias=True, response_model_exclude_none=True,
            summary="Iceberg REST: load a table (metadata published for its latest instant)",
            responses={409: {"model": ErrorBody, "description": "the table uses a feature that cannot be published"}})
def load_table(request: Request, namespace: str, table: str) -> LoadTableResult:
    _check_namespace(namespace)
    allow_table(request, table)
    catalog = _catalog(request)
    name, view = resolve(catalog, table)
    publisher = _publisher(request)
    published = publisher.publish(name, view)
    answer: dict[str, Any] = {"metadata-location": published.metadata_location, "metadata": published.metadata,
                              "config": {}}
    vendor: CredentialVendor | None = request.app.state.vendor
    if vendor is not None and VENDED in request.headers.get(DELEGATION_HEADER, "").lower():
        entry = catalog.handle(name).entry
        # the table's files and the published metadata and slices: readers scope credentials by prefix
        prefixes = [entry.path, os.path.join(publisher.folder, name)]
        config = vendor.config(name, catalog.table_storage(entry), prefixes)
        if config:
            answer["config"] = config
            answer["storage-credentials"] = [{"prefix": prefix, "config": config} for prefix in prefixes]
    return LoadTableResult.model_validate(answer)


@router.head("/namespaces/{namespace}/tables/{table}", status_code=204, summary="Iceberg REST: table exists")
def table_exists(request: Request, namespace: str, table: str) -> Response:
    _check_namespace(namespace)
    allow_table(request, table)
    resolve(_catalog(request), table)
    return Response(status_code=204)


class MetastoreReport(BaseModel):
    """What a publication did in the Hive Metastore."""

    uri: str = Field(description="the metastore")
    written: list[str] = Field(description="metastore tables (database.table) created or changed")
    unchanged: list[str] = Field(description="metastore tables already up to date")
    removed: list[str] = Field(description="metastore tables of tables no longer registered, dropped")


class PublishReport(BaseModel):
    """What `POST /v1/publish` (or `POST /v1/commits`) did."""

    published: list[str] = Field(description="Iceberg tables published (both views of every table)")
    updated: list[str] = Field(description="tables given a new version in the Hadoop catalog folder")
    removed: list[str] = Field(description="tables removed from the Hadoop catalog folder")
    failed: dict[str, str] = Field(description="tables that could not be published, and why")
    hadoop_catalog: str | None = Field(description="the Hadoop catalog folder kept, if any")
    hive_metastore: MetastoreReport | None = Field(default=None, description="what the Hive Metastore was told, if one is kept")


class CommitMessage(BaseModel):
    """Hudi's HTTP commit callback message (`hoodie.write.commit.callback.http.url`); other
    fields it carries (write stats, extra metadata) are ignored."""

    model_config = ConfigDict(extra="ignore")

    commitTime: str = Field(max_length=64, description="the commit's instant")
    tableName: str | None = Field(default=None, max_length=256, description="hoodie.table.name")
    basePath: str = Field(max_length=4096, description="the table's folder, as the writer names it")


publish_router = APIRouter(prefix="/v1", tags=["iceberg"], dependencies=[Depends(require_token)],
                           responses={400: {"model": ErrorBody, "description": "the body is not JSON"},
                                      401: {"model": ErrorBody, "description": "missing, wrong or expired token"},
                                      403: {"model": ErrorBody, "description": "the token's client may not publish "
                                                                               "that table (or every table)"}})


def _publication(request: Request) -> Publication:
    publication: Publication = request.app.state.publication
    return publication


@publish_router.post("/publish", response_model=PublishReport,
                     summary="Publish every table's Iceberg views now (the Hadoop catalog folder and the Hive "
                             "Metastore brought up to date)")
def publish_all(request: Request) -> PublishReport:
    allow_everything(request, "publish every table")
    return _report(request, _publication(request).all())


@publish_router.post("/commits", response_model=PublishReport,
                     summary="A writer's commit: publish that table now, everywhere (Hudi's HTTP commit callback)",
                     responses={404: {"model": ErrorBody, "description": "no registered table at basePath"}})
def commit_made(request: Request, message: CommitMessage) -> PublishReport:
    publication = _publication(request)
    entry = publication.table_at(message.basePath, message.tableName)
    allow_table(request, entry.name)
    log.info("commit %s of %s announced: publishing it", message.commitTime, entry.name)
    return _report(request, publication.table(entry.name))


def _report(request: Request, done: Published) -> PublishReport:
    catalog = _catalog(request)
    publication = _publication(request)
    hadoop = publication.hadoop
    hive = None if done.metastore is None or publication.hive is None else MetastoreReport(
        uri=publication.hive.uri, written=done.metastore.written, unchanged=done.metastore.unchanged,
        removed=done.metastore.removed)
    return PublishReport(published=done.published, updated=done.updated, removed=done.removed,
                         failed={name: redact_paths(catalog, message) for name, message in done.failed.items()},
                         hadoop_catalog=None if hadoop is None else redact_paths(catalog, hadoop.folder),
                         hive_metastore=hive)
