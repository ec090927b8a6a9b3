"""A notebook reads its data through a path relative to its folder (``open("prices.json")``,
as a kernel started there does): declared with ``--data``, the read is recognised and the
served bundle finds the file (a direct server's working directory is ``source/``);
``--select`` keeps a helper that reads nothing of it eligible without the file."""

import json
from pathlib import Path

from servers import generate, serving
from svcc.compiler.driver import analyze_file

CELLS = [
    "import json",
    'rows = json.load(open("prices.json"))  # read at import, relative to the notebook',
    "def average() -> float:\n    return sum(r['price'] for r in rows) / len(rows)",
    "def count(kind: str) -> int:\n"
    "    with open('data/kinds.json') as handle:  # read on every call\n"
    "        return json.load(handle).get(kind, 0)",
    "def double(x: int) -> int:\n    return x * 2",
]


def _notebook(folder: Path) -> Path:
    cells = [
        {
            "cell_type": "code",
            "metadata": {},
            "source": text,
            "outputs": [],
            "execution_count": None,
        }
        for text in CELLS
    ]
    document = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (folder / "prices.json").write_text('[{"price": 1}, {"price": 3}]')
    (folder / "data").mkdir()
    (folder / "data" / "kinds.json").write_text('{"pear": 4}')
    path = folder / "shop.ipynb"
    path.write_text(json.dumps(document))
    return path


def _classes(path: Path, **options: object) -> dict[str, str]:
    analysis = analyze_file(path, python_version=(3, 12), **options)  # type: ignore[arg-type]
    assert analysis.readiness is not None
    return {a.name: a.klass for a in analysis.readiness.assessments}


def test_relative_reads_are_declared_with_data_and_served(tmp_path: Path) -> None:
    notebook = _notebook(tmp_path)
    assert _classes(notebook) == dict.fromkeys(("average", "count", "double"), "conditional")
    data = [str(tmp_path / "prices.json"), str(tmp_path / "data" / "kinds.json")]
    assert _classes(notebook, data=data) == dict.fromkeys(
        ("average", "count", "double"), "eligible"
    )
    declared = [arg for path in data for arg in ("--data", path)]
    bundle = tmp_path / "rest"
    generate(notebook, bundle, *declared)
    assert (bundle / "source" / "data" / "kinds.json").is_file()
    with serving(bundle) as server, server.client() as client:  # started in the bundle's root
        answers = {
            "average": client.post("/capabilities/average", json={}),
            "count": client.post("/capabilities/count", json={"kind": "pear"}),
            "double": client.post("/capabilities/double", json={"x": 2}),
        }
        assert {k: r.json() for k, r in answers.items()} == {
            "average": 2.0,
            "count": 4,
            "double": 4,
        }, server.log_text()


def test_select_narrows_the_slice_to_what_the_helper_reads(tmp_path: Path) -> None:
    notebook = _notebook(tmp_path)
    assert _classes(notebook, select=["double"]) == {"double": "eligible"}
