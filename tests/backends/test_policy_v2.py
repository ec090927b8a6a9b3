"""Policy ``svc.execution/v2`` and the image options at generation (no engine needed), and
the ``runtime-image`` target's build context."""

import json
import re
from pathlib import Path

import pytest
from helpers import ROOT, run_svcc
from svcc.contracts.errors import IneligibleError, InputError, UsageError
from svcc.contracts.policy import (
    ExecutionPolicy,
    OciExecution,
    execution_mode,
    load_execution,
    parse_policy_v2,
)

FIXTURE = ROOT / "tests" / "fixtures" / "governed_oci" / "box.py"
IMAGE = "sha256:" + "ab" * 32
BASE = "registry.test:5444/ci/base@sha256:" + "cd" * 32


def test_schema_alone_gives_every_default() -> None:
    policy = parse_policy_v2({"schema": "svc.execution/v2"}, "p.json")
    assert policy.to_json() == {
        "schema": "svc.execution/v2",
        "limits": {
            "wall_time_ms": 5000,
            "max_input_bytes": 1048576,
            "max_output_bytes": 1048576,
            "max_concurrent_calls": 4,
            "memory_mib": 256,
            "cpus_millis": 1000,
            "pids": 64,
            "tmp_mib": 16,
        },
        "environment": {"allow": []},
        "network": "deny",
        "pool": {"size": 2},
    }


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"limits": {"memory_mib": 8}}, "$.limits.memory_mib"),
        ({"limits": {"pids": True}}, "$.limits.pids"),
        ({"limits": {"tmp_mib": 0}}, "$.limits.tmp_mib"),
        ({"pool": {"size": 65}}, "$.pool.size"),
        ({"pool": {"size": -1}}, "$.pool.size"),
        ({"limits": {"cpus_millis": 1.5}}, "$.limits.cpus_millis"),
        ({"environment": {"allow": ["A-B"]}}, "A-B"),
        ({"environment": {"inherit": True}}, "inherit"),
        ({"network": "allow"}, "$.network"),
        ({"sandbox": {}}, "sandbox"),
    ],
)
def test_strict_fields_named_by_path(data: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message.rsplit(".", 1)[-1])):
        parse_policy_v2({"schema": "svc.execution/v2", **data}, "p.json")


def test_network_inherit_is_refused() -> None:
    with pytest.raises(IneligibleError, match="network"):
        parse_policy_v2({"schema": "svc.execution/v2", "network": "inherit"}, "p.json")


def test_one_loader_tells_v1_from_v2_by_schema(tmp_path: Path) -> None:
    """``load_execution`` is the one loader (single files, repositories): the schema picks the
    version, the image options go with v2 only, and ``local_only`` refuses v2 by name."""
    v1, v2 = tmp_path / "v1.json", tmp_path / "v2.json"
    v1.write_text("{}")
    v2.write_text(json.dumps({"schema": "svc.execution/v2"}))
    local = load_execution(v1)
    assert isinstance(local, ExecutionPolicy)
    assert execution_mode(local) == {"mode": "governed", "backend": "local-process"}
    oci = load_execution(v2, IMAGE, "linux/arm64")
    assert isinstance(oci, OciExecution)
    assert execution_mode(oci) == {
        "mode": "governed",
        "backend": "oci-container",
        "image": IMAGE,
        "platform": "linux/arm64",
    }
    assert load_execution(v1, local_only="a repository bundle") == local
    with pytest.raises(UsageError) as info:
        load_execution(v2, local_only="a repository bundle")
    assert str(info.value) == (
        f"{v2}: svc.execution/v2 (a container per call) serves single-file bundles; a "
        "repository bundle is governed by an svc.execution/v1 policy (a local process per call)"
    )
    with pytest.raises(UsageError, match=r"are for svc\.execution/v2 policies"):
        load_execution(v1, IMAGE, "linux/amd64")
    with pytest.raises(InputError, match="file not found"):
        load_execution(tmp_path / "absent.json")


def _generate(tmp: Path, policy: object | None, *options: str, interface: str = "rest"):  # type: ignore[no-untyped-def]
    args = [
        "generate",
        interface,
        str(FIXTURE),
        "--allow",
        "env,process,paths",
        "--output-dir",
        str(tmp / "out"),
    ]
    if policy is not None:
        (tmp / "policy.json").write_text(json.dumps(policy))
        args += ["--execution-policy", str(tmp / "policy.json")]
    return run_svcc(*args, *options, "--format", "json")


V2 = {"schema": "svc.execution/v2"}


@pytest.mark.parametrize(
    ("policy", "options", "message"),
    [
        (V2, [], "needs --runtime-image and --runtime-platform"),
        (V2, ["--runtime-image", IMAGE], "needs --runtime-platform"),
        (V2, ["--runtime-platform", "linux/amd64"], "needs --runtime-image"),
        (V2, ["--runtime-image", "shapes:latest", "--runtime-platform", "linux/amd64"], "full"),
        (V2, ["--runtime-image", "sha256:abcdef", "--runtime-platform", "linux/amd64"], "full"),
        (V2, ["--runtime-image", "ab" * 32, "--runtime-platform", "linux/amd64"], "full"),
        (V2, ["--runtime-image", BASE, "--runtime-platform", "linux/amd64"], "full"),
        (
            V2,
            [
                "--runtime-image",
                IMAGE.upper().replace("SHA", "sha"),
                "--runtime-platform",
                "linux/amd64",
            ],
            "full",
        ),
        (V2, ["--runtime-image", IMAGE, "--runtime-platform", "linux/s390x"], "invalid choice"),
        (
            {},
            ["--runtime-image", IMAGE, "--runtime-platform", "linux/amd64"],
            "are for svc.execution/v2",
        ),
        (None, ["--runtime-image", IMAGE], "need --execution-policy"),
    ],
)
def test_image_options_are_checked(
    tmp_path: Path, policy: object, options: list[str], message: str
) -> None:
    proc = _generate(tmp_path, policy, *options)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_network_inherit_exits_1(tmp_path: Path) -> None:
    proc = _generate(
        tmp_path,
        {**V2, "network": "inherit"},
        "--runtime-image",
        IMAGE,
        "--runtime-platform",
        "linux/amd64",
    )
    assert proc.returncode == 1, proc.stderr
    assert "network" in proc.stderr


@pytest.mark.parametrize("interface", ["rest", "mcp"])
def test_interface_is_byte_identical_and_no_engine_needed(
    tmp_path: Path, interface: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    governed = _generate(
        tmp_path,
        V2,
        "--runtime-image",
        IMAGE,
        "--runtime-platform",
        "linux/arm64",
        interface=interface,
    )
    assert governed.returncode == 0, governed.stderr
    result = json.loads(governed.stdout)
    assert result["execution"] == {
        "mode": "governed",
        "backend": "oci-container",
        "image": IMAGE,
        "platform": "linux/arm64",
    }
    direct = run_svcc(
        "generate",
        interface,
        str(FIXTURE),
        "--allow",
        "env,process,paths",
        "--output-dir",
        str(tmp_path / "d"),
    )
    assert direct.returncode == 0, direct.stderr
    out = tmp_path / "out"
    name = "openapi.json" if interface == "rest" else "mcp-tools.json"
    assert (out / name).read_bytes() == (tmp_path / "d" / name).read_bytes()
    manifest = json.loads((out / f"svc-{interface}.json").read_bytes())
    assert manifest["execution"] == result["execution"]
    runtime = json.loads((out / "execution" / "runtime.json").read_bytes())
    assert runtime["image"] == IMAGE
    assert runtime["worker_protocol"] == "svc.container-worker/v1"
    assert (out / "svc_runtime" / "container" / "executor.py").is_file()
    assert not (out / "svc_runtime" / "governed").exists()
    plans = sorted(p.name for p in (out / "execution" / "plans").iterdir())
    assert "add.json" in plans
    for path, digest in manifest["files"].items():
        assert (out / path).is_file(), path
        assert digest.startswith("sha256:")


def test_runtime_image_context(tmp_path: Path) -> None:
    proc = run_svcc(
        "compile",
        str(FIXTURE),
        "--allow",
        "env,process,paths",
        "--target",
        "runtime-image",
        "--base-image",
        BASE,
        "--output-dir",
        str(tmp_path / "ctx"),
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    ctx = tmp_path / "ctx"
    containerfile = (ctx / "Containerfile").read_text()
    assert f"FROM {BASE}\n" in containerfile
    assert "io.svcc.worker-protocol=svc.container-worker/v1" in containerfile
    assert "USER 65532:65532" in containerfile
    # The worker and the wire it shares with the server, byte for byte, as a package.
    for copied, original in (
        ("svc_runtime/container/worker.py", "runtime/container/worker.py"),
        ("svc_runtime/wire.py", "runtime/wire.py"),
        ("svc_runtime/__init__.py", "runtime/__init__.py"),
    ):
        assert (ctx / copied).read_bytes() == (ROOT / original).read_bytes()
    assert '"-m", "svc_runtime.container.worker"]' in containerfile
    assert "UNCHECKED_HASH" in containerfile  # bytecode valid whatever the files' times
    assert not (ctx / "requirements.lock").exists()


def test_runtime_image_context_with_hash_checked_requirements(tmp_path: Path) -> None:
    declared = tmp_path / "req.txt"
    declared.write_text("attrs\n")
    lock = tmp_path / "lock.txt"
    lock.write_text(f"attrs==24.2.0 --hash=sha256:{'1' * 64}\n")
    common = [
        "compile",
        str(FIXTURE),
        "--allow",
        "env,process,paths",
        "--target",
        "runtime-image",
        "--base-image",
        BASE,
    ]
    common += ["--requirements", str(declared)]
    proc = run_svcc(*common, "--lock", str(lock), "--output-dir", str(tmp_path / "c"))
    assert proc.returncode == 0, proc.stderr
    assert "--require-hashes" in (tmp_path / "c" / "Containerfile").read_text()
    assert (tmp_path / "c" / "requirements.lock").read_text().startswith("attrs==24.2.0")
    unlocked = run_svcc(*common, "--output-dir", str(tmp_path / "e"))
    assert unlocked.returncode == 2, unlocked.stderr
    assert "--lock" in unlocked.stderr
    other = tmp_path / "other.txt"
    other.write_text(f"idna==3.10 --hash=sha256:{'2' * 64}\n")
    missing = run_svcc(*common, "--lock", str(other), "--output-dir", str(tmp_path / "g"))
    assert missing.returncode == 2, missing.stderr
    assert "attrs is not locked" in missing.stderr
    tagged = run_svcc(
        "compile",
        str(FIXTURE),
        "--allow",
        "env,process,paths",
        "--target",
        "runtime-image",
        "--base-image",
        "registry.test:5444/ci/base:latest",
        "--output-dir",
        str(tmp_path / "f"),
    )
    assert tagged.returncode == 2, tagged.stderr
    unpinned_base = run_svcc(
        "compile",
        str(FIXTURE),
        "--allow",
        "env,process,paths",
        "--target",
        "runtime-image",
        "--output-dir",
        str(tmp_path / "h"),
    )
    assert unpinned_base.returncode == 2, unpinned_base.stderr
    assert "--base-image is required" in unpinned_base.stderr
