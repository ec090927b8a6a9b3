"""Optional-dependency fallbacks do not block the module."""

try:
    import numpy as np  # expect: SVC-R009
except ImportError:
    np = None

try:
    import ujson as json_impl
except ImportError:
    import json as json_impl

if sys_version := None:  # expect: SVC-R007
    pass


def mean(values: list[float]) -> float:
    if np is not None:
        return float(np.mean(values))
    return sum(values) / len(values)


def dumps(value: dict[str, int]) -> str:
    return json_impl.dumps(value)
