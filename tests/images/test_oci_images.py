"""Images end to end on the real stack (.ci/oci): svc plugins install/enable/run, svc-oci build
on Docker Engine + BuildKit (and podman), the built images run, and every refusal by code.

Expensive things are built once per session: the wheels, the installed extension, one REST
and one MCP image. Refusals the core makes are checked through the Python API (the grant is
checked before the extension starts); one of each kind also goes through the CLI. Every
failure inside the extension is checked through the CLI: ``plugin_failed``, the code and a
one-line message on stderr, the engine's output only in the ``--log-file`` (0600).
"""

import copy
import json
import os
import secrets
import shutil
import subprocess
import zipfile
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from helpers import SVCC
from mcp_client import McpBundle
from oci_support import (
    SHAPES,
    WAIT_FOR_SERVER,
    Started,
    build_policy,
    build_request,
    cli_failure,
    image_lock,
    install_plugin,
    load_stack,
    repository_bundle,
    state_dir,
)
from packaging.requirements import Requirement
from servers import serving
from svcc.images.errors import ImageInputError
from svcc.images.lockfile import parse_lock, render_lock
from svcc.images.resolve import lock_from_wheels, marker_environment
from svcc.plugins.invoke import PluginFailure, run

pytestmark = pytest.mark.slow
DOCKER = shutil.which("docker") or "/usr/local/bin/docker"


@pytest.fixture(scope="session")
def stack() -> dict[str, Any]:
    found = load_stack()
    if isinstance(found, str):
        pytest.skip(found)
    if not os.access(DOCKER, os.X_OK):
        pytest.skip("no docker client: `.ci/oci/ci-stack-up.sh STATEDIR` installs it")
    return found["env"]  # type: ignore[no-any-return]


def docker_env(stack: dict[str, Any], tmp: Path, engine: str = "DOCKER") -> dict[str, str]:
    (tmp / "docker-config").mkdir(exist_ok=True)
    return {
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "DOCKER_HOST": stack[f"CI_{engine}_DOCKER_HOST"],
        "DOCKER_CONFIG": str(tmp / "docker-config"),
    }


def svcc(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([SVCC, *args], capture_output=True, text=True, timeout=900, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"svcc {' '.join(args)}: {done.returncode}: {done.stderr}")
    return done


class Plugin:
    def __init__(self, record: dict[str, Any]) -> None:
        self.record = record
        self.root: Path = record["plugins_dir"]
        self.wheel: Path = record["wheel"]
        self.lock: Path = record["lock"]
        self.wheelhouse: Path = record["wheelhouse"]

    def identity(self) -> dict[str, str]:
        return {k: self.record[k] for k in ("name", "version", "sha256", "lock_sha256")}


@pytest.fixture(scope="session")
def plugin(
    stack: dict[str, Any], tmp_path_factory: pytest.TempPathFactory, svcc_wheel: Path
) -> Plugin:
    record = install_plugin(tmp_path_factory.mktemp("plugin"), SVCC, svcc_wheel)
    assert record["enabled"] is False  # installation never activates
    assert record["installed_disabled"]
    return Plugin(record)


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


class Build:
    """One build's inputs: request, policy, and where they are written."""

    def __init__(
        self,
        stack: dict[str, Any],
        plugin: Plugin,
        work: Path,
        interface: str,
        engine: str = "DOCKER",
        *,
        bundle: Path | None = None,
    ) -> None:
        self.work = work
        self.plugin = plugin
        work.mkdir(parents=True, exist_ok=True)
        self.bundle = bundle or repository_bundle(work / f"bundle-{interface}", interface)
        self.lock = image_lock(
            self.bundle, state_dir() / "wheelhouse" / "amd64", work / f"{interface}.lock"
        )
        self.request: dict[str, Any] = build_request(
            stack,
            self.bundle,
            self.lock,
            interface,
            tag=f"svcc-test/shapes-{interface}:{engine.lower()}",
            engine=engine,
            docker=DOCKER,
        )

    def policy(self, **override: Any) -> dict[str, Any]:
        policy = build_policy(self.request, self.plugin.record)
        grant = policy["grants"][0]
        for path, value in override.items():
            node = grant
            keys = path.split(".")
            for key in keys[:-1]:
                node = node[key]
            node[keys[-1]] = value
        return policy

    def files(
        self, request: dict[str, Any] | None = None, policy: dict[str, Any] | None = None
    ) -> tuple[Path, Path]:
        args, pol = self.work / "build.json", self.work / "policy.json"
        args.write_text(json.dumps(request or self.request))
        pol.write_text(json.dumps(policy or self.policy()))
        return args, pol

    def run_api(
        self,
        request: dict[str, Any] | None = None,
        policy: dict[str, Any] | None = None,
        timeout_ms: int = 600_000,
    ) -> dict[str, Any]:
        args, pol = self.files(request, policy)
        return run(
            "svc-oci",
            "build",
            arguments=args,
            operator_policy=pol,
            timeout_ms=timeout_ms,
            plugins_dir=self.plugin.root,
        ).result

    def run_cli(
        self,
        request: dict[str, Any] | None = None,
        policy: dict[str, Any] | None = None,
        log_file: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        return svcc(*self.cli_args(request, policy, log_file), check=False)

    def start_cli(self) -> Started:
        """:meth:`run_cli` of the request as it is, started (its output in ``work``)."""
        return Started([SVCC, *self.cli_args()], self.work / "cli")

    def cli_args(
        self,
        request: dict[str, Any] | None = None,
        policy: dict[str, Any] | None = None,
        log_file: Path | None = None,
    ) -> list[str]:
        args, pol = self.files(request, policy)
        log = ("--log-file", str(log_file)) if log_file is not None else ()
        return [
            "plugins",
            "run",
            "svc-oci",
            "build",
            "--arguments",
            str(args),
            "--operator-policy",
            str(pol),
            "--timeout-ms",
            "600000",
            "--plugins-dir",
            str(self.plugin.root),
            *log,
        ]


@pytest.fixture(scope="session")
def docker_builds(
    stack: dict[str, Any],
    plugin: Plugin,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> dict[str, tuple[Build, dict[str, Any]]]:
    """The session's images on Docker: the REST one through the CLI and, when a test of the
    session uses it, the MCP one through the Python API, side by side (the engine runs the
    two builds at once; each is about one core's work, mostly pip installing the image)."""
    rest = Build(stack, plugin, tmp_path_factory.mktemp("rest"), "rest")
    wanted = any("mcp_build" in item.fixturenames for item in request.session.items)
    mcp = Build(stack, plugin, tmp_path_factory.mktemp("mcp"), "mcp") if wanted else None
    started = rest.start_cli()
    try:
        built = {"mcp": (mcp, mcp.run_api())} if mcp is not None else {}
        done = started.result()
    finally:
        started.stop()
    assert done.returncode == 0, done.stderr
    return {**built, "rest": (rest, json.loads(done.stdout))}


@pytest.fixture(scope="session")
def rest_build(
    docker_builds: dict[str, tuple[Build, dict[str, Any]]],
) -> tuple[Build, dict[str, Any]]:
    return docker_builds["rest"]


@pytest.fixture(scope="module", autouse=True)
def podman_build(
    stack: dict[str, Any],
    plugin: Plugin,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> Iterator["Future[tuple[Build, dict[str, Any]]] | None"]:
    """The REST image built on podman, started when this module starts and run beside its
    other tests (podman's build is the module's longest step and works in its own engine,
    while the tests mostly wait on Docker's): its test takes the result. Started only when
    that test is in the session and the stack has podman. The build's thread stays alive
    until the extension ends (its watcher's parent-death signal follows that thread)."""
    wanted = any(
        item.name == "test_same_inputs_same_inputs_sha256_on_docker_and_podman"
        for item in request.session.items
    )
    if not wanted or "CI_PODMAN_DOCKER_HOST" not in stack:
        yield None
        return

    # the bundle and lock here (the compiler is not shared across threads); the build there
    build = Build(stack, plugin, tmp_path_factory.mktemp("podman"), "rest", engine="PODMAN")
    with ThreadPoolExecutor(max_workers=1) as pool:
        started = pool.submit(lambda: (build, build.run_api()))
        yield started
        started.cancel()  # the test did not run: the build may still be under way


@pytest.fixture(scope="session")
def mcp_build(
    stack: dict[str, Any],
    plugin: Plugin,
    tmp_path_factory: pytest.TempPathFactory,
    docker_builds: dict[str, tuple[Build, dict[str, Any]]],
) -> tuple[Build, dict[str, Any]]:
    if "mcp" in docker_builds:
        return docker_builds["mcp"]
    build = Build(stack, plugin, tmp_path_factory.mktemp("mcp"), "mcp")
    return build, build.run_api()


def inspect(stack: dict[str, Any], tmp: Path, ref: str) -> dict[str, Any]:
    out = subprocess.run(
        [DOCKER, "image", "inspect", ref],
        env=docker_env(stack, tmp),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)[0]  # type: ignore[no-any-return]


def test_build_result_and_image_facts(
    stack: dict[str, Any], rest_build: tuple[Build, dict[str, Any]], tmp_path: Path
) -> None:
    build, result = rest_build
    assert result["published"] is False
    assert result["tag"] == build.request["tag"]
    assert result["platform"] == "linux/amd64"
    assert len(result["inputs_sha256"]) == 64
    image = inspect(stack, tmp_path, result["image_id"])
    assert image["Id"] == result["image_id"]
    assert image["Config"]["User"] == "65532:65532"
    assert (image["Os"], image["Architecture"]) == ("linux", "amd64")
    labels = image["Config"]["Labels"]
    assert labels["io.svcc.inputs-sha256"] == result["inputs_sha256"]
    plan = result["delivery_plan"]
    assert (
        labels["io.svcc.delivery-plan-sha256"]
        == (result["delivery_manifest"]["delivery_plan_sha256"])
    )
    assert plan["run"]["user"] == "65532:65532"
    assert plan["base_image"] == stack["BASE_IMAGE"]
    assert labels["org.opencontainers.image.created"] == "1970-01-01T00:00:00Z"
    for key in ("io.svcc.readiness-sha256", "io.svcc.interface-sha256"):
        assert len(labels[key]) == 64
    # the wheels were staged, hash-checked, into the context, and are not in the image
    assert any(p.startswith("wheels/") for p in result["delivery_manifest"]["files"])


REQUESTS: list[tuple[str, str, Any]] = [
    ("GET", "/health", None),
    ("POST", "/capabilities/shapes.geometry.circle_area", {"radius": 2, "unit": "cm"}),
    ("POST", "/capabilities/shapes.geometry.circle_area", {"unit": "cm"}),
    ("POST", "/capabilities/shapes.geometry.rectangle_area", {"rect": {"width": 2, "height": 3}}),
    ("POST", "/capabilities/shapes.geometry.scale", {"points": [[1, 2]], "factor": 3}),
    ("POST", "/capabilities/shapes.geometry.scale", {"points": "nope"}),
    ("POST", "/capabilities/shapes.geometry.describe", {"shape": {"kind": "dot"}, "precision": 2}),
    ("GET", "/openapi.json", None),
]

CALLER = """
import json, sys, urllib.error, urllib.request
out = []
for method, path, body in json.loads(sys.argv[1]):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request("http://127.0.0.1:8000" + path, data=data, method=method,
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            out.append([r.status, json.loads(r.read())])
    except urllib.error.HTTPError as e:
        out.append([e.code, json.loads(e.read())])
print(json.dumps(out))
"""


@pytest.fixture
def rest_container(
    stack: dict[str, Any], rest_build: tuple[Build, dict[str, Any]], tmp_path: Path
) -> Iterator[str]:
    env = docker_env(stack, tmp_path)
    cid = subprocess.run(
        [DOCKER, "run", "-d", "--rm", "--network", "none", rest_build[1]["image_id"]],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    try:
        yield cid
    finally:
        subprocess.run([DOCKER, "rm", "-f", cid], env=env, capture_output=True, check=False)


def exec_in(
    stack: dict[str, Any], tmp: Path, cid: str, *argv: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DOCKER, "exec", cid, *argv],
        env=docker_env(stack, tmp),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_rest_image_answers_like_svcc_serve(
    stack: dict[str, Any],
    rest_build: tuple[Build, dict[str, Any]],
    rest_container: str,
    tmp_path: Path,
) -> None:
    payload = json.dumps(REQUESTS)
    done = exec_in(
        stack,
        tmp_path,
        rest_container,
        "/opt/svc/venv/bin/python",
        "-c",
        WAIT_FOR_SERVER + CALLER,
        payload,
    )
    assert done.returncode == 0, done.stderr
    from_image = json.loads(done.stdout)
    with serving(rest_build[0].bundle) as server, server.client() as client:
        local = []
        for method, path, body in REQUESTS:
            response = client.request(method, path, json=body)
            local.append([response.status_code, response.json()])
    assert from_image == local
    assert [s for s, _ in from_image] == [200, 200, 422, 200, 200, 422, 200, 200]


def test_rest_image_user_and_no_engine_socket(
    stack: dict[str, Any], rest_container: str, tmp_path: Path
) -> None:
    probe = (
        "import glob, json, os; print(json.dumps([os.getuid(), os.getgid(), "
        "sorted(glob.glob('/run/**/*.sock', recursive=True) + glob.glob('/var/run/*.sock')), "
        "sorted(k for k in os.environ if k.startswith('DOCKER')), "
        "os.path.exists('/opt/svc/wheels')]))"
    )
    done = exec_in(stack, tmp_path, rest_container, "/opt/svc/venv/bin/python", "-c", probe)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [65532, 65532, [], [], False]


ML_REPO = Path(__file__).resolve().parents[1] / "fixtures" / "repos" / "ml"
FLOWERS = [([5.1, 3.5, 1.4, 0.2], "setosa"), ([6.7, 3.0, 5.2, 2.3], "virginica")]


def test_ml_image_carries_verifies_and_serves_its_declared_model(
    stack: dict[str, Any], plugin: Plugin, tmp_path: Path
) -> None:
    """The ML fixture (``[tool.svcc] data-files``): its model is an input of the build
    (named with its digest in the delivery plan), lands in the image, is verified at
    startup there, and the image answers with it (the one extra image of the suite)."""
    from svcc.compiler.pipeline import compile_path

    bundle = tmp_path / "bundle-ml"
    compile_path(ML_REPO, target="rest", output_dir=bundle)
    build = Build(stack, plugin, tmp_path / "ml", "rest", bundle=bundle)
    build.request["tag"] = "svcc-test/ml-rest:docker"
    result = build.run_api()
    model = "source/models/iris.json"
    assert result["delivery_plan"]["bundle"]["data_files"][model].startswith("sha256:")
    assert f"bundle/{model}" in result["delivery_manifest"]["files"]
    env = docker_env(stack, tmp_path)
    cid = subprocess.run(
        [DOCKER, "run", "-d", "--rm", "--network", "none", result["image_id"]],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    try:
        calls = [
            ["POST", "/capabilities/predict.predict", {"features": features}]
            for features, _ in FLOWERS
        ]
        done = exec_in(stack, tmp_path, cid, "/opt/svc/venv/bin/python", "-c",
                       WAIT_FOR_SERVER + CALLER, json.dumps(calls))  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == [[200, label] for _, label in FLOWERS]
        path = f"/opt/svc/bundle/{model}"
        copied = exec_in(stack, tmp_path, cid, "/opt/svc/venv/bin/python", "-c",
                         f"import sys; sys.stdout.write(open({path!r}).read())")  # fmt: skip
        assert copied.stdout == (ML_REPO / "models" / "iris.json").read_text()
    finally:
        subprocess.run([DOCKER, "rm", "-f", cid], env=env, capture_output=True, check=False)
    tamper = (
        "import os, shutil, subprocess, sys; shutil.copytree('/opt/svc/bundle', '/tmp/b'); "
        f"open('/tmp/b/{model}', 'w').write('{{}}'); os.chdir('/tmp/b'); "
        "sys.exit(subprocess.run([sys.executable, '-m', 'uvicorn', 'app:app']).returncode)"
    )
    refused = subprocess.run(
        [DOCKER, "run", "--rm", "--network", "none", result["image_id"],
         "/opt/svc/venv/bin/python", "-c", tamper],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert refused.returncode != 0
    assert f"{model} does not match its digest" in refused.stdout + refused.stderr


def test_mcp_image_over_stdio_with_the_official_client(
    stack: dict[str, Any], mcp_build: tuple[Build, dict[str, Any]], tmp_path: Path
) -> None:
    build, result = mcp_build
    env = docker_env(stack, tmp_path)
    # stdio by an explicit command: the image's own serves streamable HTTP on 8000
    stdio = ["/opt/svc/venv/bin/python", "-u", "server.py"]
    command = [DOCKER, "run", "-i", "--rm", "--network", "none", result["image_id"], *stdio]
    client = McpBundle(tmp_path, env=env, command=command)
    try:
        names = sorted(t.name for t in client.list_tools().tools)
        assert names == [f"shapes.geometry.{name}" for name in SHAPES]
        called = client.call("shapes.geometry.rectangle_area", {"rect": {"width": 2, "height": 3}})
        assert not called.is_error, called.content
        assert called.structured_content == {"result": 6.0}
    finally:
        client.close()
    image = inspect(stack, tmp_path, result["image_id"])
    assert image["Config"]["User"] == "65532:65532"
    assert image["Config"]["Cmd"] == [
        *stdio,
        "--transport",
        "streamable-http",
        "--host",
        "0.0.0.0",
        "--port",
        "8000",
    ]
    assert build.request["interface"] == "mcp"


MCP_HTTP_CALLER = """
import asyncio, json, httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

async def main():
    async with (
        httpx2.AsyncClient(timeout=30) as http,
        streamable_http_client("http://127.0.0.1:8000/mcp", http_client=http) as streams,
        ClientSession(*streams) as session,
    ):
        await session.initialize()
        tools = sorted(t.name for t in (await session.list_tools()).tools)
        called = await session.call_tool(
            "shapes.geometry.rectangle_area", {"rect": {"width": 2, "height": 3}}
        )
        print(json.dumps([tools, called.structured_content]))

asyncio.run(main())
"""


def test_mcp_image_serves_streamable_http_on_8000_by_default(
    stack: dict[str, Any], mcp_build: tuple[Build, dict[str, Any]], tmp_path: Path
) -> None:
    """The image's own command: the official client inside the container (no network)
    reaches ``/mcp`` on loopback; ``/health`` answers for the probes."""
    env = docker_env(stack, tmp_path)
    cid = subprocess.run(
        [DOCKER, "run", "-d", "--rm", "--network", "none", mcp_build[1]["image_id"]],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    try:
        script = WAIT_FOR_SERVER + MCP_HTTP_CALLER
        done = exec_in(stack, tmp_path, cid, "/opt/svc/venv/bin/python", "-c", script)
        assert done.returncode == 0, done.stderr
        tools, structured = json.loads(done.stdout)
        assert tools == [f"shapes.geometry.{name}" for name in SHAPES]
        assert structured == {"result": 6.0}
    finally:
        subprocess.run([DOCKER, "rm", "-f", cid], env=env, capture_output=True, check=False)


# --- refusals -----------------------------------------------------------------------------

GRANT_FIELDS = [
    ("permissions", ["image.build"]),
    ("plugin.version", "0.4.0"),
    ("plugin.sha256", "0" * 64),
    ("plugin.lock_sha256", "0" * 64),
    ("target.bundle", "/elsewhere"),
    ("target.interface", "mcp"),
    ("target.base_image", "registry.test:5444/ci/base@sha256:" + "1" * 64),
    ("target.platform", "linux/arm64"),
    ("target.tag", "other:tag"),
    ("target.requirements", "/elsewhere.lock"),
    ("target.wheelhouse", "/elsewhere"),
    ("target.engine.executable", "/usr/bin/docker"),
    ("target.engine.socket", "/run/docker.sock"),
    ("target.engine.builder", None),
]


@pytest.fixture(scope="session")
def refusal_build(
    stack: dict[str, Any], plugin: Plugin, tmp_path_factory: pytest.TempPathFactory
) -> Build:
    return Build(stack, plugin, tmp_path_factory.mktemp("refusals"), "rest")


@pytest.mark.parametrize(("field", "value"), GRANT_FIELDS, ids=[f for f, _ in GRANT_FIELDS])
def test_grant_mismatch_each_bound_field(refusal_build: Build, field: str, value: Any) -> None:
    with pytest.raises(ImageInputError) as info:
        refusal_build.run_api(policy=refusal_build.policy(**{field: value}))
    assert info.value.code == "grant_mismatch"
    assert field in info.value.message


def test_grant_missing_and_cli_keeps_core_codes(refusal_build: Build) -> None:
    policy = {"schema": "svc.operator-policy/v1", "grants": []}
    with pytest.raises(ImageInputError) as info:
        refusal_build.run_api(policy=policy)
    assert info.value.code == "grant_missing"
    done = refusal_build.run_cli(policy=refusal_build.policy(**{"target.tag": "x:y"}))
    assert done.returncode == 2
    assert "grant_mismatch" in done.stderr
    assert "target.tag" in done.stderr


def _refused_in_extension(build: Build, request: dict[str, Any], code: str) -> str:
    """Refused inside the extension, as the CLI shows it: ``plugin_failed``, the code and a
    one-line message (the engine's output only in the ``--log-file``)."""
    log = build.work / f"failure-{secrets.token_hex(4)}.log"
    done = build.run_cli(request=request, policy=_policy_for(build, request), log_file=log)
    found, detail, _ = cli_failure(done.stdout, done.stderr, done.returncode, log)
    assert found == code, detail
    return detail


def _policy_for(build: Build, request: dict[str, Any]) -> dict[str, Any]:
    saved = build.request
    build.request = request
    try:
        return build.policy()
    finally:
        build.request = saved


def test_unpinned_base_is_refused_and_the_cli_says_why(refusal_build: Build) -> None:
    request = {**refusal_build.request, "base_image": "registry.test:5444/ci/base:bookworm"}
    detail = _refused_in_extension(refusal_build, request, "base_not_pinned")
    assert "registry.test:5444/ci/base:bookworm" in detail


def test_a_base_that_needs_credentials_is_explained(
    stack: dict[str, Any], refusal_build: Build
) -> None:
    """The base in the authenticated registry: the build accepts no credentials, and the CLI
    says so in one line; the engine's own words are in the log file only."""
    # a digest no engine holds, so the engine must ask the registry (which wants credentials)
    base = f"{stack['REGISTRY']}/ci/private-base@sha256:{secrets.token_hex(32)}"
    request = {**refusal_build.request, "base_image": base}
    log = refusal_build.work / "auth-base.log"
    done = refusal_build.run_cli(
        request=request, policy=_policy_for(refusal_build, request), log_file=log
    )
    code, message, text = cli_failure(done.stdout, done.stderr, done.returncode, log)
    assert (code, message) == (
        "engine_failed",
        f"pulling the base {base}: unauthorized: the build accepts no registry credentials; "
        "use a base in a registry that allows anonymous pulls",
    )
    assert "401 Unauthorized" in text
    assert text.startswith("$ docker buildx build ")
    assert stack["REGISTRY_PASSWORD"] not in text + done.stderr


def test_lock_must_equal_the_resolved_set(refusal_build: Build, tmp_path: Path) -> None:
    lock = parse_lock(refusal_build.lock.read_bytes())
    missing = tmp_path / "missing.lock"
    missing.write_bytes(render_lock([w for w in lock.wheels if w.name != "h11"]))
    detail = _refused_in_extension(
        refusal_build, {**refusal_build.request, "requirements": str(missing)}, "lock_mismatch"
    )
    assert "h11" in detail
    wheelhouse = state_dir() / "wheelhouse" / "amd64"
    everything = lock_from_wheels(
        [
            Requirement("mcp>=2.3,<3"),
            Requirement("fastapi>=0.115,<1"),
            Requirement("swagger-ui-bundle-v2>=5.31,<6"),
            Requirement("uvicorn[standard]>=0.30,<1"),
            Requirement("prometheus-client>=0.20,<1"),
        ],
        wheelhouse.glob("*.whl"),
        marker_environment("linux/amd64", "3.11"),
    )
    extra = tmp_path / "extra.lock"
    extra.write_bytes(render_lock(everything))
    detail = _refused_in_extension(
        refusal_build, {**refusal_build.request, "requirements": str(extra)}, "lock_mismatch"
    )
    assert "mcp" in detail
    assert "not required" in detail


def _broken_bundle(build: Build, tmp: Path, how: str) -> Path:
    bundle = tmp / "bundle"
    shutil.copytree(build.bundle, bundle)
    manifest_path = bundle / "svc-rest.json"
    manifest = json.loads(manifest_path.read_text())
    if how == "symlink":
        target = bundle / "source" / "shapes" / "units.py"
        (tmp / "real.py").write_bytes(target.read_bytes())
        target.unlink()
        target.symlink_to(tmp / "real.py")
    elif how == "traversal":
        manifest["files"]["../outside.py"] = manifest["files"]["app.py"]
        manifest_path.write_text(json.dumps(manifest))
    elif how == "undeclared":
        (bundle / "extra.py").write_text("print('not declared')\n")
    elif how == "single-file":
        del manifest["bundle_kind"]
        manifest_path.write_text(json.dumps(manifest))
    elif how == "tampered":
        (bundle / "app.py").write_text("# changed\n")
    return bundle


@pytest.mark.parametrize(
    ("how", "words"),
    [
        ("symlink", "symlink"),
        ("traversal", "escapes"),
        ("undeclared", "extra.py: not declared"),
        ("single-file", "direct repository bundles only"),
        ("tampered", "differs from its manifest digest"),
    ],
)
def test_bundle_refusals(refusal_build: Build, tmp_path: Path, how: str, words: str) -> None:
    bundle = _broken_bundle(refusal_build, tmp_path, how)
    detail = _refused_in_extension(
        refusal_build, {**refusal_build.request, "bundle": str(bundle)}, "bundle_invalid"
    )
    assert words in detail


def test_ignored_files_are_not_copied(refusal_build: Build, tmp_path: Path) -> None:
    """.git, .env and key files beside the bundle are skipped, not an error: the build goes
    on to the engine (here stopped at once by the log budget)."""
    bundle = tmp_path / "bundle"
    shutil.copytree(refusal_build.bundle, bundle)
    (bundle / ".git").mkdir()
    (bundle / ".git" / "config").write_text("[core]\n")
    (bundle / ".env").write_text("SECRET=1\n")
    (bundle / "server.key").write_text("key\n")
    request = {**refusal_build.request, "bundle": str(bundle), "max_log_bytes": 1}
    _refused_in_extension(refusal_build, request, "log_budget_exceeded")


@pytest.mark.parametrize(
    "endpoint", ["tcp://127.0.0.1:2375", "ssh://builder@host", "relative.sock"]
)
def test_tcp_and_ssh_engines_are_refused(refusal_build: Build, endpoint: str) -> None:
    request = copy.deepcopy(refusal_build.request)
    request["engine"]["socket"] = endpoint
    with pytest.raises(ImageInputError) as info:
        refusal_build.run_api(request=request, policy=_policy_for(refusal_build, request))
    assert info.value.code == "engine_refused"


def test_timeout_and_log_budget(refusal_build: Build) -> None:
    _refused_in_extension(refusal_build, {**refusal_build.request, "timeout_ms": 1}, "timeout")
    _refused_in_extension(
        refusal_build, {**refusal_build.request, "max_log_bytes": 64}, "log_budget_exceeded"
    )
    # the core's own bound on the extension
    with pytest.raises(PluginFailure) as info:
        refusal_build.run_api(timeout_ms=1)
    assert info.value.code == "timeout"


def test_plugin_hash_mismatch_and_pth_wheel(plugin: Plugin, tmp_path: Path) -> None:
    root = tmp_path / "plugins"
    done = svcc(
        "plugins",
        "install",
        str(plugin.wheel),
        "--sha256",
        "0" * 64,
        "--requirements",
        str(plugin.lock),
        "--wheelhouse",
        str(plugin.wheelhouse),
        "--plugins-dir",
        str(root),
        check=False,
    )
    assert done.returncode == 2
    assert "plugin_hash_mismatch" in done.stderr
    evil = tmp_path / plugin.wheel.name
    shutil.copy(plugin.wheel, evil)
    with zipfile.ZipFile(evil, "a") as archive:
        archive.writestr("svc_oci_hook.pth", "import os\n")
    done = svcc(
        "plugins",
        "install",
        str(evil),
        "--sha256",
        _sha256(evil),
        "--requirements",
        str(plugin.lock),
        "--wheelhouse",
        str(plugin.wheelhouse),
        "--plugins-dir",
        str(root),
        check=False,
    )
    assert done.returncode == 2
    assert "plugin_invalid" in done.stderr
    assert "svc_oci_hook.pth" in done.stderr
    # a locked dependency with a start-up hook (setuptools ships distutils-precedence.pth)
    setuptools = next(plugin.wheelhouse.glob("setuptools-*.whl"))
    name, version = setuptools.name.split("-")[:2]
    hooked = tmp_path / "hooked.lock"
    hooked.write_text(
        plugin.lock.read_text() + f"{name}=={version} --hash=sha256:{_sha256(setuptools)}\n"
    )
    done = svcc(
        "plugins",
        "install",
        str(plugin.wheel),
        "--sha256",
        _sha256(plugin.wheel),
        "--requirements",
        str(hooked),
        "--wheelhouse",
        str(plugin.wheelhouse),
        "--plugins-dir",
        str(root),
        check=False,
    )
    assert done.returncode == 2
    assert "distutils-precedence.pth" in done.stderr
    assert not root.exists() or not any(root.rglob("install.json"))


def test_disabled_plugin_does_not_run(
    plugin: Plugin,
    refusal_build: Build,
    podman_build: "Future[tuple[Build, dict[str, Any]]] | None",
) -> None:
    if podman_build is not None:  # not while the podman build runs the plugin
        podman_build.exception()
    svcc("plugins", "disable", "svc-oci", "--plugins-dir", str(plugin.root))
    try:
        with pytest.raises(ImageInputError) as info:
            refusal_build.run_api()
        assert info.value.code == "plugin_not_enabled"
    finally:
        svcc(
            "plugins",
            "enable",
            "svc-oci",
            "--version",
            plugin.record["version"],
            "--plugins-dir",
            str(plugin.root),
        )


def test_same_inputs_same_inputs_sha256_on_docker_and_podman(
    stack: dict[str, Any],
    podman_build: "Future[tuple[Build, dict[str, Any]]] | None",
    rest_build: tuple[Build, dict[str, Any]],
) -> None:
    if podman_build is None:
        pytest.skip("the stack has no podman engine: `.ci/oci/ci-stack-up.sh STATEDIR` starts one")
    build, result = podman_build.result()
    docker_result = rest_build[1]
    assert result["inputs_sha256"] == docker_result["inputs_sha256"]
    assert result["delivery_plan"] == docker_result["delivery_plan"]
    assert result["delivery_manifest"]["files"] == docker_result["delivery_manifest"]["files"]
    out = subprocess.run(
        [DOCKER, "image", "inspect", result["image_id"]],
        env=docker_env(stack, build.work, "PODMAN"),
        capture_output=True,
        text=True,
        check=True,
    )
    image = json.loads(out.stdout)[0]
    assert image["Config"]["User"] == "65532:65532"
    assert image["Config"]["Labels"]["io.svcc.inputs-sha256"] == result["inputs_sha256"]


def test_a_killed_build_leaves_no_process_and_no_folder(refusal_build: Build) -> None:
    """SIGKILL of ``svcc plugins run svc-oci build`` while the engine client builds: the
    extension, its engine client (each in a session of its own) and the folders the
    extension works in (under its ``svc-plugin-*`` TMPDIR) all go."""

    from test_process_lifetime import gone, running_below, survivors

    args, pol = refusal_build.files()
    private = refusal_build.work / "tmp-killed"
    private.mkdir()
    proc = subprocess.Popen(
        [SVCC, "plugins", "run", "svc-oci", "build", "--arguments", str(args),
         "--operator-policy", str(pol), "--timeout-ms", "600000",
         "--plugins-dir", str(refusal_build.plugin.root)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "TMPDIR": str(private)},
    )  # fmt: skip
    building = b"buildx\0build\0"
    started: set[int] = set()
    try:
        started = running_below(proc, building, 300)
    finally:
        proc.kill()
        proc.wait()
    assert survivors(started) == set()
    assert gone(set(private.iterdir())) == []
