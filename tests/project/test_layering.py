"""Import layering, checked on the source tree so it can fail:

- layers point one way (docs/layout.md): ``runtime/`` imports nothing of svcc; the IR
  nothing of svcc outside itself; the leaf ``svcc.contracts`` (diagnostics, errors, the
  target protocol, policies, reserved names, requirements) only the IR; front ends only
  the IR and the contracts; back ends never front ends; the compiler, images and back
  ends never the service, the CLI (``svcc.cli``, on top) or the plugin runner;
- no module imports another package's private module (a dotted name with a ``_x`` part
  may be imported only from inside the package that holds ``_x``);
- no import cycle between svcc's modules (imports inside functions count, since a lazy
  import still ties the two modules together; ``if TYPE_CHECKING:`` imports do not).

``test_the_checker_catches_planted_violations`` plants each kind of violation in a copy of
a small tree and expects the checker to report it.
"""

import ast
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import ROOT, modules_loaded_by

# Which svcc packages each layer may not import (prefixes of dotted names); the folder
# ruff.toml files state the same (docs/layout.md).
BANNED: dict[str, tuple[str, ...]] = {
    "svcc.runtime": ("svcc",),
    "svcc.ir": (
        "svcc.contracts",
        "svcc.compiler",
        "svcc.frontends",
        "svcc.backends",
        "svcc.images",
        "svcc.plugins",
        "svcc.service",
        "svcc.clients",
        "svcc.cli",
        "svcc.runtime",
    ),
    "svcc.contracts": (
        "svcc.compiler",
        "svcc.frontends",
        "svcc.backends",
        "svcc.images",
        "svcc.plugins",
        "svcc.service",
        "svcc.clients",
        "svcc.cli",
        "svcc.runtime",
    ),
    "svcc.frontends": (
        "svcc.compiler",
        "svcc.backends",
        "svcc.images",
        "svcc.plugins",
        "svcc.service",
        "svcc.clients",
        "svcc.cli",
    ),
    "svcc.compiler": ("svcc.service", "svcc.cli", "svcc.plugins"),
    "svcc.images": ("svcc.service", "svcc.cli", "svcc.plugins"),
    "svcc.plugins": ("svcc.frontends", "svcc.backends", "svcc.service", "svcc.cli"),
    "svcc.backends": ("svcc.frontends", "svcc.service", "svcc.cli", "svcc.plugins"),
    "svcc.service": ("svcc.cli",),
    "svcc.lsp": ("svcc.cli", "svcc.service", "svcc.plugins"),
    "svcc.clients": ("svcc.frontends", "svcc.backends", "svcc.service", "svcc.ir", "svcc.cli"),
    "svcc.cli": (),
}
# Exceptions to a ban (clients render with the one jinja environment of the back ends).
ALLOWED: dict[str, tuple[str, ...]] = {
    "svcc.clients": ("svcc.backends.templates",),  # the one jinja environment
}


def package_folders(root: Path) -> dict[str, Path]:
    """``svcc.x`` → folder, from pyproject's package-dir (the folders are not named svcc)."""
    config = tomllib.loads((root / "pyproject.toml").read_text())
    return {
        name: root / folder for name, folder in config["tool"]["setuptools"]["package-dir"].items()
    }


def modules(root: Path) -> dict[str, Path]:
    """Every svcc module's dotted name → its file."""
    out: dict[str, Path] = {}
    folders = package_folders(root)
    for package, folder in folders.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join((package, *parts))] = path
    return out


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(tree: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` without the bodies of ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking_only(node):
            yield from (n for child in node.orelse for n in [child, *_walk(child)])
            continue
        yield node
        yield from _walk(node)


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Dotted names ``name`` imports: the module when ``from X import y`` names a module."""
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in _walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = name.split(".")
                anchor = parts if is_package else parts[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                out.add(full if full in known else base)
    return out


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package.rstrip(".") + ".")


def layer_violations(root: Path) -> list[str]:
    known = modules(root)
    found = []
    for name, path in sorted(known.items()):
        layer = max((p for p in BANNED if _within(name, p)), key=len, default=None)
        if layer is None:
            continue
        for imported in sorted(imports_of(name, path, known)):
            if not imported.startswith("svcc"):
                continue
            if any(_within(imported, a) for a in ALLOWED.get(layer, ())) or _within(
                imported, layer
            ):
                continue
            if any(
                imported == b.rstrip(".") or imported.startswith(b if b.endswith(".") else b + ".")
                for b in BANNED[layer]
            ):
                found.append(f"{name} imports {imported} (layer {layer})")
    return found


# The interpreter's own sha256 (``_sha2`` from 3.12, ``_sha256`` before): ``svcc.ir.canonical``
# digests a small input without loading OpenSSL through ``hashlib``, falling back to it.
PRIVATE_ALLOWED: dict[str, frozenset[str]] = {"svcc.ir.canonical": frozenset({"_sha2", "_sha256"})}


def private_violations(root: Path) -> list[str]:
    known = modules(root)
    found = []
    for name, path in sorted(known.items()):
        for imported in sorted(imports_of(name, path, known) - PRIVATE_ALLOWED.get(name, set())):
            parts = imported.split(".")
            for i, part in enumerate(parts):
                if part.startswith("_") and not part.startswith("__"):
                    owner = ".".join(parts[:i])
                    if not _within(name, owner):
                        found.append(f"{name} imports {imported}, private to {owner}")
                    break
    return found


def cycles(root: Path) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    known = modules(root)
    graph = {
        name: sorted(i for i in imports_of(name, path, known) if i in known and i != name)
        for name, path in known.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(out)


def test_layers_point_one_way() -> None:
    assert layer_violations(ROOT) == []


def test_no_private_module_is_imported_from_another_package() -> None:
    assert private_violations(ROOT) == []


def test_no_import_cycles() -> None:
    assert cycles(ROOT) == []


def test_the_checker_sees_the_whole_tree() -> None:
    known = modules(ROOT)
    assert "svcc.runtime.governed.executor" in known
    assert "svcc.contracts.diagnostics.codes" in known
    assert "svcc.frontends.python._lower" in known
    assert len(known) > 60


def _tree(tmp_path: Path) -> Path:
    """A minimal svcc-shaped tree with the same package-dir layout."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools.package-dir]\n"svcc" = "svcc"\n"svcc.a" = "a"\n"svcc.b" = "b"\n'
        '"svcc.runtime" = "runtime"\n'
    )
    for folder in ("svcc", "a", "a/_private", "b", "runtime"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "a" / "_private" / "x.py").write_text("VALUE = 1\n")
    (tmp_path / "a" / "one.py").write_text("from svcc.a._private.x import VALUE\n")
    (tmp_path / "b" / "two.py").write_text("import json\n")
    (tmp_path / "runtime" / "r.py").write_text("from . import helpers\n")
    (tmp_path / "runtime" / "helpers.py").write_text("")
    return tmp_path


def test_the_checker_passes_a_clean_tree(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    assert (layer_violations(root), private_violations(root), cycles(root)) == ([], [], [])


@pytest.mark.parametrize(
    ("file", "text", "check", "expected"),
    [
        (
            "b/two.py",
            "from svcc.a._private.x import VALUE\n",
            private_violations,
            ["svcc.b.two imports svcc.a._private.x, private to svcc.a"],
        ),
        (
            "b/two.py",
            "from svcc.a._private import x\n",
            private_violations,
            ["svcc.b.two imports svcc.a._private.x, private to svcc.a"],
        ),
        (
            "runtime/r.py",
            "def f():\n    import svcc.a.one\n",
            layer_violations,
            ["svcc.runtime.r imports svcc.a.one (layer svcc.runtime)"],
        ),
        (
            "a/_private/x.py",
            "def f():\n    from svcc.a import one\n",  # lazy, still a cycle
            cycles,
            [["svcc.a._private.x", "svcc.a.one"]],
        ),
        (
            "a/_private/x.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from svcc.a import one\n",
            cycles,
            [],  # a type-only import is not a cycle
        ),
    ],
)
def test_the_checker_catches_planted_violations(
    tmp_path: Path, file: str, text: str, check: object, expected: list[object]
) -> None:
    root = _tree(tmp_path)
    (root / file).write_text(text)
    assert callable(check)
    assert check(root) == expected


def test_cli_startup_imports_stay_lazy() -> None:
    heavy = ("cattrs", "nbformat", "packaging", "concurrent.futures", "importlib.metadata")
    assert modules_loaded_by("import svcc.cli.main", heavy) == []
    # and they do load when a command needs them: the check can fail
    assert modules_loaded_by("import svcc.ir.serde as s; s.converter()", heavy) == ["cattrs"]


def test_inspect_of_a_file_imports_only_what_it_uses() -> None:
    """``svcc inspect FILE`` is mostly start-up for a small file: neither report may pay for
    cattrs (the IR's JSON is written by ``svcc.ir.serde.unstructure``; cattrs only reads
    it back), the template, grammar and requirement libraries, the target protocol, or
    argparse's terminal probe through ``shutil``. The check can fail: the same statement
    for ``generate`` loads them."""
    example = ROOT / "examples" / "shapes.py"
    run = (
        "import os; out = sys.stdout; sys.stdout = open(os.devnull, 'w')\n"
        "from svcc.cli.main import main; main([{}])\n"
        "sys.stdout = out"
    )
    heavy = (
        "cattrs",
        "jinja2",
        "lark",
        "packaging",
        "shutil",
        "importlib.metadata",
        "svcc.contracts.target",
        "svcc.contracts.requirements",
        "svcc.backends",
        "docstring_parser",  # none of the example's docstrings has a section to parse
        "html.entities",  # the evaluator's table loads these on first use (``Deferred``)
        "textwrap",
        "string",
    )
    for fmt in ("text", "json"):
        args = f"'inspect', {str(example)!r}, '--format', {fmt!r}"
        assert modules_loaded_by(run.format(args), heavy) == [], fmt


def test_generate_does_load_what_inspect_leaves_out(tmp_path: Path) -> None:
    example = ROOT / "examples" / "shapes.py"
    run = (
        "import os; out = sys.stdout; sys.stdout = open(os.devnull, 'w')\n"
        "from svcc.cli.main import main; main({!r})\n"
        "sys.stdout = out"
    )
    argv = ["generate", "rest", str(example), "--output-dir", str(tmp_path / "out")]
    heavy = ("jinja2", "svcc.contracts.target", "svcc.backends")
    assert modules_loaded_by(run.format(argv), heavy) == list(heavy)


def _inspect_without_pathlib(path: str, fmt: str) -> subprocess.CompletedProcess[str]:
    code = (
        "import os, sys\n"
        "sys.modules['pathlib'] = None  # from here on, importing it raises ImportError\n"
        "os.environ['SVCC_DEBUG'] = '1'  # an unexpected exception is a traceback, exit 1\n"
        "from svcc.cli.main import main\n"
        f"sys.exit(main(['inspect', {path!r}, '--format', {fmt!r}]))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )


def test_inspect_of_a_file_needs_no_pathlib() -> None:
    """``pathlib`` (with ``fnmatch``, ``urllib.parse`` and ``ipaddress``: about 5 ms of a
    cold ``svcc inspect FILE``) is not needed to analyse one file. The editable install's
    import hook has already imported it in the test's interpreter, so it is blocked instead:
    any import of it fails the run. ``inspect DIR`` does use it: the check can fail."""
    example = str(ROOT / "examples" / "shapes.py")
    for fmt in ("text", "json"):
        proc = _inspect_without_pathlib(example, fmt)
        assert proc.returncode == 0, proc.stderr
        assert "circle_area" in proc.stdout
    proc = _inspect_without_pathlib(str(ROOT / "examples"), "text")
    assert proc.returncode != 0
    assert "pathlib" in proc.stderr


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("runtime/x.py", "import svcc.contracts.target\n"),
        ("ir/x.py", "from svcc.backends.rest import RestTarget\n"),
        ("frontends/python/x.py", "from svcc.compiler.passes import readiness\n"),
        ("contracts/diagnostics/x.py", "from svcc.compiler.driver import analyze_file\n"),
        ("contracts/x.py", "from svcc.frontends.python import read_python\n"),
        ("compiler/x.py", "from svcc.cli import render\n"),
        ("images/x.py", "from svcc.plugins import store\n"),
        ("backends/x.py", "from svcc.service.app import create_app\n"),
        ("service/x.py", "from svcc.cli.main import main\n"),
        ("backends/x.py", "from svcc.frontends.python import read_python\n"),
    ],
)
def test_ruff_folder_rules_refuse_a_layering_violation(path: str, source: str) -> None:
    """The same layering as folder rules (``ruff.toml`` per layer, ``banned-api``), so an
    editor shows a violation as it is typed: each planted import is refused there."""
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "TID251",
         "--stdin-filename", path, "-"],
        input=source, capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "TID251" in proc.stdout


def test_ruff_folder_rules_allow_the_leaf() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "TID251",
         "--stdin-filename", "frontends/python/x.py", "-"],
        input="from svcc.contracts.diagnostics import diag\n", capture_output=True, text=True,
        cwd=ROOT, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
