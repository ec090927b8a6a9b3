"""Governed OCI-container execution end to end on the real engine of the OCI stack
(``.ci/oci``): a runtime image built once per session from the context svcc emits, a
governed REST bundle under uvicorn and an MCP bundle through the official client. Each call
runs in a fresh, locked-down container used once; none is left behind."""

import concurrent.futures
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers import ROOT, run_svcc
from mcp_client import McpBundle
from oci_support import load_stack
from servers import Server, failed_start, free_port, serving, spawn
from servers import generate as generate_bundle

FIXTURE = ROOT / "tests" / "fixtures" / "governed_oci" / "box.py"
DOCKER = "/usr/local/bin/docker"
POLICY = {
    "schema": "svc.execution/v2",
    "limits": {"wall_time_ms": 4000, "memory_mib": 64, "pids": 32, "tmp_mib": 4},
    "environment": {"allow": ["SVC_ALLOWED"]},
    "pool": {"size": 2},
}
SERVER_ENV = {"SVC_ALLOWED": "allowed-value", "SVC_SECRET": "server-only"}
TEST_LABEL = "io.svcc.test=governed-oci"


@pytest.fixture(scope="session")
def engine_env() -> dict[str, str]:
    stack = load_stack()
    if isinstance(stack, str):
        pytest.skip(stack)
    env = stack["env"]
    return {
        "DOCKER_HOST": env["CI_DOCKER_DOCKER_HOST"],
        "DOCKER_CONFIG": env["CI_DOCKER_DOCKER_CONFIG"],
        "BASE_IMAGE": env["BASE_IMAGE"],
    }


def docker(engine_env: dict[str, str], *args: str, cwd: Path | None = None) -> str:
    env = {**os.environ, **{k: v for k, v in engine_env.items() if k.startswith("DOCKER")}}
    proc = subprocess.run(
        [DOCKER, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def build_image(engine_env: dict[str, str], context: Path, *extra: str) -> str:
    return docker(
        engine_env,
        "build", "--network", "none", "--platform", "linux/amd64", "-q",
        "--label", TEST_LABEL, *extra, "-f", "Containerfile", ".",
        cwd=context,
    )  # fmt: skip


@pytest.fixture(scope="session")
def readable_root() -> Iterator[Path]:
    """A folder the container worker (uid 65532) can read. Not under pytest's base, which
    is 0700 and which any pytest session on the machine may chmod back to 0700."""
    root = Path(tempfile.mkdtemp(prefix="svcc-gov-oci-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def readable_dir(root: Path, name: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=root))
    folder.chmod(0o755)
    return folder


@pytest.fixture(scope="session")
def runtime_image(engine_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> str:
    context = tmp_path_factory.mktemp("runtime-image") / "ctx"
    proc = run_svcc(
        "compile", str(FIXTURE), "--allow", "env,process,paths", "--target", "runtime-image",
        "--base-image", engine_env["BASE_IMAGE"], "--output-dir", str(context),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return build_image(engine_env, context)


def generate(
    out: Path,
    image: str,
    interface: str,
    policy: object = POLICY,
    platform: str = "linux/amd64",
    *extra: str,
) -> Path:
    policy_path = out.parent / f"{out.name}-policy.json"
    policy_path.write_text(json.dumps(policy))
    result = generate_bundle(
        FIXTURE, out, "--allow", "env,process,paths",
        "--execution-policy", str(policy_path),
        "--runtime-image", image, "--runtime-platform", platform, "--format", "json", *extra,
        interface=interface,
    )  # fmt: skip
    assert result["execution"]["backend"] == "oci-container"  # type: ignore[index]
    return out


def containers(engine_env: dict[str, str], pids: set[int]) -> list[str]:
    """Governed containers of the server processes ``pids`` (other servers are not ours)."""
    out = docker(
        engine_env, "ps", "-a", "--filter", "label=io.svcc.governed=1",
        "--format", '{{.ID}} {{.Label "io.svcc.server-pid"}}',
    )  # fmt: skip
    return [line.split()[0] for line in out.splitlines() if int(line.split()[1]) in pids]


@pytest.fixture(scope="module")
def bundle(runtime_image: str, readable_root: Path) -> Path:
    return generate(readable_dir(readable_root, "gov-oci") / "rest", runtime_image, "rest")


@pytest.fixture(scope="module")
def server(bundle: Path, engine_env: dict[str, str]) -> Iterator[Server]:
    with serving(bundle, env={**SERVER_ENV, "DOCKER_HOST": engine_env["DOCKER_HOST"]}) as s:
        yield s
    assert containers(engine_env, {s.proc.pid}) == []


@pytest.fixture(scope="module")
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def call(client: httpx.Client, name: str, body: object) -> httpx.Response:
    return client.post(f"/capabilities/{name}", json=body)


def test_globals_reset_and_worker_identity(client: httpx.Client) -> None:
    assert [call(client, "counter", {}).json() for _ in range(3)] == [1, 1, 1]
    identity = call(client, "identity", {}).json()
    assert identity == {"uid": 65532, "gid": 65532, "pid": 1}  # private PID namespace
    assert call(client, "shout", {"text": "hi"}).json() == "HI"  # prints never break a reply


def test_a_service_class_is_built_and_set_up_in_each_container(client: httpx.Client) -> None:
    """Each call's container builds the instance and runs ``setup()`` first: a call never
    sees what the one before it left on the instance."""
    assert [call(client, "Tally.bump", {}).json() for _ in range(3)] == [11, 11, 11]


def test_environment_not_leaked(client: httpx.Client) -> None:
    assert call(client, "env", {"name": "SVC_SECRET"}).json() is None
    assert call(client, "env", {"name": "SVC_ALLOWED"}).json() == "allowed-value"
    names = set(call(client, "env_names", {}).json())
    assert "SVC_SECRET" not in names
    assert "DOCKER_HOST" not in names


def test_network_unreachable(client: httpx.Client, server: Server) -> None:
    port = int(server.url.rsplit(":", 1)[1])
    assert call(client, "connect", {"host": "127.0.0.1", "port": port}).json() != "connected"
    assert call(client, "interfaces", {}).json() == ["lo"]


def test_root_read_only_and_tmp_bounded(client: httpx.Client) -> None:
    assert call(client, "write_file", {"path": "/opt/svc/x"}).json() == "OSError:30"
    assert call(client, "write_file", {"path": "/opt/svc/source/x"}).json() == "OSError:30"
    assert call(client, "write_file", {"path": "/tmp/x"}).json() == "written"
    assert call(client, "fill_tmp", {"mib": 32}).json() <= 4


def test_fork_bomb_stopped_by_pids_limit(client: httpx.Client) -> None:
    started = call(client, "fork_bomb", {"limit": 500})
    assert started.status_code == 200
    assert started.json() < 32
    assert call(client, "add", {"a": 1, "b": 2}).json() == 3


def test_memory_exhaustion_is_503(client: httpx.Client) -> None:
    response = call(client, "eat_memory", {"mib": 512})
    assert response.status_code == 503
    assert response.json() == {"detail": "Service Unavailable: the call ran out of memory"}
    assert call(client, "eat_memory", {"mib": 8}).json() == 8


def test_deadline_is_504_and_server_keeps_serving(
    client: httpx.Client, server: Server, engine_env: dict[str, str]
) -> None:
    started = time.monotonic()
    response = call(client, "sleep", {"seconds": 60})
    assert response.status_code == 504
    assert response.json() == {"detail": "Gateway Timeout"}
    # The wall time bounds what the client waits for (4 s), plus answering: the container is
    # removed before the 504 goes out.
    assert time.monotonic() - started < 6.5
    assert call(client, "add", {"a": 2, "b": 3}).json() == 5


def test_results_must_be_finite_json(client: httpx.Client) -> None:
    response = call(client, "tuple_result", {})
    assert response.status_code == 500
    assert response.json() == {"detail": "Internal Server Error"}
    assert call(client, "add", {"a": "x", "b": 1}).status_code == 422


def test_a_forged_reply_is_checked_by_the_server(client: httpx.Client) -> None:
    """The user's code shares the container with the worker and can write to its reply
    channel; the server serves a reply only if it is strict, finite JSON."""
    response = call(client, "forge_reply", {})
    assert response.status_code == 500
    assert response.json() == {"detail": "Internal Server Error"}
    assert call(client, "add", {"a": 1, "b": 2}).json() == 3


def test_concurrent_calls(client: httpx.Client) -> None:
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        futures = [pool.submit(call, client, "add", {"a": i, "b": 1000}) for i in range(16)]
        results = [f.result().json() for f in futures]
    assert results == [i + 1000 for i in range(16)]


def _killable_server(
    bundle: Path, engine_env: dict[str, str], name: str
) -> "tuple[subprocess.Popen[bytes], str, Path]":
    """A governed server under uvicorn, answering; its pool started."""
    env = {**os.environ, **SERVER_ENV, "DOCKER_HOST": engine_env["DOCKER_HOST"]}
    port = free_port()
    command = [
        sys.executable,
        "-m", "uvicorn", "app:app", "--host", "127.0.0.1", "--port", str(port),
    ]  # fmt: skip
    log = bundle.parent / f"{name}.log"
    with log.open("wb") as sink:
        proc = spawn(command, cwd=bundle, env=env, stdout=sink, stderr=sink)
    url = f"http://127.0.0.1:{port}/capabilities"
    deadline = time.monotonic() + 60
    while True:
        try:
            reply = httpx.post(f"{url}/add", json={"a": 1, "b": 1}, timeout=30)
            if reply.status_code == 200:
                break
        except httpx.TransportError:
            pass
        assert proc.poll() is None, log.read_text()
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    while not containers(engine_env, {proc.pid}) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert containers(engine_env, {proc.pid}), log.read_text()  # the pool
    return proc, url, log


def test_sigkill_mid_call_leaves_no_container(bundle: Path, engine_env: dict[str, str]) -> None:
    """SIGKILL of the server while a call runs: its containers (the pool's, exited once
    their stdin closed, and the call's, still running: the wall time was the server's to
    enforce) stayed until another server started on the same engine; its reaper, which
    the kernel tells by closing its pipe, now removes them."""
    from test_process_lifetime import descendants, survivors

    proc, url, log = _killable_server(bundle, engine_env, "killed-mid-call")
    started: set[int] = set()
    try:
        pool = set(containers(engine_env, {proc.pid}))
        with concurrent.futures.ThreadPoolExecutor(1) as threads:
            threads.submit(_quietly_post, f"{url}/sleep", {"seconds": 3.5})
            deadline = time.monotonic() + 30
            while set(containers(engine_env, {proc.pid})) <= pool:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
            started = descendants(proc.pid)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    deadline = time.monotonic() + 30
    while containers(engine_env, {proc.pid}) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert containers(engine_env, {proc.pid}) == []
    assert survivors(started) == set()


def _quietly_post(url: str, body: object) -> None:
    with contextlib.suppress(httpx.HTTPError):
        httpx.post(url, json=body, timeout=30)


def test_no_container_left_after_sigkill_and_restart(
    bundle: Path, engine_env: dict[str, str]
) -> None:
    """Server and reaper SIGKILLed together (a cgroup, the OOM killer): the containers
    stay, and the next server on the engine sweeps them at startup."""
    from test_process_lifetime import cmdline, descendants

    proc, _, _ = _killable_server(bundle, engine_env, "killed-server")
    try:
        reapers = [pid for pid in descendants(proc.pid) if b"io.svcc.instance=" in cmdline(pid)]
        assert len(reapers) == 1
        os.kill(reapers[0], signal.SIGKILL)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert containers(engine_env, {proc.pid})  # left: nothing of the server is alive
    with serving(bundle, env={**SERVER_ENV, "DOCKER_HOST": engine_env["DOCKER_HOST"]}) as again:
        assert containers(engine_env, {proc.pid}) == []  # swept at startup
        with again.client() as c:
            assert call(c, "add", {"a": 1, "b": 2}).json() == 3
    assert containers(engine_env, {proc.pid, again.proc.pid}) == []


def server_env(engine_env: dict[str, str]) -> dict[str, str]:
    return {**SERVER_ENV, "DOCKER_HOST": engine_env["DOCKER_HOST"]}


def test_container_start_up_is_charged_to_the_deadline(
    runtime_image: str, engine_env: dict[str, str], readable_root: Path
) -> None:
    """With pool 0 every call waits for a cold container; its wall time bounds that wait
    too. A call of 80 ms under a 100 ms wall time: no container starts in the 20 ms left,
    so it is a 504, promptly (it was served before: start-up was not charged)."""
    folder = readable_dir(readable_root, "deadline")
    strict = {**POLICY, "limits": {**POLICY["limits"], "wall_time_ms": 100}, "pool": {"size": 0}}
    bundle = generate(folder / "strict", runtime_image, "rest", strict)
    cold = generate(folder / "cold", runtime_image, "rest", {**POLICY, "pool": {"size": 0}})
    with serving(bundle, env=server_env(engine_env)) as server, server.client() as c:
        for _ in range(2):
            started = time.monotonic()
            response = call(c, "sleep", {"seconds": 0.08})
            assert response.status_code == 504, response.text
            assert time.monotonic() - started < 2.0  # 100 ms, not 100 ms + start-up
            # The container started for the call is removed, not kept for the next one.
            deadline = time.monotonic() + 30
            while containers(engine_env, {server.proc.pid}):
                assert time.monotonic() < deadline
                time.sleep(0.05)
    assert containers(engine_env, {server.proc.pid}) == []
    with serving(cold, env=server_env(engine_env)) as server, server.client() as c:
        assert [call(c, "add", {"a": i, "b": 1}).json() for i in range(3)] == [1, 2, 3]
        assert call(c, "counter", {}).json() == 1
    assert containers(engine_env, {server.proc.pid}) == []


def test_every_declared_source_file_is_verified_before_any_import(
    runtime_image: str, engine_env: dict[str, str], readable_root: Path
) -> None:
    """``pkg.box``: the bundle declares ``source/pkg/__init__.py`` and ``source/pkg/box.py``.
    The worker verifies both before importing either; a changed or missing package file is
    a sanitised 500 (never run), and the server serves again once it is restored."""
    folder = readable_dir(readable_root, "declared")
    policy = {**POLICY, "pool": {"size": 1}}
    bundle = generate(
        folder / "rest", runtime_image, "rest", policy, "linux/amd64", "--module-name", "pkg.box"
    )
    package = bundle / "source" / "pkg" / "__init__.py"
    original = package.read_bytes()
    package.write_text("import builtins\nbuiltins.TAMPERED = True\n")
    code, output = failed_start(bundle)  # changed before startup: refused
    assert code == 4  # startup refused
    assert "source/pkg/__init__.py does not match its digest" in output
    assert "Traceback" not in output
    package.write_bytes(original)
    with serving(bundle, env=server_env(engine_env)) as server, server.client() as c:
        assert call(c, "add", {"a": 1, "b": 2}).json() == 3
        package.write_text("import builtins\nbuiltins.TAMPERED = True\n")
        response = call(c, "add", {"a": 1, "b": 2})  # a pooled container, started before
        assert response.status_code == 500
        assert response.json() == {"detail": "Internal Server Error"}
        package.unlink()
        assert call(c, "add", {"a": 1, "b": 2}).status_code == 500
        package.write_bytes(original)
        assert call(c, "add", {"a": 1, "b": 2}).json() == 3
    assert containers(engine_env, {server.proc.pid}) == []


def test_startup_refusals(
    runtime_image: str,
    engine_env: dict[str, str],
    readable_root: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DOCKER_HOST", engine_env["DOCKER_HOST"])
    folder = readable_dir(readable_root, "refused")
    absent = generate(folder / "absent", "sha256:" + "0" * 64, "rest")
    code, output = failed_start(absent)
    assert code != 0
    assert "is not present in the engine" in output
    other = generate(folder / "arm", runtime_image, "rest", platform="linux/arm64")
    code, output = failed_start(other)
    assert code != 0
    assert "is linux/amd64, the bundle was planned for linux/arm64" in output
    context = folder / "plain"
    context.mkdir()
    (context / "Containerfile").write_text(f"FROM {engine_env['BASE_IMAGE']}\n")
    plain = build_image(engine_env, context)
    unlabelled = generate(folder / "unlabelled", plain, "rest")
    code, output = failed_start(unlabelled)
    assert code != 0
    assert "io.svcc.worker-protocol" in output
    monkeypatch.setenv("DOCKER_HOST", f"unix://{folder}/no-engine.sock")
    code, output = failed_start(unlabelled)
    assert code != 0
    assert "engine is not reachable" in output
    for text in (output,):
        assert "Traceback" not in text


def test_image_that_cannot_start_is_refused_and_leaves_nothing(
    engine_env: dict[str, str], readable_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Labelled as a runtime image, but its entrypoint does not exist: the first pooled
    container fails to start, the server refuses in one line and removes that container."""
    monkeypatch.setenv("DOCKER_HOST", engine_env["DOCKER_HOST"])
    folder = readable_dir(readable_root, "broken")
    context = folder / "ctx"
    context.mkdir()
    (context / "Containerfile").write_text(
        f"FROM {engine_env['BASE_IMAGE']}\n"
        "LABEL io.svcc.worker-protocol=svc.container-worker/v1\n"
        'ENTRYPOINT ["/opt/svc/no-such-worker"]\n'
    )
    broken = build_image(engine_env, context)
    bundle = generate(folder / "rest", broken, "rest")
    code, output = failed_start(bundle)
    assert code == 4, output  # startup refused
    assert "cannot start a worker container" in output
    assert "Traceback" not in output
    assert docker(engine_env, "ps", "-aq", "--filter", f"ancestor={broken}") == ""


def test_mcp_governed_oci(
    runtime_image: str, engine_env: dict[str, str], readable_root: Path
) -> None:
    out = generate(readable_dir(readable_root, "gov-oci-mcp") / "mcp", runtime_image, "mcp")
    client = McpBundle(out, env={**SERVER_ENV, "DOCKER_HOST": engine_env["DOCKER_HOST"]})
    try:
        assert [client.call("counter", {}).structured_content for _ in range(2)] == [
            {"result": 1},
            {"result": 1},
        ]
        assert client.call("env", {"name": "SVC_SECRET"}).structured_content == {"result": None}
        assert client.call("sleep", {"seconds": 60}).is_error
        assert client.call("eat_memory", {"mib": 512}).is_error
        assert client.call("add", {"a": 1, "b": 2}).structured_content == {"result": 3}
    finally:
        client.close()
    assert orphans(engine_env) == []  # the MCP server removed its pool when stdin closed


def orphans(engine_env: dict[str, str]) -> list[str]:
    """Governed containers whose server process on this host is gone."""
    out = docker(
        engine_env, "ps", "-a", "--filter", "label=io.svcc.governed=1",
        "--format", '{{.ID}} {{.Label "io.svcc.server-pid"}}',
    )  # fmt: skip
    dead = []
    for line in out.splitlines():
        container, pid = line.split()
        if not Path(f"/proc/{pid}").exists():
            dead.append(container)
    return dead
