"""``svcc serve``: a real environment is built from the bundle's requirements (from the
package registry), cached outside the bundle, reused, and the server answers on loopback."""

import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from helpers import SVCC, run_svcc
from servers import FIXTURES, free_port, generate, spawn

pytestmark = pytest.mark.slow

# Both serve tests install the union of the REST and MCP server requirements (each bundle
# declares the other's as application requirements), so they share one environment: the
# first test to run builds it, the other reuses it (about 30 s saved).
SHARED_REQUIREMENTS = (
    "fastapi>=0.115,<1",
    "pydantic>=2.9,<3",
    "swagger-ui-bundle-v2>=5.31,<6",
    "uvicorn[standard]>=0.30,<1",
    "mcp>=2.3,<3",
    "prometheus-client>=0.20,<1",
    "uvicorn>=0.30,<1",
)


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("serve-cache")


def shared_requirements(folder: Path, *extra: str) -> Path:
    path = folder / "requirements.txt"
    path.write_text("".join(f"{line}\n" for line in (*extra, *SHARED_REQUIREMENTS)))
    return path


def environments(cache: Path) -> list[Path]:
    return [p for p in (cache / "envs").iterdir() if p.is_dir()]


def serve(bundle: Path, cache: Path, port: int) -> subprocess.Popen[str]:
    return spawn(
        [SVCC, "serve", str(bundle), "--port", str(port), "--cache-dir", str(cache)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )


def wait_healthy(proc: subprocess.Popen[str], port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            output = proc.stdout.read() if proc.stdout else ""
            raise AssertionError(f"svcc serve exited {proc.returncode}: {output}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError("svcc serve did not become healthy")


def stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return proc.stdout.read() if proc.stdout else ""


def test_serve_installs_caches_and_serves(tmp_path: Path, shared_cache: Path) -> None:
    bundle = tmp_path / "bundle"
    # rules.py needs fastapi declared: the shared set declares it
    generate(
        FIXTURES / "rules.py",
        bundle,
        "--requirements",
        str(shared_requirements(tmp_path)),
        "--allow",
        "env",
    )
    before = sorted(p.relative_to(bundle) for p in bundle.rglob("*"))
    cache = shared_cache
    installed_before = bool((cache / "envs").is_dir() and environments(cache))

    port = free_port()
    proc = serve(bundle, cache, port)
    try:
        wait_healthy(proc, port, timeout=600)
        response = httpx.post(f"http://127.0.0.1:{port}/capabilities/add", json={"a": 1, "b": 2})
        assert response.json() == 3
    finally:
        first_output = stop(proc)
    installed = "installing the bundle's requirements" in first_output
    assert installed != installed_before
    if installed:
        assert "Successfully installed" in first_output  # pip's progress is shown, not hidden
    envs = environments(cache)
    assert len(envs) == 1
    assert (envs[0] / ".svcc-ready").is_file()
    python = envs[0] / "bin" / "python"
    check = subprocess.run(
        [str(python), "-c", "import fastapi, uvicorn, swagger_ui_bundle, svcc"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert "No module named 'svcc'" in check.stderr  # the bundle never needs svcc
    # nothing was written into the bundle (bytecode caches aside)
    after = sorted(p.relative_to(bundle) for p in bundle.rglob("*") if "__pycache__" not in p.parts)
    assert after == [p for p in before if "__pycache__" not in p.parts]

    port = free_port()
    proc = serve(bundle, cache, port)
    try:
        wait_healthy(proc, port, timeout=120)
    finally:
        second_output = stop(proc)
    assert "installing" not in second_output  # reused, whatever the machine's speed
    assert environments(cache) == envs


def test_serve_refuses_what_is_not_a_bundle(tmp_path: Path) -> None:
    proc = run_svcc("serve", str(tmp_path))
    assert proc.returncode == 2
    assert "not a svcc bundle" in proc.stderr
    proc = run_svcc("serve", str(tmp_path / "missing"))
    assert proc.returncode == 2
    assert "not a directory" in proc.stderr


def test_serve_runs_an_mcp_bundle_over_stdio(tmp_path: Path, shared_cache: Path) -> None:
    """The environment is installed with stdout kept clean: it is the protocol stream."""
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    bundle = tmp_path / "bundle"
    source = tmp_path / "tools.py"
    source.write_text('def add(a: int, b: int) -> int:\n    """Add."""\n    return a + b\n')
    generate(source, bundle, "--requirements", str(shared_requirements(tmp_path)), interface="mcp")
    installed_before = bool((shared_cache / "envs").is_dir() and environments(shared_cache))

    async def scenario() -> tuple[list[str], object]:
        params = StdioServerParameters(
            command=SVCC, args=["serve", str(bundle), "--cache-dir", str(shared_cache)]
        )
        with (tmp_path / "stderr.log").open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                tools = await session.list_tools()
                result = await session.call_tool("add", {"a": 20, "b": 22})
                return [t.name for t in tools.tools], result.structured_content

    names, structured = asyncio.run(asyncio.wait_for(scenario(), timeout=600))
    assert names == ["add"]
    assert structured == {"result": 42}
    installed = "installing the bundle's requirements" in (tmp_path / "stderr.log").read_text()
    assert installed != installed_before
    assert len(environments(shared_cache)) == 1  # the REST test's environment, or its own


def test_serve_runs_an_mcp_bundle_over_streamable_http(tmp_path: Path, shared_cache: Path) -> None:
    """``--transport streamable-http`` is passed on: the same tools at ``/mcp`` (DESIGN §13)."""
    import asyncio

    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    bundle = tmp_path / "bundle"
    source = tmp_path / "tools.py"
    source.write_text('def add(a: int, b: int) -> int:\n    """Add."""\n    return a + b\n')
    generate(source, bundle, "--requirements", str(shared_requirements(tmp_path)), interface="mcp")
    port = free_port()
    proc = spawn(
        [
            *(SVCC, "serve", str(bundle), "--transport", "streamable-http"),
            *("--port", str(port), "--cache-dir", str(shared_cache)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )

    async def scenario() -> object:
        async with (
            httpx2.AsyncClient(timeout=30) as http,
            streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http) as streams,
            ClientSession(*streams) as session,
        ):
            await session.initialize()
            return (await session.call_tool("add", {"a": 20, "b": 22})).structured_content

    try:
        wait_healthy(proc, port, timeout=600)
        assert asyncio.run(scenario()) == {"result": 42}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
    assert len(environments(shared_cache)) == 1


def test_serve_transport_is_for_mcp_bundles(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    generate(
        FIXTURES / "rules.py",
        bundle,
        "--requirements",
        str(shared_requirements(tmp_path)),
        "--allow",
        "env",
    )
    proc = run_svcc("serve", str(bundle), "--transport", "streamable-http")
    assert proc.returncode == 2
    assert "--transport is for MCP bundles" in proc.stderr
