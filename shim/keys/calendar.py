"""Proleptic Gregorian calendar arithmetic over numpy arrays."""

from __future__ import annotations

import numpy as np

_MONTH_DAYS = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], np.int64)


def days_from_civil(year: np.ndarray, month: np.ndarray, day: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of each date (H. Hinnant's algorithm; months 1-12)."""
    y = year - (month <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    mp = (month + 9) % 12
    doy = (153 * mp + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def days_in_month(year: np.ndarray, month: np.ndarray) -> np.ndarray:
    """Length of each month (months outside 1-12 count as January)."""
    safe = np.where((month >= 1) & (month <= 12), month, 1)
    leap = ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)
    return _MONTH_DAYS[safe - 1] + (leap & (safe == 2))
