"""Bring up the catalog, Trino and (with --presto) Presto in containers over a warehouse folder.

    python docker/up.py --warehouse /data/warehouse [--presto] [--catalog-port 8080] [--trino-port 8081]
                        [--presto-port 8082]     # the token: HUDI_SHIM_TOKEN or HUDI_SHIM_TOKEN_FILE

Builds the images without a registry (`build_image.py`, `build_engine_image.py`; the first run
fetches Trino 476 and Presto 0.287 from Maven Central), then runs them, every server on
127.0.0.1 (Presto in a network of its own, its port published on 127.0.0.1; see
`build_engine_image.py`): the catalog on 8080 (`hudi-shim serve`, Iceberg REST at `/iceberg`,
a Hadoop catalog folder for Presto under `<warehouse>/.hudi-shim/hadoop`), Trino on 8081
(catalog `hudi`: Iceberg connector on the REST catalog), Presto on 8082 (catalog `hudi`:
Iceberg connector on the Hadoop catalog folder). The warehouse is mounted at its own path, so
the `file://` locations the catalog publishes open in every container. Ctrl-C stops them all.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import build_engine_image
import build_image

from engines.tokens import TOKEN_VARIABLE, resolve_token
from engines.trino.configuration import jvm_options, write_etc
from engines.trino.distribution import PRESTO, TRINO, Distribution
from engines.trino.local import describe, presto_catalogs, trino_catalogs
from engines.trino.server import EngineServer, wait_until_ready

CATALOG_PORT, TRINO_PORT, PRESTO_PORT = 8080, 8081, 8082


def _docker_run(name: str, arguments: list[str], environment: dict[str, str] | None = None) -> str:
    """Start a container; `environment`: variables its `-e NAME` arguments take (never on the
    command line, which `ps` shows)."""
    subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)
    done = subprocess.run(["docker", "run", "-d", "--name", name, *arguments],
                          capture_output=True, text=True, check=True, env={**os.environ, **(environment or {})})
    return done.stdout.strip()


def start_catalog(warehouse: Path, token: str | None, port: int = CATALOG_PORT) -> str:
    image = build_image.build()
    hadoop = warehouse / ".hudi-shim" / "hadoop"
    command = ["serve", "--warehouse", str(warehouse), "--host", "127.0.0.1", "--port", str(port),
               "--hadoop-catalog-dir", str(hadoop)]
    secret = ["-e", TOKEN_VARIABLE] if token else []  # the container's serve reads it; ps never shows it
    _docker_run("hudi-shim-catalog", ["--network", "host", "-v", f"{warehouse}:{warehouse}", *secret, image, *command],
                {TOKEN_VARIABLE: token} if token else None)
    return f"http://127.0.0.1:{port}"


def start_engine(distribution: Distribution, catalogs: dict[str, dict[str, str]], port: int,
                 warehouse: Path, etc_root: Path) -> EngineServer:
    image = build_engine_image.build(distribution.flavor)
    inside = build_engine_image.layout(distribution)
    isolated = build_engine_image.own_network(distribution)
    etc = write_etc(etc_root / distribution.flavor, distribution, port, catalogs,
                    bind="0.0.0.0" if isolated else "127.0.0.1")
    name = f"hudi-shim-{distribution.flavor}"
    network = ["-p", f"127.0.0.1:{port}:{port}"] if isolated else ["--network", "host"]
    _docker_run(name, [*network, "-v", f"{etc}:{inside.etc}:ro", "-v", f"{warehouse}:{warehouse}:ro", image,
                       *inside.command(distribution, jvm_options(distribution, "2G"))])
    log = etc_root / f"{distribution.flavor}.log"

    def stop() -> None:
        with open(log, "wb") as handle:
            subprocess.run(["docker", "logs", name], stdout=handle, stderr=subprocess.STDOUT, check=False)
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)

    server = EngineServer(distribution, port, log, stop)
    wait_until_ready(server, 300)
    return server


def parser() -> argparse.ArgumentParser:
    """The command line (docs/make_reference.py lists its flags)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--warehouse", required=True, help="folder of Hudi tables")
    parser.add_argument("--presto", action="store_true", help="also run Presto 0.287")
    parser.add_argument("--token", help="bearer token of the catalog (Trino sends it as its OAuth2 token; "
                                        "default: HUDI_SHIM_TOKEN, or the file HUDI_SHIM_TOKEN_FILE names)")
    parser.add_argument("--catalog-port", type=int, default=CATALOG_PORT,
                        help="the catalog's port on 127.0.0.1 (default: %(default)s)")
    parser.add_argument("--trino-port", type=int, default=TRINO_PORT,
                        help="Trino's port on 127.0.0.1 (default: %(default)s)")
    parser.add_argument("--presto-port", type=int, default=PRESTO_PORT,
                        help="Presto's port on 127.0.0.1 (default: %(default)s)")
    return parser


def main() -> int:
    args = parser().parse_args()
    args.token = resolve_token(args.token)
    warehouse = Path(args.warehouse).resolve()
    etc_root = Path(tempfile.mkdtemp(prefix="hudi-shim-up-"))
    started: list[EngineServer] = []
    try:
        url = start_catalog(warehouse, args.token, args.catalog_port)
        print(f"catalog: {url} (Iceberg REST at {url}/iceberg)", flush=True)
        started.append(start_engine(TRINO, trino_catalogs(url, args.token), args.trino_port, warehouse, etc_root))
        describe(started[-1], trino_catalogs(url, args.token))
        if args.presto:
            hadoop = warehouse / ".hudi-shim" / "hadoop"
            started.append(start_engine(PRESTO, presto_catalogs(str(hadoop)), args.presto_port, warehouse, etc_root))
            describe(started[-1], presto_catalogs(str(hadoop)))
        print("Ctrl-C stops the containers", flush=True)
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        for server in started:
            server.stop()
        subprocess.run(["docker", "rm", "-f", "hudi-shim-catalog"], capture_output=True, check=False)
        print(f"stopped; logs in {etc_root}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    os.umask(0o022)
    raise SystemExit(main())
