"""The security effect kinds a project may opt into (``--allow KIND``, ``[tool.svcc] allow``).

A contract because three layers read the one list: the front end refuses an unknown kind
in ``pyproject.toml`` when it reads the tree, the CLI refuses one in ``--allow``, and the
readiness pass says what each kind gives a caller.
"""

from collections.abc import Iterable
from typing import Final

# kind -> what it gives a caller
SECURITY_KINDS: Final = {
    "env": "it reads the server's environment",
    "process": "it starts processes on the server",
    "eval": "it evaluates code",
    "paths": "it opens a path built from a parameter",
}


def unknown_kind(kinds: Iterable[str]) -> str | None:
    """Why ``kinds`` cannot be opted into (the first unknown one, and the choices), or
    ``None`` when each is a kind."""
    unknown = sorted(set(kinds) - set(SECURITY_KINDS))
    if not unknown:
        return None
    return f"unknown kind {unknown[0]!r}; choose from {', '.join(SECURITY_KINDS)}"
