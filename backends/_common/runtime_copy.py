"""Copying the runtime into a bundle: ``svcc.runtime`` modules, byte for byte.

Its own module so the bundle skeleton and the governed files both use it without importing
each other.
"""

from collections.abc import Iterable
from importlib import resources
from typing import Final

RUNTIME_PACKAGE: Final = "svc_runtime"


def runtime_files(
    modules: Iterable[str],
    *,
    package: str = "svcc.runtime",
    into: str = RUNTIME_PACKAGE,
    with_init: bool = True,
) -> dict[str, bytes]:
    """``<into>/<module>.py`` copied byte for byte from the installed ``package``, and its
    ``__init__.py`` unless ``with_init`` is false (more modules into a package already
    copied)."""
    folder = resources.files(package)
    return {
        f"{into}/{name}.py": folder.joinpath(f"{name}.py").read_bytes()
        for name in (("__init__",) if with_init else ()) + tuple(modules)
    }
