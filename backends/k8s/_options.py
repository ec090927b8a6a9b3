"""From the target's options to a :class:`Workload`: every value checked, one error each.

The image is accepted by digest only (``REG[:PORT]/NS/IMG@sha256:<64 hex>``): a tag can be
moved after publication, a digest cannot. Names follow the Kubernetes rules for the objects
they name (RFC 1035 labels for a Service, RFC 1123 labels for a namespace).
"""

import json
import re
from collections.abc import Sequence
from typing import Any, Final

from svcc.backends.k8s._manifests import Resources, Workload
from svcc.contracts.errors import InputError, UsageError
from svcc.contracts.target import File
from svcc.ir.canonical import canonical_json, digest_bytes

PUSH_RESULT_SCHEMA: Final = "svc.oci-push-result/v1"
MAX_PUSH_RESULT_BYTES: Final = 64 * 1024
MAX_REPLICAS: Final = 1000
_HEX64 = re.compile(r"[0-9a-f]{64}")
_LABEL_1035 = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
_LABEL_1123 = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_SUBDOMAIN_1123 = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUANTITY = re.compile(r"(?:[0-9]+(?:\.[0-9]+)?)(?:m|k|M|G|T|Ki|Mi|Gi|Ti)?")


def check_image(ref: str) -> str:
    """``REG[:PORT]/NS/IMG@sha256:HEX``, nothing else: the project's reference grammar (no
    scheme, no credentials, no IP literal), a digest, and no tag (a tag beside a digest is
    ignored by the kubelet and would only mislead a reader)."""
    from svcc.images.errors import ImageInputError
    from svcc.images.reference import parse_reference

    try:
        parsed = parse_reference(ref, what="--image", require_digest=True)
    except ImageInputError as exc:  # the extension's error code means nothing here
        raise UsageError(exc.message) from None
    if parsed.tag is not None:
        raise UsageError(f"--image {ref!r}: an image by digest only (drop the tag {parsed.tag!r})")
    return ref


def read_push_result(file: File) -> tuple[str, str]:
    """``(digest_reference, inputs_sha256)`` of a published ``svc.oci-push-result/v1``."""
    path = file.path
    if len(file.data) > MAX_PUSH_RESULT_BYTES:
        raise InputError(f"{path}: over {MAX_PUSH_RESULT_BYTES} bytes: not a push result")
    try:
        doc = json.loads(file.data)
    except ValueError as exc:
        raise InputError(f"{path}: not a JSON push result ({exc})") from None
    if isinstance(doc, dict) and isinstance(doc.get("result"), dict):
        doc = doc["result"]  # the svc.extension/v1 response around it
    if not isinstance(doc, dict) or doc.get("schema", PUSH_RESULT_SCHEMA) != PUSH_RESULT_SCHEMA:
        raise InputError(f"{path}: not a {PUSH_RESULT_SCHEMA} document")
    if doc.get("published") is not True:
        raise InputError(f'{path}: the image is not published ("published" is not true)')
    ref, inputs = doc.get("digest_reference"), doc.get("inputs_sha256")
    if not isinstance(ref, str) or not isinstance(inputs, str):
        raise InputError(f"{path}: digest_reference and inputs_sha256 must be strings")
    return ref, inputs


def _label(value: str, what: str, pattern: re.Pattern[str]) -> str:
    if pattern.fullmatch(value) is None:
        raise UsageError(
            f"{what} {value!r}: must be at most 63 lower-case letters, digits and '-', "
            "starting and ending with a letter or digit"
        )
    return value


def _name_from_image(ref: str) -> str:
    last = ref.split("@", 1)[0].rsplit("/", 1)[-1]
    name = re.sub(r"[^a-z0-9-]+", "-", last).strip("-")[:63].strip("-")
    if not name or not name[0].isalpha():
        name = f"svc-{name}"[:63].strip("-")
    return name


def capabilities_digest(capability_ids: Sequence[str]) -> str:
    """sha256 (hex) of the canonical JSON of the sorted capability ids."""
    return digest_bytes(canonical_json(sorted(capability_ids))).removeprefix("sha256:")


def workload_of(
    options: dict[str, Any], *, capability_ids: Sequence[str], listens: bool
) -> Workload:
    image, inputs = options["image"], options["inputs_sha256"]
    if options["push_result"] is not None:
        if image is not None or inputs is not None:
            raise UsageError("--push-result gives the image and its inputs digest: drop --image")
        image, inputs = read_push_result(options["push_result"])
    if image is None:
        raise UsageError("the k8s target needs --image REF@sha256:… or --push-result FILE")
    check_image(image)
    if inputs is None or _HEX64.fullmatch(inputs) is None:
        raise UsageError("--inputs-sha256: the image's inputs digest, 64 lower-case hex digits")
    replicas = options["replicas"]
    if not 1 <= replicas <= MAX_REPLICAS:
        raise UsageError(f"--replicas {replicas}: between 1 and {MAX_REPLICAS}")
    maximum = options["max_replicas"] or min(MAX_REPLICAS, 4 * replicas)
    if not replicas <= maximum <= MAX_REPLICAS:
        raise UsageError(f"--max-replicas {maximum}: between --replicas and {MAX_REPLICAS}")
    for key in ("cpu_request", "cpu_limit", "memory_request", "memory_limit"):
        if _QUANTITY.fullmatch(options[key]) is None:
            flag = "--" + key.replace("_", "-")
            raise UsageError(f"{flag} {options[key]!r}: not a Kubernetes quantity (e.g. 250m, 1Gi)")
    name = options["app_name"] or _name_from_image(image)
    namespace = options["namespace"]
    secret = options.get("auth_secret")
    if secret is not None and (len(secret) > 253 or not _SUBDOMAIN_1123.fullmatch(secret)):
        raise UsageError(
            f"--auth-secret {secret!r}: a Secret name (at most 253 lower-case letters, digits, "
            "'-' and '.', starting and ending with a letter or digit)"
        )
    oauth = _config_map(options.get("oauth_config"), "--oauth-config")
    otel = _config_map(options.get("otel_config"), "--otel-config")
    return Workload(
        name=_label(name, "--app-name", _LABEL_1035),
        namespace=None if namespace is None else _label(namespace, "--namespace", _LABEL_1123),
        image=image,
        interface=options["interface"],
        listens=listens,
        replicas=replicas,
        max_replicas=maximum,
        capabilities_sha256=capabilities_digest(capability_ids),
        inputs_sha256=inputs,
        resources=Resources(
            cpu_request=options["cpu_request"],
            cpu_limit=options["cpu_limit"],
            memory_request=options["memory_request"],
            memory_limit=options["memory_limit"],
        ),
        writable_tmp=options["writable_tmp"],
        auth_secret=secret,
        oauth_config=oauth,
        otel_config=otel,
    )


def _config_map(name: str | None, flag: str) -> str | None:
    """A ConfigMap name as Kubernetes accepts it (RFC 1123 subdomain), or ``None``."""
    if name is not None and (len(name) > 253 or not _SUBDOMAIN_1123.fullmatch(name)):
        raise UsageError(
            f"{flag} {name!r}: a ConfigMap name (at most 253 lower-case letters, "
            "digits, '-' and '.', starting and ending with a letter or digit)"
        )
    return name
