"""Names well-known libraries removed, which old notebooks and helpers still read.

The front end records a capability's reads and calls of these names in the IR (as it does
for security-sensitive ones); the readiness pass refuses them (SVC-R060) with the
replacement. Public: the front end and the readiness pass share the one table.
"""

from typing import Final

# Qualified name -> distribution, the first version without it, what to use instead. A
# capability reading one fails on every call under that version or later.
# ``tests/frontends/test_removed_names.py`` checks each is absent from the installed library, which
# is at or past that version.
REMOVED_NAMES: Final[dict[str, tuple[str, str, str]]] = {
    "numpy.float": ("numpy", "1.24", "float"),
    "numpy.int": ("numpy", "1.24", "int"),
    "numpy.object": ("numpy", "1.24", "object"),
    "numpy.str": ("numpy", "1.24", "str"),
    "numpy.complex": ("numpy", "1.24", "complex"),
    "numpy.unicode": ("numpy", "1.24", "str"),
    "numpy.asscalar": ("numpy", "1.23", "a.item()"),
    "numpy.float_": ("numpy", "2.0", "np.float64"),
    "numpy.complex_": ("numpy", "2.0", "np.complex128"),
    "numpy.string_": ("numpy", "2.0", "np.bytes_"),
    "numpy.unicode_": ("numpy", "2.0", "np.str_"),
    "numpy.NaN": ("numpy", "2.0", "np.nan"),
    "numpy.Inf": ("numpy", "2.0", "np.inf"),
    "numpy.PINF": ("numpy", "2.0", "np.inf"),
    "numpy.NINF": ("numpy", "2.0", "-np.inf"),
    "numpy.infty": ("numpy", "2.0", "np.inf"),
    "numpy.alltrue": ("numpy", "2.0", "np.all"),
    "numpy.sometrue": ("numpy", "2.0", "np.any"),
    "numpy.product": ("numpy", "2.0", "np.prod"),
    "numpy.cumproduct": ("numpy", "2.0", "np.cumprod"),
    "numpy.round_": ("numpy", "2.0", "np.round"),
    "numpy.asfarray": ("numpy", "2.0", "np.asarray(a, dtype=float)"),
    "numpy.msort": ("numpy", "2.0", "np.sort(a, axis=0)"),
    "pandas.datetools": ("pandas", "0.23", "datetime.timedelta, pd.Timedelta or pd.offsets"),
    "pandas.ols": ("pandas", "0.20", "statsmodels"),
    "pandas.Panel": ("pandas", "1.0", "a DataFrame with a MultiIndex"),
    "pandas.TimeGrouper": ("pandas", "1.0", "pd.Grouper(freq=...)"),
    "pandas.scatter_matrix": ("pandas", "1.0", "pd.plotting.scatter_matrix"),
    "pandas.np": ("pandas", "2.0", "import numpy"),
    "pandas.Int64Index": ("pandas", "2.0", "pd.Index"),
    "pandas.Float64Index": ("pandas", "2.0", "pd.Index"),
    "pandas.UInt64Index": ("pandas", "2.0", "pd.Index"),
}


def removed_name(qualified: str) -> str | None:
    """The entry of :data:`REMOVED_NAMES` that ``qualified`` reads (itself or an
    attribute of it: ``pandas.datetools.timedelta``), or None."""
    head = qualified
    while head:
        if head in REMOVED_NAMES:
            return head
        if "." not in head:
            return None
        head = head.rsplit(".", 1)[0]
    return None
