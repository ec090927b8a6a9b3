"""Reading a REST bundle for export: verified bytes only, never the user's source.

The manifest is re-hashed before anything else is read: every file it lists must still
hash to its recorded digest, so a bundle changed after generation is refused. The
documents the exporter needs (``openapi.json``, ``capability-ir.json``, the runtime's
validation modules) are kept as the very bytes that were hashed, so nothing can change
between the check and the use. ``source/`` is hashed like every other file and never read
further: export neither scans nor runs the user's code.
"""

import errno
import hashlib
import json
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from attrs import frozen
from svcc.compiler.registry import servable_targets
from svcc.contracts.errors import InputError
from svcc.contracts.target import BundleSpec

OPENAPI: Final = "openapi.json"
IR: Final = "capability-ir.json"
VALIDATION_MODULES: Final = ("__init__", "integrity", "json_text", "validation")

MAX_MANIFEST_BYTES: Final = 4 * 1024 * 1024
MAX_DOCUMENT_BYTES: Final = 64 * 1024 * 1024
MAX_CAPABILITIES: Final = 1000
# A route segment svcc emits: a Python identifier, dotted for repository modules.
CAPABILITY_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
MAX_NAME_CHARS: Final = 200

_KEEP: Final = frozenset({OPENAPI, IR, *(f"svc_runtime/{m}.py" for m in VALIDATION_MODULES)})
# No symlink followed; O_NONBLOCK so a FIFO in a bundle cannot hang the export.
_FLAGS: Final = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


@frozen(kw_only=True)
class Capability:
    id: str
    name: str
    route: str
    summary: str
    description: str | None
    schema: Mapping[str, Any]  # the request body schema (closed object)
    defaults: Mapping[str, str]  # parameter name -> default source text (from the IR)
    positional_only: tuple[str, ...]


@frozen(kw_only=True)
class RestBundle:
    """What export needs of a verified REST bundle."""

    path: Path
    manifest_digest: str  # sha256 of svc-rest.json's bytes: changes whenever anything does
    module: str
    title: str
    capabilities: tuple[Capability, ...]
    definitions: Mapping[str, Any]  # components/schemas of openapi.json
    runtime: Mapping[str, bytes]  # svc_runtime/<module>.py -> verified bytes


def _read(path: Path, what: str, limit: int) -> bytes:
    """A regular file's bytes (no symlink followed), refused over ``limit``."""
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        raise InputError(f"{what} is missing") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(f"{what} is a symlink; bundles hold regular files only") from None
        raise InputError(f"{what} cannot be read: {os.strerror(exc.errno or 0)}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{what} is not a regular file")
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, 1 << 20):
            size += len(chunk)
            if size > limit:
                raise InputError(f"{what} is over {limit} bytes")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _verify_files(root: Path, files: Any, name: str) -> dict[str, bytes]:
    """Re-hash every listed file; return the bytes of the ones export reads."""
    if not isinstance(files, dict) or not files:
        raise InputError(f"{root}: {name} lists no files")
    kept: dict[str, bytes] = {}
    for relpath, expected in sorted(files.items()):
        parts = str(relpath).split("/")
        if relpath.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise InputError(f"{root}: {name} lists an invalid path {relpath!r}")
        data = _read(root.joinpath(*parts), f"{root}: {relpath}", MAX_DOCUMENT_BYTES)
        if _sha256(data) != expected:
            raise InputError(
                f"{root}: {relpath} does not match its digest in {name} (the bundle was "
                "changed after generation; regenerate it)"
            )
        if relpath in _KEEP:
            kept[relpath] = data
    missing = sorted(_KEEP - {IR} - set(kept))
    if missing:
        raise InputError(f"{root}: {name} does not list {missing[0]}; not a REST bundle")
    return kept


def _json(data: bytes, what: str) -> Any:
    try:
        return json.loads(data)
    except ValueError as exc:
        raise InputError(f"{what} is not valid JSON: {exc}") from None


def _ir_params(ir: Any) -> dict[str, tuple[dict[str, str], tuple[str, ...]]]:
    """Per capability id: parameter defaults (source text) and positional-only names."""
    out: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {}
    caps = ir.get("capabilities") if isinstance(ir, dict) else None
    for cap in caps if isinstance(caps, list) else ():
        if not isinstance(cap, dict) or not isinstance(cap.get("id"), str):
            continue
        defaults: dict[str, str] = {}
        positional: list[str] = []
        for param in cap.get("params") or ():
            if not isinstance(param, dict) or not isinstance(param.get("name"), str):
                continue
            default = param.get("default")
            if isinstance(default, dict) and isinstance(default.get("text"), str):
                defaults[param["name"]] = default["text"]
            if param.get("kind") == "positional_only":
                positional.append(param["name"])
        out[cap["id"]] = (defaults, tuple(positional))
    return out


def _capability(entry: Any, openapi: Any, params: Mapping[str, Any], where: str) -> Capability:
    if not isinstance(entry, dict):
        raise InputError(f"{where}: the manifest has a malformed capability entry")
    cap_id, name = entry.get("id"), entry.get("name")
    if not isinstance(cap_id, str) or not isinstance(name, str):
        raise InputError(f"{where}: the manifest has a capability without id and name")
    if len(name) > MAX_NAME_CHARS or not CAPABILITY_NAME.fullmatch(name):
        raise InputError(f"{where}: capability name {name[:MAX_NAME_CHARS]!r} is not a route name")
    route = f"/capabilities/{name}"
    try:
        operation = openapi["paths"][route]["post"]
        ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        schema = openapi["components"]["schemas"][ref.rsplit("/", 1)[1]]
    except (KeyError, TypeError, AttributeError):
        raise InputError(f"{where}: {OPENAPI} has no request schema for POST {route}") from None
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise InputError(f"{where}: the request schema of {route} is not an object")
    defaults, positional = params.get(cap_id, ({}, ()))
    summary = operation.get("summary")
    description = operation.get("description")
    if _streams(operation):
        text = description if isinstance(description, str) else None
        description = f"{text}\n\n{STREAM_NOTE}" if text else STREAM_NOTE
    return Capability(
        id=cap_id,
        name=name,
        route=route,
        summary=summary if isinstance(summary, str) else name,
        description=description if isinstance(description, str) else None,
        schema=schema,
        defaults=defaults,
        positional_only=positional,
    )


# How a stream's request reads its answer (DESIGN §14), in every format's documentation.
STREAM_NOTE: Final = (
    "Streams its items: JSON Lines (one JSON value a line), then a final line "
    '`{"done": true, "items": N}` or `{"error": {"status": S, "detail": ...}, "items": N}`. '
    "Send `Accept: text/event-stream` for Server-Sent Events (`event: item`, then `event: "
    "done` or `event: error`). From a shell: `curl -N -H 'Content-Type: application/json' "
    "-d BODY URL`."
)


def _streams(operation: Any) -> bool:
    """Whether an operation answers a stream (JSON Lines among its 200 media types)."""
    try:
        return "application/jsonl" in operation["responses"]["200"]["content"]
    except (KeyError, TypeError):
        return False


def openapi_bundle_spec(root: Path) -> BundleSpec:
    """The declaration of the bundle at ``root``, asked of the registry: a servable target
    whose interface document is OpenAPI (``openapi.json``: the REST target's, or any other
    target that serves one), its manifest present."""
    targets = sorted(servable_targets().items())
    http = [(name, spec) for name, spec in targets if spec.interface_document == OPENAPI]
    for _, spec in http:
        if (root / spec.manifest).exists():
            return spec
    for name, spec in targets:
        if (root / spec.manifest).exists():
            raise InputError(
                f"{root}: is a bundle of the {name!r} target ({spec.manifest}), not a REST bundle; "
                "client collections are exported from `svcc generate rest` output"
            )
    manifests = " or ".join(spec.manifest for _, spec in http) or "manifest"
    raise InputError(f"{root}: no {manifests}; not a REST bundle (svcc generate rest)")


def load_rest_bundle(path: str | Path) -> RestBundle:
    """Verify ``path`` as a REST bundle and read what export needs (InputError otherwise)."""
    root = Path(path)
    if not root.is_dir():
        raise InputError(f"{root}: not a directory (expected a REST bundle)")
    spec = openapi_bundle_spec(root)
    raw = _read(root / spec.manifest, f"{root}: {spec.manifest}", MAX_MANIFEST_BYTES)
    manifest = _json(raw, f"{root}: {spec.manifest}")
    if not isinstance(manifest, dict) or manifest.get("schema") != spec.manifest_schema:
        raise InputError(f"{root}: {spec.manifest} is not a {spec.manifest_schema} document")
    kept = _verify_files(root, manifest.get("files"), spec.manifest)
    openapi = _json(kept[OPENAPI], f"{root}: {OPENAPI}")
    ir = _json(kept[IR], f"{root}: {IR}") if IR in kept else {}
    entries = manifest.get("capabilities")
    if not isinstance(entries, list):
        raise InputError(f"{root}: {spec.manifest} has no capability list")
    if len(entries) > MAX_CAPABILITIES:
        raise InputError(
            f"{root}: {len(entries)} capabilities; a collection holds at most {MAX_CAPABILITIES}"
        )
    params = _ir_params(ir)
    capabilities = tuple(_capability(e, openapi, params, str(root)) for e in entries)
    seen: set[str] = set()
    for cap in capabilities:
        if cap.name in seen:
            raise InputError(f"{root}: capability name {cap.name!r} appears twice")
        seen.add(cap.name)
    try:
        definitions = openapi["components"]["schemas"]
        title = openapi["info"]["title"]
    except (KeyError, TypeError):
        raise InputError(f"{root}: {OPENAPI} has no components or info") from None
    module = manifest.get("module")
    return RestBundle(
        path=root,
        manifest_digest=_sha256(raw),
        module=module if isinstance(module, str) else str(title),
        title=str(title),
        capabilities=capabilities,
        definitions=definitions,
        runtime={k: v for k, v in kept.items() if k.startswith("svc_runtime/")},
    )
