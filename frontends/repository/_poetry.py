"""The declared dependencies of a Poetry project: ``[tool.poetry.dependencies]``, as pip lines.

Poetry states its requirements in its own syntax (``requests = "^2.31"``, ``attrs = {version
= "~23.1", optional = true}``); the analysis and the bundle's ``application-requirements.txt``
need PEP 508 lines, so each entry is translated the way Poetry reads it: ``^X.Y.Z`` is
``>=X.Y.Z,<`` the next version that changes its first non-zero part, ``~X.Y`` is ``>=X.Y,<X.(Y+1)``
(``~X``: ``<X+1``), a bare version is ``==`` it, ``*`` is any version, and PEP 440 clauses pass
as they are. ``python`` is the project's Python range, not a requirement; an optional entry
belongs to an extra, which is not required; ``markers`` are kept. An entry Poetry resolves some
other way (``git``, ``path``, ``url``, several constraints by Python version, ``||``, a
``python``/``platform`` restriction) is not read, and is named in the note.
"""

import re
from typing import Any, Final

_VERSION: Final = re.compile(r"^\d+(\.\d+)*$")
_CLAUSE: Final = re.compile(r"^(==|!=|<=|>=|<|>|~=)\s*[\w.*+!-]+$")


def poetry_dependencies(table: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(lines, not_read)``: the translated requirement lines and the names of the entries
    that could not be (see the module docstring)."""
    lines: list[str] = []
    skipped: list[str] = []
    if not isinstance(table, dict):
        return (), ("[tool.poetry.dependencies]",)
    for name, value in table.items():
        if name.lower() == "python":
            continue
        if isinstance(value, dict) and value.get("optional") is True:
            continue
        line = _line(str(name), value)
        if line is None:
            skipped.append(str(name))
        else:
            lines.append(line)
    return tuple(lines), tuple(skipped)


def _line(name: str, value: Any) -> str | None:
    extras = ""
    marker = ""
    if isinstance(value, dict):
        if set(value) - {"version", "extras", "markers", "optional"}:
            return None  # git, path, url, python, platform, source: resolved by Poetry itself
        extra_names = value.get("extras", [])
        if not isinstance(extra_names, list) or not all(isinstance(e, str) for e in extra_names):
            return None
        extras = f"[{','.join(extra_names)}]" if extra_names else ""
        markers = value.get("markers")
        if markers is not None and not isinstance(markers, str):
            return None
        marker = f"; {markers}" if markers else ""
        value = value.get("version", "*")
    if not isinstance(value, str):
        return None  # a list: several constraints, each for its own Python
    specifier = _specifier(value.strip())
    if specifier is None:
        return None
    return f"{name}{extras}{specifier}{marker}"


def _specifier(constraint: str) -> str | None:
    """A Poetry constraint as a PEP 440 specifier (``""``: any version)."""
    if constraint in ("", "*"):
        return ""
    clauses = [c.strip() for c in constraint.split(",")]
    out: list[str] = []
    for clause in clauses:
        if clause.startswith("^") and _VERSION.match(clause[1:]):
            out += _caret(clause[1:])
        elif clause.startswith("~") and not clause.startswith("~=") and _VERSION.match(clause[1:]):
            out += _tilde(clause[1:])
        elif _VERSION.match(clause):
            out.append(f"=={clause}")
        elif _CLAUSE.match(clause):
            out.append(clause.replace(" ", ""))
        else:
            return None
    return ",".join(out)


def _caret(version: str) -> list[str]:
    parts = [int(p) for p in version.split(".")]
    first = next((i for i, p in enumerate(parts) if p), len(parts) - 1)
    upper = [*parts[:first], parts[first] + 1]
    return [f">={version}", f"<{'.'.join(str(p) for p in upper)}"]


def _tilde(version: str) -> list[str]:
    parts = [int(p) for p in version.split(".")]
    keep = parts[:2] if len(parts) > 1 else parts[:1]
    upper = [*keep[:-1], keep[-1] + 1]
    return [f">={version}", f"<{'.'.join(str(p) for p in upper)}"]
