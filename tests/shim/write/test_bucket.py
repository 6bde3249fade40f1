"""Hudi's bucket index hash, checked against values computed with Java (javac 17)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from shim.errors import WriteError
from shim.write.bucket import (
    bucket_file_id,
    bucket_ids,
    bucket_of_file_id,
    bucket_of_key,
    hash_key_values,
    java_list_hash,
    java_string_hash,
)

# key, String.hashCode(), List.of(key).hashCode(), bucket of 256, bucket of 7 (from Java)
JAVA = [
    ("a", 97, 128, 128, 2),
    ("", 0, 31, 31, 3),
    ("id-1", 3225599, 3225630, 30, 2),
    ("key-00000042", 910145580, 910145611, 75, 4),
    ("héllo", 103094734, 103094765, 237, 4),
    ("日本語", 25921943, 25921974, 182, 1),
    ("😀x", 54959989, 54960020, 148, 3),
    ("abcdefghijklmnopqrstuvwxyz0123456789", 1478768498, 1478768529, 145, 0),
    ("2024-01-01", -613341632, -613341601, 95, 4),
]


@pytest.mark.parametrize(("key", "string_hash", "list_hash", "b256", "b7"), JAVA)
def test_hashes_and_buckets_equal_java(key, string_hash, list_hash, b256, b7):
    assert java_string_hash(key) == string_hash
    assert java_list_hash([key]) == list_hash
    assert bucket_of_key(key, ["id"], 256) == b256
    assert bucket_of_key(key, ["id"], 7) == b7


def test_vectorised_bucket_ids_equal_java_for_mixed_lengths_and_unicode():
    keys = pa.array([k for k, *_ in JAVA])
    assert bucket_ids(keys, ["id"], 256).tolist() == [b for *_, b, _ in JAVA]
    assert bucket_ids(keys.slice(2, 4), ["id"], 7).tolist() == [b for *_, b in JAVA[2:6]]


def test_vectorised_bucket_ids_equal_scalar_on_many_keys():
    keys = pa.array([f"trip-{i * 7919}" for i in range(3000)] + [str(i) for i in range(3000)])
    expected = np.array([bucket_of_key(k, ["id"], 64) for k in keys.to_pylist()])
    assert (bucket_ids(keys, ["id"], 64) == expected).all()


def test_composite_keys_hash_the_index_fields_in_order():
    assert java_list_hash(["1", "sf"]) == 6147  # Java: Arrays.asList("1", "sf").hashCode()
    assert java_list_hash(["x", None]) == 4681
    assert hash_key_values("id:1,region:sf", ["id", "region"]) == ["1", "sf"]
    assert hash_key_values("id:1,region:sf", ["region"]) == ["sf"]
    assert bucket_ids(pa.array(["id:1,region:sf"]), ["id", "region"], 256).tolist() == [6147 % 256]


def test_key_with_colon_that_is_not_a_pair_list_is_an_error():
    with pytest.raises(WriteError, match="not a list of field:value pairs"):
        bucket_ids(pa.array(["a:b,c"]), ["id"], 4)


def test_null_key_is_an_error():
    with pytest.raises(WriteError, match="record key is null"):
        bucket_ids(pa.array(["a", None]), ["id"], 4)


def test_bucket_file_id_layout_and_determinism():
    file_id = bucket_file_id(3, "20240101000000000/p/3")
    assert len(file_id) == 38 and file_id.startswith("00000003-") and file_id.endswith("-0")
    assert bucket_of_file_id(file_id) == 3
    assert file_id == bucket_file_id(3, "20240101000000000/p/3")
    assert file_id != bucket_file_id(3, "20240102000000000/p/3")
    assert bucket_of_file_id("cd329d8f-0ce4-4654-84ab-2f769aae5034-0") is None
