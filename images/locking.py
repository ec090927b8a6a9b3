"""``svcc lock``: the wheel lock and wheelhouse an image build accepts, made by pip's resolver.

The roots are what the build will check the lock against: a bundle's ``requirements.txt``
plus ``application-requirements.txt``, or, for a repository, the interface's server
requirements plus the declared application dependencies (``[project] dependencies``, or
``--requirements``), exactly as ``svcc compile`` would write them. ``pip download
--only-binary=:all:`` resolves them for the base's platform and CPython (wheels only; this is
the one step that uses the package index), into a private directory; the lock is then
computed from those wheels' own metadata by the same closure the build uses, so what is
written is what the build accepts. Pins the project already has (``uv.lock``, ``pylock.toml``,
a hashed ``requirements.txt``) are passed to pip as constraints and each downloaded wheel's
hash is checked against them; a pin pip cannot meet is refused naming the package.
Nothing is ever built: :mod:`svcc.images.pip_download` judges every requirement before pip
starts and runs pip unable to start a build.
"""

import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from attrs import frozen
from packaging.utils import canonicalize_name, parse_wheel_filename
from svcc.contracts.watch import private_directory
from svcc.images.bundle_input import manifests
from svcc.images.errors import ImageInputError
from svcc.images.input_files import read_input_text
from svcc.images.lockfile import LockedWheel, render_lock
from svcc.images.pins import read_pin_file, read_pins
from svcc.images.pip_download import Roots, judged_requirements, pip_download
from svcc.images.resolve import MACHINES, lock_from_wheels, marker_environment
from svcc.images.wheelmeta import sha256_of

# pip expands only the legacy manylinux names; every glibc down to 2.5 is listed explicitly
_LEGACY: Final = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
MAX_REQUIREMENTS_FILE: Final = 1024 * 1024  # a bundle's requirements.txt: a few lines


@frozen
class Locked:
    wheels: tuple[LockedWheel, ...]
    files: tuple[Path, ...]  # in the wheelhouse
    roots: Roots
    kept_pins: tuple[str, ...]  # name==version of the pins the lock holds


def check_target(platform: str, python: str, glibc: str) -> None:
    """The base's platform, CPython and glibc, refused before anything is read."""
    if platform not in MACHINES:
        raise ImageInputError("request_invalid", f"--platform {platform}: linux/amd64|linux/arm64")
    if re.fullmatch(r"3\.\d{1,2}", python) is None:
        raise ImageInputError("request_invalid", f"--python {python}: write 3.N")
    platform_tags(platform, glibc)


def platform_tags(platform: str, glibc: str) -> list[str]:
    """pip ``--platform`` values for a glibc ``2.N`` Linux on ``platform``, newest first."""
    machine = MACHINES[platform]
    major, _, minor = glibc.partition(".")
    if major != "2" or not minor.isdigit() or not 17 <= int(minor) <= 99:
        raise ImageInputError("request_invalid", f"--glibc {glibc}: write 2.N (N >= 17)")
    tags = []
    for n in range(int(minor), 4, -1):
        tags.append(f"manylinux_2_{n}_{machine}")
        if n in _LEGACY and (machine == "x86_64" or n == 17):
            tags.append(f"{_LEGACY[n]}_{machine}")
    return tags


def is_bundle(path: Path) -> bool:
    """A generated bundle (the manifest of any servable target), not a repository."""
    return any((path / name).is_file() for name in manifests())


def read_roots(
    path: Path,
    interface: str,
    requirements: Path | None,
    pins: Path | None = None,
) -> Roots:
    """A bundle's requirement files, or a repository's server + declared dependencies (its
    ``pyproject.toml``, the tree checked; no module lowered). ``pins``: a pin file given on
    the command line (a bundle carries none), else the repository's own."""
    given = read_pin_file(pins) if pins is not None else None
    if pins is not None and given is None:
        raise ImageInputError("request_invalid", f"--pins {pins}: pins nothing (no --hash)")
    if is_bundle(path):
        lines: list[str] = []
        for name in ("requirements.txt", "application-requirements.txt"):
            if (path / name).is_file():
                lines += read_input_text(path / name, MAX_REQUIREMENTS_FILE).splitlines()
        return Roots(tuple(line for line in lines if line.strip()), f"bundle {path}", given)
    if not path.is_dir():
        raise ImageInputError("request_invalid", f"{path}: not a bundle or repository directory")
    from svcc.compiler.registry import get_target

    target = get_target(interface)
    spec = target.bundle
    if spec is None:
        raise ImageInputError("request_invalid", f"--interface {interface}: serves no bundle")
    lines = list(spec.server_requirements)
    if requirements is not None:
        from svcc.contracts.requirements import parse_requirements

        text = read_input_text(requirements, MAX_REQUIREMENTS_FILE)  # bounded, never waits
        lines += parse_requirements(text, str(requirements)).lines
    else:
        from svcc.compiler.driver import checked_tree

        lines += checked_tree(path, None, strict=False).config.dependencies  # nothing lowered
    return Roots(tuple(lines), f"repository {path} ({interface})", given or read_pins(path))


def _check_pins(wheels: Sequence[LockedWheel], roots: Roots) -> tuple[str, ...]:
    """Each locked wheel a pin names is at a pinned version, with a pinned hash when the pin
    lists hashes; what was kept, as ``name==version``."""
    pins = roots.pins
    if pins is None:
        return ()
    kept = []
    for wheel in wheels:
        versions = pins.versions(wheel.name)
        if not versions:
            continue
        if wheel.version not in versions:
            raise ImageInputError(
                "lock_mismatch",
                f"{wheel.name}: pinned at {' or '.join(sorted(versions))} in {pins.source}, "
                f"resolved {wheel.version}",
            )
        hashes = pins.hashes(wheel.name, wheel.version)
        if hashes and wheel.sha256 not in hashes:
            raise ImageInputError(
                "lock_mismatch",
                f"{wheel.name}=={wheel.version}: the wheel for this platform and Python "
                f"(sha256 {wheel.sha256}) is not among the hashes {pins.source} pins",
            )
        kept.append(f"{wheel.name}=={wheel.version}")
    return tuple(kept)


def into_wheelhouse(files: Sequence[Path], wheelhouse: Path) -> tuple[Path, ...]:
    """Copy each wheel in; a different file already under the same name is refused."""
    wheelhouse.mkdir(parents=True, exist_ok=True)
    placed = []
    for path in files:
        dest = wheelhouse / path.name
        if dest.exists() or dest.is_symlink():
            if dest.is_symlink() or sha256_of(dest) != sha256_of(path):
                raise ImageInputError(
                    "wheel_invalid",
                    f"{dest} exists and differs from the wheel pip resolved; use another "
                    "--wheelhouse or remove it",
                )
        else:
            shutil.copyfile(path, dest)
        placed.append(dest)
    return tuple(placed)


def check_new(path: Path) -> None:
    """``path`` can be written new, its folder made if missing (as the wheelhouse's is):
    checked before pip resolves anything (a lock whose folder could not be made was refused
    only after the whole resolution, as an internal error, exit 3)."""
    problem = new_output_problem(path)
    if problem is not None:
        raise ImageInputError("request_invalid", problem)


def new_output_problem(path: Path) -> str | None:
    """Why ``path`` cannot be written new (``None``: it can, its folder made if missing)."""
    if path.exists() or path.is_symlink():
        return f"{path} exists; choose a new --output"
    existing = next(p for p in path.parents if p.exists() or p.is_symlink())
    if not existing.is_dir():
        return f"{path}: {existing} is not a folder"
    return None


def write_new(path: Path, data: bytes) -> None:
    """``path`` written whole or not at all; an existing file is never replaced."""
    check_new(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ImageInputError("request_invalid", f"{path}: cannot write: {exc.strerror}") from None
    try:
        os.link(tmp, path)  # fails if someone created it meanwhile
    except FileExistsError:
        raise ImageInputError("request_invalid", f"{path} exists; choose a new --output") from None
    finally:
        tmp.unlink()


def lock_wheels(
    roots: Roots,
    *,
    platform: str,
    python: str,
    glibc: str,
    wheelhouse: Path,
    index: Sequence[str] = (),
    extra_wheels: Sequence[Path] = (),
) -> Locked:
    """Resolve ``roots`` with pip for CPython ``python`` on ``platform``, fill ``wheelhouse``
    and return the lock. ``extra_wheels``: wheels offered beside the index (svcc's own)."""
    check_target(platform, python, glibc)
    requirements = judged_requirements(roots)  # refused before pip starts
    tail = [
        "--python-version",
        python,
        "--implementation",
        "cp",
        "--abi",
        f"cp{python.replace('.', '')}",
    ]
    for tag in platform_tags(platform, glibc):
        tail += ["--platform", tag]
    with private_directory("svcc-lock-") as work:
        offered = list(index)
        if extra_wheels:
            local = work / "local"
            local.mkdir()
            for wheel in extra_wheels:
                shutil.copyfile(wheel, local / wheel.name)
            offered += ["--find-links", str(local)]
        downloaded = pip_download(tail, roots, work, offered)
        files = sorted(downloaded.glob("*.whl"))
        wheels = lock_from_wheels(requirements, files, marker_environment(platform, python))
        kept = _check_pins(wheels, roots)
        names = {w.name for w in wheels}
        chosen = [f for f in files if canonicalize_name(parse_wheel_filename(f.name)[0]) in names]
        placed = into_wheelhouse(chosen, wheelhouse)
    return Locked(tuple(wheels), placed, roots, kept)


def lock_text(locked: Locked) -> bytes:
    return render_lock(locked.wheels)
