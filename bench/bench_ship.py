"""The README's walkthrough (examples/ship.sh on examples/shop), timed step by step on the
.ci/oci stack: lock, extension fetch + install, plan, cold build, warm build, push; each
against a baseline measured in the same run:

- lock: ``svcc lock`` vs the bare ``pip download`` of the same requirements with the same
  options (what svcc adds: reading the bundle, hashing, the closure check, the wheelhouse);
- builds: the cold build (the engine's build cache emptied first) vs the warm one (same
  inputs, a new tag);
- push: ``svc-oci push`` (checks through the registry's API, staging tag, promotion by
  digest) vs a bare ``docker push`` of the same image to another tag.

Offline: the stack's wheelhouses stand in for the index (``--index`` uses pip's configured
index for the lock instead). Usage: ``python bench/bench_ship.py [--index]``; needs the stack
(``.ci/oci/ci-stack-up.sh .oci-state && .ci/oci/wheelhouse.sh .oci-state``). It empties the
stack engine's build cache. Not part of the test suite; it never asserts a time.
"""

import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
SVCC = str(Path(sys.executable).parent / "svcc")
DOCKER = "/usr/local/bin/docker"
SELECT = "shop.pricing.total,shop.pricing.line,shop.stats.summary"


def timed(argv: list[str], env: dict[str, str], out: Path | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])}: {done.stderr.strip()}")
    if out is not None:
        out.write_text(done.stdout)
    return took


def main() -> int:
    from oci_support import load_stack, state_dir

    parser = argparse.ArgumentParser()
    parser.add_argument("--index", action="store_true", help="lock from pip's configured index")
    args = parser.parse_args()
    stack = load_stack()
    if isinstance(stack, str):
        print(f"skipped: {stack}")
        return 0
    env_s: dict[str, str] = stack["env"]
    wheels = state_dir() / "wheelhouse"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    if not args.index:
        env["PIP_CONFIG_FILE"] = os.devnull
    index = (
        []
        if args.index
        else ["--no-index", "--find-links", f"{wheels}/amd64", "--find-links", f"{wheels}/app"]
    )
    sock = env_s["CI_DOCKER_DOCKER_HOST"].removeprefix("unix://")
    run_id = os.urandom(4).hex()
    with tempfile.TemporaryDirectory(prefix="svcc-bench-ship-") as tmp:
        w = Path(tmp)
        auth = base64.b64encode(
            f"{env_s['REGISTRY_USER']}:{env_s['REGISTRY_PASSWORD']}".encode()
        ).decode()
        creds = w / "auth.json"
        creds.write_text(json.dumps({"auths": {env_s["REGISTRY"]: {"auth": auth}}}))
        (w / "docker-config").mkdir()
        (w / "docker-config" / "config.json").write_text(creds.read_text())
        denv = {
            "PATH": "/usr/bin:/bin",
            "DOCKER_HOST": env_s["CI_DOCKER_DOCKER_HOST"],
            "DOCKER_CONFIG": str(w / "docker-config"),
        }
        t: dict[str, float] = {}
        shop = str(ROOT / "examples" / "shop")
        bundle = w / "bundle"
        t["compile"] = timed(
            [
                SVCC,
                "compile",
                shop,
                "--target",
                "rest",
                "--select",
                SELECT,
                "--output-dir",
                str(bundle),
            ],
            env,
        )
        target = ["--platform", "linux/amd64", "--python", "3.11"]
        t["lock"] = timed(
            [SVCC, "lock", str(bundle), *target, "--wheelhouse", str(w / "wheels"),
             "--output", str(w / "server.lock"), *index],
            env,
        )  # fmt: skip
        roots = w / "roots.txt"
        roots.write_text(
            (bundle / "requirements.txt").read_text()
            + (bundle / "application-requirements.txt").read_text()
        )
        platforms = [
            a for n in range(36, 16, -1) for a in ("--platform", f"manylinux_2_{n}_x86_64")
        ] + ["--platform", "manylinux2014_x86_64"]
        t["lock baseline"] = timed(
            [sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:",
             "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311", *platforms,
             "-d", str(w / "pip-only"), *index, "-r", str(roots)],
            env,
        )  # fmt: skip
        plugin_index = ["--no-index", "--find-links", f"{wheels}/plugin"]
        t["extension fetch"] = timed(
            [SVCC, "plugins", "fetch", "svc-oci", "--wheelhouse", str(w / "pw"),
             "--output", str(w / "plugin.lock"), *plugin_index],
            {**env, "PIP_CONFIG_FILE": os.devnull},
            w / "plugin.json",
        )  # fmt: skip
        fetched = json.loads((w / "plugin.json").read_text())
        start = time.perf_counter()
        subprocess.run(
            [SVCC, "plugins", "install", fetched["wheel"], "--sha256", fetched["sha256"],
             "--requirements", str(w / "plugin.lock"), "--wheelhouse", str(w / "pw"),
             "--plugins-dir", str(w / "plugins")],
            check=True, capture_output=True,
        )  # fmt: skip
        subprocess.run(
            [SVCC, "plugins", "enable", "svc-oci", "--version", "0.4.1",
             "--plugins-dir", str(w / "plugins")],
            check=True, capture_output=True,
        )  # fmt: skip
        t["extension install"] = time.perf_counter() - start
        destination = f"{env_s['REGISTRY']}/bench{run_id}/shop"

        def plan(tag: str, out: str, result: Path | None = None) -> list[str]:
            return [
                SVCC, "image", "plan", str(bundle), "--interface", "rest",
                "--base-image", env_s["BASE_IMAGE"], "--platform", "linux/amd64",
                "--tag", tag, "--destination", f"{destination}:1.0", "--lock",
                str(w / "server.lock"), "--wheelhouse", str(w / "wheels"),
                "--engine-executable", DOCKER, "--engine-socket", sock,
                "--engine-builder", env_s["CI_DOCKER_BUILDX"], "--credentials", str(creds),
                "--ca-file", env_s["REGISTRY_CA"], "--plugins-dir", str(w / "plugins"),
                "--output-dir", str(w / out),
                *(["--build-result", str(result)] if result else []),
            ]  # fmt: skip

        def run_op(op: str, out: str, log: str, result: Path) -> float:
            policy = json.loads((w / out / "operator-policy.proposed.json").read_text())
            del policy["proposed_by"]
            (w / out / "policy.json").write_text(json.dumps(policy))
            return timed(
                [SVCC, "plugins", "run", "svc-oci", op, "--arguments",
                 str(w / out / f"{op}.json"), "--operator-policy", str(w / out / "policy.json"),
                 "--timeout-ms", "600000", "--plugins-dir", str(w / "plugins"),
                 "--log-file", str(w / log)],
                env,
                result,
            )  # fmt: skip

        t["plan"] = timed(plan(f"svcc-bench/shop:cold-{run_id}", "cold"), env)
        subprocess.run(
            [DOCKER, "builder", "prune", "-af"], env=denv, check=True, capture_output=True
        )
        t["build cold"] = run_op("build", "cold", "cold.log", w / "cold.json")
        timed(plan(f"svcc-bench/shop:warm-{run_id}", "warm"), env)
        t["build warm"] = run_op("build", "warm", "warm.log", w / "warm.json")
        timed(plan(f"svcc-bench/shop:warm-{run_id}", "warm", w / "warm.json"), env)
        t["push"] = run_op("push", "warm", "push.log", w / "push.json")
        image = json.loads((w / "warm.json").read_text())["image_id"]
        # another registry (the stack's base registry): a full upload, as svc-oci's was
        alias = f"{env_s['BASE_REGISTRY']}/bench{run_id}/shop:bare"
        subprocess.run([DOCKER, "tag", image, alias], env=denv, check=True, capture_output=True)
        t["push baseline"] = timed([DOCKER, "push", "-q", alias], denv)
    print(f"walkthrough of examples/shop ({'configured index' if args.index else 'offline'}):")
    for name, seconds in t.items():
        print(f"  {name:<18} {seconds:7.2f} s")
    print(f"  lock / bare pip download: {t['lock'] / t['lock baseline']:.2f}x")
    print(f"  cold / warm build:        {t['build cold'] / t['build warm']:.2f}x")
    print(f"  push / bare docker push:  {t['push'] / t['push baseline']:.2f}x")
    total = sum(v for k, v in t.items() if "baseline" not in k)
    print(f"  walkthrough total (cold): {total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
