"""Notebooks as data scientists write them: cells selected by their tags and nbdev
directives, the module sliced to what the served functions read, names derived from file
names, cells run out of order flagged; and the example notebook served end to end (REST
under uvicorn, MCP through the official client), its loading, plotting and training cells
never run by the server."""

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from helpers import ROOT, run_svcc
from mcp_client import McpBundle
from servers import generate, serving
from svcc.compiler.driver import analyze_file, analyze_source
from svcc.frontends.module_names import derive_module_name
from svcc.frontends.notebook._select import directives

EXAMPLE = ROOT / "examples" / "notebook" / "Weather Trends.ipynb"
HELPERS = ["to_fahrenheit", "zscores", "frost_risk", "fit_line", "predict"]
# What the exploration cells would leave behind if they ran in the server's directory.
EXPLORATION_OUTPUTS = ("model.json", "temperature.png")


def notebook(
    *cells: str | tuple[str, dict[str, Any]], metadata: dict[str, Any] | None = None
) -> bytes:
    nb = nbformat.v4.new_notebook()
    nb.metadata.update(metadata or {})
    for number, cell in enumerate(cells, start=1):
        source, extra = cell if isinstance(cell, tuple) else (cell, {})
        new = nbformat.v4.new_code_cell(source)
        new.id = f"cell-{number}"  # nbformat draws random ids: the bytes stay the same
        new.metadata.update(extra.get("metadata", {}))
        new.execution_count = extra.get("count")
        nb.cells.append(new)
    return nbformat.writes(nb).encode()


def analyse(data: bytes, path: str = "nb.ipynb") -> Any:
    analysis = analyze_source(data, path=path, module="nb", python_version="3.11")
    assert analysis.error is None, analysis.error
    return analysis


def codes(analysis: Any) -> list[tuple[str, int | None, int | None]]:
    return [
        (d.code, d.span.cell if d.span else None, d.span.line if d.span else None)
        for d in analysis.diagnostics
    ]


def kept_lines(analysis: Any) -> list[str]:
    return [ln for ln in analysis.module_text.splitlines() if not ln.startswith("# %% [cell")]


# -- names from file names ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stem", "derived"),
    [
        ("Gradient Descent", "gradient_descent"),
        ("01 - Intro (draft)", "m_01_intro_draft"),
        ("my-helpers", "my_helpers"),
        ("class", "class_"),
        ("Données Été", "données_été"),
        ("tools", "tools"),
        ("CamelCase", "CamelCase"),
        ("---", ""),
    ],
)
def test_module_name_derived_from_a_stem(stem: str, derived: str) -> None:
    assert derive_module_name(stem) == derived


def test_name_with_spaces_is_derived_and_reported(tmp_path: Path, snapshot: Any) -> None:
    path = tmp_path / "Gradient Descent.ipynb"
    path.write_bytes(
        notebook(
            "import math",
            "def step(x: float, rate: float = 0.1) -> float:\n    return x - rate * 2 * x",
            "for _ in range(3):\n    print(step(1.0))",
        )
    )
    analysis = analyze_file(path, python_version="3.11")
    assert analysis.module == "gradient_descent"
    assert [c.id for c in analysis.ir.capabilities] == ["python:gradient_descent:step"]
    assert ("SVC-F013", None, None) in codes(analysis)
    # the golden documents of a notebook named as people name them
    assert json.loads(analysis.ir_json) == snapshot(name="capability-ir")
    assert analysis.document() == snapshot(name="readiness")
    text = run_svcc("inspect", str(path), "--format", "text")
    assert text.returncode == 0, text.stderr
    assert "(module gradient_descent)" in text.stdout
    assert "SVC-F013" in text.stdout
    out = tmp_path / "bundle"
    result = generate(path, out)
    assert result["module"] == "gradient_descent"
    assert (out / "source" / "gradient_descent.py").is_file()
    assert (out / "original" / "Gradient Descent.ipynb").read_bytes() == path.read_bytes()
    # --module-name still overrides, without the note
    named = analyze_file(path, module_name="gd", python_version="3.11")
    assert named.module == "gd"
    assert "SVC-F013" not in [d.code for d in named.diagnostics]


def test_python_file_name_is_derived_too(tmp_path: Path) -> None:
    path = tmp_path / "my helpers.py"
    path.write_text("def double(x: int) -> int:\n    return 2 * x\n")
    out = tmp_path / "bundle"
    assert generate(path, out)["capabilities"] == ["python:my_helpers:double"]
    assert (out / "source" / "my_helpers.py").read_bytes() == path.read_bytes()


def test_derived_name_clashing_with_a_reserved_one_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "App!.py"
    path.write_text("def double(x: int) -> int:\n    return 2 * x\n")
    proc = run_svcc("generate", "rest", str(path), "--output-dir", str(tmp_path / "o"))
    assert proc.returncode == 2
    assert "clashes" in proc.stderr
    assert "'app'" in proc.stderr
    assert not (tmp_path / "o").exists()


# -- cell selection -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("#| export", {"export": ""}),
        ("#|exporti", {"exporti": ""}),
        ("# | default_exp core", {"default_exp": "core"}),
        ("#export", {"export": ""}),
        ("# exports", {"exports": ""}),
        ("# export the table to CSV", {}),  # a comment, not an nbdev 1 directive
        ("#| eval: false  # why", {"eval": "false"}),
    ],
)
def test_directives(line: str, found: dict[str, str]) -> None:
    assert directives(f"{line}\nx = 1") == found


def test_nbdev_1_exports_select_the_cells() -> None:
    analysis = analyse(
        notebook(
            "#default_exp core",
            "#export\ndef half(x: float) -> float:\n    return x / 2",
            "half(3)\nraise SystemExit",
        )
    )
    assert kept_lines(analysis) == ["#export", "def half(x: float) -> float:", "    return x / 2"]
    assert [c for c, _, _ in codes(analysis)] == ["SVC-F012", "SVC-F012"]


def test_a_cell_whose_input_alone_is_hidden_still_runs() -> None:
    analysis = analyse(
        notebook(
            ("LIMIT = 3", {"metadata": {"tags": ["remove-input"]}}),
            "def capped(x: int) -> int:\n    return min(x, LIMIT)",
        )
    )
    assert "LIMIT = 3" in analysis.module_text
    assert analysis.readiness.assessment("capped").klass == "eligible"


def test_execution_order_warning_names_the_cells() -> None:
    analysis = analyse(
        notebook(("A = 1", {"count": 2}), ("B = A", {"count": 1}), ("C = B", {"count": None}))
    )
    (warning,) = [d for d in analysis.diagnostics if d.code == "SVC-F014"]
    assert warning.severity == "warning"
    assert "cell 2 (In [1]) is below cell 1 (In [2])" in warning.message


# -- slicing ------------------------------------------------------------------------------------


def test_slice_keeps_what_functions_read_transitively() -> None:
    analysis = analyse(
        notebook(
            "import re\nimport json",
            "BASE = 'a-z'\nPATTERN = '[' + BASE + ']+'\nunused = json.dumps({})",
            "def words(text: str) -> list[str]:\n    return re.findall(PATTERN, text)",
            "words('hi there')\nprint(unused)",
        )
    )
    assert kept_lines(analysis) == [
        "import re",
        "BASE = 'a-z'",
        "PATTERN = '[' + BASE + ']+'",
        "def words(text: str) -> list[str]:",
        "    return re.findall(PATTERN, text)",
    ]
    left = [(cell, line) for code, cell, line in codes(analysis) if code == "SVC-F012"]
    assert left == [(None, None), (1, 2), (2, 3), (4, 1), (4, 2)]
    summary = analysis.diagnostics[0].message
    assert summary.startswith("the slice keeps 4 of 8 top-level statements (cells 1, 2, 3)")


def test_slice_keeps_statements_that_change_what_functions_read() -> None:
    analysis = analyse(
        notebook(
            "STOP = {'a'}\nSTOP.add('the')\nSTOP.copy()",
            "table = {}\ntable['x'] = 1\nlen(table)",
            "def fill(d):\n    d['y'] = 2\nfill(table)",
            "def known(word: str) -> bool:\n    return word in STOP and word in table",
            "other = []\nother.append(1)",
        )
    )
    kept = kept_lines(analysis)
    for line in ("STOP.add('the')", "table['x'] = 1", "fill(table)"):
        assert line in kept
    for line in ("STOP.copy()", "len(table)", "other = []", "other.append(1)"):
        assert line not in kept


def test_shared_state_is_never_dropped() -> None:
    analysis = analyse(
        notebook(
            "import os\nimport sys\nimport pandas as pd\nimport numpy as np",
            "os.environ['MODE'] = 'x'\nsys.path.insert(0, '..')\nos.chdir('/tmp')",
            "np.random.seed(1)\nnp.mean([1, 2])",
            "def one() -> int:\n    return 1",
        )
    )
    kept = kept_lines(analysis)
    for line in ("os.environ['MODE'] = 'x'", "sys.path.insert(0, '..')", "os.chdir('/tmp')"):
        assert line in kept
    assert "np.random.seed(1)" in kept
    assert "np.mean([1, 2])" not in kept
    # kept, then judged: the readiness rules see the statements the served module runs
    assert analysis.readiness.assessment("one").klass == "conditional"


def test_display_settings_follow_the_library_they_set() -> None:
    cells = (
        "import pandas as pd\nimport matplotlib.pyplot as plt",
        "pd.options.display.max_rows = 5\npd.set_option('display.width', 80)\n"
        "plt.style.use('ggplot')",
    )
    text_only = analyse(notebook(*cells, "def one() -> int:\n    return 1"))
    assert kept_lines(text_only) == ["def one() -> int:", "    return 1"]
    notes = [d.message for d in text_only.diagnostics if d.code == "SVC-F012"]
    assert sum("changes pandas display settings" in m for m in notes) == 2
    assert sum("changes matplotlib display settings" in m for m in notes) == 1
    plotting = analyse(
        notebook(*cells, "def table(n: int) -> str:\n    return str(pd.DataFrame({'a': [n]}))")
    )
    kept = kept_lines(plotting)
    assert "pd.set_option('display.width', 80)" in kept
    assert "pd.options.display.max_rows = 5" in kept
    assert "plt.style.use('ggplot')" not in kept


def test_a_function_reading_a_trained_model_keeps_the_training() -> None:
    analysis = analyse(
        notebook(
            "class Model:\n    def fit(self, xs: list[float]) -> None:\n        self.m = max(xs)",
            "model = Model()\nxs = [1.0, 2.0]\nmodel.fit(xs)\nprint(model.m)",
            "def score(x: float) -> float:\n    return x / model.m",
        )
    )
    kept = kept_lines(analysis)
    assert "model.fit(xs)" in kept
    assert "xs = [1.0, 2.0]" in kept
    assert "print(model.m)" not in kept


def test_future_imports_move_to_the_top(tmp_path: Path) -> None:
    """Jupyter compiles cells one by one, so `from __future__` may open a later cell; the
    served module must start with it or it does not import."""
    path = tmp_path / "future.ipynb"
    path.write_bytes(
        notebook(
            "import math",
            "from __future__ import annotations\n\ndef root(x: float) -> float:\n"
            "    return math.sqrt(x)",
        )
    )
    analysis = analyze_file(path, python_version="3.11")
    assert analysis.module_text.startswith(
        "# %% [cell 2]\nfrom __future__ import annotations\n# %% [cell 1]\nimport math\n"
    )
    compile(analysis.module_text, "future.py", "exec")  # what the server's import does
    out = tmp_path / "bundle"
    generate(path, out)
    with serving(out) as server, server.client() as client:
        assert client.post("/capabilities/root", json={"x": 9}).json() == 3.0


def test_notebook_metadata_opts_out_of_slicing() -> None:
    data = notebook(
        "print('exploring')", "def one() -> int:\n    return 1", metadata={"svcc": {"slice": False}}
    )
    analysis = analyse(data)
    assert "print('exploring')" in analysis.module_text
    assert "SVC-F012" not in [d.code for d in analysis.diagnostics]


def test_a_cell_that_does_not_parse_is_reported_as_before() -> None:
    analysis = analyze_source(
        notebook("def f(:\n    pass"), path="nb.ipynb", module="nb", python_version="3.11"
    )
    assert analysis.error is not None
    assert analysis.error.code == "SVC-F001"


# -- the analysis service sees what the CLI serves ---------------------------------------------


def test_service_analysis_and_processing_use_the_slice() -> None:
    from svcc.service.analysis import analyse_upload, process_upload

    data = EXAMPLE.read_bytes()
    document = json.loads(
        analyse_upload(
            data, "Weather Trends.ipynb", python_version="3.11", encoding=None, only=None, ignore=[]
        )
    )
    assert sorted(f["name"] for f in document["functions"]) == sorted(HELPERS)
    assert document["module"] == "weather_trends"
    assert document["readiness"]["summary"]["eligible"] == len(HELPERS)
    cli = analyze_file(EXAMPLE, python_version="3.11")
    processed = process_upload(data, "Weather Trends.ipynb", notebook=True)
    assert processed.split("\n", 1)[1] == cli.module_text
    assert "plt.savefig" not in processed
    assert "left out" in processed.split("\n", 1)[0]


# -- the example notebook served end to end -------------------------------------------------------


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the example folder (its CSV beside the notebook, as in Jupyter)."""
    folder = tmp_path_factory.mktemp("weather") / "notebook"
    shutil.copytree(EXAMPLE.parent, folder)
    return folder / EXAMPLE.name


def _no_exploration_outputs(bundle: Path) -> None:
    for name in EXPLORATION_OUTPUTS:
        assert not (bundle / name).exists(), f"{name}: an exploration cell ran in the server"
        assert not (ROOT / name).exists()


@pytest.fixture(scope="module")
def rest_bundle(example: Path) -> Path:
    out = example.parent.parent / "weather-rest"
    result = generate(example, out)
    assert result["capabilities"] == [f"python:weather_trends:{n}" for n in HELPERS]
    manifest = json.loads((out / "svc-rest.json").read_text())
    assert manifest["source"]["cells_kept"] == [2, 8, 9]
    # the bundle's CSV is absent: the loading cell would fail at startup if it ran
    assert not (out / "readings.csv").exists()
    return out


def test_example_served_over_rest(rest_bundle: Path) -> None:
    with serving(rest_bundle) as server, server.client() as client:

        def call(name: str, body: dict[str, Any]) -> Any:
            response = client.post(f"/capabilities/{name}", json=body)
            assert response.status_code == 200, response.text
            return response.json()

        assert call("to_fahrenheit", {"celsius": 100}) == 212
        assert call("zscores", {"values": [1, 2, 3]})[1] == 0
        assert call("frost_risk", {"celsius": 0.5, "humidity": 0.9}) is True
        assert call("fit_line", {"xs": [0, 1, 2], "ys": [1, 3, 5]}) == {
            "slope": 2.0,
            "intercept": 1.0,
        }
        assert call("predict", {"x": 3, "slope": 2, "intercept": 1}) == 7
        bad = client.post("/capabilities/fit_line", json={"xs": "not a list", "ys": [1]})
        assert bad.status_code == 422, bad.text
    _no_exploration_outputs(rest_bundle)


@pytest.fixture(scope="module")
def mcp_bundle(example: Path) -> Iterator[McpBundle]:
    out = example.parent.parent / "weather-mcp"
    generate(example, out, interface="mcp")
    client = McpBundle(out)
    yield client
    client.close()


def test_example_served_over_mcp(mcp_bundle: McpBundle) -> None:
    tools = sorted(t.name for t in mcp_bundle.list_tools().tools)
    assert tools == sorted(HELPERS)
    result = mcp_bundle.call("to_fahrenheit", {"celsius": -40})
    assert not result.is_error, result.content
    assert result.structured_content == {"result": -40}
    result = mcp_bundle.call("predict", {"x": 1, "slope": 0.5, "intercept": 1})
    assert result.structured_content == {"result": 1.5}
    _no_exploration_outputs(mcp_bundle.bundle)


def test_whole_notebook_would_not_be_servable(example: Path, tmp_path: Path) -> None:
    """Without the slice (the notebook's own opt-out), the loading cell runs at import:
    nothing is eligible, which is what the slice changes."""
    nb = json.loads(example.read_text())
    nb["metadata"]["svcc"] = {"slice": False}
    whole = tmp_path / "whole.ipynb"
    whole.write_text(json.dumps(nb))
    analysis = analyze_file(whole, python_version="3.11")
    assert {a.klass for a in analysis.readiness.assessments} == {"conditional"}


def test_slice_with_a_declared_data_file_is_served(tmp_path: Path) -> None:
    """The golden case notebook_slice_data: the slice keeps a constant and a load of a file
    declared with --data; the bundle carries the file and the helper answers from it."""
    case = ROOT / "tests" / "golden" / "notebook_slice_data"
    for name in ("input.ipynb", "prices.json"):
        shutil.copy(case / name, tmp_path / name)
    refused = run_svcc("inspect", str(tmp_path / "input.ipynb"), "--format", "json")
    reasons = json.loads(refused.stdout)["assessments"][0]["reasons"]
    assert [r["code"] for r in reasons] == ["SVC-R026"]
    generate(tmp_path / "input.ipynb", tmp_path / "b", "--data", str(tmp_path / "prices.json"))
    assert (tmp_path / "b" / "source" / "prices.json").read_bytes() == (
        case / "prices.json"
    ).read_bytes()
    with serving(tmp_path / "b") as server, server.client() as client:
        response = client.post("/capabilities/gross", json={"item": "apple"})
        assert response.status_code == 200, server.log_text()
        assert response.json() == 0.6
