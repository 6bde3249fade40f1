"""A real S3-compatible server (s3proxy from Maven Central) on 127.0.0.1 for the session."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from engines.s3server import CLIENT_ENVIRONMENT, S3Server, start_s3proxy


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """s3proxy on a free port of 127.0.0.1 with a bucket `lake`; its clients' environment set."""
    saved = {name: os.environ.get(name) for name in CLIENT_ENVIRONMENT}
    os.environ.update(CLIENT_ENVIRONMENT)
    server = start_s3proxy(tmp_path_factory.mktemp("s3proxy"))
    server.create_bucket("lake")
    try:
        yield server
    finally:
        server.stop()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
