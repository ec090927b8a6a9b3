"""``pip download`` run so that it cannot build: the one place svcc runs pip's resolver.

Three guarantees, each closing a way pip would run a project's own code or leak the
environment:

- every requirement is parsed and judged first (:mod:`svcc.images.references`): a direct
  reference pip would build, or a ``${`` pip would expand, is refused before pip starts;
- pip is given those parsed requirements as arguments, never a requirements file (pip
  expands ``${NAME}`` and takes options from lines it reads), and ``--only-binary=:all:``
  (for names: no sdist is a candidate, whatever pip's configuration says);
- pip runs in an interpreter that may not start another process (an audit hook refuses
  them). Building anything (a backend hook, ``setup.py``, installing build requirements)
  and checking out a VCS URL each start one; downloading wheels never does. This covers
  what no one can judge beforehand: a direct reference in a downloaded wheel's
  ``Requires-Dist``.
"""

import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from attrs import frozen
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from svcc.contracts.watch import run_watched
from svcc.images.errors import ImageInputError
from svcc.images.pins import Pins
from svcc.images.references import judge_references
from svcc.images.resolve import parse_requirement_lines

PIP_TIMEOUT_S: Final = 1800
REFUSED: Final = "svcc: pip may not start a process"
# run with ``python -c``: pip's ``__main__`` under an audit hook refusing every new process
NO_BUILD: Final = f"""
import runpy, sys
SPAWNS = frozenset(("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn",
                    "os.spawn", "os.fork", "os.forkpty"))
def refuse(event, args):
    if event in SPAWNS:
        raise PermissionError({REFUSED!r} + " (" + event + ")")
sys.addaudithook(refuse)
runpy.run_module("pip", run_name="__main__", alter_sys=True)
"""


@frozen
class Roots:
    """What pip resolves: requirement lines, where they were read, the pins to keep."""

    lines: tuple[str, ...]
    origin: str  # what they were read from, for the summary and messages
    pins: Pins | None


def judged_requirements(roots: Roots) -> list[Requirement]:
    """``roots`` parsed, each one pip may be given (see the module docstring)."""
    requirements = parse_requirement_lines(roots.lines, roots.origin)
    judge_references(requirements, roots.origin)
    return requirements


def pip_argv(
    roots: Roots, workdir: Path, argv_tail: Sequence[str], index: Sequence[str]
) -> list[str]:
    """pip's command line; the pins' constraints go in ``workdir/pins.txt`` (each line a
    canonical name and a normalised version, checked as the pin file was read)."""
    requirements = [str(r) for r in judged_requirements(roots)]
    argv = [
        sys.executable,
        "-c",
        NO_BUILD,
        "download",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--no-input",
        "--progress-bar",
        "off",
        "-d",
        str(workdir / "download"),
        *argv_tail,
        *index,
    ]
    if roots.pins is not None:
        (workdir / "pins.txt").write_text("".join(f"{line}\n" for line in roots.pins.constraints()))
        argv += ["-c", str(workdir / "pins.txt")]
    return [*argv, "--", *requirements]


def pip_download(
    argv_tail: Sequence[str], roots: Roots, workdir: Path, index: Sequence[str]
) -> Path:
    """Download ``roots``' wheels into ``workdir/download`` (returned)."""
    argv = pip_argv(roots, workdir, argv_tail, index)
    try:
        done = run_watched(  # ends with svcc, SIGKILL too, with what pip starts
            argv,
            timeout=PIP_TIMEOUT_S,
            env={**os.environ, "TMPDIR": str(workdir)},  # pip's own folders go with it
        )
    except FileNotFoundError:
        raise ImageInputError("request_invalid", f"cannot run {sys.executable} -m pip") from None
    except subprocess.TimeoutExpired:
        raise ImageInputError("lock_mismatch", f"pip did not finish in {PIP_TIMEOUT_S} s") from None
    if done.returncode != 0:
        if "No module named pip" in done.stderr:
            raise ImageInputError(
                "request_invalid", f"svcc lock needs pip beside svcc ({sys.executable} -m pip)"
            )
        if REFUSED in done.stderr:
            raise _build_refused(done.stdout + "\n" + done.stderr)
        raise _pip_failure(done.stdout + "\n" + done.stderr, roots)
    return workdir / "download"


def _build_refused(output: str) -> ImageInputError:
    """pip reached something it would build (a wheel's requirement naming a source): what
    it was processing, as pip said it."""
    steps = re.findall(r"^(?:Processing|Collecting|Obtaining) (.+)$", output, re.MULTILINE)
    what = steps[-1].strip() if steps else "a requirement"
    return ImageInputError(
        "lock_mismatch",
        f"pip would build {what} (a source; svcc lock takes binary wheels only, and nothing "
        "was built): name a wheel for it",
    )


def _pip_failure(stderr: str, roots: Roots) -> ImageInputError:
    """pip's refusal as one line naming the package it could not meet: a pin (a constraint)
    first, else the requirement pip names, with pip's own account of the conflict."""
    constrained = re.search(r"\(constraint\) ([A-Za-z0-9._-]+)", stderr)
    found = re.search(r"satisf(?:y|ies) the requirement ([A-Za-z0-9._-]+)", stderr)
    match = constrained or found
    name = canonicalize_name(match.group(1)) if match else None
    pins = roots.pins
    versions = sorted(pins.versions(name)) if pins is not None and name else []
    where = (
        f" (pinned in {pins.source}: {name}=={' or '.join(versions)})"
        if pins is not None and versions
        else ""
    )
    what = f"{name}{where}: " if name else ""
    lines = [line.strip() for line in stderr.splitlines()]
    if "The conflict is caused by:" in lines:
        start = lines.index("The conflict is caused by:") + 1
        stop = lines.index("", start) if "" in lines[start:] else len(lines)
        cause = "; ".join(lines[start:stop])  # up to the blank line
        detail = f"pip: {cause}"
    else:
        errors = [line for line in lines if line.startswith("ERROR:")]
        detail = errors[0] if errors else (lines[-1:] or ["pip failed"])[0]
    return ImageInputError(
        "lock_mismatch", f"{what}no wheel set meets it for this platform and Python: {detail}"
    )
