"""Third hostile pass, the front end (issue 38 items 3, 4, 10a, 10b; issue 37 item 10).

Each test holds a reproducer's shape and failed before its fix: notebook slices keep what a
kept statement can observe; a helper reading a name the served module never binds is not
eligible; a package's bare sibling import is never both eligible and unstartable; the
path-from-parameter effect covers the readers people use.
"""

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from helpers import run_svcc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from servers import serving
from svcc.compiler.driver import analyze_source
from svcc.frontends.python.path_arguments import PATH_ARGUMENTS


def notebook(*cells: str | tuple[str, list[str]]) -> bytes:
    nb = nbformat.v4.new_notebook()
    for number, cell in enumerate(cells, start=1):
        source, tags = cell if isinstance(cell, tuple) else (cell, [])
        new = nbformat.v4.new_code_cell(source)
        new.id = f"cell-{number}"
        new.metadata["tags"] = tags
        nb.cells.append(new)
    return nbformat.writes(nb).encode()


def analyse(source: bytes | str, path: str = "m.py", **options: Any) -> Any:
    analysis = analyze_source(
        source, path=path, module="m", python_version="3.11", serialize=False, **options
    )
    assert analysis.error is None, analysis.error
    return analysis


def verdict(analysis: Any, name: str) -> tuple[str, list[str]]:
    found = analysis.readiness.assessment(name)
    assert found is not None, name
    errors = [r.code for r in found.reasons if r.severity == "error"]
    return found.klass, errors


def messages(analysis: Any, name: str, code: str) -> list[str]:
    found = analysis.readiness.assessment(name)
    return [r.message for r in found.reasons if r.code == code]


# -- item 4: a name no kept statement binds ------------------------------------------------------


def test_a_read_of_a_name_nothing_binds_is_refused() -> None:
    analysis = analyse(
        "import os\n\n\n"
        "def f(x: int) -> int:\n    return x * UNDEFINED\n\n\n"
        "def _h(y: int) -> int:\n    return y + MISSING\n\n\n"
        "def g(x: int) -> int:\n    return _h(x)\n\n\n"
        "def ok(x: int) -> int:\n    return len(str(x)) + os.sep.count('/') + LIMIT\n\n\n"
        "def main_only(x: int) -> int:\n    return x + ARGS\n\n\n"
        "LIMIT = 3\n"
        'if __name__ == "__main__":\n    ARGS = 1\n'
    )
    assert verdict(analysis, "f") == ("conditional", ["SVC-R061"])
    assert "UNDEFINED" in messages(analysis, "f", "SVC-R061")[0]
    assert "MISSING in _h()" in messages(analysis, "g", "SVC-R061")[0]
    assert verdict(analysis, "main_only") == ("conditional", ["SVC-R061"])
    assert verdict(analysis, "ok") == ("eligible", [])


def test_a_star_import_may_bind_anything() -> None:
    analysis = analyse(
        "from os.path import *\n\n\ndef f(x: str) -> str:\n    return join(x, 'a')\n"
    )
    assert "SVC-R061" not in verdict(analysis, "f")[1]


@pytest.mark.parametrize(
    "cells",
    [
        # a value from a skip-tagged cell
        (("SCALE = 3", ["skip-execution"]), "def f(x: int) -> int:\n    return x * SCALE"),
        # IPython's own names
        ("def f(x: int) -> int:\n    display(x)\n    return x",),
        ("def f(x: int) -> int:\n    get_ipython()\n    return x",),
        # a name from a removed %run
        ("%run helpers.py", "def f(x: int) -> int:\n    return helper(x)"),
        # a name bound under the main guard: the kernel runs it, the served module does not
        (
            "K = 1",
            "if __name__ == '__main__':\n    K = 2",
            "def f(x: int) -> int:\n    return x * K",
        ),
    ],
)
def test_notebook_names_the_served_module_lacks(cells: tuple[Any, ...]) -> None:
    analysis = analyse(notebook(*cells), path="nb.ipynb")
    klass, errors = verdict(analysis, "f")
    assert klass != "eligible"
    assert "SVC-R061" in errors


def test_a_name_bound_by_exec_keeps_the_exec_and_is_judged() -> None:
    """``exec`` may bind any name: the statement is kept (as shared state is) and judged as
    import-time code, never dropped to leave the reader eligible on another value."""
    cells = ("K = 1", "exec('K = 2')", "def f(x: int) -> int:\n    return x * K")
    analysis = analyse(notebook(*cells), path="nb.ipynb")
    assert "exec('K = 2')" in analysis.module_text
    assert verdict(analysis, "f")[0] != "eligible"


def test_a_function_that_lost_a_line_to_the_ipython_conversion_is_refused() -> None:
    analysis = analyse(
        notebook(
            "import os",
            "def listing(folder: str) -> int:\n    lines = !ls\n    return len(folder)",
            "def fine(x: int) -> int:\n    return x + 1",
        ),
        path="nb.ipynb",
    )
    klass, errors = verdict(analysis, "listing")
    assert klass != "eligible"
    assert "SVC-R061" in errors
    assert "IPython syntax" in messages(analysis, "listing", "SVC-R061")[0]
    assert verdict(analysis, "fine") == ("eligible", [])


def test_a_helper_reading_globals_keeps_every_module_binding() -> None:
    analysis = analyse(
        notebook(
            "RATE = 2\nunused = 5",
            "def lookup(key: str) -> int:\n    return globals()[key]",
        ),
        path="nb.ipynb",
    )
    assert "unused = 5" in analysis.module_text


# -- item 3: a slice keeps what a kept statement can observe -------------------------------------


def run(text: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "served"}
    exec(compile(text, "<module>", "exec"), namespace)  # the test runs it, never svcc
    return namespace


def same_or_refused(cells: tuple[str, ...], name: str, *args: Any) -> str:
    """The helper's verdict; when eligible, it answers as after running the notebook."""
    analysis = analyse(notebook(*cells), path="nb.ipynb")
    klass, _ = verdict(analysis, name)
    if klass == "eligible":
        whole = run("\n".join(cells))[name](*args)
        assert run(analysis.module_text)[name](*args) == whole
    return klass


OBSERVED = {
    "registry filled by a call": (
        (
            "_REGISTRY = {}\n\n\ndef _register(fn):\n    _REGISTRY[fn.__name__] = fn\n"
            "    return fn",
            "def double(x):\n    return x * 2\n\n\n_register(double)",
            "def dispatch(name: str, x: int) -> int:\n    return _REGISTRY[name](x)",
        ),
        "dispatch",
        ("double", 2),
        "_register(double)",
    ),
    "counter bumped in a loop": (
        (
            "COUNTS = {}\n\n\ndef _bump(k):\n    COUNTS[k] = COUNTS.get(k, 0) + 1",
            "for w in ['a', 'b', 'a']:\n    _bump(w)",
            "def count(word: str) -> int:\n    return COUNTS.get(word, 0)",
        ),
        "count",
        ("a",),
        "_bump(w)",
    ),
    "global rebinding in a method": (
        (
            "MODEL = 1\n\n\nclass Loader:\n    def setup(self):\n        global MODEL\n"
            "        MODEL = 3",
            "loader = Loader()\nloader.setup()",
            "def predict(x: int) -> int:\n    return x * MODEL",
        ),
        "predict",
        (2,),
        "loader.setup()",
    ),
    "a name bound only through global in a method": (
        (
            "def hb(x: int) -> int:\n    return x + B",
            "class _S:\n    def go(self, v):\n        global B\n        B = v",
            "_S().go(3)",
        ),
        "hb",
        (2,),
        "_S().go(3)",
    ),
    "object reached through a subscript": (
        (
            "STOPWORDS = {'en': set()}\n\n\ndef _load(target, words):\n    target.update(words)",
            "_load(STOPWORDS['en'], ['the', 'a'])",
            "def is_stop(w: str) -> bool:\n    return w in STOPWORDS['en']",
        ),
        "is_stop",
        ("the",),
        "_load(STOPWORDS['en']",
    ),
    "bound method passed as a value": (
        (
            "SEEN = []\nwords = ['x', 'y']",
            "list(map(SEEN.append, words))",
            "def seen(w: str) -> bool:\n    return w in SEEN",
        ),
        "seen",
        ("x",),
        "map(SEEN.append",
    ),
}


@pytest.mark.parametrize("case", sorted(OBSERVED))
def test_slice_keeps_calls_that_change_what_kept_code_reads(case: str) -> None:
    cells, name, args, kept = OBSERVED[case]
    analysis = analyse(notebook(*cells), path="nb.ipynb")
    assert kept in analysis.module_text
    same_or_refused(cells, name, *args)


# -- item 10b: the path argument of every reviewed file-opening callable -------------------------

PATH_READERS = {
    "gzip.open": "return gzip.open(p).read()",
    "bz2.open": "return bz2.open(p).read()",
    "lzma.open": "return lzma.open(p).read()",
    "glob.glob": "return glob.glob(p)",
    "Path.glob": "return [str(x) for x in Path('/srv').glob(p)]",
    "pd.read_csv": "return len(pd.read_csv(p))",
    "pd.read_json": "return len(pd.read_json(p))",
    "pd.read_parquet": "return len(pd.read_parquet(p))",
    "pd.read_excel": "return len(pd.read_excel(p))",
    "np.load": "return len(np.load(p))",
    "np.loadtxt": "return len(np.loadtxt(p))",
    "json.load(open(p)) through a local helper": "return _read_json(p)",
    "shutil.copy after a fixed copy": "shutil.copy('/a', '/b')\n    shutil.copy(p, '/tmp/x')",
    "os.listdir through a local name": "full = os.path.join(BASE, p)\n    return os.listdir(full)",
    "Path(p).read_text after a fixed Path": "Path(BASE).exists()\n    return Path(p).read_text()",
}
PATH_PRELUDE = (
    "import bz2, glob, gzip, json, lzma, os, shutil\n"
    "from pathlib import Path\n\nimport numpy as np\nimport pandas as pd\n\n"
    "BASE = '/srv'\n\n\ndef _read_json(q):\n    with open(q) as f:\n        return json.load(f)\n"
)


@pytest.mark.parametrize("case", sorted(PATH_READERS))
def test_a_parameter_reaching_a_readers_path_is_the_paths_effect(case: str) -> None:
    source = f"{PATH_PRELUDE}\n\ndef reader(p: str):\n    {PATH_READERS[case]}\n"
    analysis = analyse(source, requirements=None)
    assert "SVC-R036" in verdict(analysis, "reader")[1], case


def test_a_helper_given_a_fixed_path_is_no_paths_effect() -> None:
    source = (
        f"{PATH_PRELUDE}\n\ndef reader(p: str) -> int:\n    return len(_read_json('/x')) + len(p)\n"
    )
    assert "SVC-R036" not in verdict(analyse(source), "reader")[1]


def test_the_path_table_matches_the_real_libraries() -> None:
    """Each entry names a callable that exists, and its path argument by the position and
    name the installed library's signature gives it."""
    import importlib
    import inspect

    for callee, spec in PATH_ARGUMENTS.items():
        owner, _, attribute = callee.rpartition(".")
        method = owner.endswith("()")
        module_name = owner.removesuffix("()") if method else owner
        if method:  # ``pathlib.Path().glob``: a method of the class
            module_name, _, cls = module_name.rpartition(".")
            target = getattr(getattr(importlib.import_module(module_name), cls), attribute)
        else:
            target = getattr(importlib.import_module(module_name), attribute)
        parameters = list(inspect.signature(target).parameters.values())
        if method:
            parameters = parameters[1:]  # self
        for position, name in spec:
            found = parameters[position]
            assert found.name == name.lstrip("*"), (callee, found.name)
            star = found.kind is inspect.Parameter.VAR_POSITIONAL
            assert star == name.startswith("*"), callee


# -- the property: a sliced helper answers as the whole notebook does, or is not eligible --------

# Module-level statements over a few shared names; ``{n}`` is a small integer.
STATEMENTS = (
    "A = {n}",
    "B = A + {n}",
    "L = []",
    "L.append({n})",
    "D = {{}}",
    "D['k'] = {n}",
    "def _add(v):\n    L.append(v)",
    "_add({n})",
    "def _set(v):\n    global A\n    A = v",
    "_set({n})",
    "def _put(v):\n    D['k'] = v",
    "_put({n})",
    "class _S:\n    def go(self, v):\n        global B\n        B = v",
    "_S().go({n})",
    "for _i in range({n}):\n    L.append(_i)",
    "list(map(L.append, [{n}]))",
    "M = L",
    "M.append({n})",
    "for _r in [D]:\n    _r['k'] = {n}",
    "print(A)",
    "exec('C = {n}')",
    "if __name__ == '__main__':\n    C = {n}",
    "C = B * {n}",
)
HELPERS = {
    "ha": "def ha(x: int) -> int:\n    return x + A",
    "hb": "def hb(x: int) -> int:\n    return x + B",
    "hl": "def hl(x: int) -> int:\n    return x + len(L) + sum(L)",
    "hd": "def hd(x: int) -> int:\n    return x + D.get('k', 0)",
    "hc": "def hc(x: int) -> int:\n    return x + C",
}

COMPARED: list[str] = []


def _run_as_notebook(cells: list[str]) -> dict[str, Any] | None:
    """The cells run top to bottom as a kernel runs them (``__name__`` is ``__main__``), or
    ``None`` when one raises (such a notebook is no reference)."""
    namespace: dict[str, Any] = {"__name__": "__main__"}
    try:
        for cell in cells:
            exec(compile(cell, "<cell>", "exec"), namespace)  # the test runs it, never svcc
    except Exception:  # a notebook that fails on its own is no reference
        return None
    return namespace


def _call(namespace: dict[str, Any], name: str) -> object:
    try:
        return namespace[name](3)
    except Exception as exc:  # the failure is the result compared
        return type(exc).__name__


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(STATEMENTS), st.integers(0, 4), st.sampled_from((False,) * 4 + (True,))
        ),
        max_size=9,
    ),
    st.lists(st.sampled_from(sorted(HELPERS)), min_size=1, max_size=3, unique=True),
    st.integers(0, 9),
)
def test_sliced_helpers_answer_as_the_whole_notebook(
    statements: list[tuple[str, int, bool]], helpers: list[str], where: int
) -> None:
    # the shared names bound first (most generated notebooks then run), then the statements
    cells: list[tuple[str, list[str]]] = [("A = 1\nB = 2\nL = []\nD = {}", [])]
    cells += [
        (text.format(n=n), ["skip-execution"] if skip else []) for text, n, skip in statements
    ]
    position = min(where + 1, len(cells))
    cells[position:position] = [(HELPERS[h], []) for h in helpers]
    whole = _run_as_notebook([source for source, tags in cells if not tags])
    if whole is None:
        return
    analysis = analyse(notebook(*cells), path="nb.ipynb")
    served: dict[str, Any] | None = None
    for name in helpers:
        if verdict(analysis, name)[0] != "eligible":
            continue
        if served is None:
            served = run(analysis.module_text)
        assert _call(served, name) == _call(whole, name), (name, analysis.module_text)
        COMPARED.append(name)


# -- item 10a: a package's module importing a sibling by its bare name ---------------------------


def _package(root: Path, import_line: str) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "config.py").write_text("SCALE = 3\n")
    (root / "pkg" / "tools.py").write_text(
        f"{import_line}\n\n\ndef scaled(x: int) -> int:\n    return x * config.SCALE\n"
    )
    # a declared distribution whose import name is not known: the bare name was attributed
    # to it (a warning) and the function called eligible
    (root / "requirements.txt").write_text("acme-tools\n")
    return root


def test_a_bare_sibling_import_in_a_package_is_refused_with_its_fix(tmp_path: Path) -> None:
    source = _package(tmp_path / "bare", "import config")
    proc = run_svcc("inspect", str(source), "--requirements", str(source / "requirements.txt"))
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)["files"]["pkg/tools.py"]["assessments"][0]
    assert found["class"] != "eligible"
    reason = next(r for r in found["reasons"] if r["code"] == "SVC-R021")
    assert "sibling module 'pkg.config'" in reason["message"]
    assert "from . import config" in reason["message"]
    assert "SVC-R040" not in [r["code"] for r in found["reasons"]]


def test_the_fixed_sibling_import_is_served(tmp_path: Path) -> None:
    """The fix the message names gives an eligible function whose bundle starts and answers
    (the bundle imports ``pkg.tools`` with ``source/`` on its path)."""
    source = _package(tmp_path / "fixed", "from . import config")
    out = tmp_path / "out"
    proc = run_svcc("compile", str(source), "--target", "rest", "--output-dir", str(out))
    assert proc.returncode == 0, proc.stderr
    with serving(out) as server, server.client() as client:
        response = client.post("/capabilities/pkg.tools.scaled", json={"x": 2})
        assert response.json() == 6


# -- issue 37 item 10: --select narrows a notebook's slice ---------------------------------------

SELECTED_CELLS = (
    "import json",
    "rows = json.load(open('prices.json'))",
    "def average() -> float:\n    return sum(r['price'] for r in rows) / len(rows)",
    "def double(x: int) -> int:\n    return x * 2",
)


def test_select_keeps_only_what_the_selected_helpers_read(tmp_path: Path) -> None:
    source = tmp_path / "prices.ipynb"
    source.write_bytes(notebook(*SELECTED_CELLS))
    # without a selection, the DataFrame-like load one helper reads blocks the other
    whole = analyse(source.read_bytes(), path="prices.ipynb")
    assert verdict(whole, "double")[0] == "conditional"
    narrowed = analyse(source.read_bytes(), path="prices.ipynb", select=["prices.double"])
    assert verdict(narrowed, "double") == ("eligible", [])
    assert "prices.json" not in narrowed.module_text
    out = tmp_path / "out"
    proc = run_svcc(
        "compile", str(source), "--target", "rest", "--output-dir", str(out), "--select", "double"
    )
    assert proc.returncode == 0, proc.stderr
    with serving(out) as server, server.client() as client:
        assert client.post("/capabilities/double", json={"x": 4}).json() == 8


def test_an_unknown_selected_name_leaves_the_slice_whole() -> None:
    analysis = analyse(notebook(*SELECTED_CELLS), path="nb.ipynb", select=["nope"])
    assert "prices.json" in analysis.module_text


@pytest.mark.parametrize(
    "cells",
    [
        ("L = []", "M = L", "M.append(5)", "def hl(x: int) -> int:\n    return x + sum(L)"),
        (
            "rows = [{'x': 1}, {'x': 2}]",
            "for row in rows:\n    row['x'] = 10",
            "def hl(x: int) -> int:\n    return x + sum(r['x'] for r in rows)",
        ),
        (
            "D = {'k': []}",
            "inner = D['k']\ninner.append(4)",
            "def hl(x: int) -> int:\n    return x + sum(D['k'])",
        ),
    ],
)
def test_a_change_through_another_name_for_the_object_is_kept(cells: tuple[str, ...]) -> None:
    same_or_refused(cells, "hl", 1)
    analysis = analyse(notebook(*cells), path="nb.ipynb")
    assert run(analysis.module_text)["hl"](1) == run("\n".join(cells))["hl"](1)
