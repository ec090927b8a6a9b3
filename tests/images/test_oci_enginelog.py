"""The one-line reason of an engine failure, from what the engines really print (samples
taken from Docker Engine 28.5 + BuildKit and podman 4.3.1 on the test stack): a person reads
what went wrong and what to do, never a log dump."""

import sys

import pytest
from helpers import ROOT

sys.path.insert(0, str(ROOT / "extensions" / "svc-oci"))
from svc_oci.enginelog import MAX_REASON, build_reason, one_line, push_reason

DIGEST = "sha256:" + "5" * 64
PRIVATE = f"registry.test:5443/ci/private-base@{DIGEST}"
MISSING = f"registry.test:5444/ci/nope@{DIGEST}"
UNAUTHORIZED = (
    f"pulling the base {PRIVATE}: unauthorized: the build accepts no registry credentials; "
    "use a base in a registry that allows anonymous pulls"
)

BUILDX_401 = f"""#2 [internal] load metadata for {PRIVATE}
#2 ERROR: unexpected status from HEAD request to https://registry.test:5443/v2/ci/private-base/manifests/{DIGEST}: 401 Unauthorized
ERROR: failed to build: failed to solve: {PRIVATE}: failed to resolve source metadata for {PRIVATE}: unexpected status from HEAD request: 401 Unauthorized
"""  # noqa: E501
PODMAN_401 = f"""STEP 1/1: FROM {PRIVATE}
Trying to pull {PRIVATE}...
creating build container: initializing source docker://{PRIVATE}: reading manifest {DIGEST} in registry.test:5443/ci/private-base: unauthorized: authentication required
"""  # noqa: E501
PODMAN_404 = f"""Trying to pull {MISSING}...
creating build container: initializing source docker://{MISSING}: reading manifest {DIGEST} in registry.test:5444/ci/nope: manifest unknown: manifest unknown
"""  # noqa: E501
PIP_FAILED = """#9 [builder 3/4] RUN /opt/svc/venv/bin/pip install --no-index --only-binary=:all: --require-hashes
#9 1.2 ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE.
ERROR: failed to build: failed to solve: process "/bin/sh -c ..." did not complete successfully: exit code: 1
"""  # noqa: E501


@pytest.mark.parametrize("output", [BUILDX_401, PODMAN_401], ids=["buildx", "podman"])
def test_a_base_behind_credentials_is_named_with_the_remedy(output: str) -> None:
    base = PRIVATE if "5443" in output else MISSING
    assert build_reason(output.encode(), 1, base) == UNAUTHORIZED


def test_a_missing_base_and_a_failed_install() -> None:
    assert build_reason(PODMAN_404.encode(), 1, MISSING) == (
        f"pulling the base {MISSING}: not found in its registry; check the name and the digest"
    )
    reason = build_reason(PIP_FAILED.encode(), 1, PRIVATE)
    assert reason == (
        "installing the locked wheels in the image failed: "
        "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE."
    )


def test_anything_else_is_the_last_error_line_on_one_bounded_line() -> None:
    noisy = b"\x1b[31mstep 1\x1b[0m\nError response from daemon: no space left\n\n"
    assert build_reason(noisy, 125, PRIVATE) == (
        "the engine client exited with status 125: Error response from daemon: no space left"
    )
    long = one_line("x\ty\n" * 500)
    assert len(long) == MAX_REASON
    assert "\n" not in long
    assert "\t" not in long


def test_push_reasons() -> None:
    alias = "registry.test:5443/team/shop:svc-upload-0123456789abcdef"
    assert push_reason(b"unauthorized: authentication required\n", 1, alias).startswith(
        f"uploading {alias}: the registry refused the credentials; check the 'auth' record"
    )
    assert "/etc/docker/certs.d/registry.test:5443/ca.crt" in push_reason(
        b"x509: certificate signed by unknown authority\n", 1, alias
    )
