"""No module of the package over 800 lines: a longer one holds more than one thing, and is
split into modules named for what each holds (issue 36). Tables are the exception, named
here with the reason; a module's size is its lines, docstrings and comments included."""

import tomllib
from pathlib import Path

from helpers import ROOT

LIMIT = 800

# Modules allowed over the limit, by path from the repository's root, with the reason.
EXCEPTIONS = {
    # a table: one entry per diagnostic code, with its message, class and fix example
    "contracts/diagnostics/codes.py",
    # generated (tools/gen_records.py), never edited: the methods of every record, one block each
    "ir/_records_generated.py",
}


def package_files(root: Path) -> list[Path]:
    """Every ``.py`` file of the package, from pyproject's package-dir (the folders are not
    named svcc)."""
    config = tomllib.loads((root / "pyproject.toml").read_text())
    folders = {root / f for f in config["tool"]["setuptools"]["package-dir"].values()}
    return sorted({path for folder in folders for path in folder.rglob("*.py")})


def oversized(root: Path) -> list[str]:
    found = []
    for path in package_files(root):
        name = path.relative_to(root).as_posix()
        lines = len(path.read_bytes().splitlines())
        if lines > LIMIT and name not in EXCEPTIONS:
            found.append(f"{name}: {lines} lines")
    return found


def test_no_package_module_is_over_the_limit() -> None:
    assert oversized(ROOT) == []


def test_every_exception_exists() -> None:
    """An exception that names no file is stale (the module was split or renamed)."""
    assert [name for name in sorted(EXCEPTIONS) if not (ROOT / name).is_file()] == []


def test_the_limit_is_checked_over_the_whole_package() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in package_files(ROOT)}
    assert "frontends/python/_lower.py" in names
    assert "runtime/governed/executor.py" in names
    assert len(names) > 100
