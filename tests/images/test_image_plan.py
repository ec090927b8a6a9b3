"""``svcc image plan``: build.json, push.json and the operator policy svcc *proposes*, with
exactly the grants those requests need; a proposal is never a grant (the core refuses it).

No engine: the requests and grants are checked by the core's own parsers. The whole path on
the real stack is tests/project/test_ship.py.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from svcc.images.errors import ImageInputError
from svcc.images.plan import POLICY_FILE, PlanInputs, refuse_proposal, write_plan
from svcc.images.push_request import check_push_grant, parse_push_request
from svcc.images.request import PluginIdentity, check_build_grant, parse_build_request

PLUGIN = PluginIdentity(name="svc-oci", version="0.4.1", sha256="a" * 64, lock_sha256="b" * 64)
BASE = "registry.test:5444/ci/base@sha256:" + "c" * 64


def inputs(tmp: Path, **change: Any) -> PlanInputs:
    values: dict[str, Any] = {
        "bundle": tmp / "bundle",
        "interface": "rest",
        "base_image": BASE,
        "platform": "linux/amd64",
        "tag": "shop:dev",
        "destination": "registry.test:5443/team/shop:1.0",
        "lock": tmp / "server.lock",
        "wheelhouse": tmp / "wheels",
        "engine_executable": "/usr/bin/docker",
        "engine_socket": "/run/docker.sock",
        "engine_builder": None,
        "credentials": tmp / "auth.json",
        "ca_file": None,
        "build_timeout_ms": 480_000,
        "push_timeout_ms": 300_000,
    }
    return PlanInputs(**{**values, **change})


RESULT = {"image_id": "sha256:" + "d" * 64, "inputs_sha256": "e" * 64, "platform": "linux/amd64"}


def read(path: str) -> Any:
    return json.loads(Path(path).read_text())


def test_build_request_and_exactly_the_grants_it_needs(tmp_path: Path) -> None:
    written = write_plan(inputs(tmp_path), PLUGIN, tmp_path / "plan", None)
    assert sorted(written) == ["build.json", POLICY_FILE]  # push.json needs the build result
    build = read(written["build.json"])
    assert build == {
        "schema": "svc.oci-build/v1",
        "bundle": str(tmp_path / "bundle"),
        "interface": "rest",
        "base_image": BASE,
        "platform": "linux/amd64",
        "tag": "shop:dev",
        "requirements": str(tmp_path / "server.lock"),
        "wheelhouse": str(tmp_path / "wheels"),
        "engine": {"executable": "/usr/bin/docker", "socket": "/run/docker.sock", "builder": None},
        "timeout_ms": 480_000,
    }
    policy = read(written[POLICY_FILE])
    assert policy["proposed_by"] == "svcc image plan"
    build_grant, push_grant = policy["grants"]
    assert build_grant == {
        "operation": "image.build",
        "permissions": ["image.build", "registry.read"],
        "plugin": {
            "name": "svc-oci",
            "version": "0.4.1",
            "sha256": "a" * 64,
            "lock_sha256": "b" * 64,
        },
        "target": {k: v for k, v in build.items() if k not in ("schema", "timeout_ms")},
    }
    assert push_grant == {
        "operation": "image.push",
        "permissions": ["registry.publish", "registry.read"],
        "plugin": build_grant["plugin"],
        "repository": "registry.test:5443/team/shop",
    }
    # exactly: the grant admits this request and no other tag
    check_build_grant(policy, parse_build_request(build), PLUGIN)
    with pytest.raises(ImageInputError, match=r"grant_mismatch: .*target\.tag"):
        check_build_grant(policy, parse_build_request({**build, "tag": "shop:other"}), PLUGIN)


def test_push_request_from_the_build_result(tmp_path: Path) -> None:
    plan = tmp_path / "plan"
    write_plan(inputs(tmp_path), PLUGIN, plan, None)
    written = write_plan(
        inputs(tmp_path, ca_file=tmp_path / "ca.pem"), PLUGIN, tmp_path / "plan2", RESULT
    )
    push = read(written["push.json"])
    assert push == {
        "schema": "svc.oci-push/v1",
        **RESULT,
        "destination": "registry.test:5443/team/shop:1.0",
        "engine": {"executable": "/usr/bin/docker", "socket": "/run/docker.sock", "builder": None},
        "authentication": {
            "config_file": str(tmp_path / "auth.json"),
            "ca_file": str(tmp_path / "ca.pem"),
        },
        "timeout_ms": 300_000,
    }
    check_push_grant(read(written[POLICY_FILE]), parse_push_request(push), PLUGIN)
    # the same plan again, now with the result: the same files, and push.json beside them
    again = write_plan(inputs(tmp_path), PLUGIN, plan, RESULT)
    assert sorted(again) == ["build.json", POLICY_FILE, "push.json"]


def test_nothing_different_is_overwritten_and_bad_inputs_write_nothing(tmp_path: Path) -> None:
    plan = tmp_path / "plan"
    write_plan(inputs(tmp_path), PLUGIN, plan, None)
    before = (plan / "build.json").read_bytes()
    with pytest.raises(ImageInputError, match="exists with other content"):
        write_plan(inputs(tmp_path, tag="shop:other"), PLUGIN, plan, None)
    assert (plan / "build.json").read_bytes() == before
    for change, words in (
        ({"base_image": "registry.test:5444/ci/base:latest"}, "digest"),
        ({"destination": "registry.test:5443/team/shop"}, "tag"),
        ({"engine_socket": "relative.sock"}, "engine"),
    ):
        out = tmp_path / f"bad-{len(words)}"
        with pytest.raises(ImageInputError) as info:
            write_plan(inputs(tmp_path, **change), PLUGIN, out, None)
        assert words in str(info.value)
        assert not out.exists()
    with pytest.raises(ImageInputError, match="is for linux/arm64"):
        write_plan(
            inputs(tmp_path), PLUGIN, tmp_path / "arm", {**RESULT, "platform": "linux/arm64"}
        )


def test_a_proposal_is_not_a_grant(tmp_path: Path) -> None:
    written = write_plan(inputs(tmp_path), PLUGIN, tmp_path / "plan", None)
    policy = read(written[POLICY_FILE])
    with pytest.raises(ImageInputError) as info:
        refuse_proposal(policy, written[POLICY_FILE])
    assert info.value.code == "grant_missing"
    assert "proposal" in info.value.message
    del policy["proposed_by"]
    refuse_proposal(policy, "policy.json")  # the operator's own copy
