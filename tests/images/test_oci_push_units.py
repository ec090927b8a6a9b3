"""The push request, its grant and the credentials file rules, without an engine or registry
(the end-to-end behaviour is ``test_oci_push``)."""

import base64
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT
from svcc.images.errors import ImageInputError
from svcc.images.push_request import check_push_grant, parse_push_request
from svcc.images.request import PluginIdentity

sys.path.insert(0, str(ROOT / "extensions" / "svc-oci"))
from svc_oci.credentials import read_credentials

PLUGIN = PluginIdentity(name="svc-oci", version="0.4.1", sha256="a" * 64, lock_sha256="b" * 64)
AUTH = base64.b64encode(b"ci:s3cret-pass").decode()


def request(**override: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "schema": "svc.oci-push/v1",
        "image_id": "sha256:" + "1" * 64,
        "platform": "linux/amd64",
        "inputs_sha256": "2" * 64,
        "destination": "registry.example:5443/team/shapes:1.0",
        "engine": {"executable": "/usr/bin/docker", "socket": "/run/docker.sock", "builder": None},
        "authentication": {"config_file": "/etc/svc/auth.json"},
    }
    base.update(override)
    return base


def grant(**override: Any) -> dict[str, Any]:
    found: dict[str, Any] = {
        "operation": "image.push",
        "permissions": ["registry.read", "registry.publish"],
        "plugin": {
            "name": "svc-oci",
            "version": "0.4.1",
            "sha256": "a" * 64,
            "lock_sha256": "b" * 64,
        },
        "repository": "registry.example:5443/team/shapes",
    }
    found.update(override)
    return {"schema": "svc.operator-policy/v1", "grants": [found]}


def test_a_valid_request_and_its_repository() -> None:
    parsed = parse_push_request(request(authentication={"config_file": "/a", "ca_file": "/b"}))
    assert parsed.repository == "registry.example:5443/team/shapes"
    assert parsed.authentication.ca_file == "/b"
    assert parsed.timeout_ms == 300_000
    check_push_grant(grant(), parsed, PLUGIN)


@pytest.mark.parametrize(
    ("override", "code", "words"),
    [
        ({"schema": "svc.oci-build/v1"}, "request_invalid", "schema"),
        ({"extra": True}, "request_invalid", "extra"),
        ({"image_id": "sha256:" + "A" * 64}, "request_invalid", "image_id"),
        ({"inputs_sha256": "2" * 63}, "request_invalid", "inputs_sha256"),
        ({"platform": "linux/386"}, "request_invalid", "platform"),
        ({"timeout_ms": 540_001}, "request_invalid", "timeout_ms"),
        ({"authentication": {"config_file": "auth.json"}}, "request_invalid", "absolute"),
        (
            {"authentication": {"config_file": "/a", "insecure": True}},
            "request_invalid",
            "insecure",
        ),
        ({"destination": "registry.example:5443/team/shapes"}, "reference_invalid", "tag"),
        ({"destination": "https://registry.example/team/shapes:1"}, "reference_invalid", "scheme"),
        ({"destination": "u:p@registry.example/team/shapes:1"}, "reference_invalid", "credential"),
        ({"destination": "10.0.0.1:5000/team/shapes:1"}, "reference_invalid", "IP"),
        ({"destination": "[::1]:5000/team/shapes:1"}, "reference_invalid", "IP"),
        ({"destination": "registry/team/shapes:1"}, "reference_invalid", "explicit"),
        ({"destination": "registry.example/shapes:1"}, "reference_invalid", "malformed"),
        (
            {"destination": "registry.example/team/shapes:1@sha256:" + "3" * 64},
            "reference_invalid",
            "digest",
        ),
        (
            {"engine": {"executable": "/d", "socket": "tcp://h:2375", "builder": None}},
            "engine_refused",
            "Unix",
        ),
    ],
)
def test_request_refusals(override: dict[str, Any], code: str, words: str) -> None:
    with pytest.raises(ImageInputError) as info:
        parse_push_request(request(**override))
    assert info.value.code == code
    assert words.lower() in info.value.message.lower()


@pytest.mark.parametrize(
    ("policy", "code", "words"),
    [
        ({"schema": "svc.operator-policy/v1", "grants": []}, "grant_missing", "image.push"),
        (grant(operation="image.build"), "grant_missing", "image.push"),
        (grant(permissions=["registry.read"]), "grant_mismatch", "permissions"),
        (
            grant(permissions=["registry.read", "registry.publish", "image.build"]),
            "grant_mismatch",
            "permissions",
        ),
        (grant(repository="registry.example:5443/team/other"), "grant_mismatch", "repository"),
        (grant(repository="registry.example/team/shapes"), "grant_mismatch", "repository"),
        (grant(repository="registry.example:5443/team/shapes:1.0"), "grant_mismatch", "repository"),
        (grant(plugin={"name": "svc-oci"}), "grant_mismatch", "plugin.version"),
    ],
)
def test_grant_refusals(policy: dict[str, Any], code: str, words: str) -> None:
    with pytest.raises(ImageInputError) as info:
        check_push_grant(policy, parse_push_request(request()), PLUGIN)
    assert info.value.code == code
    assert words in info.value.message


def _creds(tmp_path: Path, document: Any) -> str:
    path = tmp_path / "auth.json"
    path.write_text(json.dumps(document))
    return str(path)


def test_credentials_one_record(tmp_path: Path) -> None:
    found = read_credentials(
        _creds(tmp_path, {"auths": {"registry.example:5443": {"auth": AUTH}}}),
        "registry.example:5443",
    )
    assert (found.username, found.password) == ("ci", "s3cret-pass")
    assert "s3cret" not in repr(found)
    assert AUTH not in repr(found)
    config = tmp_path / "cfg"
    config.mkdir()
    found.write_engine_config(config)
    assert json.loads((config / "config.json").read_text()) == {
        "auths": {"registry.example:5443": {"auth": AUTH}}
    }
    assert (config / "config.json").stat().st_mode & 0o077 == 0


def test_credentials_for_the_public_registry_use_its_index_key(tmp_path: Path) -> None:
    found = read_credentials(
        _creds(tmp_path, {"auths": {"docker.io": {"auth": AUTH}}}), "docker.io"
    )
    found.write_engine_config(tmp_path)
    assert list(json.loads((tmp_path / "config.json").read_text())["auths"]) == [
        "https://index.docker.io/v1/"
    ]


@pytest.mark.parametrize(
    ("document", "words"),
    [
        ({"auths": {"registry.example:5443": {"auth": AUTH}}, "credsStore": "pass"}, "credsStore"),
        ({"auths": {"registry.example:5443": {"auth": AUTH}}, "credHelpers": {}}, "credHelpers"),
        ({"auths": {}}, "exactly one"),
        (
            {"auths": {"registry.example:5443": {"auth": AUTH}, "b.example": {"auth": AUTH}}},
            "exactly one",
        ),
        ({"auths": {"registry.example": {"auth": AUTH}}}, "not the destination"),
        ({"auths": {"https://registry.example:5443": {"auth": AUTH}}}, "not the destination"),
        (
            {"auths": {"registry.example:5443": {"auth": AUTH, "identitytoken": "x"}}},
            "identitytoken",
        ),
        ({"auths": {"registry.example:5443": {"registrytoken": "x"}}}, "registrytoken"),
        ({"auths": {"registry.example:5443": {"username": "u", "password": "p"}}}, "username"),
        ({"auths": {"registry.example:5443": {"auth": "not base64!"}}}, "base64"),
        (
            {
                "auths": {
                    "registry.example:5443": {"auth": base64.b64encode(b"nopassword").decode()}
                }
            },
            "user:password",
        ),
        ([1], "not a JSON object"),
    ],
)
def test_credentials_refusals(tmp_path: Path, document: Any, words: str) -> None:
    with pytest.raises(ImageInputError) as info:
        read_credentials(_creds(tmp_path, document), "registry.example:5443")
    assert info.value.code == "credentials_refused"
    assert words in info.value.message
    assert "s3cret" not in info.value.message
    assert AUTH not in info.value.message
