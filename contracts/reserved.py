"""The top-level module names every bundle occupies, whatever its interface.

Its own module (not :mod:`svcc.contracts.target`) because every analysis reads it, and the
target protocol's classes are not worth building for ``svcc inspect``.
"""

from typing import Final

# The source and runtime folders, svcc itself (a bundle never imports it) and ``json``,
# which the specification names because a user module by that name would shadow the
# standard library's in the bundle.
BUNDLE_RESERVED: Final = frozenset({"json", "source", "svc_runtime", "svc_governed", "svcc"})
