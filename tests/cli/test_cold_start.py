"""A cold ``svcc inspect FILE`` loads only what reading one file and writing its report needs.

Start-up is most of the command's time for a small file (``bench/bench_frontend.py
--small-only``), so what it imports is checked here, where a change that widens it fails a
test instead of a benchmark nobody re-ran: no library or svcc package that only another
command uses (generating bundles, serving, clients, images, plug-ins, the language server,
notebooks and repositories), and every record class on the way built from its generated
methods (``svcc.ir.records``) rather than compiled by attrs at start: neither report imports
attrs (its import is a tenth of the command).
"""

import json
import subprocess
import sys

import pytest
from helpers import ROOT

# What ``inspect FILE`` never needs; each is imported by some other command.
NOT_NEEDED = (
    "attrs",
    "attr",
    "cattrs",
    "jinja2",
    "httpx",
    "jsonschema",
    "yaml",
    "lark",
    "nbformat",
    "pydantic",
    "falcon",
    "gunicorn",
    "packaging",
    "docstring_parser",
    "concurrent.futures",
    "multiprocessing",
    "subprocess",
    "shutil",
    "tempfile",
    "importlib.metadata",
    "email",
    "http",
    "zipfile",
    "tarfile",
    "dataclasses",
    "hashlib",  # OpenSSL: a small file's digests are the interpreter's own (svcc.ir.canonical)
    "svcc.backends",
    "svcc.images",
    "svcc.clients",
    "svcc.service",
    "svcc.runtime",
    "svcc.lsp",
    "svcc.plugins",
    "svcc.compiler.bundles",
    "svcc.compiler.registry",
    "svcc.compiler.pipeline",
    "svcc.compiler.writer",
    "svcc.compiler.passes.select",
    "svcc.frontends.notebook",
    "svcc.frontends.repository",
    "svcc.frontends.cog",
    "svcc.contracts.target",
    "svcc.contracts.requirements",
    "svcc.cli.sarif",
    "svcc.cli.serve",
    "svcc.cli.help",
)

RUN = """
import json, os, sys
out = sys.stdout
sys.stdout = open(os.devnull, "w")
from svcc.cli.main import main
code = main(["inspect", {path!r}, "--format", {fmt!r}])
sys.stdout = out
from svcc.ir import records
print(json.dumps({{
    "code": code,
    "loaded": [m for m in {names!r} if any(k == m or k.startswith(m + ".") for k in sys.modules)],
    "compiled": sorted(k for k, generated in records.GENERATED.items() if not generated),
    "records": len(records.GENERATED),
}}))
"""


def _inspect(fmt: str, names: tuple[str, ...] = NOT_NEEDED) -> dict[str, object]:
    code = RUN.format(path=str(ROOT / "examples" / "shapes.py"), fmt=fmt, names=names)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_inspect_of_a_file_loads_nothing_it_does_not_use(fmt: str) -> None:
    result = _inspect(fmt)
    assert result["code"] == 0
    assert result["loaded"] == []
    assert result["compiled"] == []  # every record got its generated methods
    assert isinstance(result["records"], int)
    assert result["records"] >= 60


def test_the_check_can_fail() -> None:
    """The same probe sees what the command does load."""
    result = _inspect("json", ("svcc.ir.model", "svcc.frontends.python", "json"))
    assert result["loaded"] == ["svcc.ir.model", "svcc.frontends.python", "json"]
