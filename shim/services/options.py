"""Options of the table services (clean, archive, inline compaction), under Hudi's option names."""

from __future__ import annotations

from collections.abc import Mapping

from shim.errors import InvalidArgumentError
from shim.services.archive_plan import (
    DEFAULT_BATCH,
    DEFAULT_MAX_COMMITS,
    DEFAULT_MIN_COMMITS,
    ArchiveSettings,
)
from shim.services.clean_plan import (
    DEFAULT_COMMITS_RETAINED,
    DEFAULT_FILE_VERSIONS_RETAINED,
    DEFAULT_HOURS_RETAINED,
    CleanPolicy,
    CleanSettings,
)
from shim.services.compaction_trigger import InlineCompaction, InlineMode, TriggerStrategy
from shim.write.option_values import flag, integer, text

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
