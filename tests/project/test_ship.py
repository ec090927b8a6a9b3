"""The manual's walkthrough (docs/tutorial/repository-to-cluster.md), run as written:
``examples/ship.sh`` takes ``examples/shop`` (a
multi-module repository with a numpy dependency and a data file) from repository to lock,
build, push and Kubernetes base on the test stack (.ci/oci): Docker all the way, podman up to
the build (its API, 1.41, is too old for push). Then what a person would check: the image
serves the shop (numpy included), the logs are private and hold no credential, and a lock
that does not match its wheels is refused naming the package.
"""

import base64
import hashlib
import json
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT, SVCC
from oci_support import WAIT_FOR_SERVER, Started, cli_failure, load_stack, state_dir

pytestmark = pytest.mark.slow
SHIP = ROOT / "examples" / "ship.sh"
DOCKER = shutil.which("docker") or "/usr/local/bin/docker"
STEPS = (
    "1. the bundle",
    "2. the wheel lock",
    "3. the svc-oci extension",
    "4. the request files",
    "5. build",
    "6. push",
    "7. the Kubernetes base",
)


@pytest.fixture(scope="module")
def stack() -> dict[str, Any]:
    found = load_stack()
    if isinstance(found, str):
        pytest.skip(found)
    if not (state_dir() / "wheelhouse" / "app").is_dir():
        state = state_dir()
        pytest.skip(
            f"no numpy wheel in {state}/wheelhouse/app: run `.ci/oci/wheelhouse.sh {state}`"
        )
    if not os.access(DOCKER, os.X_OK):
        pytest.skip("no docker client: `.ci/oci/ci-stack-up.sh STATEDIR` installs it")
    return found["env"]  # type: ignore[no-any-return]


class Ship:
    def __init__(self, stack: dict[str, Any], work: Path) -> None:
        self.stack = stack
        self.work = work
        self.password = stack["REGISTRY_PASSWORD"]
        self.auth = base64.b64encode(f"{stack['REGISTRY_USER']}:{self.password}".encode()).decode()
        self.credentials = work / "auth.json"
        self.credentials.write_text(json.dumps({"auths": {stack["REGISTRY"]: {"auth": self.auth}}}))
        wheels = state_dir() / "wheelhouse"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("PIP_")},
            "PIP_CONFIG_FILE": os.devnull,  # the machine's pip configuration plays no part
            "BASE_IMAGE": stack["BASE_IMAGE"],
            "ENGINE": DOCKER,
            "CREDENTIALS": str(self.credentials),
            "CA_FILE": stack["REGISTRY_CA"],
            "SVCC": SVCC,
            # offline and deterministic: the stack's wheelhouses stand in for the index
            "LOCK_ARGS": f"--no-index --find-links {wheels}/amd64 --find-links {wheels}/app",
            "FETCH_ARGS": f"--no-index --find-links {wheels}/plugin",
        }

    def start(self, out: Path, engine: str, **extra: str) -> Started:
        """``examples/ship.sh OUT`` on ``engine``, started (its output beside ``out``)."""
        env = {
            **self.env,
            "ENGINE_SOCKET": self.stack[f"CI_{engine}_DOCKER_HOST"].removeprefix("unix://"),
            "DESTINATION": f"{self.stack['REGISTRY']}/ship{os.urandom(4).hex()}/shop:1.0",
            **extra,
        }
        return Started(["bash", str(SHIP), str(out)], out.parent / out.name, env=env)


@pytest.fixture(scope="module")
def ship(stack: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Ship:
    return Ship(stack, tmp_path_factory.mktemp("ship"))


def _podman_socket(stack: dict[str, Any]) -> str | None:
    sock = stack.get("CI_PODMAN_DOCKER_HOST", "").removeprefix("unix://")
    return sock if sock and Path(sock).is_socket() else None


@pytest.fixture(scope="module")
def podman_walk(ship: Ship, request: pytest.FixtureRequest) -> Iterator[Started | None]:
    """The walkthrough on podman up to the build (``UNTIL=5``), started beside Docker's: the
    two are independent (engines, directories, destinations) and each mostly keeps one core
    busy or waits on its engine (svcc, pip, the build), so on two cores they overlap.
    Started only when its test is in the session and the stack has podman."""
    wanted = any(item.name == "test_podman_runs_the_walkthrough_up_to_the_build"
                 for item in request.session.items)  # fmt: skip
    if not wanted or _podman_socket(ship.stack) is None:
        yield None
        return
    walk = ship.start(ship.work / "podman", "PODMAN", UNTIL="5")
    try:
        yield walk
    finally:
        walk.stop()


@pytest.fixture(scope="module")
def shipped(
    ship: Ship, podman_walk: Started | None
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    out = ship.work / "docker"
    done = ship.start(out, "DOCKER", BUILDER=ship.stack["CI_DOCKER_BUILDX"]).result()
    assert done.returncode == 0, done.stdout + done.stderr
    return out, done


def docker(stack: dict[str, Any], tmp: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    (tmp / "docker-config").mkdir(exist_ok=True)
    env = {
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "DOCKER_HOST": stack["CI_DOCKER_DOCKER_HOST"],
        "DOCKER_CONFIG": str(tmp / "docker-config"),
    }
    return subprocess.run(
        [DOCKER, *argv], env=env, capture_output=True, text=True, check=False, timeout=120
    )


def test_every_step_is_printed_and_the_image_is_published_and_deployable(
    shipped: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    out, done = shipped
    headers = [line for line in done.stdout.splitlines() if line.startswith("== ")]
    assert [h.removeprefix("== ")[: len(s)] for h, s in zip(headers, STEPS, strict=True)] == list(
        STEPS
    )
    commands = [line for line in done.stderr.splitlines() if line.startswith("$ ")]
    for word in ("lock", "plugins fetch", "image plan", "plugins run svc-oci build", "push"):
        assert any(word in c for c in commands), word
    lock = (out / "server.lock").read_text()
    assert "numpy==2.2.6 --hash=sha256:" in lock
    build = json.loads((out / "build-result.json").read_text())
    push = json.loads((out / "push-result.json").read_text())
    assert (push["published"], push["image_id"]) == (True, build["image_id"])
    assert push["digest_reference"] in done.stdout
    deployment = (out / "k8s" / "deployment.yaml").read_text()
    assert f"image: {push['digest_reference']}" in deployment
    # svcc proposed the policy; the run used the operator's copy, never the proposal
    proposal = json.loads((out / "plan" / "operator-policy.proposed.json").read_text())
    granted = json.loads((out / "policy.json").read_text())
    assert proposal.pop("proposed_by") == "svcc image plan"
    assert proposal == granted
    assert [g["operation"] for g in granted["grants"]] == ["image.build", "image.push"]


def test_the_image_serves_the_shop_with_numpy(
    stack: dict[str, Any], shipped: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    out, _ = shipped
    image = json.loads((out / "build-result.json").read_text())["image_id"]
    started = docker(stack, tmp_path, "run", "-d", "--rm", "--network", "none", image)
    assert started.returncode == 0, started.stderr
    cid = started.stdout.strip()
    call = (
        "import json, urllib.request\n"
        "def post(name, body):\n"
        "    req = urllib.request.Request('http://127.0.0.1:8000/capabilities/' + name,"
        " method='POST', data=json.dumps(body).encode(),"
        " headers={'content-type': 'application/json'})\n"
        "    return json.loads(urllib.request.urlopen(req, timeout=10).read())\n"
        "print(json.dumps([post('shop.stats.summary', {'prices': [1, 2, 3, 10]}),"
        " post('shop.catalog.price_of', {'sku': 'mug'})]))\n"  # the declared data file
    )
    try:
        done = docker(
            stack, tmp_path, "exec", cid, "/opt/svc/venv/bin/python", "-c", WAIT_FOR_SERVER + call
        )
    finally:
        docker(stack, tmp_path, "rm", "-f", cid)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [{"mean": 4.0, "median": 2.5, "p90": 7.9}, 12.5]


def test_logs_are_private_complete_and_hold_no_credential(
    ship: Ship, shipped: tuple[Path, subprocess.CompletedProcess[str]]
) -> None:
    out, done = shipped
    build_log = (out / "build.log").read_text()
    push_log = (out / "push.log").read_text()
    for log in (out / "build.log", out / "push.log"):
        assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert "load build definition from Containerfile" in build_log  # the engine's own output
    assert "$ docker push " in push_log
    for text in (build_log, push_log, done.stdout, done.stderr):
        assert ship.password not in text
        assert ship.auth not in text
    # the results carry no log
    assert "load build definition" not in (out / "build-result.json").read_text()


def _plan_and_build(ship: Ship, out: Path, name: str, lock: Path, wheels: Path) -> tuple[str, str]:
    """``svcc image plan`` for this lock and wheelhouse, the proposal granted as is, then the
    build through the CLI: ``(code, message)`` of its failure."""
    stack = ship.stack
    plan = out / f"plan-{name}"
    planned = subprocess.run(
        [
            SVCC,
            "image",
            "plan",
            str(out / "bundle"),
            "--interface",
            "rest",
            "--base-image",
            stack["BASE_IMAGE"],
            "--platform",
            "linux/amd64",
            "--tag",
            f"shop:{name}",
            "--destination",
            f"{stack['REGISTRY']}/refused/shop:1",
            "--lock",
            str(lock),
            "--wheelhouse",
            str(wheels),
            "--engine-executable",
            DOCKER,
            "--engine-socket",
            stack["CI_DOCKER_DOCKER_HOST"].removeprefix("unix://"),
            "--credentials",
            str(ship.credentials),
            "--plugins-dir",
            str(out / "plugins"),
            "--output-dir",
            str(plan),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert planned.returncode == 0, planned.stderr
    policy = json.loads((plan / "operator-policy.proposed.json").read_text())
    del policy["proposed_by"]
    (plan / "policy.json").write_text(json.dumps(policy))
    log = plan / "build.log"
    done = subprocess.run(
        [
            SVCC,
            "plugins",
            "run",
            "svc-oci",
            "build",
            "--arguments",
            str(plan / "build.json"),
            "--operator-policy",
            str(plan / "policy.json"),
            "--timeout-ms",
            "600000",
            "--plugins-dir",
            str(out / "plugins"),
            "--log-file",
            str(log),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    code, message, _ = cli_failure(done.stdout, done.stderr, done.returncode, log)
    return code, message


def test_a_changed_a_missing_wheel_and_an_extra_package_are_refused_by_name(
    ship: Ship, shipped: tuple[Path, subprocess.CompletedProcess[str]]
) -> None:
    out, _ = shipped
    lock = out / "server.lock"
    (numpy,) = (out / "wheels").glob("numpy-*.whl")

    changed = out / "wheels-changed"
    shutil.copytree(out / "wheels", changed)
    with (changed / numpy.name).open("ab") as handle:
        handle.write(b"\0")
    code, message = _plan_and_build(ship, out, "changed", lock, changed)
    assert code == "wheel_invalid"
    assert "numpy" in message

    missing = out / "wheels-missing"
    shutil.copytree(out / "wheels", missing)
    (missing / numpy.name).unlink()
    code, message = _plan_and_build(ship, out, "missing", lock, missing)
    assert code == "wheel_invalid"
    assert "numpy" in message

    extra = out / "wheels-extra"
    shutil.copytree(out / "wheels", extra)
    # a wheel of the wheelhouse the REST server does not need (the MCP server's)
    (other,) = (state_dir() / "wheelhouse" / "amd64").glob("mcp-*.whl")
    shutil.copy(other, extra)
    extra_lock = out / "extra.lock"
    version = other.name.split("-")[1]
    digest = hashlib.sha256(other.read_bytes()).hexdigest()
    extra_lock.write_text(lock.read_text() + f"mcp=={version} --hash=sha256:{digest}\n")
    code, message = _plan_and_build(ship, out, "extra", extra_lock, extra)
    assert code == "lock_mismatch"
    assert "mcp" in message


def test_podman_runs_the_walkthrough_up_to_the_build(
    ship: Ship, podman_walk: Started | None, shipped: tuple[Path, subprocess.CompletedProcess[str]]
) -> None:
    """podman's API (1.41) builds; push needs 1.46 (``engine_unsupported``): UNTIL=5."""
    if podman_walk is None:
        pytest.skip("the stack has no podman engine: `.ci/oci/ci-stack-up.sh STATEDIR` starts one")
    out = ship.work / "podman"
    done = podman_walk.result()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "stopped after step 5" in done.stdout
    podman_build = json.loads((out / "build-result.json").read_text())
    docker_build = json.loads((shipped[0] / "build-result.json").read_text())
    # the same inputs on both engines (the wheels, the bundle, the context)
    assert podman_build["inputs_sha256"] == docker_build["inputs_sha256"]
    assert (out / "build.log").stat().st_size > 0


def test_plan_from_the_repository_compiles_the_bundle_into_the_plan(
    ship: Ship, shipped: tuple[Path, subprocess.CompletedProcess[str]]
) -> None:
    """``svcc image plan REPO``: the bundle is compiled into the output directory (as
    ``svcc compile`` does), and the request is the one the walkthrough built from it."""
    out, _ = shipped
    plan = out / "plan-from-repo"
    done = subprocess.run(
        [SVCC, "image", "plan", str(ROOT / "examples" / "shop"), "--select",
         "shop.pricing.total,shop.pricing.line,shop.stats.summary,shop.catalog.price_of",
         "--interface", "rest",
         "--base-image", ship.stack["BASE_IMAGE"], "--platform", "linux/amd64",
         "--tag", "shop:ship", "--destination", f"{ship.stack['REGISTRY']}/team/shop:1.0",
         "--lock", str(out / "server.lock"), "--wheelhouse", str(out / "wheels"),
         "--engine-executable", DOCKER, "--engine-socket", "/run/docker.sock",
         "--credentials", str(ship.credentials), "--plugins-dir", str(out / "plugins"),
         "--output-dir", str(plan)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    build = json.loads((plan / "build.json").read_text())
    assert build["bundle"] == str(plan / "bundle-rest")
    compiled = sorted(p.name for p in (plan / "bundle-rest" / "source" / "shop").iterdir())
    assert compiled == sorted(p.name for p in (out / "bundle" / "source" / "shop").iterdir())
    assert (plan / "bundle-rest" / "openapi.json").read_bytes() == (
        out / "bundle" / "openapi.json"
    ).read_bytes()


def _step(words: list[str]) -> str:
    """What a svcc command line does: ``compile rest``, ``lock``, ``plugins run build``..."""
    if words[0] == "compile":
        return f"compile {words[words.index('--target') + 1]}"
    if words[:2] == ["plugins", "run"]:
        return f"plugins run {words[3]}"
    return " ".join(words[:2]) if words[0] in ("plugins", "image") else words[0]


def test_the_manual_walkthrough_is_the_script() -> None:
    """Every command of the manual's images walkthrough is one ship.sh runs, in order."""
    page = (ROOT / "docs" / "tutorial" / "repository-to-cluster.md").read_text()
    section = page.split("## The walkthrough", 1)[1]
    block = section.split("```", 2)[1].replace("\\\n", " ")
    shown = [_step(line.split()[1:]) for line in block.splitlines() if line.startswith("svcc ")]
    script = SHIP.read_text().replace("\\\n", " ").replace('"${PLAN[@]}"', "image plan")
    ran = [
        _step(line.split('"$SVCC"', 1)[1].split())
        for line in script.splitlines()
        if line.lstrip().startswith('run "$SVCC"')
    ]
    assert shown == ran
    assert ran == [
        "compile rest", "lock", "plugins fetch", "plugins install", "plugins enable",
        "image plan", "plugins run build", "image plan", "plugins run push", "compile k8s",
    ]  # fmt: skip
