"""The ``k8s`` target: a Kustomize base validated against the Kubernetes API schemas
(``kubernetes-validate --strict``; no cluster runs here), golden trees, determinism, every
option refused with one line, and the REST server draining on SIGTERM as a pod must."""

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import kubernetes_validate
import pytest
import yaml
from golden_tree import check_tree
from helpers import ROOT, run_svcc
from servers import generate, serving
from svcc.compiler.bundles import build_bundle
from svcc.compiler.driver import analyze_file
from svcc.compiler.registry import get_target
from svcc.contracts.errors import SvccError
from svcc.contracts.target import FileTree

GOLDEN = ROOT / "tests" / "golden_k8s"
EXAMPLE = ROOT / "examples" / "shapes.py"
IMAGE = "registry.test:5443/team/shapes@sha256:" + "a" * 64
INPUTS = "b" * 64
# the oldest and the newest API the emitted objects are checked against
KUBERNETES = ("1.30.0", "1.37.0")
CASES: dict[str, dict[str, Any]] = {
    "rest_defaults": {"image": IMAGE, "inputs_sha256": INPUTS},
    "rest_namespaced": {
        "image": IMAGE,
        "inputs_sha256": INPUTS,
        "namespace": "shop",
        "replicas": 3,
        "max_replicas": 9,
        "writable_tmp": True,
        "app_name": "shapes-api",
    },
    "mcp": {"image": IMAGE, "inputs_sha256": INPUTS, "interface": "mcp"},
    "mcp_auth": {
        "image": IMAGE,
        "inputs_sha256": INPUTS,
        "interface": "mcp",
        "auth_secret": "shapes-tokens",
        "namespace": "agents",
        "writable_tmp": True,
    },
}


def emit(**options: Any) -> FileTree:
    """Through the registry, as the CLI does: a ``File`` option (``push_result``) is read
    there and the target gets its bytes."""
    return build_bundle(analyze_file(EXAMPLE), get_target("k8s", options))[1]


def objects(tree: FileTree) -> dict[str, dict[str, Any]]:
    return {path: yaml.safe_load(data) for path, data in tree if path != "kustomization.yaml"}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("version", KUBERNETES)
def test_every_object_validates_strictly(case: str, version: str) -> None:
    for path, doc in objects(emit(**CASES[case])).items():
        assert kubernetes_validate.validate(doc, version, strict=True), path


def test_strict_validation_can_fail() -> None:
    """The check above is not vacuous: an unknown field or a wrong type is caught."""
    deployment = objects(emit(**CASES["rest_defaults"]))["deployment.yaml"]
    deployment["spec"]["template"]["spec"]["containers"][0]["securityContxt"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES[-1], strict=True)
    deployment = objects(emit(**CASES["rest_defaults"]))["deployment.yaml"]
    deployment["spec"]["replicas"] = "two"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES[-1], strict=True)


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_tree(case: str, request: pytest.FixtureRequest) -> None:
    check_tree(GOLDEN / case, dict(emit(**CASES[case])), request)


def test_hardened_by_default() -> None:
    tree = objects(emit(**CASES["rest_defaults"]))
    pod = tree["deployment.yaml"]["spec"]["template"]["spec"]
    (server,) = pod["containers"]
    assert server["image"] == IMAGE
    assert "@sha256:" in server["image"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    context = server["securityContext"]
    assert context["readOnlyRootFilesystem"] is True
    assert context["allowPrivilegeEscalation"] is False
    assert context["capabilities"] == {"drop": ["ALL"]}
    assert (context["runAsUser"], context["runAsGroup"]) == (65532, 65532)
    assert "volumes" not in pod  # nothing writable unless asked for
    for probe in ("readinessProbe", "livenessProbe"):
        assert server[probe]["httpGet"] == {"path": "/health", "port": "http"}
    policy = tree["networkpolicy.yaml"]["spec"]
    assert policy["policyTypes"] == ["Ingress", "Egress"]
    assert policy["egress"] == []
    assert tree["service.yaml"]["spec"]["ports"][0]["targetPort"] == "http"
    assert tree["hpa.yaml"]["spec"]["minReplicas"] == 2


def test_labels_carry_the_digests() -> None:
    analysis = analyze_file(EXAMPLE)
    assert analysis.ir is not None
    ids = sorted(c.id for c in analysis.ir.capabilities)
    from svcc.backends.k8s._options import capabilities_digest

    digest = capabilities_digest(ids)
    for doc in objects(emit(**CASES["rest_defaults"])).values():
        labels = doc["metadata"]["labels"]
        assert digest.startswith(labels["svcc.io/capabilities-sha256"])
        assert INPUTS.startswith(labels["svcc.io/inputs-sha256"])
        assert all(len(v) <= 63 for v in labels.values())
    deployment = objects(emit(**CASES["rest_defaults"]))["deployment.yaml"]
    assert deployment["metadata"]["annotations"]["svcc.io/capabilities-sha256"] == digest
    assert deployment["metadata"]["annotations"]["svcc.io/inputs-sha256"] == INPUTS
    # another selection, another digest
    other = build_bundle(analysis, get_target("k8s", CASES["rest_defaults"]), select="scale")[1]
    labels = objects(other)["deployment.yaml"]["metadata"]["labels"]
    assert not digest.startswith(labels["svcc.io/capabilities-sha256"])


def test_mcp_gets_a_service_probes_and_the_autoscaler_as_rest_does() -> None:
    """An MCP image serves stateless streamable HTTP on 8000 (DESIGN §13)."""
    mcp, rest = objects(emit(**CASES["mcp"])), objects(emit(**CASES["rest_defaults"]))
    assert sorted(mcp) == sorted(rest)
    assert mcp["service.yaml"]["spec"] == rest["service.yaml"]["spec"]
    assert mcp["hpa.yaml"]["spec"] == rest["hpa.yaml"]["spec"]
    assert mcp["networkpolicy.yaml"]["spec"]["ingress"] == [
        {"ports": [{"port": 8000, "protocol": "TCP"}]}
    ]
    (server,) = mcp["deployment.yaml"]["spec"]["template"]["spec"]["containers"]
    (rest_server,) = rest["deployment.yaml"]["spec"]["template"]["spec"]["containers"]
    for key in ("ports", "startupProbe", "readinessProbe", "livenessProbe", "lifecycle"):
        assert server[key] == rest_server[key], key
    assert server["readinessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    assert "stdin" not in server
    env = {e["name"]: e for e in server["env"]}
    assert env["POD_NAMESPACE"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    assert env["SVC_MCP_ALLOWED_HOSTS"]["value"].split(",") == [
        "shapes",
        "shapes.$(POD_NAMESPACE)",
        "shapes.$(POD_NAMESPACE).svc",
        "shapes.$(POD_NAMESPACE).svc.cluster.local",
    ]
    assert "SVC_AUTH_TOKENS_FILE" not in env


def test_scrape_annotations_on_every_pod() -> None:
    for options in CASES.values():
        template = objects(emit(**options))["deployment.yaml"]["spec"]["template"]
        annotations = template["metadata"]["annotations"]
        assert annotations["prometheus.io/scrape"] == "true"
        assert annotations["prometheus.io/port"] == "8000"
        assert annotations["prometheus.io/path"] == "/metrics"


def test_auth_secret_is_the_tokens_file_read_only() -> None:
    pod = objects(emit(**CASES["mcp_auth"]))["deployment.yaml"]["spec"]["template"]["spec"]
    (server,) = pod["containers"]
    assert {"name": "auth", "mountPath": "/etc/svc/auth", "readOnly": True} in server[
        "volumeMounts"
    ]
    assert {"name": "tmp", "mountPath": "/tmp"} in server["volumeMounts"]
    (auth,) = [v for v in pod["volumes"] if v["name"] == "auth"]
    assert auth["secret"] == {
        "secretName": "shapes-tokens",
        "defaultMode": 0o400,
        "items": [{"key": "tokens", "path": "tokens"}],
    }
    env = {e["name"]: e.get("value") for e in server["env"]}
    assert env["SVC_AUTH_TOKENS_FILE"] == "/etc/svc/auth/tokens"
    assert pod["securityContext"]["fsGroup"] == 65532  # the group the kubelet lets read it
    rest = objects(emit(**CASES["rest_defaults"], auth_secret="api.tokens"))["deployment.yaml"]
    (rest_server,) = rest["spec"]["template"]["spec"]["containers"]
    assert rest_server["env"] == [{"name": "SVC_AUTH_TOKENS_FILE", "value": "/etc/svc/auth/tokens"}]


def test_oauth_config_is_the_environment_of_the_server() -> None:
    rest = objects(emit(**CASES["rest_defaults"], oauth_config="api-oauth"))["deployment.yaml"]
    (server,) = rest["spec"]["template"]["spec"]["containers"]
    assert server["envFrom"] == [{"configMapRef": {"name": "api-oauth"}}]
    plain = objects(emit(**CASES["rest_defaults"]))["deployment.yaml"]
    assert "envFrom" not in plain["spec"]["template"]["spec"]["containers"][0]


def test_otel_config_is_the_environment_of_the_server_beside_oauth() -> None:
    """Tracing's ``OTEL_*`` settings come from a ConfigMap of their own (runtime/tracing.py)."""
    both = emit(**CASES["rest_defaults"], oauth_config="api-oauth", otel_config="api-otel")
    (server,) = objects(both)["deployment.yaml"]["spec"]["template"]["spec"]["containers"]
    assert server["envFrom"] == [
        {"configMapRef": {"name": "api-oauth"}},
        {"configMapRef": {"name": "api-otel"}},
    ]
    traced = emit(**CASES["rest_defaults"], otel_config="api-otel")
    (server,) = objects(traced)["deployment.yaml"]["spec"]["template"]["spec"]["containers"]
    assert server["envFrom"] == [{"configMapRef": {"name": "api-otel"}}]


def test_kustomization_lists_every_object() -> None:
    for options in CASES.values():
        tree = dict(emit(**options))
        kustomization = yaml.safe_load(tree["kustomization.yaml"])
        assert sorted(kustomization["resources"]) == sorted(set(tree) - {"kustomization.yaml"})
        assert kustomization.get("namespace") == options.get("namespace")


def test_deterministic_across_hash_seeds() -> None:
    code = (
        "import hashlib, sys\n"
        "sys.path[:0] = [sys.argv[1], sys.argv[1] + '/backends']\n"
        "import test_k8s as t\n"
        "h = hashlib.sha256()\n"
        "for case in sorted(t.CASES):\n"
        "    for p, d in t.emit(**t.CASES[case]): h.update(p.encode() + d)\n"
        "print(h.hexdigest())\n"
    )
    seen = {
        subprocess.run(
            [sys.executable, "-c", code, str(ROOT / "tests")],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("0", "7", "31337")
    }
    assert len(seen) == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "needs --image"),
        ({"image": "registry.test:5443/team/shapes:1.0"}, "not pinned"),
        ({"image": "registry.test:5443/team/shapes:1.0@sha256:" + "a" * 64}, "drop the tag"),
        ({"image": "https://registry.test/team/shapes@sha256:" + "a" * 64}, "schemes"),
        ({"image": "127.0.0.1:5000/team/shapes@sha256:" + "a" * 64}, "IP literals"),
        ({"image": "registry/team/shapes@sha256:" + "a" * 64}, "explicit"),
        ({"image": IMAGE}, "--inputs-sha256"),
        ({"image": IMAGE, "inputs_sha256": "B" * 64}, "--inputs-sha256"),
        ({"image": IMAGE, "inputs_sha256": INPUTS, "replicas": 0}, "--replicas"),
        ({"image": IMAGE, "inputs_sha256": INPUTS, "replicas": 4, "max_replicas": 2}, "--max"),
        ({"image": IMAGE, "inputs_sha256": INPUTS, "namespace": "Shop_1"}, "--namespace"),
        ({"image": IMAGE, "inputs_sha256": INPUTS, "app_name": "9lives"}, "--app-name"),
        ({"image": IMAGE, "inputs_sha256": INPUTS, "memory_limit": "lots"}, "--memory-limit"),
        ({"image": IMAGE, "inputs_sha256": INPUTS, "auth_secret": "Tokens!"}, "--auth-secret"),
        ({"image": IMAGE, "inputs_sha256": INPUTS, "oauth_config": "OAuth!"}, "--oauth-config"),
        ({"image": IMAGE, "inputs_sha256": INPUTS, "otel_config": "OTel!"}, "--otel-config"),
        ({"push_result": "/nonexistent/push.json"}, "file not found"),
    ],
)
def test_bad_options_are_one_line_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(SvccError) as info:
        emit(**options)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_push_result_file(tmp_path: Path) -> None:
    result = {
        "schema": "svc.oci-push-result/v1",
        "destination": "registry.test:5443/team/shapes:1.0",
        "digest_reference": IMAGE,
        "image_id": "sha256:" + "c" * 64,
        "config_digest": "sha256:" + "d" * 64,
        "manifest_digest": "sha256:" + "a" * 64,
        "index_digest": None,
        "platform": "linux/amd64",
        "inputs_sha256": INPUTS,
        "published": True,
    }
    path = tmp_path / "push.json"
    path.write_text(json.dumps({"schema": "svc.extension/v1", "ok": True, "result": result}))
    assert dict(emit(push_result=str(path))) == dict(emit(**CASES["rest_defaults"]))
    path.write_text(json.dumps({**result, "published": False}))
    with pytest.raises(SvccError, match="not published"):
        emit(push_result=str(path))
    with pytest.raises(SvccError, match="drop --image"):
        emit(push_result=str(path), image=IMAGE)


def test_cli_writes_a_base(tmp_path: Path) -> None:
    out = tmp_path / "base"
    proc = run_svcc(
        "compile", str(EXAMPLE), "--target", "k8s", "--output-dir", str(out),
        "--image", IMAGE, "--inputs-sha256", INPUTS, "--namespace", "shop", "--format", "json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["deployment.yaml", "hpa.yaml", "kustomization.yaml", "networkpolicy.yaml", "pdb.yaml",
         "service.yaml"]
    )  # fmt: skip
    bad = run_svcc(
        "compile", str(EXAMPLE), "--target", "k8s", "--output-dir", str(tmp_path / "x"),
        "--image", "registry.test:5443/team/shapes:latest", "--inputs-sha256", INPUTS,
    )  # fmt: skip
    assert bad.returncode == 2
    assert "not pinned" in bad.stderr
    assert not (tmp_path / "x").exists()


def test_rest_server_drains_on_sigterm(tmp_path: Path) -> None:
    """What a pod's termination needs: after SIGTERM the server accepts no new connection
    (the readiness probe fails), finishes the request in flight with its answer, then exits
    by itself, within the grace period the Deployment gives it."""
    bundle = tmp_path / "slow-rest"
    generate(ROOT / "tests" / "fixtures" / "k8s" / "slow.py", bundle)
    with serving(bundle) as server:
        answers: list[httpx.Response] = []
        started = threading.Event()

        def call() -> None:
            with server.client() as client:
                started.set()
                answers.append(client.post("/capabilities/slow", json={"seconds": 2.0}))

        caller = threading.Thread(target=call)
        caller.start()
        started.wait()
        # the request is in flight once the server has accepted it; give it the connection
        with server.client() as probe:
            assert probe.get("/health").status_code == 200
        server.proc.send_signal(signal.SIGTERM)
        refused = False
        for _ in range(200):
            try:
                httpx.get(server.url + "/health", timeout=0.5)
            except httpx.TransportError:
                refused = True
                break
            threading.Event().wait(0.01)
        assert refused, "the server still accepted new connections after SIGTERM"
        assert server.proc.poll() is None or answers, "exited before answering the call in flight"
        caller.join(timeout=30)
        assert [a.status_code for a in answers] == [200]
        assert answers[0].json() == 2.0
        # uvicorn re-raises the signal once drained: the exit status says "stopped by SIGTERM"
        assert server.proc.wait(timeout=30) in (0, -signal.SIGTERM)
        assert "Finished server process" in server.log_text()


def test_cli_writes_a_base_for_a_repository(tmp_path: Path) -> None:
    """`svcc compile REPO --target k8s`: the capabilities the repository bundle would serve
    (same selection rules, dotted ids) are what the labels digest."""
    from oci_support import SHAPES_REPO, SHAPES_SELECT
    from svcc.backends.k8s._options import capabilities_digest

    out = tmp_path / "base"
    proc = run_svcc(
        "compile", str(SHAPES_REPO), "--target", "k8s", "--select", SHAPES_SELECT,
        "--output-dir", str(out), "--image", IMAGE, "--inputs-sha256", INPUTS, "--format", "json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    ids = json.loads(proc.stdout)["capabilities"]
    assert ids
    assert all(i.startswith("python:shapes.geometry:") for i in ids)
    deployment = yaml.safe_load((out / "deployment.yaml").read_text())
    digest = deployment["metadata"]["annotations"]["svcc.io/capabilities-sha256"]
    assert digest == capabilities_digest(ids)
    for path in out.iterdir():
        if path.name != "kustomization.yaml":
            kubernetes_validate.validate(yaml.safe_load(path.read_text()), "1.37.0", strict=True)
