"""Image builds on the .ci/oci stack: cold and warm ``svc plugins run svc-oci build`` of the
example (REST), the image size, whether two cold builds give the same image (config digest
under SOURCE_DATE_EPOCH and BuildKit's timestamp rewriting), and the ratio of a warm svc-oci
build to a warm hand-run ``docker buildx build`` of the same context (the baseline: the
engine's own time, measured in the same run).

Usage: ``python bench/bench_oci.py`` (needs the stack: ``.ci/oci/ci-stack-up.sh .oci-state``
and ``.ci/oci/wheelhouse.sh .oci-state``). It empties the stack engine's build cache.
Not part of the test suite; it never asserts a time.

Measured here (Docker Engine 28.5.2, classic overlay2 image store): two cold builds do not give
the same image: the layers of the COPY steps differ (directory times). BuildKit's
``rewrite-timestamp`` is not applied by the docker driver's exporter into the classic store,
and its OCI exporter needs the containerd image store; ``inputs_sha256`` and the context bytes
are stable.
"""

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
SVCC = str(Path(sys.executable).parent / "svcc")
DOCKER = "/usr/local/bin/docker"


def main() -> int:
    from oci_support import (
        build_policy,
        build_request,
        image_lock,
        install_plugin,
        load_stack,
        repository_bundle,
        state_dir,
    )

    stack = load_stack()
    if isinstance(stack, str):
        print(f"skipped: {stack}")
        return 0
    env: dict[str, str] = stack["env"]
    with tempfile.TemporaryDirectory(prefix="svcc-bench-oci-") as tmp:
        work = Path(tmp)
        (work / "docker-config").mkdir()
        denv = {
            "PATH": "/usr/bin:/bin",
            "DOCKER_HOST": env["CI_DOCKER_DOCKER_HOST"],
            "DOCKER_CONFIG": str(work / "docker-config"),
        }
        plugin = install_plugin(work / "plugin", SVCC)
        bundle = repository_bundle(work / "bundle", "rest")
        lock = image_lock(bundle, state_dir() / "wheelhouse" / "amd64", work / "rest.lock")
        request = build_request(
            env, bundle, lock, "rest", tag="svcc-bench/shapes:cold", docker=DOCKER
        )
        (work / "build.json").write_text(json.dumps(request))
        (work / "policy.json").write_text(json.dumps(build_policy(request, plugin)))

        def docker(*args: str) -> str:
            return subprocess.run(
                [DOCKER, *args], env=denv, capture_output=True, text=True, check=True
            ).stdout

        def build() -> tuple[float, dict[str, Any]]:
            start = time.perf_counter()
            done = subprocess.run(
                [
                    SVCC,
                    "plugins",
                    "run",
                    "svc-oci",
                    "build",
                    "--arguments",
                    str(work / "build.json"),
                    "--operator-policy",
                    str(work / "policy.json"),
                    "--timeout-ms",
                    "600000",
                    "--plugins-dir",
                    str(plugin["plugins_dir"]),
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            elapsed = time.perf_counter() - start
            if done.returncode != 0:
                raise SystemExit(f"build failed: {done.stderr}")
            return elapsed, json.loads(done.stdout)

        def cold() -> tuple[float, dict[str, Any]]:
            subprocess.run(
                [DOCKER, "image", "rm", "-f", request["tag"]],
                env=denv,
                capture_output=True,
                check=False,
            )
            docker("builder", "prune", "-af")
            return build()

        cold1, first = cold()
        size = int(docker("image", "inspect", "--format", "{{.Size}}", first["image_id"]))
        cold2, second = cold()
        warm, third = build()

        # baseline: the same context built by hand (wheels staged), warm
        ctx = work / "context"
        target_files = first["delivery_manifest"]["files"]
        from svcc.backends.oci import OciTarget
        from svcc.contracts.target import File
        from svcc.images.bundle_input import read_bundle

        target = OciTarget(
            interface="rest", base_image=request["base_image"], lock=File.read(str(lock))
        )
        tree = target.wrap(read_bundle(bundle))
        for path, data in tree:
            (ctx / path).parent.mkdir(parents=True, exist_ok=True)
            (ctx / path).write_bytes(data)
        (ctx / "wheels").mkdir()
        for name in (p.removeprefix("wheels/") for p in target_files if p.startswith("wheels/")):
            (ctx / "wheels" / name).write_bytes((Path(request["wheelhouse"]) / name).read_bytes())
        hand = {**denv, "DOCKER_CONFIG": str(work / "hand-config")}
        (work / "hand-config" / "cli-plugins").mkdir(parents=True)
        (work / "hand-config" / "cli-plugins" / "docker-buildx").symlink_to(env["CI_DOCKER_BUILDX"])
        hand_argv = [
            DOCKER,
            "buildx",
            "build",
            "-q",
            "--network",
            "none",
            "--load",
            "-f",
            str(ctx / "Containerfile"),
            "-t",
            "svcc-bench/shapes:hand",
            str(ctx),
        ]

        def by_hand() -> float:
            start = time.perf_counter()
            done = subprocess.run(hand_argv, env=hand, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise SystemExit(f"hand build failed: {done.stderr[-2000:]}")
            return time.perf_counter() - start

        by_hand()
        baseline = by_hand()

    same = first["image_id"] == second["image_id"] == third["image_id"]
    print(f"cold build (svc-oci, empty build cache): {cold1:.1f} s, again {cold2:.1f} s")
    print(f"warm build (svc-oci):                    {warm:.2f} s")
    print(f"warm build (docker buildx by hand):      {baseline:.2f} s")
    print(f"ratio svc-oci warm / hand warm:          {warm / baseline:.2f}")
    print(f"image size:                              {size / 1e6:.1f} MB")
    print(
        f"inputs_sha256 stable:                    "
        f"{first['inputs_sha256'] == second['inputs_sha256'] == third['inputs_sha256']}"
    )
    print(
        f"two cold builds, same image id (config digest): {same} "
        f"({first['image_id'][:19]}, {second['image_id'][:19]})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
