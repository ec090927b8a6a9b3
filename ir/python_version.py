"""The one rule for a target Python version written ``3.N``.

The IR records the grammar a module was read with (``SourceInfo.python_version``); this is
where a requested version is parsed and checked, for the CLI, the driver, the front ends
and the analysis service alike. It imports nothing of svcc.
"""

import re
import sys
from typing import Final

MIN_MINOR: Final = 7
# The newest grammar svcc knows of; a later 3.N is a typo or a version not yet released.
MAX_MINOR: Final = 14
_VERSION: Final = re.compile(r"3\.(\d{1,2})")


def parse_python_version(text: str, name: str = "--python-version") -> tuple[int, int]:
    """``"3.11"`` → ``(3, 11)``. Raises ``ValueError`` with a one-line reason naming
    ``name`` (the option or field the text came from)."""
    match = _VERSION.fullmatch(text.strip())
    if not match or not MIN_MINOR <= int(match.group(1)) <= MAX_MINOR:
        raise ValueError(f"unsupported {name} {text!r}: supported 3.{MIN_MINOR} to 3.{MAX_MINOR}")
    return (3, int(match.group(1)))


def running_version() -> tuple[int, int]:
    """The interpreter svcc runs on: the newest grammar it can parse."""
    return (sys.version_info[0], sys.version_info[1])
