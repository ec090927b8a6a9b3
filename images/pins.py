"""Versions a project already pins: ``uv.lock``, a PEP 751 ``pylock.toml``, or a
``requirements.txt`` whose lines carry ``--hash``. ``svcc lock`` keeps them (pip resolves
under them as constraints) and checks each downloaded wheel against the pinned hashes.

Only the first of these files found at the repository's root is read, in that order (uv's and
PEP 751's are exact and say so; a hashed requirements file is the oldest form). The project
itself (uv's ``editable``/``virtual``/``directory`` sources) is not a pin.
"""

import os
import re
import tomllib
from pathlib import Path
from typing import Final

from attrs import frozen
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version
from svcc.contracts.requirements import invalid_reason
from svcc.images.errors import ImageInputError
from svcc.images.input_files import read_input_bytes

PIN_FILES: Final = ("uv.lock", "pylock.toml", "requirements.txt")
MAX_PIN_FILE: Final = 8 * 1024 * 1024
# a distribution name as PEP 508 spells it
NAME: Final = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
SHA256: Final = re.compile(r"[0-9A-Fa-f]{64}")
COMMENT: Final = re.compile(r"(?:^|\s)#")  # pip's: a # at the start or after a space


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


class _Malformed(Exception):
    """A pin file's content is not the shape it must have (said where, in one line)."""


def _table(value: object, where: str) -> dict[str, object]:
    if not isinstance(value, dict):
        raise _Malformed(f"{where}: expected a table, found {type(value).__name__}")
    return value


def _array(value: object, where: str) -> list[object]:
    if not isinstance(value, list):
        raise _Malformed(f"{where}: expected an array, found {type(value).__name__}")
    return value


def _string(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise _Malformed(f"{where}: expected a string, found {type(value).__name__}")
    return value


def _name(value: object, where: str) -> str:
    """A distribution name (PEP 508), canonical: nothing else reaches pip's constraints."""
    text = _string(value, where)
    if NAME.fullmatch(text) is None:
        raise _Malformed(f"{where}: {text[:80]!r} is not a distribution name")
    return canonicalize_name(text)


def _version(value: object, where: str) -> str:
    text = _string(value, where)
    try:
        return str(Version(text))
    except InvalidVersion:
        raise _Malformed(f"{where}: invalid version {text[:80]!r}") from None


def _hex(value: object, where: str) -> str:
    """A SHA-256 digest: 64 hex digits (lowercased)."""
    text = _string(value, where)
    if SHA256.fullmatch(text) is None:
        raise _Malformed(f"{where}: {text[:80]!r} is not a SHA-256 digest (64 hex digits)")
    return text.lower()


def _sha256(value: object, where: str) -> str | None:
    """The digest of an ``ALGORITHM:HEX`` hash whose algorithm is sha256 (None: another
    algorithm, not checked)."""
    text = _string(value, where)
    if not text.startswith("sha256:"):
        return None
    return _hex(text.removeprefix("sha256:"), where)


def _uv(document: dict[str, object]) -> list[Pin]:
    pins = []
    for i, item in enumerate(_array(document.get("package", []), "package")):
        where = f"package[{i}]"
        package = _table(item, where)
        source = _table(package.get("source", {}), f"{where}.source")
        if source.keys() & {"editable", "virtual", "directory"}:  # the project itself
            continue
        name = _name(package.get("name"), f"{where}.name")
        version = _version(package.get("version"), f"{where}.version ({name})")
        files = [
            _table(f, f"{where}.wheels[{j}]")
            for j, f in enumerate(_array(package.get("wheels", []), f"{where}.wheels"))
        ]
        if "sdist" in package:
            files.append(_table(package["sdist"], f"{where}.sdist"))
        hashes = {_sha256(f["hash"], f"{where} hash") for f in files if "hash" in f}
        pins.append(Pin(name, version, frozenset(h for h in hashes if h is not None)))
    return pins


def _pylock(document: dict[str, object]) -> list[Pin]:
    pins = []
    for i, item in enumerate(_array(document.get("packages", []), "packages")):
        where = f"packages[{i}]"
        package = _table(item, where)
        name = _name(package.get("name"), f"{where}.name")
        if "version" not in package:  # a directory or VCS source: not an index pin
            continue
        version = _version(package["version"], f"{where}.version ({name})")
        hashes = set()
        for j, w in enumerate(_array(package.get("wheels", []), f"{where}.wheels")):
            wheel = _table(w, f"{where}.wheels[{j}]")
            found = _table(wheel.get("hashes", {}), f"{where}.wheels[{j}].hashes")
            if "sha256" in found:
                hashes.add(_hex(found["sha256"], f"{where}.wheels[{j}].hashes.sha256"))
        pins.append(Pin(name, version, frozenset(hashes)))
    return pins


def _hashed_requirements(text: str) -> list[Pin] | None:
    """Pins of a requirements file with hashes; None when it has no ``--hash`` at all (an
    ordinary requirements file, not a lock). Each line is a requirement pinned with ``==``
    (markers allowed), its ``--hash`` options beside it."""
    if "--hash" not in text:
        return None
    pins = []
    for number, line in enumerate(text.replace("\\\n", " ").splitlines(), 1):
        words = COMMENT.split(line, maxsplit=1)[0].split()
        if not words or words[0].startswith("-"):
            continue
        hashes: set[str] = set()
        rest: list[str] = []
        tail = iter(words)
        for word in tail:
            if word == "--hash" or word.startswith("--hash="):
                value = next(tail, "") if word == "--hash" else word.removeprefix("--hash=")
                digest = _sha256(value, f"line {number}")
                if digest is not None:
                    hashes.add(digest)
            else:
                rest.append(word)
        where = f"line {number}"
        try:
            requirement = Requirement(" ".join(rest))
        except InvalidRequirement as exc:
            raise _Malformed(f"{where}: invalid requirement: {invalid_reason(exc)}") from None
        pinned = [s for s in requirement.specifier if s.operator in ("==", "===")]
        if requirement.url is not None or len(pinned) != 1 or "*" in pinned[0].version:
            raise _Malformed(
                f"{where}: {requirement.name} is not pinned with == (a hashed requirements "
                "file pins every package)"
            )
        name = _name(requirement.name, where)
        pins.append(Pin(name, _version(pinned[0].version, f"{where} ({name})"), frozenset(hashes)))
    return pins


def pins_of(path: "str | os.PathLike[str]", data: bytes) -> list[Pin] | None:
    """The pins ``data`` holds, read as the kind of file ``path`` names: ``uv.lock``,
    ``pylock.toml`` / ``pylock.*.toml``, else a requirements file (None when it has no
    ``--hash``: it pins nothing). Anything malformed is one ``lock_mismatch`` line naming
    ``path`` (never an exception of the parser's: a pin file is the project's, as hostile
    as its code)."""
    name = Path(path).name
    try:
        text = data.decode("utf-8")
        if name == "uv.lock":
            return _uv(tomllib.loads(text))
        if name.startswith("pylock.") and name.endswith(".toml"):
            return _pylock(tomllib.loads(text))
        return _hashed_requirements(text)
    except UnicodeDecodeError as exc:
        raise ImageInputError("lock_mismatch", f"{path}: not UTF-8 (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ImageInputError("lock_mismatch", f"{path}: not TOML: {exc}") from None
    except RecursionError:
        raise ImageInputError("lock_mismatch", f"{path}: nested too deeply to read") from None
    except _Malformed as exc:
        raise ImageInputError("lock_mismatch", f"{path}: {exc}") from None


def read_pin_file(path: Path) -> Pins | None:
    """The pins of one file, by its kind (see :func:`pins_of`). A file over
    ``MAX_PIN_FILE`` bytes, or anything but a regular file, is refused, never read in part
    (nor waited on: a named pipe)."""
    data = read_input_bytes(path, MAX_PIN_FILE)
    found = pins_of(path, data)
    if found is None:
        return None
    return Pins(path.name, tuple(sorted(found, key=lambda p: (p.name, p.version))))


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
