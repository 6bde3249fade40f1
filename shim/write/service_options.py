"""The table services' settings (clean, archive, inline compaction) and their options, under Hudi's
option names: what a write's `WriteOptions` carries to the services that follow its commit, and
what the services' entry points parse from the options they are given."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from shim.errors import InvalidArgumentError
from shim.write.option_values import flag, integer, text

DEFAULT_COMMITS_RETAINED = 10
DEFAULT_HOURS_RETAINED = 24
DEFAULT_FILE_VERSIONS_RETAINED = 3


class CleanPolicy(enum.Enum):
    """`hoodie.cleaner.policy` values this cleaner implements."""

    KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
    KEEP_LATEST_BY_HOURS = "KEEP_LATEST_BY_HOURS"
    KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"


@dataclass(frozen=True, slots=True)
class CleanSettings:
    """How much history a clean keeps (Hudi's defaults)."""

    policy: CleanPolicy = CleanPolicy.KEEP_LATEST_COMMITS
    commits_retained: int = DEFAULT_COMMITS_RETAINED
    hours_retained: int = DEFAULT_HOURS_RETAINED
    file_versions_retained: int = DEFAULT_FILE_VERSIONS_RETAINED


DEFAULT_MIN_COMMITS = 20
"""`hoodie.keep.min.commits`."""
DEFAULT_MAX_COMMITS = 30
"""`hoodie.keep.max.commits`."""
DEFAULT_BATCH = 10
"""`hoodie.commits.archival.batch`: archived instants per log block."""


@dataclass(frozen=True, slots=True)
class ArchiveSettings:
    """How much of the timeline stays active (Hudi's defaults)."""

    min_commits: int = DEFAULT_MIN_COMMITS
    max_commits: int = DEFAULT_MAX_COMMITS
    batch: int = DEFAULT_BATCH
    compaction_delta_commits: int | None = None
    """Delta commits the compaction trigger counts (merge-on-read with NUM_COMMITS or NUM_AND_TIME);
    None when no trigger counts them."""


class TriggerStrategy(enum.Enum):
    """`hoodie.compact.inline.trigger.strategy`."""

    NUM_COMMITS = "NUM_COMMITS"
    NUM_COMMITS_AFTER_LAST_REQUEST = "NUM_COMMITS_AFTER_LAST_REQUEST"
    TIME_ELAPSED = "TIME_ELAPSED"
    NUM_AND_TIME = "NUM_AND_TIME"
    NUM_OR_TIME = "NUM_OR_TIME"


class InlineMode(enum.Enum):
    """What follows a commit: nothing, a scheduled compaction plan, or a compaction run."""

    OFF = "off"
    SCHEDULE = "schedule"
    RUN = "run"


@dataclass(frozen=True, slots=True)
class InlineCompaction:
    """The `hoodie.compact.inline*` settings of a write (Hudi's defaults: off, 5 delta commits, 1 h)."""

    mode: InlineMode = InlineMode.OFF
    strategy: TriggerStrategy = TriggerStrategy.NUM_COMMITS
    max_delta_commits: int = 5
    max_delta_seconds: int = 3600


AUTO_CLEAN = "hoodie.clean.automatic"
CLEANER_POLICY = "hoodie.cleaner.policy"
COMMITS_RETAINED = "hoodie.cleaner.commits.retained"
HOURS_RETAINED = "hoodie.cleaner.hours.retained"
FILE_VERSIONS_RETAINED = "hoodie.cleaner.fileversions.retained"
AUTO_ARCHIVE = "hoodie.archive.automatic"
KEEP_MIN_COMMITS = "hoodie.keep.min.commits"
KEEP_MAX_COMMITS = "hoodie.keep.max.commits"
ARCHIVAL_BATCH = "hoodie.commits.archival.batch"
INLINE_COMPACT = "hoodie.compact.inline"
SCHEDULE_INLINE_COMPACT = "hoodie.compact.schedule.inline"
COMPACT_TRIGGER = "hoodie.compact.inline.trigger.strategy"
COMPACT_MAX_DELTA_COMMITS = "hoodie.compact.inline.max.delta.commits"
COMPACT_MAX_DELTA_SECONDS = "hoodie.compact.inline.max.delta.seconds"


def clean_settings(options: Mapping[str, str]) -> CleanSettings:
    """The cleaner's policy and retention."""
    policy = (text(options, CLEANER_POLICY, CleanPolicy.KEEP_LATEST_COMMITS.value) or "").upper()
    if policy not in CleanPolicy.__members__:
        raise InvalidArgumentError(
            f"{CLEANER_POLICY}={policy!r} is not a cleaner policy; use one of {', '.join(CleanPolicy.__members__)}")
    return CleanSettings(
        policy=CleanPolicy[policy],
        commits_retained=integer(options, COMMITS_RETAINED, DEFAULT_COMMITS_RETAINED),
        hours_retained=integer(options, HOURS_RETAINED, DEFAULT_HOURS_RETAINED),
        file_versions_retained=integer(options, FILE_VERSIONS_RETAINED, DEFAULT_FILE_VERSIONS_RETAINED),
    )


def archive_settings(options: Mapping[str, str], *, is_mor: bool) -> ArchiveSettings:
    """How many writes stay on the active timeline (Hudi's defaults and checks: min > the commits
    the cleaner retains, max > min); on merge-on-read tables, the delta commits a NUM_COMMITS or
    NUM_AND_TIME compaction trigger still counts stay too."""
    low = integer(options, KEEP_MIN_COMMITS, DEFAULT_MIN_COMMITS)
    high = integer(options, KEEP_MAX_COMMITS, DEFAULT_MAX_COMMITS)
    if high <= low:
        raise InvalidArgumentError(f"{KEEP_MAX_COMMITS}={high} must be greater than {KEEP_MIN_COMMITS}={low}")
    clean = clean_settings(options)
    if clean.policy is CleanPolicy.KEEP_LATEST_COMMITS and low <= clean.commits_retained:
        raise InvalidArgumentError(
            f"{KEEP_MIN_COMMITS}={low} must be greater than {COMMITS_RETAINED}={clean.commits_retained}, or "
            "archiving would remove commits whose older file versions the cleaner still keeps")
    trigger = inline_compaction(options)
    counts = is_mor and trigger.strategy in (TriggerStrategy.NUM_COMMITS, TriggerStrategy.NUM_AND_TIME)
    return ArchiveSettings(min_commits=low, max_commits=high, batch=integer(options, ARCHIVAL_BATCH, DEFAULT_BATCH),
                           compaction_delta_commits=trigger.max_delta_commits if counts else None)


def inline_compaction(options: Mapping[str, str]) -> InlineCompaction:
    """Whether and when a merge-on-read commit is followed by a compaction (Hudi's defaults: never;
    when on, after 5 delta commits)."""
    run, schedule = flag(options, INLINE_COMPACT, False), flag(options, SCHEDULE_INLINE_COMPACT, False)
    if run and schedule:
        raise InvalidArgumentError(
            f"{INLINE_COMPACT} and {SCHEDULE_INLINE_COMPACT} cannot both be true: the first schedules and runs "
            "a compaction, the second only schedules it")
    strategy = (text(options, COMPACT_TRIGGER, TriggerStrategy.NUM_COMMITS.value) or "").upper()
    if strategy not in TriggerStrategy.__members__:
        raise InvalidArgumentError(
            f"{COMPACT_TRIGGER}={strategy!r} is not a trigger strategy; use one of "
            f"{', '.join(TriggerStrategy.__members__)}")
    return InlineCompaction(
        mode=InlineMode.RUN if run else InlineMode.SCHEDULE if schedule else InlineMode.OFF,
        strategy=TriggerStrategy[strategy],
        max_delta_commits=integer(options, COMPACT_MAX_DELTA_COMMITS, 5),
        max_delta_seconds=integer(options, COMPACT_MAX_DELTA_SECONDS, 3600, minimum=0),
    )
