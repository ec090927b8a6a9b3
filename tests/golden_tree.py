"""One tree-golden helper for every golden folder of files: bundles, client collections,
Kubernetes bases, OCI contexts and the analysis service's container files.

A golden folder holds a whole emitted tree; the comparison covers every file (missing,
extra and different files all fail). ``pytest --snapshot-update`` rewrites the folder (what
is not emitted any more is removed; ``keep`` names files the test owns, such as an input
beside the output) and the diff is reviewed as the behaviour change. ``stored_form`` says
how a file is kept when its exact bytes review badly (canonical one-line JSON is stored
pretty-printed); the exact bytes are then pinned by ``SHA256SUMS`` in the folder.
"""

import hashlib
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

SUMS = "SHA256SUMS"


def read_tree(root: Path, keep: frozenset[str] = frozenset()) -> dict[str, bytes]:
    """Every file under ``root`` (relative POSIX path → bytes), caches and ``keep`` aside."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and "__pycache__" not in p.parts
        and p.relative_to(root).as_posix() not in keep
    }


def sums(emitted: Mapping[str, bytes]) -> bytes:
    return "".join(
        f"{hashlib.sha256(data).hexdigest()}  {path}\n" for path, data in sorted(emitted.items())
    ).encode()


def check_tree(
    folder: Path,
    emitted: Mapping[str, bytes],
    request: pytest.FixtureRequest,
    *,
    stored_form: Callable[[str, bytes], bytes] | None = None,
    pinned: Callable[[str, bytes], bytes] | None = None,
    keep: frozenset[str] = frozenset(),
) -> None:
    """``emitted`` against the golden ``folder`` (rewritten first under --snapshot-update).
    ``pinned`` gives the bytes ``SHA256SUMS`` pins for a file (default: the emitted ones; a
    manifest whose runtime digests are pinned once elsewhere is pinned without them)."""
    form = stored_form or (lambda _, data: data)
    pin = pinned or (lambda _, data: data)
    pinned_bytes = {path: pin(path, data) for path, data in emitted.items()}
    if request.config.getoption("--snapshot-update"):
        kept = {name: (folder / name).read_bytes() for name in keep if (folder / name).exists()}
        shutil.rmtree(folder, ignore_errors=True)
        for path, data in {**{p: form(p, d) for p, d in emitted.items()}, **kept}.items():
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_bytes(data)
        if stored_form is not None:
            (folder / SUMS).write_bytes(sums(pinned_bytes))
    stored = read_tree(folder, keep)
    where = folder.name
    if stored_form is not None:
        assert stored.pop(SUMS, None) == sums(pinned_bytes), f"{where}: emitted bytes differ"
    assert sorted(stored) == sorted(emitted), f"{where}: files differ (run --snapshot-update)"
    for path, data in emitted.items():
        assert stored[path] == form(path, data), f"{where}/{path} differs"
