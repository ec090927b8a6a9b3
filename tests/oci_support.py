"""The OCI stack (``.ci/oci``) as the tests see it, and the inputs of image builds.

The stack is stood up by ``.ci/run`` (``.ci/oci/ci-stack-up.sh``) and described by
``stack.json`` in ``$SVCC_OCI_STATE`` (default ``<checkout>/.oci-state``); tests that need
it skip with the reason when it or its wheelhouse is absent.
"""

import json
import os
import re
import stat
import subprocess
from pathlib import Path
from typing import Any

from helpers import ROOT
from packaging.requirements import Requirement
from svcc.compiler.options import CompileOptions
from svcc.compiler.pipeline import compile_path
from svcc.contracts.target import FileTree
from svcc.images.lockfile import render_lock
from svcc.images.resolve import lock_from_wheels, marker_environment

EXAMPLE = ROOT / "examples" / "shapes.py"
# a src-layout package whose served module imports a helper module of its own
SHAPES_REPO = ROOT / "tests" / "fixtures" / "repos" / "shapes"
SHAPES = ("circle_area", "describe", "rectangle_area", "scale")
SHAPES_SELECT = ",".join(f"shapes.geometry.{name}" for name in SHAPES)


def state_dir() -> Path:
    return Path(os.environ.get("SVCC_OCI_STATE") or ROOT / ".oci-state")


UP = ".ci/oci/ci-stack-up.sh {state} && .ci/oci/wheelhouse.sh {state}"

# Put before a script that ``docker exec`` runs in a just-started container: it waits, in
# there, for the server's /health on port 8000. One exec then replaces a poll of execs, each
# of which cost a docker exec and an interpreter start (and the MCP client's imports).
WAIT_FOR_SERVER = """
import time as _time, urllib.request as _request
_deadline = _time.monotonic() + 60
while True:
    try:
        _request.urlopen("http://127.0.0.1:8000/health", timeout=2).close()
        break
    except Exception:
        if _time.monotonic() > _deadline:
            raise
        _time.sleep(0.05)
"""


class Started:
    """A command under way, its output going to ``PREFIX.stdout`` and ``PREFIX.stderr`` (two
    pipes nobody reads meanwhile would stall it once one filled): :meth:`result` waits for
    it, :meth:`stop` kills it if it still runs. Tests start one to run beside other work."""

    def __init__(self, argv: list[str], prefix: Path, **popen: Any) -> None:
        self.stdout, self.stderr = Path(f"{prefix}.stdout"), Path(f"{prefix}.stderr")
        with self.stdout.open("wb") as out, self.stderr.open("wb") as err:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=err, **popen)

    def result(self, timeout: float = 1500) -> "subprocess.CompletedProcess[str]":
        try:
            code = self.proc.wait(timeout=timeout)
        finally:
            self.stop()
        out, err = self.stdout.read_text(), self.stderr.read_text()
        return subprocess.CompletedProcess(self.proc.args, code, out, err)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def stand_up(state: Path) -> str:
    """The command that stands the stack up (CONTRIBUTING.md: root, Debian, 2-5 min)."""
    return UP.format(state=state)


def load_stack() -> dict[str, Any] | str:
    """The stack's description, or why it is not there (the skip reason, naming the command)."""
    path = state_dir() / "stack.json"
    if not path.is_file():
        return (
            f"no OCI stack ({path} is absent): as root on Debian, run "
            f"`{stand_up(path.parent)}` (2-5 min; CONTRIBUTING.md) and set SVCC_OCI_STATE"
        )
    stack: dict[str, Any] = json.loads(path.read_text())
    env = stack["env"]
    sock = env.get("CI_DOCKER_DOCKER_HOST", "").removeprefix("unix://")
    if not sock or not Path(sock).is_socket():
        return (
            f"the OCI stack in {path.parent} is not running (no Docker socket {sock!r}): "
            f"run `{stand_up(path.parent)}`"
        )
    if not (state_dir() / "wheelhouse" / "amd64").is_dir():
        return f"no wheelhouse in {path.parent}: run `.ci/oci/wheelhouse.sh {path.parent}`"
    return stack


def write_tree(tree: FileTree, out: Path) -> Path:
    for path, data in tree:
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return out


def repository_bundle(out: Path, interface: str) -> Path:
    """The direct repository bundle of ``SHAPES_REPO`` (``svcc compile DIR --target
    rest|mcp``), serving the four ``shapes.geometry`` capabilities."""
    compile_path(
        SHAPES_REPO, target=interface, output_dir=out, options=CompileOptions(select=SHAPES_SELECT)
    )
    return out


def image_lock(bundle: Path, wheelhouse: Path, out: Path, platform: str = "linux/amd64") -> Path:
    """The exact lock of the bundle's requirements from the wheelhouse."""
    roots = [
        Requirement(line)
        for name in ("requirements.txt", "application-requirements.txt")
        if (bundle / name).is_file()
        for line in (bundle / name).read_text().splitlines()
        if line.strip()
    ]
    wheels = lock_from_wheels(roots, wheelhouse.glob("*.whl"), marker_environment(platform, "3.11"))
    out.write_bytes(render_lock(wheels))
    return out


def install_plugin(work: Path, svcc: str, svcc_wheel: Path) -> dict[str, Any]:
    """Build the svc-oci wheel (``svcc_wheel`` is the session's, the ``svcc_wheel`` fixture),
    lock svc-oci's dependencies from the stack's plugin wheelhouse, install and enable it
    under ``work/plugins``: the install record plus ``plugins_dir``, ``wheel``, ``lock`` and
    ``wheelhouse``."""
    import hashlib
    import shutil

    from svcc.plugins.fetch import build_wheel

    wheelhouse = work / "wheelhouse"
    shutil.copytree(state_dir() / "wheelhouse" / "plugin", wheelhouse)
    built = work / "built"
    built.mkdir()
    ext_wheel = build_wheel(ROOT / "extensions" / "svc-oci", built)
    shutil.copy(svcc_wheel, wheelhouse)
    locked = lock_from_wheels(
        [Requirement("svcc")], wheelhouse.glob("*.whl"), marker_environment("linux/amd64", "3.11")
    )
    lock = work / "plugin.lock"
    lock.write_bytes(render_lock(locked))
    root = work / "plugins"
    sha = hashlib.sha256(ext_wheel.read_bytes()).hexdigest()

    def run(*args: str) -> Any:
        done = subprocess.run(
            [svcc, "plugins", *args, "--plugins-dir", str(root)],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            raise AssertionError(f"svcc plugins {args[0]}: {done.stderr}")
        return json.loads(done.stdout)

    record: dict[str, Any] = run(
        "install",
        str(ext_wheel),
        "--sha256",
        sha,
        "--requirements",
        str(lock),
        "--wheelhouse",
        str(wheelhouse),
    )
    installed_disabled = [p["enabled"] for p in run("list")] == [False]
    run("enable", "svc-oci", "--version", record["version"])
    return {
        **record,
        "plugins_dir": root,
        "wheel": ext_wheel,
        "lock": lock,
        "wheelhouse": wheelhouse,
        "installed_disabled": installed_disabled,
    }


def build_request(
    stack_env: dict[str, str],
    bundle: Path,
    lock: Path,
    interface: str,
    *,
    tag: str,
    engine: str = "DOCKER",
    docker: str = "/usr/local/bin/docker",
) -> dict[str, Any]:
    return {
        "schema": "svc.oci-build/v1",
        "bundle": str(bundle),
        "interface": interface,
        "base_image": stack_env["BASE_IMAGE"],
        "platform": "linux/amd64",
        "tag": tag,
        "requirements": str(lock),
        "wheelhouse": str(state_dir() / "wheelhouse" / "amd64"),
        "engine": {
            "executable": docker,
            "socket": stack_env[f"CI_{engine}_DOCKER_HOST"].removeprefix("unix://"),
            "builder": stack_env["CI_DOCKER_BUILDX"] if engine == "DOCKER" else None,
        },
        "timeout_ms": 480_000,
    }


def build_policy(request: dict[str, Any], plugin: dict[str, Any]) -> dict[str, Any]:
    """The ``image.build`` grant that admits exactly ``request`` for the installed plugin."""
    target = {
        k: v for k, v in request.items() if k not in ("schema", "timeout_ms", "max_log_bytes")
    }
    return {
        "schema": "svc.operator-policy/v1",
        "grants": [
            {
                "operation": "image.build",
                "permissions": ["image.build", "registry.read"],
                "plugin": {k: plugin[k] for k in ("name", "version", "sha256", "lock_sha256")},
                "target": json.loads(json.dumps(target)),
            }
        ],
    }


FAILURE_LINE = re.compile(r"svcc: error: plugin_failed: ([a-z_]+): (.+)\n")


def cli_failure(stdout: str, stderr: str, returncode: int, log: Path) -> tuple[str, str, str]:
    """A failure inside the extension as the CLI shows it: exit 1, nothing on stdout, one
    line ``plugin_failed: CODE: MESSAGE`` on stderr, and the engine's output only in the new
    0600 log file: ``(code, message, log text)``."""
    assert returncode == 1, stderr
    assert stdout == ""
    found = FAILURE_LINE.fullmatch(stderr)
    assert found is not None, stderr
    assert log.is_file(), "the log file is created whatever the outcome"
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    return found.group(1), found.group(2), log.read_text("utf-8", "replace")
