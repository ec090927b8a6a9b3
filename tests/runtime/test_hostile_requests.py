"""Hostile requests and hostile functions against generated servers under uvicorn: the
server keeps answering, 422s stay small, and every failure is a JSON answer."""

import concurrent.futures
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from mcp_client import McpBundle
from servers import Server, generate, serving

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "hostile"

# 15 MB of a list whose every item is invalid: 3.75 million errors before the fix.
HOSTILE = b'{"xs": [' + b",".join([b'"a"'] * 3_749_990) + b"]}"


@pytest.fixture(scope="module")
def rest_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    out = tmp_path_factory.mktemp("hostile") / "rest"
    generate(FIXTURE / "hostile.py", out, "--requirements", str(FIXTURE / "requirements.txt"))
    with serving(out) as server:
        yield server


def post(server: Server, name: str, body: bytes, timeout: float = 120) -> httpx.Response:
    return httpx.post(
        f"{server.url}/capabilities/{name}",
        content=body,
        headers={"content-type": "application/json"},
        timeout=timeout,
    )


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_huge_invalid_body_is_a_small_422_and_health_keeps_answering(rest_server: Server) -> None:
    assert len(HOSTILE) > 14_000_000
    before = rss_kib(rest_server.proc.pid)
    answers: list[httpx.Response] = []
    sender = threading.Thread(target=lambda: answers.append(post(rest_server, "total", HOSTILE)))
    sender.start()
    health = 0
    with httpx.Client(base_url=rest_server.url, timeout=60) as client:
        while sender.is_alive():
            assert client.get("/health").status_code == 200
            health += 1
            time.sleep(0.01)
    sender.join()
    (answer,) = answers
    assert answer.status_code == 422
    assert len(answer.content) < 20_000  # 380 MB before the fix
    document = answer.json()
    assert len(document["detail"]) <= 20
    assert document["detail"][0]["loc"] == ["body", "xs", 0]
    assert document["detail"][0]["type"] == "int_type"
    assert health > 0  # latency under this load: bench/bench_hostile_load.py
    # The server never parsed the body: its memory is what it was, give or take the body.
    assert rss_kib(rest_server.proc.pid) - before < 64 * 1024


def test_422_lists_the_first_twenty_errors_and_counts_the_rest(rest_server: Server) -> None:
    body = json.dumps({"xs": ["a"] * 500}).encode()
    answer = post(rest_server, "total", body)
    assert answer.status_code == 422
    document = answer.json()
    assert [e["loc"] for e in document["detail"]] == [["body", "xs", i] for i in range(20)]
    assert document["more_errors"] == 480


def test_422_echoes_only_an_excerpt_of_the_input(rest_server: Server) -> None:
    long_text = "x" * 50_000
    answer = post(rest_server, "total", json.dumps({"xs": [long_text]}).encode())
    assert answer.status_code == 422
    (error,) = answer.json()["detail"]
    assert error["input"].startswith("xxxx")
    assert len(error["input"]) <= 121
    assert len(answer.content) < 2_000


def test_parse_error_422_does_not_echo_the_body(rest_server: Server) -> None:
    secret = b'{"text": "my-secret-token-' + b"z" * 10_000 + b'", oops}'
    answer = post(rest_server, "echo", secret)
    assert answer.status_code == 422
    assert b"my-secret-token" not in answer.content
    (error,) = answer.json()["detail"]
    assert error["type"] == "json_invalid"
    assert error["input"] is None


@pytest.mark.parametrize("name", ["leave", "interrupt", "leave_async", "bad_header"])
def test_every_failure_is_the_json_500(rest_server: Server, name: str) -> None:
    answer = post(rest_server, name, b"{}")
    assert answer.status_code == 500
    assert answer.headers["content-type"] == "application/json"
    assert answer.json() == {"detail": "Internal Server Error"}
    # ... and the server is still there.
    assert httpx.get(f"{rest_server.url}/health", timeout=10).status_code == 200


def test_framework_routes_still_answer(rest_server: Server) -> None:
    with httpx.Client(base_url=rest_server.url, timeout=10) as client:
        assert client.get("/openapi.json").status_code == 200
        assert client.get("/docs").status_code == 200
        assert client.get("/capabilities/echo").status_code == 405
        assert client.post("/capabilities/nope", json={}).status_code == 404
        assert client.post("/capabilities/echo", json={"text": "hi"}).json() == "hi"


# -- governed local-process mode -------------------------------------------------------------

AS_ROOT = os.geteuid() == 0
GOVERNED_POLICY: dict[str, object] = {
    "limits": {
        "wall_time_ms": 4000,
        "max_concurrent_calls": 1,
        "max_queued_calls": 1,
        "max_log_bytes": 4096,
    },
    # As root a worker could read any process's /proc files: run workers as nobody.
    **({"worker_user": "nobody"} if AS_ROOT else {}),
}
SECRET = {"SVC_HOSTILE_SECRET": "server-only-secret"}


@pytest.fixture(scope="module")
def shared_dir() -> Iterator[Path]:
    """A directory every user may write (pid files of calls run as nobody)."""
    path = Path(tempfile.mkdtemp(prefix="svcc-hostile-"))
    os.chmod(path, 0o1777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def governed() -> Iterator[Server]:
    # Outside pytest's private temporary root: nobody must be able to reach the bundle.
    tmp = Path(tempfile.mkdtemp(prefix="svcc-hostile-governed-"))
    os.chmod(tmp, 0o755)
    try:
        policy = tmp / "policy.json"
        policy.write_text(json.dumps(GOVERNED_POLICY))
        out = tmp / "rest"
        generate(
            FIXTURE / "gov_hostile.py",
            out,
            "--requirements",
            str(FIXTURE / "requirements.txt"),
            "--allow",
            "process,paths",
            "--execution-policy",
            str(policy),
        )
        with serving(out, env=SECRET) as server:
            yield server
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def gcall(server: Server, name: str, body: object, timeout: float = 30) -> httpx.Response:
    return httpx.post(f"{server.url}/capabilities/{name}", json=body, timeout=timeout)


def alive(pid: int) -> bool:
    """Running (a zombie has finished: it only waits for its parent)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_until(predicate: Callable[[], bool], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def read_pid(path: Path) -> int:
    assert wait_until(lambda: path.exists() and path.read_text() != "")
    return int(path.read_text())


def template_of(server: Server) -> int:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == server.proc.pid and "worker.py" in (
                entry / "cmdline"
            ).read_bytes().decode(errors="replace"):
                return int(entry.name)
    raise AssertionError("no template")


@pytest.mark.parametrize("mode", ["setsid", "double_fork"])
def test_processes_a_call_starts_do_not_outlive_it(governed: Server, mode: str) -> None:
    answer = gcall(governed, "escape", {"mode": mode})
    assert answer.status_code == 200, governed.log_text()[-2000:]
    pid = answer.json()
    assert not alive(pid), f"{mode}: process {pid} outlived its call"


def test_a_call_killed_at_the_deadline_leaves_nothing_running(
    governed: Server, shared_dir: Path
) -> None:
    pidfile = shared_dir / "hang-escape.pid"
    answer = gcall(governed, "escape_and_hang", {"pidfile": str(pidfile)})
    assert answer.status_code == 504
    pid = read_pid(pidfile)
    assert wait_until(lambda: not alive(pid)), f"session leader {pid} outlived its call"


def test_a_worker_cannot_read_the_server_or_the_template(governed: Server) -> None:
    for pid in (governed.proc.pid, template_of(governed)):
        for what in ("environ", "mem"):
            answer = gcall(governed, "peek", {"path": f"/proc/{pid}/{what}"})
            assert answer.status_code == 200
            assert answer.json().startswith("refused"), (pid, what, answer.json())
    assert SECRET["SVC_HOSTILE_SECRET"] not in governed.log_text()


def test_a_forged_result_that_is_not_json_is_a_500(governed: Server) -> None:
    answer = gcall(governed, "forge", {})
    assert answer.status_code == 500
    assert answer.json() == {"detail": "Internal Server Error"}
    assert "not strict, finite JSON" in governed.log_text()


def test_worker_output_is_bounded_per_call(governed: Server) -> None:
    before = len(governed.log_text())
    answer = gcall(governed, "chatty", {"megabytes": 8})
    assert answer.status_code == 200
    assert wait_until(lambda: "more bytes of stdout/stderr dropped" in governed.log_text())
    grown = len(governed.log_text()) - before
    assert grown < 64 * 1024, grown  # 16 MiB were written
    assert "(over the 4096-byte per-call budget" in governed.log_text()


def test_a_disconnected_client_cancels_its_call(governed: Server, shared_dir: Path) -> None:
    pidfile = shared_dir / "abandoned.pid"
    with pytest.raises(httpx.ReadTimeout):
        gcall(governed, "hang", {"pidfile": str(pidfile), "seconds": 3.5}, timeout=1)
    pid = read_pid(pidfile)
    assert wait_until(lambda: "the client disconnected; call cancelled" in governed.log_text())
    assert wait_until(lambda: not alive(pid)), "the abandoned call kept running"


def test_the_queue_is_bounded_and_answers_503(governed: Server, shared_dir: Path) -> None:
    pidfile = shared_dir / "busy.pid"
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        running = pool.submit(gcall, governed, "hang", {"pidfile": str(pidfile), "seconds": 2})
        read_pid(pidfile)  # the one slot is taken
        queued = pool.submit(gcall, governed, "where", {})
        time.sleep(0.3)  # let it reach the queue
        refused = gcall(governed, "where", {})
        assert refused.status_code == 503
        assert refused.headers["retry-after"] == "4"
        assert "Service Unavailable" in refused.json()["detail"]
        assert running.result().status_code == 200
        assert queued.result().status_code == 200


def test_a_full_working_directory_is_removed_off_the_critical_path(governed: Server) -> None:
    answer = gcall(governed, "litter", {"files": 300})
    assert answer.status_code == 200
    workdir = answer.json()
    assert gcall(governed, "where", {}).status_code == 200
    assert wait_until(lambda: not os.path.exists(workdir), 30)


def test_killing_the_template_leaks_no_directories(governed: Server, shared_dir: Path) -> None:
    pidfile = shared_dir / "orphaned.pid"
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        hung = pool.submit(gcall, governed, "hang", {"pidfile": str(pidfile), "seconds": 3})
        worker = read_pid(pidfile)
        workdir = os.readlink(f"/proc/{worker}/cwd")
        scratch = os.path.dirname(workdir)
        os.kill(template_of(governed), signal.SIGKILL)
        assert hung.result().status_code == 500
    assert wait_until(lambda: not alive(worker), 5), "the worker outlived its template"
    assert gcall(governed, "where", {}).status_code == 200  # a new template
    assert wait_until(lambda: not os.path.exists(scratch), 10), scratch


# -- MCP, where the same rules apply -----------------------------------------------------------


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpBundle]:
    out = tmp_path_factory.mktemp("hostile-mcp") / "bundle"
    generate(
        FIXTURE / "hostile.py",
        out,
        "--requirements",
        str(FIXTURE / "requirements.txt"),
        interface="mcp",
    )
    client = McpBundle(out)
    yield client
    client.close()


@pytest.mark.parametrize("name", ["leave", "interrupt", "leave_async"])
def test_mcp_system_exit_is_a_tool_error_and_the_server_stays(mcp: McpBundle, name: str) -> None:
    result = mcp.call(name, {})
    assert result.is_error
    # direct mode names the exception (issue 23), never a traceback
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith("the tool raised ")
    assert "Traceback" not in text
    assert ("KeyboardInterrupt" if name == "interrupt" else "SystemExit") in text
    assert mcp.call("echo", {"text": "still here"}).structured_content == {"result": "still here"}


def test_mcp_invalid_arguments_are_bounded(mcp: McpBundle) -> None:
    result = mcp.call("total", {"xs": ["a"] * 5000})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.count("(int_type)") == 20
    assert text.endswith("and 4980 more")


def test_policy_fields_for_the_queue_the_log_budget_and_the_worker_user() -> None:
    from svcc.contracts.errors import InputError
    from svcc.contracts.policy import parse_policy

    defaults = parse_policy({}, "p.json").to_json()
    assert defaults["limits"]["max_queued_calls"] == 64
    assert defaults["limits"]["max_log_bytes"] == 65536
    assert defaults["worker_user"] is None
    assert parse_policy({"worker_user": "nobody"}, "p.json").worker_user == "nobody"
    assert parse_policy({"worker_user": "65534"}, "p.json").worker_user == "65534"
    for bad in ("root\nUSER x", "", "a b", "x" * 40):
        with pytest.raises(InputError, match="worker_user"):
            parse_policy({"worker_user": bad}, "p.json")
    with pytest.raises(InputError, match="max_queued_calls"):
        parse_policy({"limits": {"max_queued_calls": -1}}, "p.json")


def test_an_unknown_worker_user_stops_startup_with_one_line(tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"worker_user": "no-such-user-svcc"}))
    out = tmp_path / "rest"
    generate(
        FIXTURE / "gov_hostile.py",
        out,
        "--requirements",
        str(FIXTURE / "requirements.txt"),
        "--allow",
        "process,paths",
        "--execution-policy",
        str(policy),
    )
    proc = subprocess.run(
        [sys.executable, "-c", "import app"], cwd=out, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 4  # startup refused
    assert "worker_user 'no-such-user-svcc' does not exist on this host" in proc.stderr
    assert "Traceback" not in proc.stderr
