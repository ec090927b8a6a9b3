"""Checks on wheels before anything is installed: hashes, start-up hooks, the extension manifest.

A ``.pth`` file (run by ``site`` at every interpreter start), ``sitecustomize`` or
``usercustomize`` would execute code in every process of the plugin's environment; a wheel
carrying one is refused, whether it is the extension or one of its locked dependencies.
"""

import json
import zipfile
from pathlib import Path
from typing import Any, Final

from attrs import frozen
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from svcc.images.lockfile import LockedWheel
from svcc.images.wheelmeta import metadata_headers, sha256_of
from svcc.plugins.errors import PluginError

MAX_WHEEL_BYTES: Final = 64 * 1024 * 1024
MAX_ALL_WHEELS: Final = 256 * 1024 * 1024
MAX_EXPANDED: Final = 512 * 1024 * 1024
MANIFEST_NAME: Final = "svc-extension.json"
MANIFEST_SCHEMA: Final = "svc.extension-manifest/v1"
HOOK_MODULES: Final = ("sitecustomize.py", "usercustomize.py")


def startup_hooks(archive: zipfile.ZipFile) -> list[str]:
    """Members that would run at interpreter start-up once installed."""
    hooks = []
    for name in archive.namelist():
        base = name.rsplit("/", 1)[-1]
        in_lib = ".data/purelib/" in name or ".data/platlib/" in name
        top_level = "/" not in name or (name.count("/") == 2 and in_lib)
        if base.endswith(".pth") or (top_level and base in HOOK_MODULES):
            hooks.append(name)
    return hooks


@frozen
class CheckedWheel:
    path: Path
    name: str
    version: str
    sha256: str
    expanded: int


def check_wheel(path: Path, *, code: str = "wheel_invalid") -> CheckedWheel:
    """Size limits, a valid file name, no start-up hooks; the hash of what was read."""
    try:
        size = path.stat().st_size
        if size > MAX_WHEEL_BYTES:
            raise PluginError(code, f"{path.name}: {size} bytes, over {MAX_WHEEL_BYTES}")
        name, version, _, _ = parse_wheel_filename(path.name)
        with zipfile.ZipFile(path) as archive:
            hooks = startup_hooks(archive)
            expanded = sum(i.file_size for i in archive.infolist())
    except InvalidWheelFilename as exc:
        raise PluginError(code, f"{path.name}: not a wheel file name: {exc}") from None
    except (OSError, zipfile.BadZipFile) as exc:
        raise PluginError(code, f"{path.name}: unreadable wheel: {exc}") from None
    if hooks:
        raise PluginError(
            code, f"{path.name}: start-up hooks are refused: {', '.join(sorted(hooks))}"
        )
    return CheckedWheel(path, canonicalize_name(name), str(version), sha256_of(path), expanded)


def locked_wheels(locked: tuple[LockedWheel, ...], wheelhouse: Path) -> list[CheckedWheel]:
    """For each locked wheel, the one wheel file in ``wheelhouse`` with its name, version and
    hash; totals within the limits."""
    candidates: dict[tuple[str, str], list[Path]] = {}
    try:
        entries = sorted(wheelhouse.iterdir())
    except OSError as exc:
        raise PluginError("wheel_invalid", f"{wheelhouse}: {exc.strerror}") from None
    for entry in entries:
        if entry.suffix != ".whl" or not entry.is_file() or entry.is_symlink():
            continue
        try:
            name, version, _, _ = parse_wheel_filename(entry.name)
        except InvalidWheelFilename:
            continue
        candidates.setdefault((canonicalize_name(name), str(version)), []).append(entry)
    out: list[CheckedWheel] = []
    total = expanded = 0
    for wheel in locked:
        found = [
            c
            for c in candidates.get((wheel.name, wheel.version), [])
            if sha256_of(c) == wheel.sha256
        ]
        if not found:
            raise PluginError(
                "wheel_invalid",
                f"{wheel.name}=={wheel.version}: no wheel in the wheelhouse with the locked "
                f"sha256 {wheel.sha256}",
            )
        checked = check_wheel(found[0])
        total += found[0].stat().st_size
        expanded += checked.expanded
        if total > MAX_ALL_WHEELS or expanded > MAX_EXPANDED:
            raise PluginError("wheel_invalid", "the locked wheels are over the size limits")
        out.append(checked)
    return out


def extension_manifest(path: Path, name: str, version: str) -> dict[str, Any]:
    """The ``svc-extension.json`` inside the extension wheel, checked against its METADATA."""
    with zipfile.ZipFile(path) as archive:
        meta = metadata_headers(archive, path.name, "plugin_invalid")
        manifests = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == MANIFEST_NAME]
        if len(manifests) != 1:
            raise PluginError("plugin_invalid", f"{path.name}: needs one {MANIFEST_NAME}")
        try:
            manifest = json.loads(archive.read(manifests[0]))
        except ValueError as exc:
            raise PluginError("plugin_invalid", f"{MANIFEST_NAME}: not JSON: {exc}") from None
    if not isinstance(manifest, dict) or set(manifest) != {
        "schema",
        "name",
        "version",
        "module",
        "operations",
    }:
        raise PluginError(
            "plugin_invalid",
            f"{MANIFEST_NAME}: must have exactly schema, name, version, module, operations",
        )
    facts = {
        "schema": (manifest["schema"], MANIFEST_SCHEMA),
        "name": (canonicalize_name(str(manifest["name"])), canonicalize_name(str(meta["Name"]))),
        "version": (manifest["version"], str(meta["Version"])),
        "file name": (
            (canonicalize_name(str(meta["Name"])), str(meta["Version"])),
            (name, version),
        ),
    }
    for what, (have, want) in facts.items():
        if have != want:
            raise PluginError(
                "plugin_invalid", f"{MANIFEST_NAME}: {what} {have!r} disagrees with {want!r}"
            )
    operations = manifest["operations"]
    module = manifest["module"]
    if (
        not isinstance(operations, list)
        or not all(isinstance(o, str) for o in operations)
        or not isinstance(module, str)
        or not module.replace(".", "").replace("_", "").isalnum()
    ):
        raise PluginError("plugin_invalid", f"{MANIFEST_NAME}: bad module or operations")
    return manifest
