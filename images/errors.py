"""Refusals of image inputs, each with a stable code (the ``svc.extension/v1`` error code).

The codes are part of the extension protocol: tools match on them, so they are never renamed.
"""

from typing import Final

from svcc.contracts.errors import InputError

# code -> what it means (docs/oci.md lists each with its cause and what to do about it;
# tests/images/test_oci_inputs.py checks that every code has both)
CODES: Final[dict[str, str]] = {
    "lock_invalid": "the wheel lock is not one `name==version --hash=sha256:HEX` per line",
    "lock_mismatch": "the lock is not the resolved server + application dependency set",
    "reference_invalid": "an image reference is malformed or uses a refused form",
    "base_not_pinned": "the base image is not pinned by a sha256 digest",
    "bundle_invalid": "the bundle is not a valid direct repository bundle",
    "request_invalid": "the request does not follow svc.oci-build/v1 or svc.oci-push/v1",
    "grant_missing": "the operator policy has no image.build / image.push grant for this request",
    "grant_mismatch": "an image.build / image.push grant exists but a bound field differs",
    "engine_refused": "the engine endpoint is not an explicit local Unix socket",
    "engine_failed": "the engine or builder failed, or disagreed with the inspection",
    "wheel_invalid": "a wheel is missing, over a limit, or its hash differs from the lock",
    "timeout": "the build did not finish within timeout_ms",
    "log_budget_exceeded": "the engine client wrote more than max_log_bytes",
    "plugin_invalid": "a plugin wheel or its install inputs are refused",
    "plugin_hash_mismatch": "the plugin wheel's sha256 differs from --sha256",
    "plugin_not_enabled": "no enabled version of the named plugin",
    "plugin_failed": "the plugin broke the protocol; the CLI's first word for its failures",
    "internal_error": "a bug in the extension (only the exception's type is said)",
    # push (svc.oci-push/v1)
    "credentials_refused": "the credentials file is not one auths entry with only auth",
    "engine_unsupported": "the engine's API is older than 1.46, or it allows insecure registries",
    "image_mismatch": "the local image is absent or not the one the request describes",
    "registry_unauthorized": "the registry refused the credentials (nothing was uploaded)",
    "registry_untrusted": "the registry's certificate did not verify (nothing was uploaded)",
    "registry_failed": "the registry could not be read (nothing was uploaded)",
    "destination_exists": "the destination tag holds another image (nothing was uploaded)",
    "remote_state_unconfirmed": "a failure after the upload started; staging tags may remain",
}


class ImageInputError(InputError):
    """A refused image input; ``code`` is one of ``CODES``."""

    def __init__(self, code: str, message: str) -> None:
        if code not in CODES:
            raise ValueError(f"unknown image error code {code!r}")
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
