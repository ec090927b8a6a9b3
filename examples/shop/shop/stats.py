"""Price statistics, computed with numpy (a declared dependency with compiled wheels)."""

import numpy as np


def summary(prices: list[float]) -> dict[str, float]:
    """Mean, median and the 90th percentile of some prices."""
    values = np.asarray(prices, dtype=float)
    if values.size == 0:
        raise ValueError("no prices")
    return {
        "mean": round(float(values.mean()), 2),
        "median": round(float(np.median(values)), 2),
        "p90": round(float(np.percentile(values, 90)), 2),
    }
