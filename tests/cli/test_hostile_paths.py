"""An attacker's second pass over what the last two stops landed (issue 27 item 7): directory
workers, reads through helpers, ``svcc lock``, the analysis service, exit codes, the MCP
wire. Each test failed before its fix (or is an ``xfail`` naming the fix that belongs in a
file another change holds)."""

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers import SVCC, run_svcc
from servers import generate, running_service, serving
from test_mcp_wire import RawMcp

# A literal pattern nested past the interpreter's recursion limit: ``re.compile`` raises
# ``RecursionError``, which the import-time check let through as a crash (exit 3, a 500).
DEEP_PATTERN = (
    "import re\n\n"
    f'PATTERN = re.compile("{"(" * 5000}a{")" * 5000}")\n\n\n'
    "def f(x: int) -> int:\n    return x\n"
)
PLAIN = "def g{n}(x: int) -> int:\n    return x + {n}\n"


def _tree(root: Path, files: int = 70) -> Path:
    """A flat tree of ``files`` plain modules (64 or more: lowered in worker processes)."""
    root.mkdir(parents=True, exist_ok=True)
    for n in range(files):
        (root / f"m{n}.py").write_text(PLAIN.format(n=n))
    return root


def _codes(document: dict[str, object], name: str) -> set[str]:
    for a in document["assessments"]:  # type: ignore[attr-defined]
        if a["name"] == name:
            return {r["code"] for r in a["reasons"]}
    raise AssertionError(name)


# -- a pattern nested too deeply to compile --------------------------------------------------


def test_a_pattern_nested_too_deeply_is_an_invalid_pattern_not_a_crash(tmp_path: Path) -> None:
    source = tmp_path / "deep.py"
    source.write_text(DEEP_PATTERN)
    proc = run_svcc("inspect", str(source), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert "SVC-R031" in _codes(json.loads(proc.stdout), "f")


def test_a_pattern_nested_too_deeply_in_a_directory_judged_by_workers(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "tree")
    (tree / "deep.py").write_text(DEEP_PATTERN)
    proc = run_svcc("inspect", str(tree), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    files = json.loads(proc.stdout)["files"]
    assert "SVC-R031" in _codes(files["deep.py"], "f")
    assert not _codes(files["m1.py"], "g1")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    workspace = tmp_path_factory.mktemp("second-pass") / "ws"
    tree = _tree(workspace / "tree", files=3)
    (tree / "deep.py").write_text(DEEP_PATTERN)
    _not_utf8_names(_tree(workspace / "odd", files=2))
    with running_service(workspace) as (url, _pid):
        yield url


def test_the_service_answers_a_pattern_nested_too_deeply(service: str, tmp_path: Path) -> None:
    with httpx.Client(base_url=service, timeout=120) as http:
        one = http.post("/analyze_file/", files={"file": ("deep.py", DEEP_PATTERN.encode())})
        assert one.status_code == 200, one.text[:300]
        assert "SVC-R031" in _codes(one.json()["readiness"], "f")
        tree = http.post("/analyse_directory/", data={"directory_path": "tree"})
        assert tree.status_code == 200, tree.text[:300]
        assert "SVC-R031" in _codes(tree.json()["tree/deep.py"]["readiness"], "f")


# -- file names that are not UTF-8 ------------------------------------------------------------


def _not_utf8_names(tree: Path) -> Path:
    """A module, a folder of modules and a notebook whose names are Latin-1 bytes, and a
    text file so named (not the repository's business)."""
    root = os.fsencode(tree)
    with open(root + b"/caf\xe9.py", "wb") as f:
        f.write(PLAIN.format(n=90).encode())
    os.mkdir(root + b"/pk\xff")
    with open(root + b"/pk\xff/mod.py", "wb") as f:
        f.write(PLAIN.format(n=91).encode())
    with open(root + b"/nb\xe9.ipynb", "wb") as f:
        f.write(b"{}")
    with open(root + b"/notes\xe9.txt", "wb") as f:
        f.write(b"text")
    return tree


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_names_that_are_not_utf8_are_refused_entries(tmp_path: Path, fmt: str) -> None:
    """``pk\\xff/mod.py`` (a folder that is not a Python name: a source root of its own)
    ended ``inspect DIR`` in a ``UnicodeEncodeError`` (exit 3), the analysis service in a
    500. Each such module, folder and notebook is now a refused entry; the rest is read."""
    tree = _not_utf8_names(_tree(tmp_path / "tree", files=2))
    proc = subprocess.run(
        [SVCC, "inspect", str(tree), "--format", fmt], capture_output=True, check=False
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count(b"\n") == 1, proc.stderr
    assert b"internal error" not in proc.stderr
    out = proc.stdout.decode("utf-8")  # strict: what svcc writes is UTF-8
    said = out if fmt == "text" else "\n".join(d["message"] for d in json.loads(out)["diagnostics"])
    for refused in ("caf\\xe9.py", "pk\\xff", "nb\\xe9.ipynb"):
        assert f"{refused}: the name is not UTF-8 (rename it)" in said
    assert "notes" not in out
    assert "m1" in out


def test_a_data_file_glob_matching_a_name_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "tree", files=1)
    (tree / "pyproject.toml").write_text(
        '[project]\nname = "d"\nversion = "0"\n[tool.svcc]\ndata-files = ["data/*"]\n'
    )
    (tree / "data").mkdir()
    (tree / "data" / "a.json").write_text("{}")
    with open(os.fsencode(tree / "data") + b"/b\xe9.json", "wb") as f:
        f.write(b"{}")
    for command in (["inspect", str(tree)], ["compile", str(tree), "--target", "rest",
                    "--output-dir", str(tmp_path / "out")]):  # fmt: skip
        proc = run_svcc(*command)
        assert proc.returncode == 2, proc.stderr
        assert "data/b\\xe9.json (from 'data/*'): the name is not UTF-8" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_the_service_answers_a_directory_with_names_that_are_not_utf8(service: str) -> None:
    with httpx.Client(base_url=service, timeout=120) as http:
        answer = http.post("/analyse_directory/", data={"directory_path": "odd"})
    assert answer.status_code == 200, answer.text[:300]
    assert "odd/m1.py" in answer.json()


def test_a_command_line_path_that_is_not_utf8_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    """``svcc generate rest m.py --output-dir o\\xff`` wrote the bundle, then failed
    printing its summary (``UnicodeEncodeError``, exit 3); ``svcc inspect x\\xff.py`` too."""
    source = tmp_path / "m.py"
    source.write_text(PLAIN.format(n=1))
    out = os.fsencode(tmp_path) + b"/o\xff"
    named = os.fsencode(tmp_path) + b"/x\xff.py"
    with open(named, "wb") as f:
        f.write(PLAIN.format(n=2).encode())
    for argv in (
        [b"generate", b"rest", os.fsencode(source), b"--output-dir", out],
        [b"inspect", named],
    ):
        proc = subprocess.run([os.fsencode(SVCC), *argv], capture_output=True, check=False)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith(b"svcc: error: "), proc.stderr
        assert b"\\xff" in proc.stderr
        assert proc.stderr.endswith(b": not UTF-8; rename it (paths are written to JSON)\n")
        assert proc.stderr.count(b"\n") == 1
    assert not os.path.exists(out)


def test_compile_dir_selecting_a_function_of_a_module_that_did_not_analyse(
    tmp_path: Path,
) -> None:
    """``--select bad.f`` of a module that does not decode said "unknown selection 'bad.f';
    its functions are: ..." (a typo hunt for a name that is there); the module's own error
    is the answer, as the analysis service gives it."""
    tree = _tree(tmp_path / "tree", files=2)
    (tree / "bad.py").write_bytes(b"# -*- coding: bogus -*-\ndef f(x: int) -> int:\n    return x\n")
    for item in ("bad.f", "python:bad:f"):
        proc = run_svcc(
            "compile", str(tree), "--target", "rest", "--output-dir", str(tmp_path / "out"),
            "--select", f"m1.g1,{item}",
        )  # fmt: skip
        assert proc.returncode == 2, proc.stderr
        assert "bad.py:1:1: unknown encoding: bogus" in proc.stderr
        assert f"the selection names {item!r} of it" in proc.stderr
        assert "unknown selection" not in proc.stderr
    assert not (tmp_path / "out").exists()


# -- closed standard streams ------------------------------------------------------------------


@pytest.mark.parametrize("stream", [">&-", "2>&-"])
def test_a_closed_standard_stream_is_not_an_internal_error(tmp_path: Path, stream: str) -> None:
    """``svcc inspect DIR >&-``: Python's ``sys.stdout`` is ``None``; the first
    ``isatty()`` was an ``AttributeError``, exit 3 ("a bug")."""
    tree = _tree(tmp_path / "tree", files=2)
    proc = subprocess.run(
        ["sh", "-c", f'"$0" inspect "$1" {stream}', SVCC, str(tree)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    assert "internal error" not in proc.stderr


# -- a refused entry of a tree is said as the error it is ------------------------------------


def test_a_refused_entry_is_shown_as_an_error_in_the_text(tmp_path: Path) -> None:
    """A symlink in a tree sets the exit status (2, "could not be analysed"), but the text
    listed it as a ``note:``: the one line that said why read as harmless."""
    tree = _tree(tmp_path / "tree", files=2)
    (tree / "link.py").symlink_to(tree / "m0.py")
    proc = run_svcc("inspect", str(tree), "--format", "text")
    assert proc.returncode == 2
    assert "  error: SVC-F008 link.py: symlinks are refused" in proc.stdout
    assert "note: SVC-F008" not in proc.stdout


# -- svcc lock never builds a declared source ------------------------------------------------


def test_lock_refuses_a_direct_reference_to_a_source_before_pip_runs(tmp_path: Path) -> None:
    """``--only-binary=:all:`` does not cover direct references: a repository declaring
    ``evil @ file:///dir`` had pip build it, running its ``setup.py`` under ``svcc lock``
    (seen with a local setuptools wheel offered). Refused in one line before pip starts."""
    evil = tmp_path / "evil"
    evil.mkdir()
    marker = tmp_path / "ran"
    (evil / "setup.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
        "from setuptools import setup\nsetup(name='evil', version='1')\n"
    )
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text(
        f'[project]\nname = "r"\nversion = "0"\ndependencies = ["evil @ {evil.as_uri()}"]\n'
    )
    (repo / "m.py").write_text(PLAIN.format(n=0))
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_svcc(
        "lock", str(repo), "--platform", "linux/amd64", "--python", "3.11",
        "--no-index", "--find-links", str(empty),
        "--wheelhouse", str(tmp_path / "wh"), "--output", str(tmp_path / "r.lock"),
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "evil @ file://" in proc.stderr
    assert "direct reference to a source" in proc.stderr
    assert not marker.exists()
    assert not (tmp_path / "wh").exists()


def test_lock_keeps_a_wheel_url() -> None:
    """A direct reference to a wheel is a binary: nothing is built, so it is left to pip."""
    from packaging.requirements import Requirement
    from svcc.images.errors import ImageInputError
    from svcc.images.references import judge_references

    judge_references([Requirement("w @ https://example.org/w-1-py3-none-any.whl")], "x")
    with pytest.raises(ImageInputError, match="direct reference to a source"):
        judge_references([Requirement("w @ git+https://example.org/w.git")], "x")


def test_a_lock_whose_folder_cannot_be_made_is_refused_before_pip(tmp_path: Path) -> None:
    """``svcc lock --output afile/x.lock`` resolved every wheel with pip (minutes, the
    index), then failed writing: exit 3 ("a bug"). A missing folder is made, as the
    wheelhouse's is (``--wheelhouse out/wheels --output out/server.lock`` is the usual
    spelling); a path through a file is refused first."""
    from svcc.images.errors import ImageInputError
    from svcc.images.locking import write_new

    write_new(tmp_path / "nodir" / "x.lock", b"x")
    assert (tmp_path / "nodir" / "x.lock").read_bytes() == b"x"
    (tmp_path / "afile").write_text("")
    with pytest.raises(ImageInputError, match="afile is not a folder"):
        write_new(tmp_path / "afile" / "x.lock", b"x")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "m.py").write_text(PLAIN.format(n=0))
    proc = run_svcc(
        "lock", str(repo), "--platform", "linux/amd64", "--python", "3.11",
        "--no-index", "--find-links", str(tmp_path),
        "--wheelhouse", str(tmp_path / "wh"), "--output", str(tmp_path / "afile" / "r.lock"),
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.endswith("afile is not a folder\n"), proc.stderr
    assert not (tmp_path / "wh").exists()


# -- every MCP request with an id is answered ------------------------------------------------


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawMcp]:
    root = tmp_path_factory.mktemp("second-pass-mcp")
    source = root / "tools.py"
    source.write_text("def add(a: int, b: int) -> int:\n    return a + b\n")
    generate(source, root / "mcp", interface="mcp")
    server = RawMcp(root / "mcp")
    yield server
    server.close()


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":[1],"method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}',
        b'[{"jsonrpc":"2.0","id":21,"method":"tools/list"}]',
        b"[]",
    ],
)
def test_a_request_with_an_id_the_sdk_cannot_take_is_answered(mcp: RawMcp, line: bytes) -> None:
    """The SDK validated ``{"id": null|1.5|true|[1], "method": ...}`` as a notification and
    dropped a batch: no answer, and the agent waited for one."""
    mcp.send(line)
    answer = mcp.answer(timeout=15)
    assert answer["id"] is None, answer
    assert answer["error"]["code"] == -32600, answer
    ok = mcp.request(7, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    assert ok["id"] == 7
    assert ok["result"]["structuredContent"] == {"result": 3}, ok


# -- a chain of declarations no server can take ---------------------------------------------


def _chain(n: int, kind: str) -> str:
    """``n`` TypedDicts (or dataclasses, or TypedDicts inheriting) each holding the next."""
    if kind == "bases":
        body = "class T0(TypedDict):\n    v0: int\n\n"
        body += "".join(
            f"class T{i}(T{i - 1}, total=False):\n    v{i}: int\n\n" for i in range(1, n)
        )
        return "from typing import TypedDict\n\n" + body
    head = "@dataclass\n" if kind == "dataclass" else ""
    base = "" if kind == "dataclass" else "(TypedDict)"
    body = f"{head}class T0{base}:\n    v: int\n\n"
    body += "".join(f"{head}class T{i}{base}:\n    c: T{i - 1}\n\n" for i in range(1, n))
    imports = "from dataclasses import dataclass\n" if kind == "dataclass" else ""
    return f"{imports}from typing import TypedDict\n\n" + body


@pytest.mark.parametrize("kind", ["typeddict", "dataclass"])
def test_a_chain_of_declarations_past_what_servers_take_is_refused(
    tmp_path: Path, kind: str
) -> None:
    """3,000 TypedDicts each holding the next were eligible; the REST bundle then failed at
    startup (RecursionError in the runtime's validator build), a chain of 200 answered 422
    to every call (REST's JSON parser takes 200 levels) and one of 126 was refused by MCP's
    transport (128 levels)."""
    source = tmp_path / "chain.py"
    source.write_text(
        _chain(3000, kind) + "def f(x: T2999) -> int:\n    return 1\n\n\n"
        "def g(x: int) -> T2999:\n    return {}  # type: ignore\n"
    )
    proc = run_svcc("inspect", str(source), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert "SVC-R011" in _codes(document, "f")
    assert "SVC-R050" in _codes(document, "g")


def test_a_chain_the_servers_take_and_a_recursive_type_stay_eligible(tmp_path: Path) -> None:
    source = tmp_path / "ok.py"
    source.write_text(
        _chain(100, "typeddict")
        + 'class Node(TypedDict):\n    v: int\n    children: list["Node"]\n\n\n'
        "def f(x: T99) -> int:\n    return 1\n\n\n"
        "def tree(x: Node) -> Node:\n    return x\n"
    )
    proc = run_svcc("inspect", str(source), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert not _codes(document, "f")
    assert not _codes(document, "tree")


def test_an_inheritance_chain_is_served(tmp_path: Path) -> None:
    """3,000 TypedDicts each inheriting the last nest nothing (one flat object): eligible,
    but the REST server's startup failed with a ``RecursionError`` (the runtime collected
    inherited fields by recursion), as did the MCP server's."""
    source = tmp_path / "bases.py"
    source.write_text(_chain(3000, "bases") + "def f(x: T2999) -> int:\n    return len(x)\n")
    proc = run_svcc("inspect", str(source), "--format", "json")
    assert not _codes(json.loads(proc.stdout), "f")
    generate(source, tmp_path / "rest")
    with serving(tmp_path / "rest") as server, server.client() as http:
        answer = http.post("/capabilities/f", json={"x": {"v0": 1, "v2999": 2}})
        assert answer.status_code == 200, answer.text[:300]
        assert answer.json() == 2


# -- reads in a handler, reads through open(file=...) -------------------------------------

FALLBACK = """from pathlib import Path

HERE = Path(__file__).parent


def load() -> str:
    try:
        return (HERE / "primary.json").read_text()
    except FileNotFoundError:
        return (HERE / "fallback.json").read_text()


def keyword() -> str:
    with open(file="relative.json") as f:
        return f.read()
"""


def test_a_fallback_read_in_a_coping_handler_is_not_a_read_on_every_call(tmp_path: Path) -> None:
    """The handler runs only when the ``try``'s read failed, and the declared primary file
    is always in the bundle: a false SVC-R042 said the fallback was read "on every call".
    ``open(file="relative.json")`` was not judged at all (only a positional path was)."""
    (tmp_path / "primary.json").write_text("{}")
    source = tmp_path / "m.py"
    source.write_text(FALLBACK)
    proc = run_svcc(
        "inspect", str(source), "--data", str(tmp_path / "primary.json"), "--format", "json"
    )
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert not _codes(document, "load")
    assert _codes(document, "keyword") == {"SVC-R043"}


def test_open_with_a_file_keyword_built_from_file_is_judged(tmp_path: Path) -> None:
    """``_read_path`` took a path from the first argument only: ``open(file=HERE / 'x')``
    was never judged (eligible, every call failed)."""
    source = tmp_path / "m.py"
    source.write_text(
        "from pathlib import Path\n\nHERE = Path(__file__).parent\n\n\n"
        "def load() -> str:\n"
        '    with open(file=HERE / "missing.json") as f:\n'
        "        return f.read()\n"
    )
    proc = run_svcc("inspect", str(source), "--format", "json")
    assert "SVC-R042" in _codes(json.loads(proc.stdout), "load")


# -- reads of files above the module's folder -------------------------------------------------


def test_a_read_above_the_modules_folder_of_an_undeclared_file_is_judged(tmp_path: Path) -> None:
    """``src/pkg/mod.py`` reading ``Path(__file__).parent.parent / "data" / "x.json"`` (the
    src layout's usual spelling) of a file no ``data-files`` declares: the bundle does not
    hold it, so every call fails, yet the function was called eligible."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n')
    pkg = tmp_path / "src" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (tmp_path / "src" / "data").mkdir()
    (tmp_path / "src" / "data" / "x.json").write_text("{}")
    (pkg / "mod.py").write_text(
        "from pathlib import Path\n\nHERE = Path(__file__).parent\n\n\n"
        "def load() -> str:\n"
        '    return (HERE.parent / "data" / "x.json").read_text()\n'
    )
    proc = run_svcc("inspect", str(tmp_path), "--format", "json")
    document = json.loads(proc.stdout)["files"]["src/pkg/mod.py"]
    assert "SVC-R042" in _codes(document, "load")


def test_file_names_with_a_newline_stay_on_one_line_in_inspect_dir(tmp_path: Path) -> None:
    """A file or folder name may hold a newline (or another control character): ``inspect
    DIR``'s text printed it raw, so a one-line note ran over two lines and the next line
    read as something else. Names are shown escaped (``a\\nb.py``); JSON keeps them exact."""
    (tmp_path / "a\nb.py").write_text("def f(x: int) -> int:\n    return x\n")
    (tmp_path / "x\ty").mkdir()
    (tmp_path / "x\ty" / "m.py").write_text("def g(x: int) -> int:\n    return x\n")
    (tmp_path / "ok.py").write_text("def h(x: int) -> int:\n    return x\n")
    done = run_svcc("inspect", str(tmp_path), "--format", "text")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("  warning: SVC-F011 a\\nb.py: ") for line in lines)
    assert any(line.startswith("x\\ty/m.py (module m)") for line in lines)
    assert "x\\ty: read as a source root" in done.stdout
    assert not any(line.startswith(("b.py", "y/", "y:")) for line in lines)
    document = json.loads(run_svcc("inspect", str(tmp_path), "--format", "json").stdout)
    assert "x\ty/m.py" in document["files"]


def test_inspect_dir_makes_one_oversized_file_one_refused_entry(tmp_path: Path) -> None:
    """A file over the per-file bound (4 MiB: a generated table, a vendored blob) refused
    the whole tree in ``inspect DIR`` (exit 2, no module judged), where the analysis service
    makes it one refused entry; now ``inspect`` does as the service does, and ``compile``
    (which builds from the whole tree) still refuses it."""
    (tmp_path / "huge.py").write_text("X = 1\n" + "# pad\n" * 800_000)
    (tmp_path / "ok.py").write_text("def f(x: int) -> int:\n    return x\n")
    text = run_svcc("inspect", str(tmp_path), "--format", "text")
    assert text.returncode == 2  # a file could not be analysed
    assert "  error: SVC-F010 huge.py: " in text.stdout
    assert "ok.f  eligible" in text.stdout
    document = json.loads(run_svcc("inspect", str(tmp_path), "--format", "json").stdout)
    assert "ok.py" in document["files"]
    assert [d["path"] for d in document["diagnostics"] if d["code"] == "SVC-F010"] == ["huge.py"]
    built = run_svcc(
        "compile", str(tmp_path), "--target", "rest", "--output-dir", str(tmp_path / "out")
    )
    assert built.returncode == 2
    assert "SVC-F010" in built.stderr
    assert not (tmp_path / "out").exists()


def test_inspect_dir_text_keeps_every_name_on_its_line(tmp_path: Path) -> None:
    """The directory given, a notebook's notes and the exit line printed names raw: a
    newline in the folder's name split its header, one in a notebook's name each of its
    notes, one in a failed file's the last line of stderr (the first fix escaped the tree's
    entries only). An argument that is not UTF-8 and holds a newline is refused on one line
    too: the command line, the front ends and the text output share one rule
    (``svcc.contracts.names``)."""
    root = tmp_path / "r\noot"
    (root / "x\ny").mkdir(parents=True)
    (root / "x\ny" / "bad.py").write_text("def g(:\n")
    (root / "x\ny" / "m.py").write_text("def h(x: int) -> int:\n    return x\n")
    notebook = Path(__file__).parents[1] / "golden" / "notebook_cells" / "input.ipynb"
    (root / "n\nb.ipynb").write_bytes(notebook.read_bytes())
    done = run_svcc("inspect", str(root), "--format", "text")
    assert done.returncode == 2  # the file with a syntax error
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"{tmp_path}/r\\noot: source roots ")
    notes = [line for line in lines if line.startswith("  note: SVC-F01")]
    assert notes, done.stdout
    assert all(line.split(" ")[4] == "n\\nb.ipynb:" for line in notes), notes
    assert not any(line.startswith(("oot", "b.ipynb", "y")) for line in lines), lines
    assert done.stderr.count("\n") == 1, done.stderr
    assert "(first: x\\ny/bad.py)" in done.stderr
    named = os.fsencode(tmp_path) + b"/a\nb\xff.py"
    proc = subprocess.run([os.fsencode(SVCC), b"inspect", named], capture_output=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr.count(b"\n") == 1, proc.stderr
    assert b"a\\nb\\xff.py: not UTF-8" in proc.stderr
