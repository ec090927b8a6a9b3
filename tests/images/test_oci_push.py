"""``svc-oci push`` on the real stack: publish, pull back by digest and run; the same image
again (accepted); another image to the same tag (refused, registry unchanged); and faults
injected for real, each with the reported code and the registry's state read afterwards
through its own HTTP API (not through the code under test).

The images are the session builds of ``test_oci_images``; each session pushes to a fresh
repository so runs do not see each other. Faults in the middle of a publication go through
``registry_proxy.RegistryProxy`` (a loopback TLS forwarder presenting the registry's own
certificate; the engine is told to trust the stack CA for the proxy's port).
"""

import base64
import json
import re
import secrets
import shutil
import ssl
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import test_oci_images
from helpers import SVCC
from oci_support import cli_failure, state_dir
from registry_proxy import RegistryProxy
from svcc.images.errors import ImageInputError
from svcc.plugins.invoke import PluginFailure, run
from test_oci_images import DOCKER, Build, Plugin, docker_env

# the build tests' session fixtures, shared (pytest finds fixtures among module attributes;
# set through globals() so that the parameters naming them shadow no import)
for _name in ("stack", "plugin", "docker_builds", "rest_build", "mcp_build"):
    globals()[_name] = getattr(test_oci_images, _name)

pytestmark = pytest.mark.slow
CERTS_D = Path("/etc/docker/certs.d")


class Registry:
    """The registry's state, read with urllib (the test's own client)."""

    def __init__(self, stack: dict[str, Any], registry: str | None = None) -> None:
        self.registry = registry or stack["REGISTRY"]
        self.context = ssl.create_default_context(cafile=stack["REGISTRY_CA"])
        auth = f"{stack['REGISTRY_USER']}:{stack['REGISTRY_PASSWORD']}"
        self.auth = "Basic " + base64.b64encode(auth.encode()).decode()

    def call(
        self, method: str, path: str, body: bytes | None = None, ctype: str | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        request = urllib.request.Request(f"https://{self.registry}{path}", data=body, method=method)
        request.add_header("Authorization", self.auth)
        request.add_header(
            "Accept",
            "application/vnd.docker.distribution.manifest.v2+json, "
            "application/vnd.oci.image.manifest.v1+json",
        )
        if ctype:
            request.add_header("Content-Type", ctype)
        try:
            with urllib.request.urlopen(request, context=self.context, timeout=30) as answer:
                return answer.status, dict(answer.headers), answer.read()
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers), exc.read()

    def tags(self, repo: str) -> set[str]:
        status, _, body = self.call("GET", f"/v2/{repo}/tags/list")
        if status == 404:
            return set()
        assert status == 200, body
        return set(json.loads(body).get("tags") or [])

    def manifest(self, repo: str, ref: str) -> tuple[str, bytes, str] | None:
        """(digest computed from the bytes, bytes, media type), or None when unknown."""
        import hashlib

        status, headers, body = self.call("GET", f"/v2/{repo}/manifests/{ref}")
        if status == 404:
            return None
        assert status == 200, body
        ctype = {k.lower(): v for k, v in headers.items()}["content-type"]
        return "sha256:" + hashlib.sha256(body).hexdigest(), body, ctype


class Pusher:
    """Requests, grants and credentials of pushes for one session repository."""

    def __init__(self, stack: dict[str, Any], plugin: Plugin, work: Path) -> None:
        self.stack = stack
        self.plugin = plugin
        self.work = work
        self.repo = f"push{secrets.token_hex(4)}/shapes"
        self.outputs: list[str] = []  # every answer, message and stream, for the secret check
        self.password = stack["REGISTRY_PASSWORD"]
        self.auth = base64.b64encode(f"{stack['REGISTRY_USER']}:{self.password}".encode()).decode()

    def credentials(
        self, registry: str | None = None, *, password: str | None = None, **extra: Any
    ) -> Path:
        registry = registry or self.stack["REGISTRY"]
        auth = base64.b64encode(
            f"{self.stack['REGISTRY_USER']}:{password or self.password}".encode()
        ).decode()
        document: dict[str, Any] = {"auths": {registry: {"auth": auth}}, **extra}
        path = self.work / f"auth-{secrets.token_hex(4)}.json"
        path.write_text(json.dumps(document))
        return path

    def request(
        self,
        build: dict[str, Any],
        tag: str,
        *,
        registry: str | None = None,
        config_file: Path | None = None,
        ca_file: str | None = None,
        engine: str = "DOCKER",
    ) -> dict[str, Any]:
        registry = registry or self.stack["REGISTRY"]
        return {
            "schema": "svc.oci-push/v1",
            "image_id": build["image_id"],
            "platform": build["platform"],
            "inputs_sha256": build["inputs_sha256"],
            "destination": f"{registry}/{self.repo}:{tag}",
            "engine": {
                "executable": DOCKER,
                "socket": self.stack[f"CI_{engine}_DOCKER_HOST"].removeprefix("unix://"),
                "builder": None,
            },
            "authentication": {
                "config_file": str(config_file or self.credentials(registry)),
                "ca_file": ca_file or self.stack["REGISTRY_CA"],
            },
            "timeout_ms": 240_000,
        }

    def policy(self, request: dict[str, Any]) -> dict[str, Any]:
        repository = request["destination"].rpartition(":")[0]
        return {
            "schema": "svc.operator-policy/v1",
            "grants": [
                {
                    "operation": "image.push",
                    "permissions": ["registry.read", "registry.publish"],
                    "plugin": self.plugin.identity(),
                    "repository": repository,
                }
            ],
        }

    def files(self, request: dict[str, Any], policy: dict[str, Any] | None) -> tuple[Path, Path]:
        token = secrets.token_hex(4)
        args, pol = self.work / f"push-{token}.json", self.work / f"policy-{token}.json"
        args.write_text(json.dumps(request))
        pol.write_text(json.dumps(policy or self.policy(request)))
        return args, pol

    def api(self, request: dict[str, Any], policy: dict[str, Any] | None = None) -> dict[str, Any]:
        args, pol = self.files(request, policy)
        try:
            result = run(
                "svc-oci",
                "push",
                arguments=args,
                operator_policy=pol,
                timeout_ms=300_000,
                plugins_dir=self.plugin.root,
            ).result
        except (PluginFailure, ImageInputError) as exc:
            self.outputs.append(str(exc))
            raise
        self.outputs.append(json.dumps(result))
        return result

    def refused(self, request: dict[str, Any], code: str) -> str:
        """Refused inside the extension, as the CLI shows it (``plugin_failed``, the code,
        the one-line message); the log file and every stream go to the secret check."""
        log = self.work / f"push-{secrets.token_hex(4)}.log"
        done = self.cli(request, log_file=log)
        found, detail, text = cli_failure(done.stdout, done.stderr, done.returncode, log)
        self.outputs.append(text)
        assert found == code, detail
        return detail

    def cli(
        self,
        request: dict[str, Any],
        policy: dict[str, Any] | None = None,
        log_file: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        args, pol = self.files(request, policy)
        log = ["--log-file", str(log_file)] if log_file is not None else []
        done = subprocess.run(
            [
                SVCC,
                "plugins",
                "run",
                "svc-oci",
                "push",
                "--arguments",
                str(args),
                "--operator-policy",
                str(pol),
                "--timeout-ms",
                "300000",
                "--plugins-dir",
                str(self.plugin.root),
                *log,
            ],
            capture_output=True,
            text=True,
            timeout=400,
            check=False,
        )
        self.outputs += [done.stdout, done.stderr]
        return done

    def direct(self, request: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        """The extension run by hand (no core): its own stdout and stderr, unfiltered."""
        from svcc.plugins.store import active

        installed = active("svc-oci", self.plugin.root)
        envelope = {
            "schema": "svc.extension/v1",
            "operation": "push",
            "arguments": request,
            "plugin": {"name": "svc-oci", "version": installed.version},
        }
        done = subprocess.run(
            [str(installed.python), "-I", "-m", installed.module],
            input=json.dumps(envelope),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            env={"PATH": "/usr/bin:/bin", "HOME": str(self.work)},
            cwd=self.work,
        )
        self.outputs += [done.stdout, done.stderr]
        return done

    def assert_no_secret(self) -> None:
        for text in self.outputs:
            assert self.password not in text
            assert self.auth not in text


@pytest.fixture(scope="session")
def pusher(
    stack: dict[str, Any], plugin: Plugin, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Pusher]:
    found = Pusher(stack, plugin, tmp_path_factory.mktemp("push"))
    yield found
    found.assert_no_secret()


@pytest.fixture(scope="session")
def published(
    pusher: Pusher, rest_build: tuple[Build, dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The REST image published through the core CLI: (request, result)."""
    request = pusher.request(rest_build[1], "v1")
    done = pusher.cli(request)
    assert done.returncode == 0, done.stderr
    return request, json.loads(done.stdout)


@pytest.fixture(scope="session")
def published_mcp(
    pusher: Pusher, mcp_build: tuple[Build, dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    request = pusher.request(mcp_build[1], "mcp")
    return request, pusher.api(request)


def test_push_then_pull_by_digest_and_run(
    stack: dict[str, Any],
    pusher: Pusher,
    published: tuple[dict[str, Any], dict[str, Any]],
    rest_build: tuple[Build, dict[str, Any]],
    tmp_path: Path,
) -> None:
    request, result = published
    registry = Registry(stack)
    digest = result["manifest_digest"]
    assert result == {
        "schema": "svc.oci-push-result/v1",
        "destination": request["destination"],
        "digest_reference": f"{stack['REGISTRY']}/{pusher.repo}@{digest}",
        "image_id": rest_build[1]["image_id"],
        "config_digest": rest_build[1]["image_id"],
        "manifest_digest": digest,
        "index_digest": None,
        "platform": "linux/amd64",
        "inputs_sha256": rest_build[1]["inputs_sha256"],
        "published": True,
    }
    found = registry.manifest(pusher.repo, "v1")
    assert found is not None
    assert found[0] == digest
    assert json.loads(found[1])["config"]["digest"] == rest_build[1]["image_id"]
    staging = {t for t in registry.tags(pusher.repo) if t.startswith("svc-upload-")}
    assert len(staging) >= 1  # left, never deleted
    assert all(re.fullmatch(r"svc-upload-[0-9a-f]{16}", t) for t in staging)
    # pull it back by the digest reference with a client of our own, and run it
    env = docker_env(stack, tmp_path)
    (tmp_path / "docker-config" / "config.json").write_text(
        json.dumps({"auths": {stack["REGISTRY"]: {"auth": pusher.auth}}})
    )
    pulled = subprocess.run(
        [DOCKER, "pull", result["digest_reference"]],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert pulled.returncode == 0, pulled.stderr
    inspected = subprocess.run(
        [DOCKER, "image", "inspect", result["digest_reference"]],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(inspected.stdout)[0]["Id"] == rest_build[1]["image_id"]
    cid = subprocess.run(
        [DOCKER, "run", "-d", "--rm", "--network", "none", result["digest_reference"]],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    try:
        probe = (
            "import urllib.request, time\n"
            "deadline = time.monotonic() + 60\n"
            "while True:\n"
            "    try:\n"
            "        req = urllib.request.Request('http://127.0.0.1:8000/capabilities/"
            "shapes.geometry.circle_area', data=b'{\"radius\": 2}', method='POST',"
            " headers={'content-type': 'application/json'})\n"
            "        print(urllib.request.urlopen(req).read().decode())\n"
            "        break\n"
            "    except OSError as exc:\n"
            "        if time.monotonic() > deadline: raise SystemExit(repr(exc))\n"
            "        time.sleep(0.2)\n"
        )
        done = subprocess.run(
            [DOCKER, "exec", cid, "/opt/svc/venv/bin/python", "-c", probe],
            env=env,
            check=False,
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert done.returncode == 0, done.stderr
        assert abs(float(done.stdout) - 12.566) < 0.01
    finally:
        subprocess.run([DOCKER, "rm", "-f", cid], env=env, capture_output=True, check=False)


def test_same_image_again_is_accepted_without_upload(
    stack: dict[str, Any], pusher: Pusher, published: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    request, first = published
    registry = Registry(stack)
    tags = registry.tags(pusher.repo)
    again = pusher.api(request)
    assert again == first
    assert registry.tags(pusher.repo) == tags  # accepted before any upload: no staging tag


def test_another_image_to_the_same_tag_is_refused(
    stack: dict[str, Any],
    pusher: Pusher,
    published: tuple[dict[str, Any], dict[str, Any]],
    mcp_build: tuple[Build, dict[str, Any]],
) -> None:
    registry = Registry(stack)
    tags, before = registry.tags(pusher.repo), registry.manifest(pusher.repo, "v1")
    request = pusher.request(mcp_build[1], "v1")
    detail = pusher.refused(request, "destination_exists")
    assert published[1]["manifest_digest"] in detail
    assert registry.tags(pusher.repo) == tags
    assert registry.manifest(pusher.repo, "v1") == before


def test_grant_is_checked_by_the_core_for_the_exact_repository(
    pusher: Pusher, rest_build: tuple[Build, dict[str, Any]]
) -> None:
    request = pusher.request(rest_build[1], "grant")
    policy = pusher.policy(request)
    policy["grants"][0]["repository"] += "-other"
    with pytest.raises(ImageInputError) as info:
        pusher.api(request, policy)
    assert info.value.code == "grant_mismatch"
    assert "repository" in info.value.message
    policy = pusher.policy(request)
    policy["grants"][0]["permissions"] = ["registry.publish"]
    with pytest.raises(ImageInputError) as info:
        pusher.api(request, policy)
    assert info.value.code == "grant_mismatch"
    assert "permissions" in info.value.message
    build_only = {"schema": "svc.operator-policy/v1", "grants": [{"operation": "image.build"}]}
    with pytest.raises(ImageInputError) as info:
        pusher.api(request, build_only)
    assert info.value.code == "grant_missing"
    # the credentials file is not even read when the grant is missing
    missing = {**request, "authentication": {"config_file": "/nonexistent/auth.json"}}
    with pytest.raises(ImageInputError) as info:
        pusher.api(missing, build_only)
    assert info.value.code == "grant_missing"
    done = pusher.cli(request, build_only)
    assert done.returncode == 2
    assert "grant_missing" in done.stderr


@pytest.mark.parametrize(
    ("how", "words"),
    [
        ("helper", "credHelpers"),
        ("store", "credsStore"),
        ("second", "exactly one"),
        ("other", "not the destination's registry"),
        ("token", "identitytoken"),
        ("userpass", "username"),
    ],
)
def test_credentials_file_rules(
    stack: dict[str, Any],
    pusher: Pusher,
    rest_build: tuple[Build, dict[str, Any]],
    how: str,
    words: str,
) -> None:
    registry = Registry(stack)
    tags = registry.tags(pusher.repo)
    good = {"auth": pusher.auth}
    documents: dict[str, Any] = {
        "helper": {"auths": {stack["REGISTRY"]: good}, "credHelpers": {"x.test": "pass"}},
        "store": {"auths": {stack["REGISTRY"]: good}, "credsStore": "desktop"},
        "second": {"auths": {stack["REGISTRY"]: good, "other.test": good}},
        "other": {"auths": {"registry.test": good}},
        "token": {"auths": {stack["REGISTRY"]: {**good, "identitytoken": "t"}}},
        "userpass": {"auths": {stack["REGISTRY"]: {"username": "u", "password": "p"}}},
    }
    path = pusher.work / f"creds-{how}.json"
    path.write_text(json.dumps(documents[how]))
    request = pusher.request(rest_build[1], f"creds-{how}", config_file=path)
    detail = pusher.refused(request, "credentials_refused")
    assert words in detail
    assert registry.tags(pusher.repo) == tags


def test_wrong_password_and_wrong_ca_fail_closed(
    stack: dict[str, Any], pusher: Pusher, rest_build: tuple[Build, dict[str, Any]]
) -> None:
    registry = Registry(stack)
    tags = registry.tags(pusher.repo)
    wrong = pusher.credentials(password="not-the-password")
    request = pusher.request(rest_build[1], "wrong-password", config_file=wrong)
    pusher.refused(request, "registry_unauthorized")
    # a CA that did not sign the registry's certificate: trust is added, never disabled
    other_ca = pusher.work / "other-ca.crt"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(pusher.work / "other-ca.key"),
            "-out",
            str(other_ca),
            "-days",
            "1",
            "-subj",
            "/CN=not the registry CA",
        ],
        capture_output=True,
        check=True,
    )
    request = pusher.request(rest_build[1], "wrong-ca", ca_file=str(other_ca))
    detail = pusher.refused(request, "registry_untrusted")
    assert "certificate" in detail
    # without ca_file only the system's trust applies, which does not know the stack's CA
    del request["authentication"]["ca_file"]
    assert "certificate" in pusher.refused(request, "registry_untrusted")
    assert registry.tags(pusher.repo) == tags
    assert registry.manifest(pusher.repo, "wrong-password") is None


def test_podman_api_is_refused_naming_both_versions(
    stack: dict[str, Any], pusher: Pusher, rest_build: tuple[Build, dict[str, Any]]
) -> None:
    request = pusher.request(rest_build[1], "podman", engine="PODMAN")
    detail = pusher.refused(request, "engine_unsupported")
    assert "1.41" in detail
    assert "1.46" in detail


def test_request_refusals(pusher: Pusher, rest_build: tuple[Build, dict[str, Any]]) -> None:
    request = pusher.request(rest_build[1], "refusals")
    cases: list[tuple[dict[str, Any], str]] = [
        (
            {**request, "destination": request["destination"].rpartition(":")[0]},
            "reference_invalid",
        ),
        ({**request, "destination": "https://registry.test:5443/a/b:c"}, "reference_invalid"),
        ({**request, "destination": "u:p@registry.test:5443/a/b:c"}, "reference_invalid"),
        ({**request, "destination": "127.0.0.1:5443/a/b:c"}, "reference_invalid"),
        ({**request, "extra": 1}, "request_invalid"),
        ({**request, "image_id": "a9689fa3d461"}, "request_invalid"),
        ({**request, "authentication": {"config_file": "auth.json"}}, "request_invalid"),
    ]
    for bad, code in cases:
        with pytest.raises(ImageInputError) as info:
            pusher.api(bad, {"schema": "svc.operator-policy/v1", "grants": []})
        assert info.value.code == code, bad
    mismatch = {**request, "inputs_sha256": "0" * 64}
    assert "label" in pusher.refused(mismatch, "image_mismatch")
    absent = {**request, "image_id": "sha256:" + "0" * 64}
    pusher.refused(absent, "image_mismatch")


@pytest.fixture
def proxy(stack: dict[str, Any]) -> Iterator[RegistryProxy]:
    """The proxy, trusted by the engine for its port (the stack's CA, as for the registry)."""
    with RegistryProxy(stack["REGISTRY"], state_dir()) as found:
        certs = CERTS_D / found.registry
        certs.mkdir(parents=True)
        shutil.copy(stack["REGISTRY_CA"], certs / "ca.crt")
        try:
            yield found
        finally:
            shutil.rmtree(certs, ignore_errors=True)


def test_registry_500_to_the_promotion(
    stack: dict[str, Any],
    pusher: Pusher,
    proxy: RegistryProxy,
    published: tuple[dict[str, Any], dict[str, Any]],
    rest_build: tuple[Build, dict[str, Any]],
) -> None:
    tag = "five-hundred"
    target = f"/v2/{pusher.repo}/manifests/{tag}"

    def fail(method: str, path: str) -> tuple[int, bytes] | None:
        if method == "PUT" and path == target:
            return 500, b'{"errors":[{"code":"UNKNOWN","message":"injected"}]}'
        return None

    proxy.before.append(fail)
    request = pusher.request(rest_build[1], tag, registry=proxy.registry)
    detail = pusher.refused(request, "remote_state_unconfirmed")
    assert "500" in detail
    assert ("PUT", target, 500) in proxy.seen
    registry = Registry(stack)
    assert registry.manifest(pusher.repo, tag) is None  # nothing published
    staging = re.findall(r"svc-upload-[0-9a-f]{16}", detail)
    assert staging
    assert staging[0] in registry.tags(pusher.repo)  # left in place
    left = registry.manifest(pusher.repo, staging[0])  # our image (its config is the image id)
    assert left is not None
    assert json.loads(left[1])["config"]["digest"] == published[1]["image_id"]


def test_registry_500_to_the_staging_upload(
    stack: dict[str, Any],
    pusher: Pusher,
    proxy: RegistryProxy,
    rest_build: tuple[Build, dict[str, Any]],
) -> None:
    def fail(method: str, path: str) -> tuple[int, bytes] | None:
        if method == "PUT" and "/manifests/svc-upload-" in path:
            return 500, b'{"errors":[{"code":"UNKNOWN","message":"injected"}]}'
        return None

    proxy.before.append(fail)
    tag = "staging-five-hundred"
    registry = Registry(stack)
    request = pusher.request(rest_build[1], tag, registry=proxy.registry)
    detail = pusher.refused(request, "remote_state_unconfirmed")
    assert "engine_failed" in detail
    staging = re.findall(r"svc-upload-[0-9a-f]{16}", detail)[0]
    assert registry.manifest(pusher.repo, tag) is None
    assert registry.manifest(pusher.repo, staging) is None
    # the engine's own complaint reaches the extension's stderr, without the credentials
    done = pusher.direct(pusher.request(rest_build[1], f"{tag}-2", registry=proxy.registry))
    assert json.loads(done.stdout)["error"]["code"] == "remote_state_unconfirmed"
    assert done.stderr.strip()
    pusher.assert_no_secret()


def test_destination_changed_between_check_and_promotion(
    *,
    stack: dict[str, Any],
    pusher: Pusher,
    proxy: RegistryProxy,
    published: tuple[dict[str, Any], dict[str, Any]],
    published_mcp: tuple[dict[str, Any], dict[str, Any]],
    rest_build: tuple[Build, dict[str, Any]],
) -> None:
    tag = "raced"
    target = f"/v2/{pusher.repo}/manifests/{tag}"
    registry = Registry(stack)
    other = registry.manifest(pusher.repo, "mcp")
    assert other is not None
    raced: list[int] = []

    def another_client(method: str, path: str, status: int) -> None:
        """Right after the first check saw the tag absent, another client tags it."""
        if method == "GET" and path == target and status == 404 and not raced:
            put = registry.call("PUT", target, other[1], other[2])
            raced.append(put[0])

    proxy.after.append(another_client)
    request = pusher.request(rest_build[1], tag, registry=proxy.registry)
    detail = pusher.refused(request, "remote_state_unconfirmed")
    assert raced == [201]
    assert "destination_exists" in detail
    assert other[0] in detail
    after = registry.manifest(pusher.repo, tag)
    assert after is not None
    assert after[0] == other[0]  # the other client's image, untouched
    assert not [m for m, p, _ in proxy.seen if m == "PUT" and p == target]  # never promoted
    staging = re.findall(r"svc-upload-[0-9a-f]{16}", detail)[0]
    left = registry.manifest(pusher.repo, staging)
    assert left is not None
    assert json.loads(left[1])["config"]["digest"] == published[1]["image_id"]


def test_no_output_carries_a_credential(pusher: Pusher) -> None:
    assert len(pusher.outputs) >= 5
    pusher.assert_no_secret()


@pytest.fixture(scope="session")
def large_image(stack: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A large image (a 48 MiB layer of fresh random bytes, so it is never in the registry)
    that passes the local checks: the build-result fields of it."""
    work = tmp_path_factory.mktemp("large")
    (work / "big.bin").write_bytes(secrets.token_bytes(48 * 1024 * 1024))
    inputs = secrets.token_hex(32)
    (work / "Containerfile").write_text(
        f"FROM {stack['BASE_IMAGE']}\nCOPY big.bin /big.bin\nUSER 65532:65532\n"
        f"LABEL io.svcc.inputs-sha256={inputs}\n"
    )
    iid = work / "iid"
    env = {**docker_env(stack, work), "DOCKER_BUILDKIT": "0"}
    subprocess.run(
        [
            DOCKER,
            "build",
            "-q",
            "--iidfile",
            str(iid),
            "-f",
            str(work / "Containerfile"),
            str(work),
        ],
        env=env,
        capture_output=True,
        check=True,
        timeout=300,
    )
    return {"image_id": iid.read_text().strip(), "platform": "linux/amd64", "inputs_sha256": inputs}


def test_registry_stops_in_the_middle_of_an_upload(
    stack: dict[str, Any], pusher: Pusher, proxy: RegistryProxy, large_image: dict[str, Any]
) -> None:
    def big_upload(method: str, path: str) -> bool:
        return method in ("PATCH", "PUT") and "/blobs/uploads/" in path

    proxy.stop_during = big_upload
    tag = "stopped"
    request = pusher.request(large_image, tag, registry=proxy.registry)
    request["timeout_ms"] = 15_000  # the engine retries a dead registry: the deadline ends it
    detail = pusher.refused(request, "remote_state_unconfirmed")
    assert proxy.stopped.is_set()
    assert ("engine_failed" in detail) or ("timeout" in detail)
    registry = Registry(stack)
    assert registry.manifest(pusher.repo, tag) is None
    staging = re.findall(r"svc-upload-[0-9a-f]{16}", detail)[0]
    assert registry.manifest(pusher.repo, staging) is None


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b'{"errors":[{"code":"NAME_UNKNOWN","message":"injected"}]}', "NAME_UNKNOWN"),
        (b"not found", "no code"),
    ],
)
def test_only_the_exact_manifest_unknown_counts_as_absent(
    *,
    stack: dict[str, Any],
    pusher: Pusher,
    proxy: RegistryProxy,
    rest_build: tuple[Build, dict[str, Any]],
    body: bytes,
    code: str,
) -> None:
    """A 404 that is not MANIFEST_UNKNOWN, right before promotion, stops the promotion."""
    tag = f"odd-404-{secrets.token_hex(2)}"
    target = f"/v2/{pusher.repo}/manifests/{tag}"

    def odd_404(method: str, path: str) -> tuple[int, bytes] | None:
        uploaded = any(m == "PUT" and "/manifests/svc-upload-" in p for m, p, _ in proxy.seen)
        if method == "GET" and path == target and uploaded:  # the check before promotion
            return 404, body
        return None

    proxy.before.append(odd_404)
    request = pusher.request(rest_build[1], tag, registry=proxy.registry)
    detail = pusher.refused(request, "remote_state_unconfirmed")
    assert code in detail
    assert not [m for m, p, _ in proxy.seen if m == "PUT" and p == target]
    assert Registry(stack).manifest(pusher.repo, tag) is None


def test_push_killed_by_the_core_deadline_is_unconfirmed(
    pusher: Pusher, rest_build: tuple[Build, dict[str, Any]]
) -> None:
    """The core cannot know how far a killed push got: never a plain timeout."""
    request = pusher.request(rest_build[1], "killed")
    args, pol = pusher.files(request, None)
    with pytest.raises(PluginFailure) as info:
        run(
            "svc-oci",
            "push",
            arguments=args,
            operator_policy=pol,
            timeout_ms=300,
            plugins_dir=pusher.plugin.root,
        )
    assert info.value.code == "remote_state_unconfirmed"
    assert info.value.detail.startswith("timeout")


def test_push_result_feeds_the_k8s_target(
    published: tuple[dict[str, Any], dict[str, Any]], tmp_path: Path
) -> None:
    """Repository → image → registry → Kubernetes base: what `svc-oci push` printed is
    exactly what `--target k8s --push-result` takes, and the Deployment runs the image by
    the digest the registry verified."""
    import yaml
    from oci_support import SHAPES_REPO

    _, result = published
    printed = tmp_path / "push-result.json"
    printed.write_text(json.dumps(result))
    out = tmp_path / "base"
    done = subprocess.run(
        [SVCC, "compile", str(SHAPES_REPO), "--target", "k8s", "--push-result", str(printed),
         "--output-dir", str(out), "--format", "json"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    deployment = yaml.safe_load((out / "deployment.yaml").read_text())
    (server,) = deployment["spec"]["template"]["spec"]["containers"]
    assert server["image"] == result["digest_reference"]
    annotations = deployment["metadata"]["annotations"]
    assert annotations["svcc.io/inputs-sha256"] == result["inputs_sha256"]
