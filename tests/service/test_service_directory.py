"""``/analyse_directory/`` on the repository front end (issue 11 item 7), end to end:
``svcc serve-analysis`` under gunicorn on loopback, its answer compared with what
``svcc inspect DIR --format json`` says of the same tree.

Before, the service analysed each file alone: a capability that imports a module with
import-time effects was eligible in the service and conditional in ``inspect DIR``."""

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import run_svcc
from servers import running_service

FILES = {
    # a flat tree: b imports its sibling a
    "flat/a.py": "def helper(x: int) -> int:\n    return x + 1\n",
    "flat/b.py": ("from a import helper\n\n\ndef use(x: int) -> int:\n    return helper(x) * 2\n"),
    # a package: relative imports, and a module with import-time I/O imported by a clean one
    "shop/src/shop/__init__.py": "",
    "shop/src/shop/tax.py": "RATE = 0.2\n\n\ndef rate() -> float:\n    return RATE\n",
    "shop/src/shop/pricing.py": (
        "from .tax import rate\n\n\ndef total(price: float) -> float:\n"
        "    return price * (1 + rate())\n"
    ),
    "shop/src/shop/config.py": (
        '"""Settings."""\n\nSETTINGS = open("/etc/hostname").read()\n\n\n'
        "def setting() -> str:\n    return SETTINGS\n"
    ),
    "shop/src/shop/report.py": (
        "from shop import config\n\n\ndef summary(n: int) -> str:\n    return str(n)\n"
    ),
    "shop/src/shop/labels.py": (
        "from .pricing import total\n\n\ndef label(price: float) -> str:\n"
        "    return f'{total(price):.2f}'\n"
    ),
    # outside the source root (src/): analysed alone, as `svcc inspect FILE` would
    "shop/scripts/tool.py": "def main() -> int:\n    return 0\n",
    # a project folder whose name is not a Python name: a source root of its own
    "mono/ml-serving/serve.py": "def double(x: int) -> int:\n    return 2 * x\n",
    # a model imported from a sibling module has its shape (frontends.sibling_models)
    "models/shapes.py": "import enum\n\n\nclass Size(enum.Enum):\n    S = 's'\n",
    "models/use.py": (
        "from shapes import Size\n\n\ndef pick(size: Size) -> Size:\n    return size\n"
    ),
}
ML = Path(__file__).resolve().parents[1] / "fixtures" / "repos" / "ml"
NOTEBOOK = {
    "nbformat": 4,
    "nbformat_minor": 5,
    "metadata": {},
    "cells": [
        {
            "cell_type": "code",
            "id": "c1",
            "metadata": {},
            "execution_count": None,
            "outputs": [],
            "source": "def double(x: int) -> int:\n    return 2 * x\n",
        }
    ],
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("directory") / "ws"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "flat" / "notes.ipynb").write_text(json.dumps(NOTEBOOK))
    shutil.copytree(ML, root / "ml")  # [tool.svcc] data-files: a model read at import
    return root


@pytest.fixture(scope="module")
def http(workspace: Path) -> Iterator[httpx.Client]:
    with running_service(workspace) as (url, _), httpx.Client(base_url=url, timeout=120) as client:
        yield client


def analyse(http: httpx.Client, directory: str, **fields: str) -> dict[str, Any]:
    response = http.post("/analyse_directory/", data={"directory_path": directory, **fields})
    assert response.status_code == 200, response.text[:500]
    result: dict[str, Any] = response.json()
    return result


def inspect(workspace: Path, directory: str, *options: str) -> dict[str, Any]:
    proc = run_svcc("inspect", str(workspace / directory), "--format", "json", *options)
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def readiness(assessments: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        a["name"]: (a["class"], [(r["code"], r["message"]) for r in a["reasons"]])
        for a in assessments
    }


@pytest.mark.parametrize("directory", ["flat", "shop", "ml", "mono", "models"])
def test_service_agrees_with_inspect_dir(
    http: httpx.Client, workspace: Path, directory: str
) -> None:
    """Every function's readiness (class and reasons) is what ``inspect DIR`` says."""
    answer = analyse(http, directory, python_version="3.10")
    doc = inspect(workspace, directory, "--python-version", "3.10")
    assert set(doc["files"]) <= {key.removeprefix(f"{directory}/") for key in answer}
    for path, document in doc["files"].items():
        served = answer[f"{directory}/{path}"]
        assert served["readiness"]["assessments"] == document["assessments"], path
        assert served["readiness"]["ir_digest"] == document["ir_digest"], path
        assert served["module"] == document["module"], path


def test_imports_between_files_resolve(http: httpx.Client) -> None:
    answer = analyse(http, "flat")
    assert set(answer) == {"flat/a.py", "flat/b.py", "flat/notes.ipynb"}
    b = answer["flat/b.py"]
    assert b["imports_from"] == [{"module": "a", "names": ["helper"]}]
    assert readiness(b["readiness"]["assessments"]) == {"use": ("eligible", [])}
    notebook = answer["flat/notes.ipynb"]  # notebooks keep the notebook front end
    assert notebook["readiness"]["source"]["format"] == "notebook"
    assert [f["name"] for f in notebook["functions"]] == ["double"]


def test_import_time_effects_reach_the_importers(http: httpx.Client) -> None:
    answer = analyse(http, "shop")
    assert set(answer) == {
        f"shop/{p.removeprefix('shop/')}" for p in FILES if p.startswith("shop/")
    }
    pricing = answer["shop/src/shop/pricing.py"]
    assert pricing["module"] == "shop.pricing"
    assert pricing["imports_from"] == [{"module": ".tax", "names": ["rate"]}]
    assert readiness(pricing["readiness"]["assessments"]) == {"total": ("eligible", [])}
    assert readiness(answer["shop/src/shop/labels.py"]["readiness"]["assessments"]) == {
        "label": ("eligible", [])
    }
    ((klass, reasons),) = readiness(
        answer["shop/src/shop/report.py"]["readiness"]["assessments"]
    ).values()
    assert klass == "conditional"
    ((code, message),) = reasons
    assert code == "SVC-R024"
    assert "shop.config" in message
    assert "src/shop/config.py:3:" in message
    assert (
        answer["shop/src/shop/report.py"]["capabilities"][0]["id"] == "python:shop.report:summary"
    )
    tool = answer["shop/scripts/tool.py"]  # outside the source root: analysed alone
    assert [f["name"] for f in tool["functions"]] == ["main"]


def test_selection_applies_to_every_file(http: httpx.Client) -> None:
    answer = analyse(http, "shop", functions_to_analyze="total,summary", ignore="summary")
    pricing = answer["shop/src/shop/pricing.py"]
    assert [a["name"] for a in pricing["readiness"]["assessments"]] == ["total"]
    report = answer["shop/src/shop/report.py"]
    assert report["readiness"]["assessments"] == []
    assert [f["selected"] for f in report["functions"]] == [False]


def test_a_name_no_file_defines_is_a_400(http: httpx.Client) -> None:
    """As for one file (the README's rule): it answered 200 with every function unselected."""
    response = http.post(
        "/analyse_directory/", data={"directory_path": "shop", "functions_to_analyze": "total,nope"}
    )
    assert response.status_code == 400, response.text[:300]
    description = "unknown function 'nope': no file analysed below defines it"
    assert response.json()["description"] == description


def test_a_broken_module_costs_its_entry_and_its_importers_say_why(
    http: httpx.Client, workspace: Path
) -> None:
    (workspace / "broken").mkdir()
    (workspace / "broken" / "bad.py").write_text("def f(:\n")
    (workspace / "broken" / "user.py").write_text(
        "import bad\n\n\ndef g(x: int) -> int:\n    return x\n"
    )
    answer = analyse(http, "broken")
    assert answer["broken/bad.py"]["error"]["code"] == "SVC-F001"
    ((klass, reasons),) = readiness(answer["broken/user.py"]["readiness"]["assessments"]).values()
    assert klass == "conditional"
    assert "bad.py:1:" in reasons[0][1]


def test_tree_refusals_are_400(http: httpx.Client, workspace: Path) -> None:
    (workspace / "badproject").mkdir()
    (workspace / "badproject" / "pyproject.toml").write_text("[project\n")
    (workspace / "badproject" / "m.py").write_text("X = 1\n")
    response = http.post("/analyse_directory/", data={"directory_path": "badproject"})
    assert response.status_code == 400, response.text
    assert "pyproject.toml is not valid TOML" in response.json()["description"]
    (workspace / "badproject" / "pyproject.toml").write_text(
        '[tool.svcc]\ndata-files = ["models/*.joblib"]\n'
    )
    response = http.post("/analyse_directory/", data={"directory_path": "badproject"})
    assert response.status_code == 400, response.text
    assert "'models/*.joblib' matches no file" in response.json()["description"]
    assert str(workspace) not in response.text


def test_folders_inspect_dir_skips_are_skipped(http: httpx.Client, workspace: Path) -> None:
    """Build output, virtual environments and tool folders hold no module of the project:
    the service listed (and analysed one by one) every ``.py`` and notebook in them, which
    ``inspect DIR`` skips, and counted them against ``--max-directory-files``."""
    tree = workspace / "skips"
    for folder in ("pkg", "build/lib", "venv/lib", "site-packages", "x.egg-info", "dist"):
        (tree / folder).mkdir(parents=True)
        (tree / folder / "m.py").write_text("def f(x: int) -> int:\n    return x\n")
        (tree / folder / "n.ipynb").write_text(json.dumps(NOTEBOOK))
    answer = analyse(http, "skips")
    assert set(answer) == {"skips/pkg/m.py", "skips/pkg/n.ipynb"}
    assert {f"skips/{p}" for p in inspect(workspace, "skips")["files"]} == set(answer)
