"""A bundled module whose name the server has already taken is refused at compile time.

The server imports its glue, its runtime, the packages it runs on and much of the standard
library before the bundled source; a bundled module of one of those names could never be
imported (``import queue`` finds the server's). Such a bundle compiled, then never started
(``queue.py``, ``calendar.py``, ``email.py``, ``click.py``: "capability 'f' is missing") or
answered 500 to every call (``shop.py`` importing a local ``secrets.py``). Now ``SVC-F015``
refuses it when compiling for the target, and the reserved names are those the real
servers import (measured here under uvicorn and the MCP streamable HTTP server).
"""

import contextlib
import io
import json
from pathlib import Path

import httpx
import pytest
from servers import generate, serving, serving_mcp_http
from svcc.backends.mcp import BUNDLE as MCP_BUNDLE
from svcc.backends.rest import BUNDLE as REST_BUNDLE
from svcc.cli.main import main

FUNCTION = "def f(x: int) -> int:\n    return x + 1\n"
PROBE = '''import sys


def loaded() -> list[str]:
    """Top-level modules of installed packages this process has imported."""
    tops = set()
    for name, module in list(sys.modules.items()):
        if "-packages" in (getattr(module, "__file__", None) or ""):
            tops.add(name.split(".", 1)[0])
    return sorted(tops)
'''
# a venv's own start-up hooks (.pth files), not the server's
NOT_THE_SERVERS = ("__", "_distutils_hack")


def compile_(source: Path, interface: str, out: Path) -> tuple[int, str]:
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    stderr = io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["generate", interface, str(source), "--output-dir", str(out)])
    return code, stderr.getvalue()


@pytest.mark.parametrize(
    ("name", "interface"),
    [
        ("queue", "rest"),  # standard library, imported by the server: never started
        ("calendar", "mcp"),
        ("email", "rest"),
        ("click", "rest"),  # uvicorn's: never started
        ("annotated_types", "rest"),
        ("mcp_types", "mcp"),  # the MCP SDK's
    ],
)
def test_a_module_named_as_the_servers_own_is_refused(
    tmp_path: Path, name: str, interface: str
) -> None:
    (tmp_path / f"{name}.py").write_text(FUNCTION)
    code, err = compile_(tmp_path / f"{name}.py", interface, tmp_path / "out")
    assert code == 2, err
    assert "SVC-F015" in err
    assert f"module name {name!r} clashes with" in err
    assert "--module-name" in err
    assert not (tmp_path / "out").exists()


def test_a_local_module_named_as_a_standard_library_one_is_refused(tmp_path: Path) -> None:
    """``import secrets`` reads the local ``secrets.py`` when the file runs as a script; in
    the server it is the standard library's (already imported): every call was a 500."""
    (tmp_path / "secrets.py").write_text('def token(n: int) -> str:\n    return "x" * n\n')
    (tmp_path / "shop.py").write_text(
        "import secrets\n\n\ndef f(n: int) -> str:\n    return secrets.token(n)\n"
    )
    code, err = compile_(tmp_path / "shop.py", "rest", tmp_path / "out")
    assert code == 1, err
    assert "imports the local module 'secrets': SVC-F015" in err
    assert "rename it" in err


def test_the_module_name_is_kept_when_another_is_chosen(tmp_path: Path) -> None:
    (tmp_path / "queue.py").write_text(FUNCTION)
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    with contextlib.redirect_stdout(stdout):
        code = main(
            ["generate", "rest", str(tmp_path / "queue.py"), "--module-name", "jobs",
             "--output-dir", str(tmp_path / "out")]
        )  # fmt: skip
    assert code == 0
    assert (tmp_path / "out" / "source" / "jobs.py").read_text() == FUNCTION


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("names")
    (root / "probe.py").write_text(PROBE)
    return root / "probe.py"


def _servers_own(names: list[str]) -> set[str]:
    return {n for n in names if not n.startswith(NOT_THE_SERVERS) and n != "probe"}


def test_every_package_module_the_rest_server_imports_is_reserved(probe: Path) -> None:
    out = probe.parent / "rest"
    generate(probe, out)
    with serving(out) as server, server.client() as client:
        assert client.get("/docs").status_code == 200
        assert client.get("/metrics").status_code == 200
        big = client.post(  # through the body-prevalidation helper
            "/capabilities/loaded", content=b'{"x": "' + b"a" * 300_000 + b'"}'
        )
        assert big.status_code == 422
        answer = client.post("/capabilities/loaded", json={})
        assert answer.status_code == 200, answer.text
    imported = _servers_own(answer.json())
    assert "uvicorn" in imported
    assert imported - REST_BUNDLE.reserved_modules == set()


def test_every_package_module_the_mcp_server_imports_is_reserved(probe: Path) -> None:
    out = probe.parent / "mcp"
    generate(probe, out, interface="mcp")
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "loaded", "arguments": {}}}  # fmt: skip
    headers = {"accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2025-06-18"}  # fmt: skip
    with serving_mcp_http(out) as server:
        assert httpx.get(server.url + "/metrics").status_code == 200
        answer = httpx.post(server.url + "/mcp", json=call, headers=headers, timeout=30)
    assert answer.status_code == 200, answer.text
    result = json.loads(answer.text)["result"]["structuredContent"]["result"]
    imported = _servers_own(result)
    assert "mcp" in imported
    assert imported - MCP_BUNDLE.reserved_modules == set()
