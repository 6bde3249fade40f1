"""The Spark data source's read options: Hudi's query types and their instants."""

from __future__ import annotations

import pytest

from engines.spark.reader import ReadOptions
from shim.errors import InvalidArgumentError


def test_read_options():
    assert ReadOptions.parse({}) == ReadOptions("snapshot")
    incremental = ReadOptions.parse({"hoodie.datasource.query.type": "incremental",
                                     "hoodie.datasource.read.begin.instanttime": "1"})
    assert incremental.begin == "1" and incremental.end is None
    with pytest.raises(InvalidArgumentError, match="needs hoodie.datasource.read.begin.instanttime"):
        ReadOptions.parse({"hoodie.datasource.query.type": "incremental"})
