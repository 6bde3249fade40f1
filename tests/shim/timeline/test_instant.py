import pytest

from shim.errors import InstantNotFoundError, InvalidTableError
from shim.timeline.instant import Action, State, instant_key, normalize_instant, parse_instant_file_name


@pytest.mark.parametrize(
    ("name", "ts", "action", "state", "done"),
    [
        ("20240101000000000.commit", "20240101000000000", Action.COMMIT, State.COMPLETED, None),
        ("20240101000000000.inflight", "20240101000000000", Action.COMMIT, State.INFLIGHT, None),
        ("20240101000000000.commit.requested", "20240101000000000", Action.COMMIT, State.REQUESTED, None),
        ("20240101000000000.deltacommit.inflight", "20240101000000000", Action.DELTA_COMMIT, State.INFLIGHT, None),
        ("20240101000000000.compaction.requested", "20240101000000000", Action.COMPACTION, State.REQUESTED, None),
        ("20240101000000000_20240101000001000.deltacommit", "20240101000000000", Action.DELTA_COMMIT,
         State.COMPLETED, "20240101000001000"),
        ("20240101000000000.clustering.inflight", "20240101000000000", Action.CLUSTERING, State.INFLIGHT, None),
        ("20240101000000.rollback", "20240101000000", Action.ROLLBACK, State.COMPLETED, None),
    ],
)
def test_parse_instant_file_name_reads_every_layout(name, ts, action, state, done):
    instant = parse_instant_file_name(name)
    assert instant is not None
    assert (instant.requested_time, instant.action, instant.state, instant.completion_time) == (
        ts, action, state, done)


@pytest.mark.parametrize("name", ["hoodie.properties", "archived", ".aux", "timeline", ".20240101000000000.commit.crc"])
def test_parse_instant_file_name_ignores_other_files(name):
    assert parse_instant_file_name(name) is None


def test_parse_instant_file_name_unknown_action_names_file():
    with pytest.raises(InvalidTableError, match="unknown timeline action 'frobnicate'.*20240101000000000.frobnicate"):
        parse_instant_file_name("20240101000000000.frobnicate")


def test_action_completed_as():
    assert Action.COMPACTION.completed_as is Action.COMMIT
    assert Action.CLUSTERING.completed_as is Action.REPLACE_COMMIT
    assert Action.LOG_COMPACTION.completed_as is Action.DELTA_COMMIT
    assert Action.CLEAN.writes_data is False and Action.DELTA_COMMIT.writes_data is True


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("20240102030405678", "20240102030405678"),
        ("20240102030405", "20240102030405999"),
        ("2024-01-02", "20240102000000000"),
        ("2024-01-02 03:04:05", "20240102030405000"),
        ("2024-01-02 03:04:05.6", "20240102030405600"),
        ("2024-01-02T03:04:05.678", "20240102030405678"),
    ],
)
def test_normalize_instant_accepts_hudi_query_formats(given, expected):
    assert normalize_instant(given) == expected


def test_normalize_instant_rejects_garbage_with_the_value():
    with pytest.raises(InstantNotFoundError, match="'yesterday'"):
        normalize_instant("yesterday")


def test_instant_key_orders_second_granularity_at_end_of_second():
    assert instant_key("20240101000000") > instant_key("20240101000000500")
    assert instant_key("20240101000000") < instant_key("20240101000001000")
