"""Import layering: runtime/ never imports svcc; back ends never import front ends;
the IR depends on nothing else of svcc."""

import ast
from pathlib import Path

import pytest
from helpers import ROOT, modules_loaded_by


def imports_of(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize(
    ("folder", "banned"),
    [
        ("runtime", ("svcc",)),
        ("backends", ("svcc.frontends",)),
        ("ir", ("svcc.compiler", "svcc.frontends", "svcc.backends", "svcc.service")),
        ("frontends", ("svcc.backends", "svcc.service")),
        # collections are exported from a bundle's files, never from source or the IR model
        ("clients", ("svcc.frontends", "svcc.backends", "svcc.service", "svcc.ir")),
    ],
)
def test_layering(folder: str, banned: tuple[str, ...]) -> None:
    for path in (ROOT / folder).rglob("*.py"):
        bad = {m for m in imports_of(path) if m == banned or m.startswith(banned)}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_cli_startup_imports_stay_lazy() -> None:
    heavy = ("cattrs", "nbformat", "packaging", "concurrent.futures", "importlib.metadata")
    assert modules_loaded_by("import svcc.compiler.cli", heavy) == []
    # and they do load when a command needs them: the check can fail
    assert modules_loaded_by("import svcc.ir.serde as s; s.converter()", heavy) == ["cattrs"]
