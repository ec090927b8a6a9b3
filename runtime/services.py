"""Service classes at run time: one instance per process, built after import.

A capability whose qualname is ``Class.method`` is a method of a service class. The instance
is built once, with no arguments, the first time one of its methods is resolved (at startup,
before the server answers), and its setup method runs right after: ``setup()`` (Cog's), else
``load()`` (Truss's), the same rule the front end records in the IR. Every call of a direct
server is served by that instance (shared state: see the manual's thread-safety note);
each process that runs a call builds its own the same way.

A failure while building it stops startup with one line, as a failing import does.
"""

import os
import traceback
from typing import Any

from .integrity import StartupError

# The methods run once right after construction, first found wins (``SETUP_METHODS`` of
# the front end's ``_services``).
SETUP_METHODS = ("setup", "load")

# (module name, class name) -> the instance built in this process
_INSTANCES: dict[tuple[str, str], Any] = {}


def attribute_of(module: Any, qualname: str) -> Any:
    """The module's function ``qualname``, or for ``Class.method`` the method bound to the
    class's one instance (built now if it is not yet); ``None`` when it is missing."""
    if "." not in qualname:
        return getattr(module, qualname, None)
    class_name, _, method = qualname.partition(".")
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        return None
    return getattr(instance(module, cls), method, None)


def instance(module: Any, cls: type) -> Any:
    """The one instance of ``cls`` in this process, built and set up on first use."""
    key = (module.__name__, cls.__name__)
    if key not in _INSTANCES:
        _INSTANCES[key] = _build(cls)
    return _INSTANCES[key]


def _build(cls: type) -> Any:
    setup = next((name for name in SETUP_METHODS if name in vars(cls)), None)
    step = f"{cls.__name__}()"
    try:
        built = cls()
        if setup is not None:
            step = f"{cls.__name__}.{setup}()"
            getattr(built, setup)()
    except BaseException as exc:  # the user's code ran and failed: report, never trace
        if os.environ.get("SVC_DEBUG"):
            traceback.print_exc()
        lines = f"{type(exc).__name__}: {exc}".strip().splitlines()
        raise StartupError(
            f"building service class {cls.__name__!r} failed in {step}: "
            f"{lines[0] if lines else type(exc).__name__}"
        ) from None
    return built
