"""Reading a direct repository bundle as image input: validated, never loaded.

Only the manifest (a servable target's: ``svc-rest.json``, ``svc-mcp.json``, ...) and the
files it declares are read, each opened without following symlinks and checked against its
declared sha256. The bundle
must be a direct repository bundle (``"bundle_kind": "repository"``, ``execution.mode``
``direct``). Its declared data files (``repository.data_files``) are declared files like
the sources, so they are inputs of the build and verified at startup in the image too.
Undeclared files are refused, except the kinds the build ignores by rule
(version-control data, environment and key files, other build files), which are skipped.
"""

import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from attrs import frozen
from svcc.contracts.target import FileTree, FileTreeError
from svcc.images.errors import ImageInputError
from svcc.ir.canonical import digest_bytes


def manifests() -> dict[str, str]:
    """Manifest file name → interface, over every servable target (the registry's)."""
    from svcc.compiler.registry import bundle_manifests

    return bundle_manifests()


MAX_FILES: Final = 4096
MAX_TOTAL_BYTES: Final = 64 * 1024 * 1024
MAX_MANIFEST_BYTES: Final = 1024 * 1024
# Undeclared entries the build ignores (spec, build rule 4); anything else undeclared is refused.
IGNORED_NAMES: Final = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".dockerignore",
        "Dockerfile",
        "Containerfile",
        ".svcc-ready",
        "__pycache__",
        ".DS_Store",
    }
)
IGNORED_SUFFIXES: Final = (".pem", ".key", ".p12", ".pfx", ".pyc")


def _ignored(name: str) -> bool:
    return name in IGNORED_NAMES or name.startswith(".env") or name.endswith(IGNORED_SUFFIXES)


@frozen
class BundleInput:
    """The validated bundle: its manifest (parsed), interface and files (manifest included)."""

    manifest_name: str
    manifest: Mapping[str, Any]
    interface: str
    tree: FileTree


def bad(message: str) -> ImageInputError:
    return ImageInputError("bundle_invalid", message)


def check_manifest(name: str, manifest: Mapping[str, Any]) -> None:
    """The contract's direct repository bundle; the single-file kind named in the refusal."""
    kind = manifest.get("bundle_kind", "file")
    if kind != "repository":
        raise bad(
            f"{name}: a {kind!r} bundle: images are built from direct repository bundles only "
            "(svcc compile DIR or svc expose build)"
        )
    execution = manifest.get("execution")
    if not isinstance(execution, dict) or execution.get("mode") != "direct":
        raise bad(f"{name}: execution mode is not direct: governed bundles are not built")
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        raise bad(f"{name}: no declared files")
    if len(files) > MAX_FILES:
        raise bad(f"{name}: {len(files)} declared files, over the limit of {MAX_FILES}")
    for path, digest in files.items():
        if not isinstance(path, str) or not isinstance(digest, str):
            raise bad(f"{name}: files must map paths to sha256 strings")
        parts = path.split("/")
        if (
            path.startswith("/")
            or "\\" in path
            or "\0" in path
            or any(p in ("", ".", "..") for p in parts)
        ):
            raise bad(f"{name}: declared path {path!r} escapes the bundle or is not canonical")
        if path in manifests():
            raise bad(f"{name}: declares a manifest name {path!r} as a file")
    repository = manifest.get("repository")
    data = repository.get("data_files", {}) if isinstance(repository, dict) else {}
    if not isinstance(data, dict) or any(path not in files for path in data):
        raise bad(f"{name}: repository.data_files must name declared files")


def _read_regular(root_fd: int, path: str) -> bytes:
    """``path`` under ``root_fd``, every component opened with O_NOFOLLOW: a symlink or a
    special file anywhere on the way is refused."""
    parts = path.split("/")
    fd = os.dup(root_fd)
    try:
        for part in parts[:-1]:
            try:
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                raise bad(f"{path}: {part} is not a plain directory ({exc.strerror})") from None
            os.close(fd)
            fd = nxt
        try:
            st = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            raise bad(f"{path}: declared but missing") from None
        if stat.S_ISLNK(st.st_mode):
            raise bad(f"{path}: a symlink: declared files must be regular files")
        if not stat.S_ISREG(st.st_mode):
            raise bad(f"{path}: a special file: declared files must be regular files")
        ffd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
        with os.fdopen(ffd, "rb") as handle:
            return handle.read(MAX_TOTAL_BYTES + 1)
    finally:
        os.close(fd)


def _undeclared(root: Path, declared: set[str]) -> None:
    names = manifests()
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        dirnames[:] = sorted(d for d in dirnames if not _ignored(d))
        for name in sorted(filenames) + [
            d for d in dirnames if os.path.islink(os.path.join(dirpath, d))
        ]:
            path = prefix + name
            if path in declared or path in names or _ignored(name):
                continue
            raise bad(f"{path}: not declared in the bundle manifest (refused, not copied)")


def read_bundle(path: Path) -> BundleInput:
    """The bundle at ``path`` (a directory), validated; ``bundle_invalid`` otherwise."""
    try:
        root_fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        raise bad(f"{path}: not a bundle directory ({exc.strerror})") from None
    try:
        known = manifests()
        found = [n for n in known if os.path.lexists(os.path.join(path, n))]
        if len(found) != 1:
            raise bad(f"{path}: expected exactly one of {', '.join(known)}")
        name = found[0]
        raw = _read_regular(root_fd, name)
        if len(raw) > MAX_MANIFEST_BYTES:
            raise bad(f"{name}: over the {MAX_MANIFEST_BYTES}-byte manifest limit")
        try:
            manifest = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise bad(f"{name}: not JSON: {exc}") from None
        if not isinstance(manifest, dict):
            raise bad(f"{name}: not a JSON object")
        check_manifest(name, manifest)
        files: dict[str, bytes] = {name: raw}
        total = len(raw)
        for rel, digest in sorted(manifest["files"].items()):
            data = _read_regular(root_fd, rel)
            total += len(data)
            if total > MAX_TOTAL_BYTES:
                raise bad(f"{path}: over the {MAX_TOTAL_BYTES}-byte bundle limit")
            if digest_bytes(data) != digest:
                raise bad(f"{rel}: content differs from its manifest digest")
            files[rel] = data
        _undeclared(path, set(manifest["files"]))
    finally:
        os.close(root_fd)
    try:
        tree = FileTree.of(files)
    except FileTreeError as exc:
        raise bad(str(exc)) from None
    return BundleInput(name, manifest, known[name], tree)


def bundle_from_tree(tree: FileTree) -> BundleInput:
    """The same checks on a bundle still in memory (``svcc compile --target oci``)."""
    known = manifests()
    found = [n for n in known if tree.get(n) is not None]
    if len(found) != 1:
        raise bad("the bundle has no single manifest")
    name = found[0]
    raw = tree.get(name)
    assert raw is not None
    manifest = json.loads(raw)
    check_manifest(name, manifest)
    for rel, digest in manifest["files"].items():
        data = tree.get(rel)
        if data is None or digest_bytes(data) != digest:
            raise bad(f"{rel}: missing or differs from its manifest digest")
    return BundleInput(name, manifest, known[name], tree)
