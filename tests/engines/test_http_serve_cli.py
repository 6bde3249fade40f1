"""`hudi-shim serve` as a real process on a loopback port, queried with the client."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from catalog.server import is_loopback
from engines.cli import main
from engines.http import ShimClient
from tests.catalog.servekit import TRIPS_ROWS, build_warehouse
from tests.conftest import REPO


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_serve_process_answers_scans_with_token(tmp_path):
    build_warehouse(tmp_path / "wh")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "engines.cli", "serve", "--warehouse", str(tmp_path / "wh"), "--port", str(port),
         "--token", "cli-token", "--catalog-db", str(tmp_path / "registry.sqlite")],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        assert process.stdout is not None
        said = [process.stdout.readline().decode() for _ in range(3)]
        assert said[0].startswith("hudi-shim serve: 2 table(s): events, trips"), said
        assert "token: required" in said[1]
        assert said[2].strip() == f"scan API {url}/v1, Iceberg REST catalog {url}/iceberg, web UI {url}/ui"
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.1)
        assert httpx.get(url + "/v1/tables").status_code == 401
        with ShimClient(url, token="cli-token") as client:
            rows = sorted(client.scan("trips").to_pylist(), key=lambda r: r["id"])
        assert rows == TRIPS_ROWS
        assert (tmp_path / "registry.sqlite").is_file()
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_serve_without_tables_exits_2(capsys):
    assert main(["serve"]) == 2
    assert "--warehouse" in capsys.readouterr().err


def test_serve_missing_warehouse_fails_before_listening(tmp_path, capsys):
    assert main(["serve", "--warehouse", str(tmp_path / "missing"), "--catalog-db", ":memory:"]) == 1
    assert "missing does not exist" in capsys.readouterr().err


@pytest.mark.parametrize(("host", "expected"), [("127.0.0.1", True), ("localhost", True), ("::1", True),
                                                ("0.0.0.0", False), ("192.168.1.4", False), ("example.org", False)])
def test_is_loopback(host, expected):
    assert is_loopback(host) is expected


def test_help_says_a_token_belongs_in_the_environment_not_the_command_line(capsys):
    for command in ("serve", "sql"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "HUDI_SHIM_TOKEN" in text and "process list" in text, command


def test_serve_takes_its_token_from_the_environment_and_keeps_it_out_of_the_process_list(tmp_path):
    build_warehouse(tmp_path / "wh")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "engines.cli", "serve", "--warehouse", str(tmp_path / "wh"), "--port", str(port),
         "--catalog-db", ":memory:"],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "HUDI_SHIM_TOKEN": "env-token-4711"},
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while not answers(url + "/health"):
            assert process.poll() is None and time.monotonic() < deadline, "server did not start"
            time.sleep(0.1)
        assert httpx.get(url + "/v1/tables").status_code == 401
        assert httpx.get(url + "/v1/tables", headers={"Authorization": "Bearer env-token-4711"}).status_code == 200
        with open(f"/proc/{process.pid}/cmdline", "rb") as cmdline:  # what ps shows
            assert b"env-token-4711" not in cmdline.read()
    finally:
        process.terminate()
        process.wait(timeout=10)


def answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.TransportError:
        return False


@pytest.mark.parametrize(("limit", "statistics"), [("0", 0), ("5", 0), ("6", 1)])  # trips: 6 columns
def test_serve_publishes_statistics_only_for_tables_within_the_column_limit(tmp_path, limit, statistics):
    build_warehouse(tmp_path / "wh")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "engines.cli", "serve", "--warehouse", str(tmp_path / "wh"), "--port", str(port),
         "--catalog-db", ":memory:", "--iceberg-statistics-max-columns", limit],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        url = f"http://127.0.0.1:{port}/iceberg/v1/namespaces/default/tables/trips"
        deadline = time.monotonic() + 30
        while True:
            try:
                loaded = httpx.get(url, timeout=30)
                break
            except httpx.TransportError:
                assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(0.1)
        assert loaded.status_code == 200
        assert len(loaded.json()["metadata"]["statistics"]) == statistics
    finally:
        process.terminate()
        process.wait(timeout=10)
