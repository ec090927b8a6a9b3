"""Names well-known libraries removed, as old notebooks and helpers still use them."""

import datetime

import numpy as np  # expect: SVC-R008
import pandas as pd  # expect: SVC-R008


def convert_time(s: str) -> float:
    h, m, sec = map(int, s.split(":"))
    return pd.datetools.timedelta(hours=h, minutes=m, seconds=sec).total_seconds()  # expect: SVC-R060


def as_floats(x: list[int]) -> list[float]:
    return np.asarray(x).astype(np.float).tolist()  # expect: SVC-R060


def missing(x: list[float]) -> float:
    return float(np.nansum(x + [np.NaN]))  # expect: SVC-R060


def replaced(s: str) -> float:
    h, m, sec = map(int, s.split(":"))
    return datetime.timedelta(hours=h, minutes=m, seconds=sec).total_seconds()


def current(x: list[float]) -> float:
    return float(np.float64(np.nan if not x else sum(x)))
