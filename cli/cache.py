"""``svcc cache list|prune``: the environments ``svcc serve`` keeps (``CACHE/envs/<key>``),
how big each is and when a bundle last used it, and removing the ones no longer needed.

An environment is removed only under its build lock (the one ``serve`` takes to build or
reuse it), so a build in progress is never pulled from under pip; a server already running
from an environment is not tracked, so ``prune --all`` is for when none is.
"""

import fcntl
import json
import os
import shutil
import sys
import time
from pathlib import Path

from svcc.cli.serve import READY_MARKER, default_cache_dir


def _size(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total


def environments(cache_dir: Path) -> list[dict[str, object]]:
    """Each environment: its key, path, size in bytes, whether it is complete, and when a
    ``serve`` last used it (the ready marker's time, touched on every reuse)."""
    envs = cache_dir / "envs"
    found = []
    for env in sorted(p for p in envs.iterdir() if p.is_dir()) if envs.is_dir() else []:
        marker = env / READY_MARKER
        used = marker.stat().st_mtime if marker.is_file() else env.stat().st_mtime
        found.append(
            {
                "key": env.name,
                "path": str(env),
                "bytes": _size(env),
                "complete": marker.is_file(),
                "last_used": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(used)),
                "age_days": round((time.time() - used) / 86400, 1),
            }
        )
    return found


def prune(cache_dir: Path, older_than_days: float) -> list[dict[str, object]]:
    """Remove every environment unused for ``older_than_days`` (0: all), skipping one whose
    build lock another process holds; returns what was removed."""
    removed = []
    for entry in environments(cache_dir):
        if float(str(entry["age_days"])) < older_than_days:
            continue
        env = Path(str(entry["path"]))
        with open(env.parent / f"{env.name}.lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # being built or reused right now
            shutil.rmtree(env, ignore_errors=True)
        removed.append(entry)
    return removed


def _mib(n: object) -> str:
    return f"{int(str(n)) / 1048576:.0f} MiB"


def command(action: str, cache_dir: str | None, older_than: float | None, fmt: str) -> int:
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    if action == "list":
        found = environments(cache)
    else:
        found = prune(cache, 0.0 if older_than is None else older_than)
    if fmt == "json":
        sys.stdout.write(json.dumps({"cache_dir": str(cache), action: found}) + "\n")
        return 0
    verb = "removed" if action == "prune" else "kept"
    for entry in found:
        state = "" if entry["complete"] else "  (incomplete)"
        sys.stdout.write(
            f"{entry['key']}  {_mib(entry['bytes']):>9}  last used {entry['last_used']}{state}\n"
        )
    total = sum(int(str(e["bytes"])) for e in found)
    plural = "" if len(found) == 1 else "s"
    sys.stdout.write(f"{len(found)} environment{plural} {verb} in {cache}, {_mib(total)}\n")
    return 0
