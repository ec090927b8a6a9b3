"""The lock must equal the resolved dependency set: server requirements plus the declared
application requirements, closed over each locked wheel's ``Requires-Dist``.

Resolution is offline and exact: every requirement must be satisfied by the locked version
of its distribution, each wheel's metadata is read from the wheel itself (never installed),
markers are evaluated for the target platform, and anything locked but not reached is named
as extra, anything reached but not locked as missing.
"""

import zipfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Final

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from svcc.contracts.requirements import invalid_reason
from svcc.images.errors import ImageInputError
from svcc.images.lockfile import LockedWheel, WheelLock
from svcc.images.wheelmeta import metadata_headers

MACHINES: Final = {"linux/amd64": "x86_64", "linux/arm64": "aarch64"}


def marker_environment(platform: str, python_version: str) -> dict[str, str]:
    """The PEP 508 environment of a CPython ``python_version`` image on ``platform``."""
    return {
        "implementation_name": "cpython",
        "implementation_version": f"{python_version}.0",
        "os_name": "posix",
        "platform_machine": MACHINES[platform],
        "platform_python_implementation": "CPython",
        "platform_release": "",
        "platform_system": "Linux",
        "platform_version": "",
        "python_full_version": f"{python_version}.0",
        "python_version": python_version,
        "sys_platform": "linux",
    }


def parse_requirement_lines(lines: Iterable[str], origin: str) -> list[Requirement]:
    """PEP 508 requirements, one per non-comment line (``--hash`` options dropped)."""
    out: list[Requirement] = []
    for number, raw in enumerate(lines, 1):
        text = raw.split(" #", 1)[0].strip()
        if not text or text.startswith("#"):
            continue
        text = " ".join(part for part in text.split() if not part.startswith("--hash"))
        try:
            out.append(Requirement(text))
        except InvalidRequirement as exc:
            raise ImageInputError(
                "lock_mismatch", f"{origin}:{number}: invalid requirement: {invalid_reason(exc)}"
            ) from None
    return out


def wheel_requires(path: Path) -> list[str]:
    """``Requires-Dist`` of the wheel at ``path``, read from its METADATA."""
    try:
        with zipfile.ZipFile(path) as archive:
            message = metadata_headers(archive, path.name, "wheel_invalid")
    except (OSError, zipfile.BadZipFile) as exc:
        raise ImageInputError("wheel_invalid", f"{path.name}: not a wheel: {exc}") from None
    return [str(v) for v in message.get_all("Requires-Dist") or []]


def check_roots(lock: WheelLock, roots: Iterable[Requirement], env: Mapping[str, str]) -> None:
    """Each root requirement that applies is locked, at a version it accepts."""
    locked = lock.by_name()
    for req in roots:
        if _applies(req, env, ()):
            _satisfied(req, locked, "requirements")


def _applies(req: Requirement, env: Mapping[str, str], extras: Iterable[str]) -> bool:
    """Whether ``req``'s marker holds in ``env`` with no extra or one of ``extras``."""
    if req.marker is None:
        return True
    return any(req.marker.evaluate({**env, "extra": extra}) for extra in ("", *extras))


def _satisfied(req: Requirement, locked: Mapping[str, LockedWheel], by: str) -> LockedWheel:
    name = canonicalize_name(req.name)
    wheel = locked.get(name)
    if wheel is None:
        raise ImageInputError(
            "lock_mismatch", f"missing from the lock: {name} (required by {by}: {req})"
        )
    if req.specifier and not req.specifier.contains(wheel.version, prereleases=True):
        raise ImageInputError(
            "lock_mismatch",
            f"{name}=={wheel.version} in the lock does not satisfy {req} (required by {by})",
        )
    return wheel


def closure(
    roots: Iterable[Requirement],
    available: Mapping[str, LockedWheel],
    requires_of: Callable[[LockedWheel], list[str]],
    env: Mapping[str, str],
) -> dict[str, LockedWheel]:
    """The wheels reached from ``roots`` through each wheel's requirements (with the extras
    asked for), each required at a version its requirers accept."""
    extras_of: dict[str, set[str]] = {}
    # markers are evaluated once, when a requirement is queued (a child's with its parent's
    # extras), never again when it is taken
    queue = [(r, "requirements") for r in roots if _applies(r, env, ())]
    while queue:
        req, by = queue.pop()
        wheel = _satisfied(req, available, by)
        wanted = {canonicalize_name(e) for e in req.extras}
        seen = extras_of.get(wheel.name)
        if seen is not None and wanted <= seen:
            continue
        extras_of[wheel.name] = (seen or set()) | wanted
        for line in requires_of(wheel):
            try:
                child = Requirement(line)
            except InvalidRequirement as exc:
                raise ImageInputError(
                    "wheel_invalid",
                    f"{wheel.name}: bad Requires-Dist {line!r}: {invalid_reason(exc)}",
                ) from None
            if not _applies(child, env, sorted(extras_of[wheel.name])):
                continue
            queue.append((child, f"{wheel.name}=={wheel.version}"))
    return {name: available[name] for name in sorted(extras_of)}


def resolve(
    lock: WheelLock,
    roots: Iterable[Requirement],
    requires_of: Callable[[LockedWheel], list[str]],
    env: Mapping[str, str],
) -> None:
    """The locked names must be exactly those reached from ``roots``: a missing package is
    named (``closure`` fails on it), and so is every extra one."""
    locked = lock.by_name()
    reached = closure(roots, locked, requires_of, env)
    extra = sorted(set(locked) - set(reached))
    if extra:
        raise ImageInputError(
            "lock_mismatch",
            "locked but not required by the server or application dependencies: "
            + ", ".join(extra),
        )


def lock_from_wheels(
    roots: Iterable[Requirement], wheels: Iterable[Path], env: Mapping[str, str]
) -> list[LockedWheel]:
    """The lock for ``roots`` from a set of wheel files: their closure, hashed. (Where two
    wheels of one distribution are offered, the first by file name wins.)"""
    import hashlib

    from packaging.utils import parse_wheel_filename

    by_name: dict[str, tuple[LockedWheel, Path]] = {}
    for path in sorted(wheels):
        name, version, _, _ = parse_wheel_filename(path.name)
        key = canonicalize_name(name)
        if key not in by_name:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            by_name[key] = (LockedWheel(key, str(version), digest, 0), path)
    reached = closure(
        roots,
        {k: w for k, (w, _) in by_name.items()},
        lambda w: wheel_requires(by_name[w.name][1]),
        env,
    )
    return list(reached.values())
