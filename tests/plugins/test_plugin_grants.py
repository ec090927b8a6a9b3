"""The plugin runner's operation -> grant table (``svcc.plugins.grants``) and its own
error type: every operation the svc-oci extension offers needs exactly the grant that
``svcc image plan`` proposes for it, and nothing else authorises it. No engine, no extension
process: the table is checked with the core's own request parsers."""

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT
from svcc.images.errors import CODES, ImageInputError
from svcc.images.plan import POLICY_FILE, PROPOSAL_KEY, PlanInputs, write_plan
from svcc.images.request import PluginIdentity
from svcc.plugins.errors import PLUGIN_CODES, PluginError
from svcc.plugins.grants import GRANTS, authorise

PLUGIN = PluginIdentity(name="svc-oci", version="0.4.1", sha256="a" * 64, lock_sha256="b" * 64)
RESULT = {"image_id": "sha256:" + "d" * 64, "inputs_sha256": "e" * 64, "platform": "linux/amd64"}


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any]]:
    """The requests of a plan by operation, and its proposal made a grant by an operator."""
    tmp = tmp_path_factory.mktemp("plan")
    inputs = PlanInputs(
        bundle=tmp / "bundle",
        interface="rest",
        base_image="registry.test:5444/ci/base@sha256:" + "c" * 64,
        platform="linux/amd64",
        tag="shop:dev",
        destination="registry.test:5443/team/shop:1.0",
        lock=tmp / "server.lock",
        wheelhouse=tmp / "wheels",
        engine_executable="/usr/bin/docker",
        engine_socket="/run/docker.sock",
        engine_builder=None,
        credentials=tmp / "auth.json",
        ca_file=None,
        build_timeout_ms=480_000,
        push_timeout_ms=300_000,
    )
    written = write_plan(inputs, PLUGIN, tmp / "plan", RESULT)
    policy = json.loads(Path(written.pop(POLICY_FILE)).read_text())
    del policy[PROPOSAL_KEY]
    requests = {
        n.removesuffix(".json"): json.loads(Path(f).read_text()) for n, f in written.items()
    }
    return requests, policy


def test_every_operation_of_the_extension_has_a_grant() -> None:
    manifest = ROOT / "extensions" / "svc-oci" / "svc_oci" / "svc-extension.json"
    assert sorted(GRANTS) == sorted(json.loads(manifest.read_text())["operations"])


def test_each_operation_needs_the_grant_the_plan_proposes(plan: Any) -> None:
    requests, policy = plan
    proposed = {g["operation"]: g for g in policy["grants"]}
    assert sorted(proposed) == sorted(g.name for g in GRANTS.values())
    for operation, grant in GRANTS.items():
        assert set(proposed[grant.name]["permissions"]) == grant.permissions
        authorise(operation, requests[operation], policy, PLUGIN)  # granted: no refusal


@pytest.mark.parametrize("operation", sorted(GRANTS))
def test_the_other_grants_do_not_authorise_an_operation(plan: Any, operation: str) -> None:
    requests, policy = plan
    name = GRANTS[operation].name
    others = {**policy, "grants": [g for g in policy["grants"] if g["operation"] != name]}
    with pytest.raises(ImageInputError) as info:
        authorise(operation, requests[operation], others, PLUGIN)
    assert (info.value.code, info.value.message) == (
        "grant_missing",
        f"operator policy: no {name} grant",
    )


def test_an_operation_outside_the_table_is_never_authorised(plan: Any) -> None:
    _, policy = plan
    with pytest.raises(PluginError) as info:
        authorise("delete", {}, policy, PLUGIN)
    assert str(info.value) == "grant_missing: no grant can authorise operation 'delete'"
    assert info.value.exit_code == 2


def test_the_runner_says_only_what_it_owns() -> None:
    assert set(CODES) >= PLUGIN_CODES  # one svc.extension/v1 code table (docs/oci.md)
    with pytest.raises(ValueError, match="not a plugin runner code"):
        PluginError("registry_failed", "a push failure is the extension's, not the runner's")
