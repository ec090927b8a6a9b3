"""Where extensions live and how they get there: ``svc plugins install|list|enable|disable``.

``<plugins-dir>/<name>/<version>/`` holds one isolated virtual environment (no pip, no
setuptools, no system site-packages) and ``install.json`` (wheel and lock hashes, the
extension manifest). ``<plugins-dir>/enabled.json`` maps a name to its active version.
Installation is offline (``--no-index`` from a private copy of exactly the locked wheels,
every hash checked) and never activates; an install is built beside its final place and
renamed into it, so a failed install leaves nothing behind.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any, Final

from attrs import frozen
from packaging.utils import canonicalize_name, parse_wheel_filename
from svcc.contracts.watch import private_directory, run_watched
from svcc.images.lockfile import LockedWheel, parse_lock, render_lock
from svcc.images.wheelmeta import sha256_of
from svcc.plugins.errors import PluginError
from svcc.plugins.wheels import (
    check_wheel,
    extension_manifest,
    locked_wheels,
)
from svcc.runtime.lifetime import die_with_parent

ENABLED: Final = "enabled.json"
INSTALL_RECORD: Final = "install.json"
PIP_TIMEOUT_S: Final = 600


def _root(plugins_dir: Path | None) -> Path:
    return (plugins_dir or default_plugins_dir()).absolute()


def default_plugins_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "svcc" / "plugins"


@frozen(kw_only=True)
class Installed:
    name: str
    version: str
    sha256: str
    lock_sha256: str
    module: str
    operations: tuple[str, ...]
    path: Path

    @property
    def python(self) -> Path:
        return self.path / "venv" / "bin" / "python"

    def to_json(self, enabled: bool) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "sha256": self.sha256,
            "lock_sha256": self.lock_sha256,
            "operations": list(self.operations),
            "enabled": enabled,
        }


def _fail(code: str, message: str) -> PluginError:
    return PluginError(code, message)


def _clean_env() -> dict[str, str]:
    """pip without the user's configuration: no index, no config file, no cache."""
    return {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_CACHE_DIR": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PYTHONNOUSERSITE": "1",
    }


def install(
    wheel: Path,
    *,
    sha256: str,
    requirements: Path,
    wheelhouse: Path,
    plugins_dir: Path | None = None,
) -> Installed:
    root = _root(plugins_dir)
    expected = sha256.lower()
    if len(expected) != 64 or expected.strip("0123456789abcdef"):
        raise _fail("plugin_invalid", "--sha256 must be 64 hex digits")
    if not wheel.is_file():
        raise _fail("plugin_invalid", f"{wheel}: no such wheel")
    actual = sha256_of(wheel)
    if actual != expected:
        raise _fail("plugin_hash_mismatch", f"{wheel.name}: sha256 is {actual}, not {expected}")
    checked = check_wheel(wheel, code="plugin_invalid")
    name, version = checked.name, checked.version
    manifest = extension_manifest(wheel, name, version)
    try:
        lock_bytes = requirements.read_bytes()
    except OSError as exc:
        raise _fail("lock_invalid", f"{requirements}: {exc.strerror}") from None
    lock = parse_lock(lock_bytes, str(requirements), allow_empty=True)
    if name in lock.by_name():
        raise _fail("lock_invalid", f"{requirements}: locks the extension {name} itself")
    deps = locked_wheels(lock.wheels, wheelhouse)  # hashes and start-up hooks checked here

    final = root / name / version
    if final.exists():
        raise _fail("plugin_invalid", f"{name} {version} is already installed ({final})")
    final.parent.mkdir(parents=True, exist_ok=True)
    # gone with this process however it ends (a SIGKILL mid-install left it in the store)
    with private_directory(f".{version}.installing-", final.parent) as staging:
        house = staging / "wheelhouse"
        house.mkdir()
        for dep in deps:
            shutil.copyfile(dep.path, house / dep.path.name)
        shutil.copyfile(wheel, house / wheel.name)
        pins = (*lock.wheels, LockedWheel(name, version, actual, 0))
        (staging / "requirements.lock").write_bytes(render_lock(pins))
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(staging / "venv")],
            check=True,
            env=_clean_env(),
            capture_output=True,
            timeout=PIP_TIMEOUT_S,
            preexec_fn=partial(die_with_parent, os.getpid()),
        )
        done = run_watched(  # ends with svcc, SIGKILL too, with what pip starts
            [
                sys.executable,
                "-m",
                "pip",
                "--python",
                str(staging / "venv" / "bin" / "python"),
                "install",
                "--no-index",
                "--only-binary=:all:",
                "--require-hashes",
                "--no-compile",
                "--find-links",
                str(house),
                "-r",
                str(staging / "requirements.lock"),
            ],
            env={**_clean_env(), "TMPDIR": str(staging)},  # pip's own folders go with it
            timeout=PIP_TIMEOUT_S,
            cwd=staging,
        )
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["pip failed"])[-1]
            raise _fail("plugin_invalid", f"offline install of {name} {version} failed: {tail}")
        shutil.rmtree(house)
        record = {
            "name": name,
            "version": version,
            "sha256": actual,
            "lock_sha256": lock.sha256,
            "manifest": manifest,
        }
        (staging / INSTALL_RECORD).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
        os.rename(staging, final)
    return _load(final)


def _load(path: Path) -> Installed:
    record = json.loads((path / INSTALL_RECORD).read_text())
    return Installed(
        name=record["name"],
        version=record["version"],
        sha256=record["sha256"],
        lock_sha256=record["lock_sha256"],
        module=record["manifest"]["module"],
        operations=tuple(record["manifest"]["operations"]),
        path=path,
    )


def installed(plugins_dir: Path | None = None) -> list[Installed]:
    root = _root(plugins_dir)
    if not root.is_dir():
        return []
    return [
        _load(version)
        for name in sorted(root.iterdir())
        if name.is_dir()
        for version in sorted(name.iterdir())
        if (version / INSTALL_RECORD).is_file()
    ]


def enabled_versions(plugins_dir: Path | None = None) -> dict[str, str]:
    path = (_root(plugins_dir)) / ENABLED
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except ValueError:
        raise _fail("plugin_invalid", f"{path}: not JSON") from None
    return {str(k): str(v) for k, v in data.items()}


def _write_enabled(root: Path, versions: dict[str, str]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".enabled-", dir=root)
    with os.fdopen(fd, "w") as handle:
        json.dump(dict(sorted(versions.items())), handle, indent=2)
        handle.write("\n")
    os.replace(tmp, root / ENABLED)


def enable(name: str, version: str, plugins_dir: Path | None = None) -> Installed:
    root = _root(plugins_dir)
    key = canonicalize_name(name)
    match = [p for p in installed(root) if p.name == key and p.version == version]
    if not match:
        raise _fail("plugin_not_enabled", f"{name} {version} is not installed")
    _write_enabled(root, {**enabled_versions(root), key: version})
    return match[0]


def disable(name: str, plugins_dir: Path | None = None) -> None:
    root = _root(plugins_dir)
    versions = enabled_versions(root)
    if versions.pop(canonicalize_name(name), None) is None:
        raise _fail("plugin_not_enabled", f"{name} is not enabled")
    _write_enabled(root, versions)


def active(name: str, plugins_dir: Path | None = None) -> Installed:
    root = _root(plugins_dir)
    key = canonicalize_name(name)
    version = enabled_versions(root).get(key)
    if version is None:
        raise _fail("plugin_not_enabled", f"{name} is not enabled (svc plugins enable)")
    match = [p for p in installed(root) if p.name == key and p.version == version]
    if not match:
        raise _fail("plugin_not_enabled", f"{name} {version} is enabled but not installed")
    return match[0]


def wheel_name_version(path: Path) -> tuple[str, str]:
    name, version, _, _ = parse_wheel_filename(path.name)
    return canonicalize_name(name), str(version)
