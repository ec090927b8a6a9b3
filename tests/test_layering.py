"""Import layering: runtime/ never imports svcc; back ends never import front ends;
the IR depends on nothing else of svcc."""

import ast
from pathlib import Path

import pytest
from helpers import ROOT


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
    ],
)
def test_layering(folder: str, banned: tuple[str, ...]) -> None:
    for path in (ROOT / folder).rglob("*.py"):
        bad = {m for m in imports_of(path) if m == banned or m.startswith(banned)}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_cli_startup_imports_stay_lazy() -> None:
    import subprocess
    import sys

    code = (
        "import sys; import svcc.compiler.cli as c; "
        "print(sorted(m for m in ('cattrs', 'nbformat', 'packaging', 'concurrent.futures', "
        "'importlib.metadata', 'jinja2') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "[]"
