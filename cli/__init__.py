"""The command line on top of everything: argparse (``main``), rendering, ``expose``,
``serve`` and the ``images``/``plugins`` command glue (docs/layout.md)."""

import os
import sys

# The names the command is installed under (pyproject's [project.scripts]).
PROGRAMS = ("svcc", "svc")


def program() -> str:
    """The name the user typed (``svc`` or ``svcc``), for usage and error lines; ``svcc``
    when run otherwise (``python -m svcc``, an embedding)."""
    name = os.path.basename(sys.argv[0]) if sys.argv else ""
    return name if name in PROGRAMS else PROGRAMS[0]
