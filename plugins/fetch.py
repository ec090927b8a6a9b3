"""``svc plugins fetch svc-oci``: the extension's wheel, its dependencies' wheels and their lock,
everything ``svc plugins install`` then takes offline.

svcc's own wheel is built from the running installation (from its source tree when it is an
editable install, else repacked from its installed files), never downloaded: the extension
then runs the very svcc that authorises it, and a same-named project on an index cannot stand
in for it. The extension's wheel is built from its source (``--source``, or the
``extensions/svc-oci`` directory of the checkout svcc runs from). svcc's own dependencies are
resolved by pip for this machine's Python (the extension's environment is made from it); the
lock is the closure of the extension's requirements over those wheels, as ``install`` checks.
"""

import base64
import contextlib
import csv
import fcntl
import hashlib
import io
import json
import os
import shutil
import sys
import zipfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Final

from attrs import frozen
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from svcc.contracts.watch import private_directory, run_watched
from svcc.images.lockfile import render_lock
from svcc.images.locking import into_wheelhouse, new_output_problem, write_new
from svcc.images.pip_download import Roots, pip_download
from svcc.images.resolve import lock_from_wheels, wheel_requires
from svcc.images.wheelmeta import sha256_of
from svcc.plugins.errors import PluginError

KNOWN: Final = {"svc-oci": "extensions/svc-oci"}
BUILD_TIMEOUT_S: Final = 600
# a fixed time for repacked wheels (zip needs one; 1980-01-01 is its earliest)
ZIP_TIME: Final = (1980, 1, 1, 0, 0, 0)


@frozen
class Fetched:
    wheel: Path
    sha256: str
    lock: Path
    wheelhouse: Path
    locked: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "wheel": str(self.wheel),
            "sha256": self.sha256,
            "requirements": str(self.lock),
            "wheelhouse": str(self.wheelhouse),
            "locked": list(self.locked),
            "install": (
                f"svcc plugins install {self.wheel} --sha256 {self.sha256} "
                f"--requirements {self.lock} --wheelhouse {self.wheelhouse}"
            ),
        }


def _source_root() -> Path | None:
    """The source tree of the running svcc when it is an editable install."""
    try:
        text = metadata.distribution("svcc").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not text:
        return None
    info = json.loads(text)
    url = str(info.get("url", ""))
    if (info.get("dir_info") or {}).get("editable") and url.startswith("file://"):
        return Path(url.removeprefix("file://"))
    return None


def build_wheel(source: Path, out: Path) -> Path:
    """One wheel built from ``source`` offline (no dependencies, no build isolation).

    pip builds in the source tree (setuptools' ``build/`` and ``*.egg-info`` there), so two
    builds of one tree at once broke each other ("Failed to build one or more wheels": two
    ``svcc plugins fetch`` side by side, as the Docker and Podman walkthroughs run): builds
    of a tree take turns on a lock in its ``build/`` folder, released when the build ends
    or svcc dies. A build that died midway (or one of those two) left setuptools' wheel
    staging folder behind, which failed every later build ("File exists: ...dist-info"):
    under the lock no build of the tree runs, so it is removed first."""
    with _tree_lock(source):
        for staging in (source / "build").glob("bdist.*"):
            shutil.rmtree(staging, ignore_errors=True)
        return _build_wheel(source, out)


@contextlib.contextmanager
def _tree_lock(source: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``source/build/.svcc-wheel.lock`` (none when the tree
    cannot take one, such as a read-only tree: pip then says why it cannot build there)."""
    try:
        folder = source / "build"
        folder.mkdir(exist_ok=True)
        fd = os.open(folder / ".svcc-wheel.lock", os.O_WRONLY | os.O_CREAT, 0o600)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _build_wheel(source: Path, out: Path) -> Path:
    done = run_watched(  # ends with svcc with pip's build backend, SIGKILL too
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", str(source), "-w", str(out)],
        timeout=BUILD_TIMEOUT_S,
        env={**os.environ, "PIP_NO_INDEX": "1", "SOURCE_DATE_EPOCH": "315532800",
             "TMPDIR": str(out)},  # pip's own folders are in ``out``, the wheel beside them
    )  # fmt: skip
    if done.returncode != 0:
        lines = [line.strip() for line in (done.stdout + done.stderr).splitlines()]
        errors = [line for line in lines if "Error:" in line and not line.startswith("error:")]
        why = (errors or [line for line in lines if line] or ["failed"])[-1]
        raise PluginError("plugin_invalid", f"building a wheel from {source}: {why}")
    built = sorted(out.glob("*.whl"), key=lambda p: p.stat().st_mtime)
    return built[-1]


def _repack_installed(out: Path) -> Path:
    """svcc's wheel from its installed files (RECORD), for a non-editable install."""
    dist = metadata.distribution("svcc")
    version = dist.version
    files = [f for f in dist.files or () if not str(f).endswith((".pyc", ".pth"))]
    info = f"svcc-{version}.dist-info"
    skip = {f"{info}/{n}" for n in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")}
    wheel = out / f"svcc-{version}-py3-none-any.whl"
    rows = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for entry in sorted(files, key=str):
            name = str(entry).replace(os.sep, "/")
            if name in skip or name.startswith("..") or "__pycache__" in name:
                continue
            data = Path(str(entry.locate())).read_bytes()
            archive.writestr(zipfile.ZipInfo(name, ZIP_TIME), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            rows.append((name, f"sha256={digest.decode()}", str(len(data))))
        text = io.StringIO()
        csv.writer(text, lineterminator="\n").writerows([*rows, (f"{info}/RECORD", "", "")])
        archive.writestr(zipfile.ZipInfo(f"{info}/RECORD", ZIP_TIME), text.getvalue())
    return wheel


def svcc_wheel(out: Path) -> Path:
    source = _source_root()
    return build_wheel(source, out) if source is not None else _repack_installed(out)


def extension_source(name: str, source: Path | None) -> Path:
    if source is not None:
        return source
    root = _source_root()
    if name in KNOWN and root is not None and (root / KNOWN[name] / "pyproject.toml").is_file():
        return root / KNOWN[name]
    raise PluginError(
        "plugin_invalid",
        f"{name}: no source found; pass --source DIR (the extension's directory, e.g. "
        "extensions/svc-oci of a svcc checkout)",
    )


def fetch(
    name: str,
    *,
    wheelhouse: Path,
    output: Path,
    source: Path | None = None,
    index: tuple[str, ...] = (),
) -> Fetched:
    problem = new_output_problem(output)  # said before the builds and pip, not after
    if problem is not None:
        raise PluginError("request_invalid", problem)
    with private_directory("svcc-fetch-") as work:
        (work / "built").mkdir()
        ext = build_wheel(extension_source(name, source), work / "built")
        own = svcc_wheel(work / "built")
        ext_reqs = [Requirement(line) for line in wheel_requires(ext)]
        # svcc's dependencies come from the index (this machine's Python); svcc is our own
        roots = tuple(
            line
            for line in [*wheel_requires(own), *(str(r) for r in ext_reqs)]
            if canonicalize_name(Requirement(line).name) != "svcc" and "extra ==" not in line
        )
        downloaded = (
            sorted(pip_download([], Roots(roots, "svcc", None), work, index).glob("*.whl"))
            if roots
            else []
        )
        offered = [own, *downloaded]
        env = {k: str(v) for k, v in default_environment().items()}
        wheels = lock_from_wheels(ext_reqs, offered, env)
        names = {w.name for w in wheels}
        chosen = [f for f in offered if canonicalize_name(f.name.split("-", 1)[0]) in names]
        into_wheelhouse([*chosen, ext], wheelhouse)
        write_new(output, render_lock(wheels))
        placed = wheelhouse / ext.name
    return Fetched(
        wheel=placed.resolve(),
        sha256=sha256_of(placed),
        lock=output.resolve(),
        wheelhouse=wheelhouse.resolve(),
        locked=tuple(f"{w.name}=={w.version}" for w in sorted(wheels, key=lambda w: w.name)),
    )
