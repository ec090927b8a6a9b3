"""Versions a project already pins: ``uv.lock``, a PEP 751 ``pylock.toml``, or a
``requirements.txt`` whose lines carry ``--hash``. ``svcc lock`` keeps them (pip resolves
under them as constraints) and checks each downloaded wheel against the pinned hashes.

Only the first of these files found at the repository's root is read, in that order (uv's and
PEP 751's are exact and say so; a hashed requirements file is the oldest form). The project
itself (uv's ``editable``/``virtual``/``directory`` sources) is not a pin.
"""

import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from attrs import frozen
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version
from svcc.images.errors import ImageInputError

PIN_FILES: Final = ("uv.lock", "pylock.toml", "requirements.txt")
MAX_PIN_FILE: Final = 8 * 1024 * 1024


@frozen
class Pin:
    """``name`` canonical; ``hashes`` the sha256 hex digests allowed (empty: any)."""

    name: str
    version: str
    hashes: frozenset[str]


@frozen
class Pins:
    """A lock may pin one distribution at several versions (uv's per-environment forks);
    such a name constrains pip to none of them, and the resolved version must be one."""

    source: str  # the file name, for messages
    pins: tuple[Pin, ...]

    def versions(self, name: str) -> frozenset[str]:
        return frozenset(p.version for p in self.pins if p.name == name)

    def hashes(self, name: str, version: str) -> frozenset[str]:
        found = [p.hashes for p in self.pins if p.name == name and p.version == version]
        return frozenset().union(*found)

    def constraints(self) -> list[str]:
        """``name==version`` for every name pinned at exactly one version."""
        names = sorted({p.name for p in self.pins})
        return [f"{n}=={v}" for n in names for v in self.versions(n) if len(self.versions(n)) == 1]


def _version(text: object, where: str) -> str:
    try:
        return str(Version(str(text)))
    except InvalidVersion:
        raise ImageInputError("lock_mismatch", f"{where}: invalid version {text!r}") from None


def _sha256s(values: Iterable[object]) -> frozenset[str]:
    out = set()
    for value in values:
        if isinstance(value, str) and value.startswith("sha256:"):
            out.add(value.removeprefix("sha256:").lower())
    return frozenset(out)


def _uv(document: dict[str, Any]) -> list[Pin]:
    pins = []
    for package in document.get("package") or []:
        source = package.get("source") or {}
        if not isinstance(source, dict) or source.keys() & {"editable", "virtual", "directory"}:
            continue
        name = canonicalize_name(str(package.get("name")))
        files = [*(package.get("wheels") or []), package.get("sdist") or {}]
        hashes = _sha256s(f.get("hash") for f in files if isinstance(f, dict))
        pins.append(Pin(name, _version(package.get("version"), f"uv.lock {name}"), hashes))
    return pins


def _pylock(document: dict[str, Any]) -> list[Pin]:
    pins = []
    for package in document.get("packages") or []:
        name = canonicalize_name(str(package.get("name")))
        if "version" not in package:  # a directory or VCS source: not an index pin
            continue
        hashes = frozenset(
            str(w["hashes"]["sha256"]).lower()
            for w in package.get("wheels") or []
            if isinstance(w, dict) and isinstance(w.get("hashes"), dict) and "sha256" in w["hashes"]
        )
        pins.append(Pin(name, _version(package["version"], f"pylock.toml {name}"), hashes))
    return pins


def _hashed_requirements(text: str) -> list[Pin] | None:
    """Pins of a requirements file with hashes; None when it has no ``--hash`` at all (an
    ordinary requirements file, not a lock)."""
    if "--hash" not in text:
        return None
    pins = []
    for number, line in enumerate(text.replace("\\\n", " ").splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words or words[0].startswith("-"):
            continue
        name, sep, version = words[0].partition("==")
        if not sep:
            raise ImageInputError(
                "lock_mismatch",
                f"requirements.txt:{number}: {words[0]} is not pinned with == (a hashed "
                "requirements file pins every package)",
            )
        name = name.split("[", 1)[0].split(";", 1)[0]
        hashes = _sha256s(w.removeprefix("--hash=") for w in words[1:] if w.startswith("--hash="))
        pins.append(
            Pin(canonicalize_name(name), _version(version, f"requirements.txt:{number}"), hashes)
        )
    return pins


def read_pin_file(path: Path) -> Pins | None:
    """The pins of one file, by its kind: ``uv.lock``, ``pylock.toml`` / ``pylock.*.toml``,
    else a requirements file (None when it has no ``--hash``: it pins nothing)."""
    name = path.name
    try:
        data = path.read_bytes()[:MAX_PIN_FILE]
    except OSError as exc:
        raise ImageInputError("request_invalid", f"{path}: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
        if name == "uv.lock":
            found = _uv(tomllib.loads(text))
        elif name.startswith("pylock.") and name.endswith(".toml"):
            found = _pylock(tomllib.loads(text))
        else:
            hashed = _hashed_requirements(text)
            if hashed is None:
                return None
            found = hashed
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ImageInputError("lock_mismatch", f"{path}: cannot be read: {exc}") from None
    return Pins(name, tuple(sorted(found, key=lambda p: (p.name, p.version))))


def read_pins(root: Path) -> Pins | None:
    """The project's pins (the first of ``PIN_FILES`` that pins), or None."""
    for name in PIN_FILES:
        path = root / name
        if not path.is_file() or path.is_symlink():
            continue
        found = read_pin_file(path)
        if found is not None:
            return found
    return None
