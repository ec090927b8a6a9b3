"""The wheel lock file: one ``name==version --hash=sha256:HEX`` per package, nothing else.

Parsed with a lark grammar (``lock.lark``) that also recognises every other requirement form
pip accepts, so a refusal names the construct and its line and column instead of failing on
an "unexpected character". The limits are the specification's.
"""

import hashlib
from functools import cache
from importlib import resources
from typing import Final

from attrs import frozen
from lark import Lark, Token, Tree, UnexpectedInput
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version
from svcc.images.errors import ImageInputError

MAX_LOCK_BYTES: Final = 64 * 1024
MAX_WHEELS: Final = 128


@frozen
class LockedWheel:
    """One locked distribution; ``name`` is canonical (PEP 503), ``line`` where it was."""

    name: str
    version: str
    sha256: str
    line: int


@frozen
class WheelLock:
    wheels: tuple[LockedWheel, ...]
    sha256: str

    def by_name(self) -> dict[str, LockedWheel]:
        return {w.name: w for w in self.wheels}


@cache
def _parser() -> Lark:
    grammar = resources.files(__package__).joinpath("lock.lark").read_text()
    return Lark(grammar, parser="lalr", lexer="contextual", propagate_positions=True)


def _where(origin: str, item: Tree[Token] | Token) -> str:
    line = item.line if isinstance(item, Token) else item.meta.line
    column = item.column if isinstance(item, Token) else item.meta.column
    return f"{origin}:{line}:{column}"


def _refuse(origin: str, item: Tree[Token] | Token, message: str) -> ImageInputError:
    return ImageInputError("lock_invalid", f"{_where(origin, item)}: {message}")


_REFUSED_OPTIONS: Final = {
    "-r": "includes (-r) are refused: list every wheel in this file",
    "--requirement": "includes (--requirement) are refused: list every wheel in this file",
    "-c": "constraint includes (-c) are refused",
    "--constraint": "constraint includes (--constraint) are refused",
    "-e": "editable installs are refused: only wheels",
    "--editable": "editable installs are refused: only wheels",
}


def _option_message(text: str) -> str:
    name = text.split("=", 1)[0]
    if name in _REFUSED_OPTIONS:
        return _REFUSED_OPTIONS[name]
    if "index" in name or name in ("-i", "-f", "--find-links", "--trusted-host"):
        return f"index options ({name}) are refused: wheels come from the wheelhouse only"
    return f"options ({name}) are refused: one `name==version --hash=sha256:HEX` per line"


def _pin(origin: str, tree: Tree[Token]) -> LockedWheel:
    name_token = tree.children[0]
    assert isinstance(name_token, Token)
    name = str(name_token)
    hashes: list[Token] = []
    version: str | None = None
    for child in tree.children[1:]:
        assert isinstance(child, Tree)
        kind = child.data
        if kind == "extras":
            raise _refuse(origin, child, f"{name}: extras are refused: lock each wheel by name")
        if kind == "direct":
            raise _refuse(
                origin, child, f"{name}: URLs are refused: wheels come from the wheelhouse"
            )
        if kind == "marker":
            raise _refuse(origin, child, f"{name}: environment markers are refused")
        if kind == "spec":
            cmp, value = child.children
            assert isinstance(cmp, Token)
            assert isinstance(value, Token)
            if str(cmp) != "==" or "*" in value:
                raise _refuse(origin, cmp, f"{name}: pin one version with == (not {cmp}{value})")
            try:
                version = str(Version(str(value)))
            except InvalidVersion:
                raise _refuse(origin, value, f"{name}: invalid version {value!s}") from None
        if kind == "hash":
            token = child.children[0]
            assert isinstance(token, Token)
            hashes.append(token)
    if name.endswith((".whl", ".tar.gz", ".zip")):
        raise _refuse(origin, name_token, f"paths are refused: {name}")
    if version is None:
        raise _refuse(origin, name_token, f"{name}: not pinned: write {name}==VERSION")
    if not hashes:
        raise _refuse(origin, name_token, f"{name}: no --hash=sha256:HEX")
    if len(hashes) > 1:
        raise _refuse(origin, hashes[1], f"{name}: one SHA-256 per package (one wheel each)")
    text = str(hashes[0])[len("--hash") + 1 :]
    algorithm, _, digest = text.partition(":")
    if algorithm != "sha256" or len(digest) != 64 or not _is_hex(digest):
        raise _refuse(origin, hashes[0], f"{name}: the hash must be sha256:<64 hex digits>")
    return LockedWheel(canonicalize_name(name), version, digest.lower(), name_token.line or 0)


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdefABCDEF" for c in text)


def parse_lock(data: bytes, origin: str = "lock", *, allow_empty: bool = False) -> WheelLock:
    """The lock in ``data``; ``ImageInputError("lock_invalid")`` naming line and column.
    ``allow_empty``: an extension without dependencies locks nothing."""
    if len(data) > MAX_LOCK_BYTES:
        raise ImageInputError(
            "lock_invalid", f"{origin}: {len(data)} bytes, over the {MAX_LOCK_BYTES}-byte limit"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImageInputError("lock_invalid", f"{origin}: not UTF-8 (byte {exc.start})") from None
    try:
        tree = _parser().parse(text + "\n")
    except UnexpectedInput as exc:
        raise ImageInputError(
            "lock_invalid",
            f"{origin}:{exc.line}:{exc.column}: not a `name==version --hash=sha256:HEX` line",
        ) from None
    wheels: list[LockedWheel] = []
    seen: dict[str, int] = {}
    for item in tree.children:
        assert isinstance(item, Tree)
        if item.data == "option":
            option = item.children[0]
            assert isinstance(option, Token)
            raise _refuse(origin, item, _option_message(str(option)))
        if item.data == "url":
            raise _refuse(origin, item, "URLs are refused: wheels come from the wheelhouse")
        if item.data == "path":
            raise _refuse(origin, item, "paths are refused: wheels come from the wheelhouse")
        wheel = _pin(origin, item)
        if wheel.name in seen:
            raise _refuse(
                origin,
                item,
                f"{wheel.name} is locked twice (first on line {seen[wheel.name]}): "
                "one wheel per distribution",
            )
        seen[wheel.name] = wheel.line
        wheels.append(wheel)
    if not wheels and not allow_empty:
        raise ImageInputError("lock_invalid", f"{origin}: no wheels locked")
    if len(wheels) > MAX_WHEELS:
        raise ImageInputError(
            "lock_invalid", f"{origin}: {len(wheels)} wheels, over the limit of {MAX_WHEELS}"
        )
    return WheelLock(tuple(wheels), hashlib.sha256(data).hexdigest())


def render_lock(wheels: list[LockedWheel] | tuple[LockedWheel, ...]) -> bytes:
    """The canonical lock text (sorted by name): what the build context carries."""
    lines = sorted(f"{w.name}=={w.version} --hash=sha256:{w.sha256}\n" for w in wheels)
    return "".join(lines).encode()
