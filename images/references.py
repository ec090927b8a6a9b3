"""What pip would do with each requirement ``svcc lock`` gives it, judged before pip starts.

pip builds whatever a direct reference names that is not a wheel file: a local folder (even
one whose name ends in ``.whl``), a source archive, a version-control checkout. Building runs
the project's own code (its build backend, its ``setup.py``) on this machine, and
``--only-binary=:all:`` does not apply to direct references. So each reference is judged the
way pip will take it, from the same parts pip reads (the URL's scheme, the file name at the
end of its path, and for a ``file:`` URL what is on disk there), and anything but a wheel
file is refused in one line naming the requirement.

A requirement holding ``${`` is refused too: pip expands ``${NAME}`` from the environment in
what it reads from a requirements file, so a declared URL could carry a secret to any host.
svcc gives pip the requirements as arguments (never expanded), and refuses the form anyway:
what a project declares is what is fetched, the same on every machine.
"""

import posixpath
from collections.abc import Sequence
from pathlib import Path
from typing import Final
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

from packaging.requirements import Requirement
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from svcc.images.errors import ImageInputError

WHEEL_SCHEMES: Final = frozenset({"https", "http", "file"})
VCS_SCHEMES: Final = frozenset({"git", "hg", "svn", "bzr"})
# the archive extensions pip unpacks and builds (pip's own list)
ARCHIVES: Final = (
    ".tar.gz", ".tgz", ".tar", ".zip", ".tar.bz2", ".tbz", ".tar.xz", ".txz",
    ".tlz", ".tar.lz", ".tar.lzma",
)  # fmt: skip


def shown(requirement: Requirement) -> str:
    """The requirement as a person wrote it (``name @ URL``), for a message."""
    if requirement.url is None:
        return str(requirement)
    extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
    return f"{requirement.name}{extras} @ {requirement.url}"


def judge_references(requirements: Sequence[Requirement], origin: str) -> None:
    """Refuse (``request_invalid``, one line) the first requirement pip would build or
    expand; ``origin`` says where the requirements were read."""
    for requirement in requirements:
        why = problem(requirement)
        if why is not None:
            raise ImageInputError("request_invalid", f"{origin}: {shown(requirement)}: {why}")


def problem(requirement: Requirement) -> str | None:
    """Why pip may not be given ``requirement`` (None: it may)."""
    if "${" in str(requirement):
        return (
            "holds ${, which pip would expand from the environment (a secret could be sent "
            "anywhere): write the value itself"
        )
    if requirement.url is None:
        return None  # a name: pip takes only wheels for it (--only-binary=:all:)
    return _url_problem(requirement.url)


def _source(what: str) -> str:
    return (
        f"a direct reference to a source ({what}), which pip would build (running its "
        "code); the lock takes binary wheels only: name a released version or a .whl URL"
    )


def _url_problem(url: str) -> str | None:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if "+" in scheme or scheme in VCS_SCHEMES:
        return _source("a version control checkout")
    if scheme not in WHEEL_SCHEMES:
        return f"scheme {scheme or '(none)'!r}: name a wheel by an https, http or file URL"
    if scheme == "file":
        local = _local_problem(parts.netloc, parts.path)
        if local is not None:
            return local
    # the file name pip reads: the last segment of the unquoted path (trailing / dropped),
    # unquoted once more
    name = unquote(posixpath.basename(unquote(parts.path).rstrip("/")))
    if name.lower().endswith(ARCHIVES):
        return _source("a source archive")
    try:
        parse_wheel_filename(name)
    except InvalidWheelFilename:
        return f"{name or url!r} is not a wheel's file name: pip would take it as a source"
    return None


def _local_problem(host: str, path: str) -> str | None:
    """A ``file:`` URL: pip builds a folder whatever its name, so only a regular file here
    (found now, as pip will look for it) is a wheel."""
    if host not in ("", "localhost"):
        return f"a file on another host ({host}): name a local wheel file or an https URL"
    local = Path(url2pathname(path))
    if local.is_dir():
        return _source("a folder")
    if not local.is_file():
        return f"{local} is not a file here (a wheel file is what a file: URL may name)"
    return None
