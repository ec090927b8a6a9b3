"""Bundle integrity at startup: every file the manifest lists must hash to what it says.

The manifest (``svc-rest.json``, ``svc-mcp.json``) is content metadata, not a signature: it
catches a bundle edited or damaged after generation, and it is the one place the server
learns which module and capabilities it serves. Any mismatch is a :class:`StartupError`
with one line naming the file, so a server never starts on a bundle it was not built from.
"""

import hashlib
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

MAX_MANIFEST_BYTES = 1024 * 1024
# What a repository bundle imports its declared modules with (``bundle_kind: repository``).
REPOSITORY_RUNTIME = "svc_runtime/repository.py"
# The exit status of a server that refuses to start: distinct from 3, which stays "a bug".
STARTUP_REFUSED = 4


class StartupError(Exception):
    """The bundle cannot be served as generated; the message is one line for the operator."""


def sha256_file(path: Path | str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as handle:  # blocks of what was read, no buffer
        while block := handle.read(1 << 16):
            digest.update(block)
    return "sha256:" + digest.hexdigest()


def _read_json(path: Path, what: str, limit: int | None = None) -> Any:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise StartupError(f"{what} {path.name} is missing") from None
    except OSError as exc:
        raise StartupError(f"{what} {path.name} cannot be read: {exc.strerror}") from None
    if limit is not None and len(data) > limit:
        raise StartupError(f"{what} {path.name} is over {limit} bytes")
    try:
        return json.loads(data)
    except ValueError as exc:
        raise StartupError(f"{what} {path.name} is not valid JSON: {exc}") from None


def load_manifest(bundle: Path, name: str, schema: str) -> dict[str, Any]:
    """Read and verify the manifest: schema id, then every listed file's digest.

    Files are compared by content only; a listed path that escapes the bundle or is a
    symlink is refused (a manifest is data, never a way to read outside the bundle).
    """
    manifest = _read_json(bundle / name, "manifest", MAX_MANIFEST_BYTES)
    if not isinstance(manifest, dict) or manifest.get("schema") != schema:
        raise StartupError(f"manifest {name} is not a {schema} document")
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        raise StartupError(f"manifest {name} lists no files")
    for relpath, expected in sorted(files.items()):
        parts = relpath.split("/")
        if relpath.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise StartupError(f"manifest {name} lists an invalid path {relpath!r}")
        path = bundle.joinpath(*parts)
        if path.is_symlink():
            raise StartupError(f"{relpath} is a symlink; bundles hold regular files only")
        try:
            actual = sha256_file(path)
        except FileNotFoundError:
            raise StartupError(f"{relpath} is missing from the bundle") from None
        except OSError as exc:
            raise StartupError(f"{relpath} cannot be read: {exc.strerror}") from None
        if actual != expected:
            raise StartupError(
                f"{relpath} does not match its digest in {name} "
                "(the bundle was changed after generation; regenerate it)"
            )
    if manifest.get("bundle_kind") == "repository" and REPOSITORY_RUNTIME not in files:
        raise StartupError(
            f"manifest {name} says bundle_kind repository, but the bundle has no verified "
            f"{REPOSITORY_RUNTIME} (the bundle was changed after generation; regenerate it)"
        )
    return manifest


def load_document(bundle: Path, relpath: str) -> Any:
    """A JSON document of the bundle (already verified by :func:`load_manifest`)."""
    return _read_json(bundle / relpath, "bundle document")


@contextmanager
def exit_on_startup_error(prefix: str) -> Iterator[None]:
    """Turn a :class:`StartupError` into one line on stderr and exit status
    :data:`STARTUP_REFUSED` (4).

    A traceback would bury the reason; ``SVC_DEBUG=1`` keeps it for whoever needs it.
    """
    try:
        yield
    except StartupError as exc:
        if os.environ.get("SVC_DEBUG"):
            raise
        sys.stderr.write(f"{prefix}: startup refused: {exc}\n")
        sys.stderr.flush()
        raise SystemExit(STARTUP_REFUSED) from None
