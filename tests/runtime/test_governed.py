"""Governed local-process execution end to end: a live REST server under uvicorn and an MCP
bundle through the official client, with a policy. Each call runs in a fresh worker forked
from the warm template, so globals reset, the environment is clean, the working directory
is fresh, the deadline kills, and nothing outlives a call."""

import concurrent.futures
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp_client import McpBundle
from servers import Server, generate, serving

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "governed"
POLICY = {
    # 4 s, not less: a fork + call on a loaded 2-core CI machine once took over 1.5 s (a 504
    # where the test expected 500); the deadline test pays it once per interface.
    "limits": {"wall_time_ms": 4000, "max_input_bytes": 2000, "max_output_bytes": 4000},
    "environment": {"allow": ["SVC_ALLOWED"]},
}
SERVER_ENV = {"SVC_ALLOWED": "allowed-value", "SVC_SECRET": "server-only"}


def build(tmp: Path, interface: str, policy: object = POLICY) -> Path:
    policy_path = tmp / f"policy-{interface}.json"
    policy_path.write_text(json.dumps(policy))
    out = tmp / f"governed-{interface}"
    result = generate(
        FIXTURE / "gov.py",
        out,
        "--requirements",
        str(FIXTURE / "requirements.txt"),
        "--allow",
        "env,process",
        "--execution-policy",
        str(policy_path),
        interface=interface,
    )
    assert result["execution"] == {"mode": "governed", "backend": "local-process"}
    return out


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("governed"), "rest")


@pytest.fixture(scope="module")
def server(bundle: Path) -> Iterator[Server]:
    with serving(bundle, env=SERVER_ENV) as running:
        yield running


@pytest.fixture(scope="module")
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def call(client: httpx.Client, name: str, body: object) -> httpx.Response:
    return client.post(f"/capabilities/{name}", json=body)


def children_of(pid: int) -> list[tuple[int, str]]:
    """``(pid, state)`` of every live process whose parent is ``pid``."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append((int(entry.name), fields[0]))
    return out


def name_of(pid: int) -> str:
    """A process's name: a governed worker is ``svc-spare`` until its call comes (forked
    ahead of it, waiting), then ``svc-worker``; gone, ``""``."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def template_pid(server: Server) -> int:
    templates = [pid for pid, _ in children_of(server.proc.pid)]
    assert len(templates) == 1, templates
    return templates[0]


def _loads_source(bundle: Path) -> bool:
    """Whether the server process loads ``source/gov.py``: ``PYTHONVERBOSE`` makes it log
    every module it imports (workers get a clean environment, so they stay quiet)."""
    with serving(bundle, env={"PYTHONVERBOSE": "1"}) as verbose, verbose.client() as c:
        assert call(c, "add", {"a": 1, "b": 2}).json() == 3
        return "source/gov.py" in verbose.log_text()


def test_the_server_never_imports_the_source(bundle: Path, tmp_path: Path) -> None:
    assert not _loads_source(bundle)
    direct = tmp_path / "direct"  # the control: a direct server does import it
    generate(
        FIXTURE / "gov.py",
        direct,
        "--requirements",
        str(FIXTURE / "requirements.txt"),
        "--allow",
        "env,process",
    )
    assert _loads_source(direct)
    execution = json.loads((bundle / "svc-rest.json").read_text())["execution"]
    assert execution == {"mode": "governed", "backend": "local-process"}


def test_globals_and_mutable_defaults_reset_every_call(client: httpx.Client) -> None:
    assert [call(client, "counter", {}).json() for _ in range(3)] == [1, 1, 1]
    assert call(client, "remember", {"item": "a"}).json() == ["a"]
    assert call(client, "remember", {"item": "b"}).json() == ["b"]


def test_environment_is_clean(client: httpx.Client) -> None:
    assert call(client, "env", {"name": "SVC_SECRET"}).json() is None
    assert call(client, "env", {"name": "SVC_ALLOWED"}).json() == "allowed-value"
    names = set(call(client, "env_names", {}).json())
    assert "SVC_SECRET" not in names
    assert names <= {"SVC_ALLOWED", "LC_CTYPE"}  # Python may coerce a C locale (PEP 538)


def test_fresh_working_directory_removed_afterwards(client: httpx.Client) -> None:
    first = call(client, "workdir", {}).json()
    second = call(client, "workdir", {}).json()
    assert first["existing"] == []
    assert second["existing"] == []
    assert first["cwd"] != second["cwd"]
    deadline = time.monotonic() + 5
    while os.path.exists(first["cwd"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(first["cwd"])


def test_deadline_gives_504_and_the_server_keeps_serving(client: httpx.Client) -> None:
    started = time.monotonic()
    response = call(client, "sleep", {"seconds": 30})
    elapsed = time.monotonic() - started
    assert response.status_code == 504
    assert response.json() == {"detail": "Gateway Timeout"}
    # never before the deadline, and cut well before the 30 s the call asked for (no upper
    # bound tuned to this machine's speed)
    assert 4 <= elapsed < 25
    assert call(client, "add", {"a": 1, "b": 2}).json() == 3


def test_worker_killed_by_a_signal_is_a_500(client: httpx.Client) -> None:
    response = call(client, "die", {})
    assert response.status_code == 500
    assert response.json() == {"detail": "Internal Server Error"}
    assert call(client, "add", {"a": 2, "b": 2}).json() == 4


@pytest.mark.parametrize(
    "name", ["tuple_result", "set_result", "bytes_result", "nan_result", "object_result"]
)
def test_results_must_already_be_finite_json(client: httpx.Client, name: str) -> None:
    response = call(client, name, {})
    assert response.status_code == 500
    assert response.json() == {"detail": "Internal Server Error"}


def test_exceptions_are_sanitised(client: httpx.Client, server: Server) -> None:
    for name in ("boom", "http_error"):
        response = call(client, name, {})
        assert response.status_code == 500
        assert response.json() == {"detail": "Internal Server Error"}
    deadline = time.monotonic() + 5
    while "secret detail" not in server.log_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "secret detail that must not reach the client" in server.log_text()


def test_invalid_arguments_are_422_as_in_direct_mode(client: httpx.Client) -> None:
    response = call(client, "add", {"a": "1", "b": 2})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "a"]
    assert call(client, "pair", {"p": [1, "x"]}).json() == ["tuple", 1, "x"]
    assert call(client, "async_add", {"a": 1, "b": 2}).json() == 3


def test_oversize_input_and_output(client: httpx.Client) -> None:
    assert call(client, "echo", {"text": "x" * 3000}).status_code == 413
    assert call(client, "echo", {"text": "x" * 100}).json() == "x" * 100
    assert call(client, "big", {"n": 3000}).status_code == 200
    response = call(client, "big", {"n": 5000})
    assert response.status_code == 500
    assert response.json() == {"detail": "Internal Server Error"}


def test_sixteen_concurrent_calls(server: Server) -> None:
    def one(i: int) -> int:
        with server.client() as c:
            return int(call(c, "add", {"a": i, "b": 1000}).json())

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        assert list(pool.map(one, range(16))) == [i + 1000 for i in range(16)]


def test_no_zombies_and_no_leftover_processes(client: httpx.Client, server: Server) -> None:
    orphan = call(client, "spawn_orphan", {}).json()
    for _ in range(5):
        call(client, "add", {"a": 1, "b": 1})
    time.sleep(0.3)
    template = template_pid(server)
    assert children_of(server.proc.pid) == [(template, "S")]
    # workers reaped, orphans reaped, nothing running: only the next calls' workers, waiting
    spares = [pid for pid, _ in children_of(template)]
    assert spares
    assert {name_of(pid) for pid in spares} == {"svc-spare"}
    assert [children_of(pid) for pid in spares] == [[] for _ in spares]
    assert not Path(f"/proc/{orphan}").exists()


def test_the_next_calls_worker_is_forked_ahead_and_serves_one_call(server: Server) -> None:
    def slow() -> float:
        with server.client() as c:
            return float(call(c, "sleep", {"seconds": 1.0}).json())

    template = template_pid(server)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        running = pool.submit(slow)
        deadline = time.monotonic() + 10
        named: list[tuple[str, int]] = []
        while "svc-worker" not in dict(named):
            assert time.monotonic() < deadline, named
            time.sleep(0.02)
            named = sorted((name_of(pid), pid) for pid, _ in children_of(template))
        workers = [pid for name, pid in named if name == "svc-worker"]
        spares = [pid for name, pid in named if name == "svc-spare"]
        assert len(workers) == 1
        assert spares  # the next calls' workers, waiting while this one runs
        assert len(named) == len(workers) + len(spares)
        assert running.result() == 1.0
    with server.client() as c:  # each spare takes one call, then ends
        assert [call(c, "add", {"a": 1, "b": i}).json() for i in range(len(spares))] == [
            1 + i for i in range(len(spares))
        ]
    deadline = time.monotonic() + 5
    while {*workers, *spares} & {pid for pid, _ in children_of(template)}:
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_a_spare_killed_while_it_waits_costs_no_call(server: Server) -> None:
    template = template_pid(server)
    spares = {pid for pid, _ in children_of(template) if name_of(pid) == "svc-spare"}
    assert spares
    for pid in spares:
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while spares & {pid for pid, _ in children_of(template)}:  # reaped by the template
        assert time.monotonic() < deadline
        time.sleep(0.02)
    with server.client() as c:
        assert [call(c, "add", {"a": i, "b": 1}).json() for i in range(3)] == [1, 2, 3]


def test_source_changed_after_startup_is_a_sanitised_error(
    client: httpx.Client, bundle: Path
) -> None:
    source = bundle / "source" / "gov.py"
    original = source.read_bytes()
    try:
        source.write_bytes(original.replace(b"return 1\n", b"return 2\n"))
        response = call(client, "version", {})
        assert response.status_code == 500
        assert response.json() == {"detail": "Internal Server Error"}
        assert client.get("/health").status_code == 200
    finally:
        source.write_bytes(original)
    assert call(client, "version", {}).json() == 1


def test_template_is_respawned_if_it_dies(client: httpx.Client, server: Server) -> None:
    os.kill(template_pid(server), 9)
    time.sleep(0.2)
    assert call(client, "add", {"a": 5, "b": 5}).json() == 10


def test_interface_is_byte_identical_to_direct(tmp_path: Path, bundle: Path) -> None:
    direct = tmp_path / "direct"
    generate(
        FIXTURE / "gov.py",
        direct,
        "--requirements",
        str(FIXTURE / "requirements.txt"),
        "--allow",
        "env,process",
    )
    assert (direct / "openapi.json").read_bytes() == (bundle / "openapi.json").read_bytes()
    governed_mcp = build(tmp_path, "mcp")
    direct_mcp = tmp_path / "direct-mcp"
    generate(
        FIXTURE / "gov.py",
        direct_mcp,
        "--requirements",
        str(FIXTURE / "requirements.txt"),
        "--allow",
        "env,process",
        interface="mcp",
    )
    assert (direct_mcp / "mcp-tools.json").read_bytes() == (
        governed_mcp / "mcp-tools.json"
    ).read_bytes()


# -- MCP -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpBundle]:
    client = McpBundle(build(tmp_path_factory.mktemp("governed-mcp"), "mcp"), env=SERVER_ENV)
    yield client
    client.close()


def test_mcp_governed_calls(mcp: McpBundle) -> None:
    for _ in range(2):
        result = mcp.call("counter", {})
        assert not result.is_error
        assert result.structured_content == {"result": 1}
    assert mcp.call("env", {"name": "SVC_SECRET"}).structured_content == {"result": None}
    assert mcp.call("pair", {"p": [1, "x"]}).structured_content == {"result": ["tuple", 1, "x"]}
    invalid = mcp.call("add", {"a": "1", "b": 2})
    assert invalid.is_error
    assert "a: " in invalid.content[0].text  # type: ignore[union-attr]


def test_mcp_governed_failures_are_tool_errors(mcp: McpBundle) -> None:
    started = time.monotonic()
    timed_out = mcp.call("sleep", {"seconds": 30})
    assert timed_out.is_error
    assert "timed out" in timed_out.content[0].text  # type: ignore[union-attr]
    assert time.monotonic() - started < 25  # cut by the deadline, not after 30 s
    for name in ("boom", "tuple_result", "die"):
        failed = mcp.call(name, {})
        assert failed.is_error
        assert "secret" not in failed.content[0].text  # type: ignore[union-attr]
    assert mcp.call("add", {"a": 1, "b": 2}).structured_content == {"result": 3}


def test_mcp_governed_arguments_over_the_input_limit_are_a_tool_error(mcp: McpBundle) -> None:
    """``limits.max_input_bytes`` (2,000 here) bounds MCP arguments as it bounds REST bodies
    (issue 27: any argument up to the message limit reached the worker)."""
    refused = mcp.call("env", {"name": "x" * 5000})
    assert refused.is_error
    assert "2000-byte input limit" in refused.content[0].text  # type: ignore[union-attr]
    assert mcp.call("env", {"name": "SVC_ALLOWED"}).structured_content == {
        "result": "allowed-value"
    }
