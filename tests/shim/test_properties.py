import pytest

from shim.errors import InvalidTableError, UnsupportedFeatureError
from shim.properties import TableConfig, TableType, format_properties, parse_properties


def test_parse_properties_escapes_and_comments_are_read_like_java():
    text = (
        "#Updated at 2024\n"
        "! another comment\n"
        "hoodie.table.name=trips\n"
        "hoodie.table.create.schema={\"a\"\\:1}\n"
        "key\\ with\\ spaces = value with spaces\n"
        "colon.sep: v2\n"
        "multi=first \\\n"
        "    second\n"
        "unicode=caf\\u00e9\n"
    )
    props = parse_properties(text)
    assert props == {
        "hoodie.table.name": "trips",
        "hoodie.table.create.schema": '{"a":1}',
        "key with spaces": "value with spaces",
        "colon.sep": "v2",
        "multi": "first second",
        "unicode": "café",
    }


def test_format_properties_round_trips_through_parse():
    props = {"hoodie.table.create.schema": '{"type":"record","name":"a:b=c"}', "k": " lead", "x": "a#b!c"}
    assert parse_properties(format_properties(props)) == props


def _config(**extra: str) -> TableConfig:
    base = {"hoodie.table.name": "t", "hoodie.table.version": "6", "hoodie.table.type": "MERGE_ON_READ"}
    base.update(extra)
    return TableConfig.from_text(format_properties(base), "/x/.hoodie/hoodie.properties")


def test_table_config_reads_typed_values_with_hudi_defaults():
    config = _config(**{
        "hoodie.table.recordkey.fields": "id, region",
        "hoodie.table.partition.fields": "region:SIMPLE,ts:TIMESTAMP",
        "hoodie.table.precombine.field": "ts",
        "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator",
    })
    assert config.table_type is TableType.MERGE_ON_READ
    assert config.timeline_layout_version == 1
    assert config.timeline_path == ""
    assert config.record_key_fields == ("id", "region")
    assert config.partition_fields == ("region", "ts")
    assert config.partition_field_types == ("SIMPLE", "TIMESTAMP")
    assert config.ordering_fields == ("ts",)
    assert config.key_generator == "CUSTOM"
    assert config.populate_meta_fields is True
    assert config.hive_style_partitioning is False


def test_table_config_v9_prefers_ordering_fields_and_layout_2():
    config = _config(**{
        "hoodie.table.version": "9",
        "hoodie.table.ordering.fields": "a,b",
        "hoodie.table.precombine.field": "old",
    })
    assert config.ordering_fields == ("a", "b")
    assert config.timeline_layout_version == 2
    assert config.timeline_path == "timeline"


@pytest.mark.parametrize("version", ["5", "7", "10"])
def test_table_config_unsupported_version_fails_up_front(version):
    with pytest.raises(UnsupportedFeatureError, match=f"table version {version} is not supported") as info:
        _config(**{"hoodie.table.version": version})
    assert info.value.feature == f"table-version-{version}"
    assert info.value.path == "/x/.hoodie/hoodie.properties"


@pytest.mark.parametrize(
    ("key", "value", "feature"),
    [
        ("hoodie.table.base.file.format", "ORC", "base-file-format-orc"),
        ("hoodie.table.base.file.format", "HFILE", "base-file-format-hfile"),
        ("hoodie.bootstrap.base.path", "/src", "bootstrap"),
        ("hoodie.table.format", "iceberg", "table-format-iceberg"),
    ],
)
def test_table_config_unsupported_features_fail_up_front(key, value, feature):
    with pytest.raises(UnsupportedFeatureError) as info:
        _config(**{key: value})
    assert info.value.feature == feature


def test_table_config_lance_base_files_are_read_but_not_written():
    config = _config(**{"hoodie.table.base.file.format": "lance"})
    assert config.base_file_format == "LANCE"
    with pytest.raises(UnsupportedFeatureError, match="cannot write to it: the table keeps its base files in LANCE") \
            as info:
        config.require_parquet_base_files("write to it")
    assert info.value.feature == "write-base-file-format-lance"
    assert info.value.path == "/x/.hoodie/hoodie.properties"
    _config().require_parquet_base_files("write to it")  # PARQUET when unset


def test_table_config_unknown_table_type_names_the_value():
    with pytest.raises(InvalidTableError, match="unknown hoodie.table.type='MERGE'"):
        _config(**{"hoodie.table.type": "MERGE"})
