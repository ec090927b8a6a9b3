"""The engine's API version and registry settings as ``svc-oci push`` reads them.

The stack's Docker Engine is shared and must not be reconfigured, so an engine that allows
insecure registries is played by a small stand-in client answering ``version`` and ``info``
with what such an engine reports (the real engines are in ``test_oci_push``)."""

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT
from svcc.images.errors import ImageInputError
from svcc.images.push_request import parse_push_request

sys.path.insert(0, str(ROOT / "extensions" / "svc-oci"))
from svc_oci.credentials import Credentials
from svc_oci.engine_push import PushEngine

DEFAULT = {
    "IndexConfigs": {"docker.io": {"Secure": True}},
    "InsecureRegistryCIDRs": ["::1/128", "127.0.0.0/8"],
}


def engine(tmp_path: Path, api: str, registry_config: dict[str, Any]) -> PushEngine:
    client = tmp_path / "docker"
    version = {"ApiVersion": api, "Components": [{"Name": "Engine"}]}
    client.write_text(
        "#!/bin/sh\n"
        f"[ \"$1\" = version ] && echo '{json.dumps(version)}' && exit 0\n"
        f"[ \"$1\" = info ] && echo '{json.dumps(registry_config)}' && exit 0\n"
        "exit 1\n"
    )
    client.chmod(0o755)
    request = parse_push_request(
        {
            "schema": "svc.oci-push/v1",
            "image_id": "sha256:" + "1" * 64,
            "platform": "linux/amd64",
            "inputs_sha256": "2" * 64,
            "destination": "registry.example:5443/team/shapes:1",
            "engine": {"executable": str(client), "socket": "/run/x.sock", "builder": None},
            "authentication": {"config_file": "/a"},
        }
    )
    work = tmp_path / "work"
    work.mkdir()
    creds = Credentials("registry.example:5443", "u", "p", "dTpw")
    return PushEngine(request, work, creds, time.monotonic() + 30)


def test_default_engine_is_accepted(tmp_path: Path) -> None:
    engine(tmp_path, "1.51", DEFAULT).check_supported()


@pytest.mark.parametrize(
    ("api", "config", "words"),
    [
        ("1.45", DEFAULT, "1.45"),
        ("1.41", DEFAULT, "1.46"),
        (
            "1.51",
            {**DEFAULT, "IndexConfigs": {"registry.example:5443": {"Secure": False}}},
            "registry.example:5443",
        ),
        ("1.51", {**DEFAULT, "InsecureRegistryCIDRs": ["127.0.0.0/8", "10.0.0.0/8"]}, "10.0.0.0/8"),
    ],
)
def test_old_or_insecure_engines_are_refused(
    tmp_path: Path, api: str, config: dict[str, Any], words: str
) -> None:
    with pytest.raises(ImageInputError) as info:
        engine(tmp_path, api, config).check_supported()
    assert info.value.code == "engine_unsupported"
    assert words in info.value.message
