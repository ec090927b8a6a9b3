"""A repository's ``pyproject.toml`` that svcc cannot use is one line and exit 2, never a bug.

``tool = 1`` or ``project = "x"`` was an internal error (exit 3, ``AttributeError``), and a
misspelt ``[tool.svcc]`` key (``data_files``) was ignored: the files it meant to declare were
silently not in the bundle.
"""

import contextlib
import io
from pathlib import Path

import pytest
from svcc.cli.main import main
from svcc.frontends.repository import TreeRefused, read_tree

MODULE = "def f(x: int) -> int:\n    return x\n"


def _tree(root: Path, pyproject: str) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "m.py").write_text(MODULE)
    (root / "pkg" / "table.csv").write_text("a,b\n")
    (root / "pyproject.toml").write_text(pyproject)
    return root


@pytest.mark.parametrize(
    ("pyproject", "reason"),
    [
        ("tool = 1\n", "[tool] must be a table"),
        ('project = "x"\n', "[project] must be a table"),
        ("[tool]\nsvcc = 1\n", "[tool.svcc] must be a table"),
        ('[tool.svcc]\ndata_files = ["pkg/table.csv"]\n', "has no key 'data_files'"),
        ('[tool.svcc]\nsource_roots = ["pkg"]\n', "has no key 'source_roots'"),
        ("[project]\ndependencies = 3\n", "[project] dependencies must be a list of strings"),
        # packaging's message is three lines (the requirement, a caret under it): one here
        (
            '[project]\ndependencies = ["numpy >>= 1"]\n',
            "[project] dependencies:1: invalid requirement: Expected semicolon (after name "
            "with no version specifier) or end at column 7",
        ),
        (
            '[tool.svcc]\ndependencies = ["numpy", "pandas[x"]\n',
            "[tool.svcc] dependencies:2: invalid requirement: Expected matching RIGHT_BRACKET "
            "for LEFT_BRACKET, after extras at column 9",
        ),
        (
            '[tool.svcc]\ndependencies = ["--index-url https://example.invalid"]\n',
            "[tool.svcc] dependencies:1: options such as '--index-url' are not supported",
        ),
        # as ``# import: 1x`` in a requirements file (it was accepted)
        (
            '[tool.svcc]\ndependencies = ["numpy"]\nimport-names = {numpy = ["1x"]}\n',
            "[tool.svcc] import-names.numpy names '1x', not a module",
        ),
        # an empty glob was said to escape the project root
        ('[tool.svcc]\ndata-files = [""]\n', "data-files: '' is an empty glob"),
        # an empty list read no module at all, silently (exit 0, "0 functions")
        ("[tool.svcc]\nsource-roots = []\n", "[tool.svcc] source-roots is empty"),
        # a folder was said to match no file
        (
            '[tool.svcc]\ndata-files = ["pkg"]\n',
            "data-files: 'pkg' is a folder; declare the files in it ('pkg/**/*')",
        ),
        # a misspelt kind was a usage error that named neither the file nor the code
        (
            '[tool.svcc]\nallow = ["env", "nope"]\n',
            "pyproject.toml: [tool.svcc] allow: unknown kind 'nope'; choose from env, process",
        ),
        # tomllib recurses into nested arrays: a RecursionError was exit 3
        ("[tool.x]\na = " + "[" * 5000 + "]" * 5000 + "\n", "is not valid TOML: nested too deeply"),
    ],
    ids=[
        "tool",
        "project",
        "tool-svcc",
        "data_files",
        "source_roots",
        "dependencies",
        "requirement",
        "requirement-caret",
        "requirement-option",
        "import-names",
        "empty-glob",
        "no-source-roots",
        "data-folder",
        "allow-kind",
        "nested",
    ],
)
def test_an_unusable_pyproject_is_refused_in_one_line(
    tmp_path: Path, pyproject: str, reason: str
) -> None:
    root = _tree(tmp_path / "t", pyproject)
    with pytest.raises(TreeRefused) as refused:
        read_tree(root)
    assert refused.value.diagnostic.code == "SVC-F008"
    assert reason in refused.value.diagnostic.message
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        code = main(["inspect", str(root), "--format", "json"])
    assert code == 2, stderr.getvalue()
    assert stderr.getvalue().count("\n") == 1, stderr.getvalue()
    assert reason in stderr.getvalue()


def test_the_known_keys_and_other_tools_tables_are_read(tmp_path: Path) -> None:
    root = _tree(
        tmp_path / "t",
        '[project]\nname = "t"\ndependencies = []\n[tool.other]\nanything = 1\n'
        '[tool.svcc]\nsource-roots = ["."]\ndata-files = ["pkg/table.csv"]\n'
        "import-names = {}\nallow = []\n",
    )
    tree = read_tree(root)
    assert [f.module for f in tree.files] == ["pkg.m"]


DEPTH = 12
STARS = "/".join(["**"] * 6)


def _counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """Count the calls of ``_data.<name>`` (still the real function)."""
    from svcc.frontends.repository import _data

    calls = [0]
    real = getattr(_data, name)

    def counted(*args: object) -> object:
        calls[0] += 1
        return real(*args)

    monkeypatch.setattr(_data, name, counted)
    return calls


def test_many_double_stars_cost_one_walk_of_the_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every way of sharing a deep path among several ``**`` was walked: ``pkg/**`` six
    times ``/x.bin`` over 25 folders took 88 s, and twelve never ended. Each folder is now
    listed at most once per part of the glob."""
    root = _tree(tmp_path / "t", f'[tool.svcc]\ndata-files = ["pkg/{STARS}/x.bin"]\n')
    deep = root / "pkg" / "/".join(["d"] * DEPTH)
    deep.mkdir(parents=True)
    (deep / "x.bin").write_bytes(b"1")
    listed = _counting(monkeypatch, "_entries")
    tree = read_tree(root)
    assert [f.path for f in tree.data] == [f"pkg/{'d/' * DEPTH}x.bin"]
    assert listed[0] <= (DEPTH + 2) * 8


def test_many_double_stars_match_a_path_in_linear_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same rule chooses what a git commit exports (``matches``), path by path."""
    from svcc.frontends.repository import matches

    judged = _counting(monkeypatch, "_descends")
    path = "pkg/" + "d/" * DEPTH + "x.bin"
    assert not matches(f"pkg/{STARS}/y.bin", path)
    assert matches(f"pkg/{STARS}/x.bin", path)
    assert judged[0] <= 2 * (DEPTH + 2) * 8


def test_an_invalid_requirements_file_line_is_one_line(tmp_path: Path) -> None:
    """``--requirements FILE`` with a line ``packaging`` refuses: one line with file:line
    and the column (``packaging``'s own message repeats the line with a caret under it)."""
    (tmp_path / "m.py").write_text(MODULE)
    (tmp_path / "requirements.txt").write_text("pandas\nnumpy >>= 1\n")
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        code = main(
            [
                "inspect",
                str(tmp_path / "m.py"),
                "--requirements",
                str(tmp_path / "requirements.txt"),
                "--format",
                "json",
            ]
        )
    assert code == 2
    assert stderr.getvalue() == (
        f"svcc: error: {tmp_path / 'requirements.txt'}:2: invalid requirement: Expected "
        "semicolon (after name with no version specifier) or end at column 7\n"
    )
