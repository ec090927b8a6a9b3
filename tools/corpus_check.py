"""Hold readiness verdicts to their promise on real libraries: every eligible function's
bundle must start, and a call must not fail for a reason svcc could have seen.

For each library folder given (a package in a ``site-packages``, a checkout), in both ways a
user meets it:

- ``dir``: ``svcc inspect DIR``, then one REST bundle of every eligible capability
  (``svcc compile DIR --target rest --select ...``);
- ``file``: ``svcc inspect FILE`` for each module, then one bundle per file with an eligible
  function (``svcc compile FILE --target rest``);

each bundle is served under uvicorn on loopback (this interpreter: it has the bundle's
requirements), ``/health`` is asked, and every capability is called once with ``{}``. It
prints, per library and way, the eligible count, how many bundles started, and the calls'
statuses; a bundle that does not start is a broken promise and is printed with its log. A
500 is printed with the exception line of the server log, for a person to judge (most come
from the input: ``{}`` is not what the function expects).

Usage: python tools/corpus_check.py [--ways dir,file] [--keep DIR] LIBRARY_FOLDER ...
Exit status 1 when any bundle of an eligible function failed to start.
"""

import argparse
import collections
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

SVCC = str(Path(sys.executable).with_name("svcc"))


def svcc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SVCC, *args], check=False, capture_output=True, text=True, timeout=600)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def eligible_names(document: dict[str, Any]) -> list[str]:
    """Capability ids of the eligible assessments of an ``inspect`` document, single-file
    or repository (``--select`` takes them in both)."""
    files = document["files"].values() if "files" in document else [document]
    return [
        a["capability_id"]
        for doc in files
        if "assessments" in doc
        for a in doc["assessments"]
        if a["class"] == "eligible"
    ]


def serve_and_call(bundle: Path) -> dict[str, Any]:
    """Start the bundle, ask ``/health``, call every capability with ``{}``."""
    manifest = json.loads((bundle / "svc-rest.json").read_bytes())
    names = [c["name"] for c in manifest["capabilities"]]
    port = free_port()
    log = bundle.with_suffix(".log")
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "app:app",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            cwd=bundle,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        started = False
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                started = httpx.get(f"{url}/health", timeout=5).status_code == 200
                break
            except httpx.TransportError:
                time.sleep(0.1)
        statuses: dict[str, int] = {}
        if started:
            with httpx.Client(base_url=url, timeout=30) as client:
                for name in names:
                    statuses[name] = client.post(f"/capabilities/{name}", json={}).status_code
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    text = log.read_text(errors="replace")
    errors = [line for line in text.splitlines() if "Error" in line or "refused" in line]
    return {"started": started, "statuses": statuses, "errors": errors[-5:], "names": names}


def check_bundle(source: Path, out: Path, select: list[str]) -> dict[str, Any]:
    args = ["compile", str(source), "--target", "rest", "--output-dir", str(out)]
    proc = svcc(*args, "--select", ",".join(select), "--format", "json")
    if proc.returncode != 0:
        return {"started": False, "statuses": {}, "errors": [proc.stderr.strip()], "names": []}
    return serve_and_call(out)


def run_way(way: str, library: Path, work: Path) -> dict[str, Any]:
    results: list[tuple[str, dict[str, Any]]] = []
    eligible = 0
    if way == "dir":
        proc = svcc("inspect", str(library), "--format", "json")
        if proc.stdout.strip():
            names = eligible_names(json.loads(proc.stdout))
            eligible = len(names)
            if names:
                results.append((library.name, check_bundle(library, work / "dir", names)))
    else:
        for index, path in enumerate(sorted(library.rglob("*.py"))):
            if "__pycache__" in path.parts:
                continue
            proc = svcc("inspect", str(path), "--format", "json")
            if not proc.stdout.strip():
                continue
            names = eligible_names(json.loads(proc.stdout))
            if not names:
                continue
            eligible += len(names)
            result = check_bundle(path, work / f"file-{index}", names)
            results.append((str(path.relative_to(library)), result))
    return {"eligible": eligible, "bundles": results}


def report(library: Path, way: str, outcome: dict[str, Any]) -> int:
    bundles = outcome["bundles"]
    started = sum(1 for _, r in bundles if r["started"])
    statuses = collections.Counter(s for _, r in bundles for s in r["statuses"].values())
    shown = ", ".join(f"{n} x {s}" for s, n in sorted(statuses.items())) or "no calls"
    print(
        f"{library.name:<22} {way:<4} eligible {outcome['eligible']:>3}  "
        f"bundles started {started}/{len(bundles)}  calls: {shown}"
    )
    broken = 0
    for where, r in bundles:
        if not r["started"]:
            broken += 1
            print(f"    DID NOT START {where}: {' | '.join(r['errors'])}")
        for name, status in r["statuses"].items():
            if status >= 500:
                print(f"    {status} {name}: {' | '.join(r['errors'][-1:])}")
    return broken


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("libraries", nargs="+", type=Path)
    parser.add_argument("--ways", default="dir,file")
    parser.add_argument("--keep", type=Path, help="keep the bundles and logs here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="svcc-corpus-"))
    broken = 0
    try:
        for library in args.libraries:
            for way in args.ways.split(","):
                place = work / library.name / way
                place.mkdir(parents=True)
                broken += report(library, way, run_way(way, library.resolve(), place))
    finally:
        if args.keep:
            shutil.copytree(work, args.keep, dirs_exist_ok=True)
        shutil.rmtree(work, ignore_errors=True)
    print(f"bundles that did not start: {broken}")
    return 1 if broken else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
