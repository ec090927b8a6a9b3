"""How much of real library code svcc serves (issue 37): over the pinned corpus of small
pure-Python libraries in ``bench/reach_libraries.txt``.

Each sdist is downloaded once with ``pip download`` into ``bench/.reach-cache/`` (gitignored)
and unpacked there; ``svcc inspect DIR --format json`` then judges each library, and the
script prints, per library and in total: public functions, functions whose signature has a
JSON shape (no error reason about inputs or outputs), eligible functions, and internal
errors (exit 3). Test code and tool scripts (``tests/``, ``setup.py``, ``docs/conf.py``, ...)
are never counted, whatever the svcc measured does with them, so two versions compare.

``--call`` then compiles each library's eligible functions into one REST bundle, starts it
under uvicorn on 127.0.0.1, and calls every function once with a request made from its
schema (required fields only): a bundle that does not start is counted, and the answers by
status class. The dependencies a library declares (the bundle's
``application-requirements.txt``) are installed with pip into a folder beside the bundle,
as ``svcc serve`` installs them. It is slow; ``--jobs`` libraries are judged at once
(default 1: the machine is shared).

Run: ``python bench/bench_reach.py [--svcc PATH] [--call] [--jobs N] [--only NAME,...]``;
``--svcc`` measures another checkout's CLI (``/work/main/.venv/bin/svcc`` for the figures
before a change). The goal (issue 37): at least 60% of the JSON-shaped functions eligible,
0 bundles that do not start, 0 internal errors.

Measured (32 libraries, 2026-11-29, one run, ``--call --jobs 1``, every change of the stop
merged): **349 of 533 JSON-shaped functions eligible (65%)**, 0 internal errors; 24 bundles,
0 that do not start (153 2xx, 3 4xx, 193 5xx: functions raising on the placeholder
arguments). At the start of the same day 177 of 509 (35%); the day before 157 of 382 (41%),
and 16 of 343 before the evaluator. What moved: other modules' values and calls (rfc3986 0 ->
54, jmespath 0 -> 30), module-level instances (shortuuid 0 -> 9), Windows-only code decided for
Linux (colorama 0 -> 13; 8 Windows-only functions no longer counted), plain standard-library
bases and ``six`` read from ``setup.py`` (isodate 0 -> 16), call-through wrappers (semver 1 ->
14), models from a sibling module (tomli 3 -> 20, webcolors 3 -> 18). Still refused: toolz
(60: a registry keyed by module objects, ``inspect.signature`` of builtins, its own ``curry``
class as a decorator), nameparser (29), humanize (11: an unguarded
``importlib.metadata.version``, correctly), dateutil (28). Every inspect document is kept
under ``bench/.reach-cache/inspect/`` to tally every reason, not only the first.
"""

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import time
import zipfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".reach-cache"
LIBRARIES = HERE / "reach_libraries.txt"
SVCC = str(Path(sys.executable).parent / "svcc")
_TEST_DIRS = {"tests", "test", "testing"}
_TOOL_FILES = {
    "conftest.py",
    "setup.py",
    "noxfile.py",
    "fabfile.py",
    "ez_setup.py",
    "versioneer.py",
}


def pinned() -> list[tuple[str, str]]:
    out = []
    for raw in LIBRARIES.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            out.append((name, version))
    return out


def sdist(name: str, version: str) -> Path:
    """The library's unpacked sdist (downloaded with pip the first time)."""
    unpacked = CACHE / "src" / f"{name}-{version}"
    if unpacked.is_dir():
        return unpacked
    downloads = CACHE / "sdists"
    downloads.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[-_.]+", "[-_.]", name)
    pattern = re.compile(rf"(?i){stem}-{re.escape(version)}\.(tar\.gz|zip)$")
    found = [p for p in downloads.iterdir() if pattern.match(p.name)]
    if not found:
        command = [
            *(sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"),
            *("--no-binary", ":all:", "--dest", str(downloads), f"{name}=={version}"),
        ]
        # the build backend at hand first (seconds), an isolated one else (a minute)
        quick = subprocess.run([*command, "--no-build-isolation"], check=False)
        if quick.returncode != 0:
            subprocess.run(command, check=True)
        found = [p for p in downloads.iterdir() if pattern.match(p.name)]
    archive = found[0]
    scratch = CACHE / "src" / f".{name}-{version}.partial"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            z.extractall(scratch)
    else:
        with tarfile.open(archive) as t:
            t.extractall(scratch, filter="data")
    (top,) = list(scratch.iterdir())
    top.rename(unpacked)
    scratch.rmdir()
    return unpacked


def counted(path: str) -> bool:
    """Whether a module path is the library's code (not tests or tool scripts)."""
    parts = path.split("/")
    name = parts[-1]
    if any(p in _TEST_DIRS for p in parts[:-1]) or name in _TOOL_FILES:
        return False
    if name.startswith("test_") or name.endswith("_test.py"):
        return False
    return not (name == "conf.py" and len(parts) > 1 and parts[-2] in ("doc", "docs"))


def _json_shaped(assessment: dict[str, Any]) -> bool:
    return not any(
        r["severity"] == "error" and r["dimension"] in ("inputs", "outputs")
        for r in assessment["reasons"]
    )


def judge(svcc: str, root: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [svcc, "inspect", str(root), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    # kept for reading every reason afterwards (the table shows first refusals only)
    kept = CACHE / "inspect" / f"{root.name}.json"
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text(proc.stdout)
    row: dict[str, Any] = {
        "public": 0, "json": 0, "eligible": 0, "internal": 0, "ids": [], "blocking": [],
    }  # fmt: skip
    if proc.returncode == 3 or "internal error" in proc.stderr:
        row["internal"] = 1
        return row
    try:
        document = json.loads(proc.stdout.splitlines()[0])
    except (IndexError, ValueError):
        row["internal"] = 1
        return row
    for path, module in document.get("files", {}).items():
        if not counted(path):
            continue
        for a in module.get("assessments", []):
            row["public"] += 1
            row["json"] += _json_shaped(a)
            if a["class"] == "eligible":
                row["eligible"] += 1
                row["ids"].append(a["capability_id"])
            elif _json_shaped(a):
                errors = [r for r in a["reasons"] if r["severity"] == "error"]
                row["blocking"] += [f"{r['code']} {_shape(r['message'])}" for r in errors[:1]]
    return row


def _shape(message: str) -> str:
    """A refusal's message with its names and numbers blanked, to count kinds."""
    return re.sub(r"`[^`]*`|'[^']*'|\d+|\b[a-z_]+\(\)", "_", message)[:90]


def _value(schema: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> Any:
    if "$ref" in schema:
        return _value(defs[schema["$ref"].rsplit("/", 1)[1]], defs, depth + 1)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return _value(schema[key][0], defs, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" and depth < 8:
        required = schema.get("required", [])
        props = schema.get("properties", {})
        return {k: _value(props.get(k, {}), defs, depth + 1) for k in required}
    return {"string": "a", "integer": 1, "number": 1.0, "boolean": True, "array": [],
            "null": None}.get(kind or "", {})  # fmt: skip


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def call_all(svcc: str, name: str, root: Path, ids: list[str]) -> dict[str, int]:
    """One REST bundle of ``ids``, started and each operation called once."""
    out = CACHE / "bundles" / name
    shutil.rmtree(out, ignore_errors=True)
    row = {"bundles": 1, "not_started": 0, "2xx": 0, "4xx": 0, "5xx": 0}
    proc = subprocess.run(
        [svcc, "compile", str(root), "--target", "rest", "--output-dir", str(out),
         "--select", ",".join(ids)],
        capture_output=True, text=True, check=False, timeout=900,
    )  # fmt: skip
    if proc.returncode != 0:
        row["not_started"] = 1
        print(f"  {name}: compile failed: {proc.stderr.strip()[:300]}", file=sys.stderr)
        return row
    env = dict(os.environ)
    declared = out / "application-requirements.txt"
    if declared.is_file():  # what the library declares, installed beside the bundle as serve does
        deps = CACHE / "bundles" / f"{name}.deps"
        shutil.rmtree(deps, ignore_errors=True)
        installed = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--target", str(deps),
             "-r", str(declared)],
            capture_output=True, text=True, check=False, timeout=600,
        )  # fmt: skip
        if installed.returncode != 0:
            row["not_started"] = 1
            print(f"  {name}: pip failed: {installed.stderr.strip()[:300]}", file=sys.stderr)
            return row
        env["PYTHONPATH"] = str(deps)
    port = _port()
    log = (CACHE / "bundles" / f"{name}.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "app:app", "--host", "127.0.0.1", "--port", str(port)],
        cwd=out, stdout=log, stderr=subprocess.STDOUT, env=env,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(600):
            if server.poll() is not None:
                row["not_started"] = 1
                return row
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        else:
            row["not_started"] = 1
            return row
        spec = json.loads((out / "openapi.json").read_text())
        defs = spec["components"]["schemas"]
        for path, item in spec["paths"].items():
            if not path.startswith("/capabilities/"):
                continue
            ref = item["post"]["requestBody"]["content"]["application/json"]["schema"]
            try:
                status = httpx.post(url + path, json=_value(ref, defs), timeout=30).status_code
            except httpx.HTTPError:
                status = 599
            row[f"{status // 100}xx" if status // 100 in (2, 4) else "5xx"] += 1
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--svcc", default=SVCC, help="the svcc executable to measure")
    parser.add_argument("--call", action="store_true", help="start and call every bundle")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--only", default="", help="comma-separated library names")
    parser.add_argument(
        "--reasons",
        action="store_true",
        help="the commonest first refusals of JSON-shaped functions",
    )
    args = parser.parse_args()
    libraries = pinned()
    if args.only:
        wanted = set(args.only.split(","))
        libraries = [lib for lib in libraries if lib[0] in wanted]
    with ThreadPoolExecutor(4) as downloads:  # pip waits on the network more than on the CPU
        found = downloads.map(lambda lib: sdist(*lib), libraries)
        roots = {name: root for (name, _), root in zip(libraries, found, strict=True)}

    def one(name: str) -> tuple[str, dict[str, Any]]:
        row = judge(args.svcc, roots[name])
        if args.call and row["ids"]:
            row.update(call_all(args.svcc, name, roots[name], row["ids"]))
        return name, row

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        rows = dict(pool.map(one, [name for name, _ in libraries]))
    keys = ["public", "json", "eligible", "internal"]
    if args.call:
        keys += ["bundles", "not_started", "2xx", "4xx", "5xx"]
    print(f"svcc: {args.svcc}  load average: {os.getloadavg()[0]:.1f}")
    print(f"{'library':<18}" + "".join(f"{k:>12}" for k in keys))
    total = dict.fromkeys(keys, 0)
    for name, _ in libraries:
        row = rows[name]
        print(f"{name:<18}" + "".join(f"{row.get(k, 0):>12}" for k in keys))
        for k in keys:
            total[k] += row.get(k, 0)
    print(f"{'total':<18}" + "".join(f"{total[k]:>12}" for k in keys))
    share = total["eligible"] / total["json"] if total["json"] else 0.0
    print(f"eligible / JSON-shaped: {share:.0%} (goal: at least 60%)")
    if args.reasons:
        counts = Counter(b for row in rows.values() for b in row["blocking"])
        for text, n in counts.most_common(25):
            print(f"{n:>5}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
