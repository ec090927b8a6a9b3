"""Notebook corpus: eligible helpers in real public notebooks, before and after slicing.

The notebooks are read from git snapshots of public data-science repositories (brought to
this machine with the tool library's ``fetch``; nothing of them is kept in the project):
every ``.ipynb`` at the snapshot's HEAD is read from git in memory.

- **before**: the notebook as svcc read it until issue 28 (every code cell one module, no
  selection, no slice; a file name that is not an identifier is refused): cell tags and
  directive lines are removed and the notebook's metadata opts out of the slice.
- **after**: the notebook as svcc reads it now (cells selected by tags and nbdev
  directives, the module sliced, the module name derived from the file name).

Both sides declare the same requirements (numpy, pandas, scipy, scikit-learn, matplotlib,
seaborn), so the difference is the notebook handling alone.

With ``--serve``, every notebook with an eligible helper after slicing is generated as a
REST bundle, started under uvicorn (with ``--python``, an interpreter that has the bundle's
server requirements and the notebooks' libraries) and each eligible helper is given a valid
call: arguments built from its JSON schema, where the schema says what a parameter is. An
unannotated parameter accepts any JSON value, so its schema says nothing: a valid call is one
whose values the body can use. The bench tries, for all of a helper's unannotated parameters
at once, each of a few JSON shapes (a number, a string, a list of numbers, a list of lists, an
object, a boolean) and counts the helper as answering when one of them answers 200; where
the body needs a value no uniform shape gives (an ``"h:m:s"`` string, an index beside lists),
:data:`VALID_ARGUMENTS` holds the arguments a person chose reading the helper. A bundle that
does not start, a ``NameError`` in a call (a binding the slice dropped), or a helper none of
whose valid calls answers 200 is a broken promise, listed with its server log.

Usage: python bench/bench_notebook_corpus.py GIT_DIR... [--serve] [--python PY] [--limit N]
"""

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from svcc.compiler.bundles import build_bundle
from svcc.compiler.driver import Analysis, analyze_source
from svcc.compiler.registry import get_target
from svcc.compiler.writer import write_tree
from svcc.contracts.errors import SvccError
from svcc.contracts.requirements import DeclaredRequirements, parse_requirements
from svcc.frontends.module_names import derive_module_name

REQUIREMENTS = "numpy\npandas\nscipy\nscikit-learn\nmatplotlib\nseaborn\n"
_DIRECTIVE = re.compile(r"^\s*#\s*\|.*$|^\s*#\s*(export|exports|exporti|default_exp)\b.*$")


def notebooks(git_dir: Path) -> list[tuple[str, bytes]]:
    names = subprocess.run(
        ["git", "-C", str(git_dir), "ls-tree", "-r", "--name-only", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    out = []
    for name in sorted(n for n in names if n.endswith(".ipynb")):
        shown = subprocess.run(
            ["git", "-C", str(git_dir), "show", f"HEAD:{name}"], capture_output=True, check=False
        )
        if shown.returncode == 0:  # a snapshot may list its largest files without them
            out.append((name, shown.stdout))
    return out


def as_before(data: bytes) -> bytes | None:
    """The notebook with no tags, no directives and the slice turned off."""
    try:
        nb = json.loads(data)
    except ValueError:
        return None
    if not isinstance(nb, dict):
        return None
    for cell in nb.get("cells", []):
        if not isinstance(cell, dict):
            continue
        if isinstance(cell.get("metadata"), dict):
            cell["metadata"].pop("tags", None)
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else str(source)
        if cell.get("cell_type") == "code":
            cell["source"] = _DIRECTIVE.sub("", text)
    nb.setdefault("metadata", {})["svcc"] = {"slice": False}
    return json.dumps(nb).encode()


def eligible(analysis: Analysis) -> list[str]:
    if analysis.readiness is None:
        return []
    return [a.name for a in analysis.readiness.assessments if a.klass == "eligible"]


def analyse(
    data: bytes, path: str, requirements: DeclaredRequirements, *, before: bool
) -> Analysis | None:
    stem = Path(path).stem
    if before:
        if not stem.isidentifier():
            return None  # refused by its file name until issue 28
        module = stem
    else:
        module = derive_module_name(stem) or "notebook"
    try:
        return analyze_source(
            data,
            path=Path(path).name,
            module=module,
            python_version="3.11",
            source_format="notebook",
            requirements=requirements,
        )
    except SvccError:
        return None


def sample(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A small valid value for a JSON schema (enough for the shapes helpers declare)."""
    if "$ref" in schema:
        return sample(defs.get(schema["$ref"].rsplit("/", 1)[-1], {}), defs)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return sample(options[0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "integer":
        return 2
    if kind == "number":
        return 1.5
    if kind == "string":
        return "text"
    if kind == "boolean":
        return True
    if kind == "array":
        return [sample(schema.get("items", {}), defs) for _ in range(3)]
    if kind == "object":
        props = schema.get("properties", {})
        return {k: sample(v, defs) for k, v in props.items() if k in schema.get("required", [])}
    return 1


# JSON shapes tried for a helper's unannotated parameters (the same one for all of them).
UNTYPED_SHAPES: list[Any] = [2, [1.0, 2.0, 3.0], "text", [[1.0, 2.0], [3.0, 4.0]], {"a": 1}, True]

# Valid arguments chosen by reading the helper, where no uniform shape gives one: helper
# name -> parameters -> values (merged over the schema's sample).
VALID_ARGUMENTS: dict[str, dict[str, Any]] = {
    # s.split(':') then int() of each part: a duration written h:m:s
    "convert_time": {"s": "01:02:03"},
    # an integer batch index and two sequences sliced by it
    "get_minibatch": {"i": 0, "dataset_x": [[0.0, 1.0], [1.0, 0.0]], "dataset_y": [0, 1]},
}


def bodies(name: str, schema: dict[str, Any], defs: dict[str, Any]) -> list[Any]:
    """The calls tried for helper ``name``: the schema's sample, then each shape for all of
    its required parameters whose schema says nothing, then the reviewed arguments."""
    body = sample(schema, defs)
    out = [body]
    if not isinstance(body, dict):
        return out
    props = schema.get("properties", {})
    untyped = [
        k
        for k in body
        if not any(key in props.get(k, {}) for key in ("type", "$ref", "anyOf", "oneOf", "enum"))
    ]
    if untyped:
        out += [{**body, **dict.fromkeys(untyped, shape)} for shape in UNTYPED_SHAPES]
    if name in VALID_ARGUMENTS:
        out.append({**body, **VALID_ARGUMENTS[name]})
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_and_call(analysis: Analysis, names: list[str], python: str) -> dict[str, Any]:
    """Generate, start, call each eligible helper once; the outcome of each."""
    outcome: dict[str, Any] = {"started": False, "calls": {}}
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Path(tmp) / "bundle"
        _, tree = build_bundle(analysis, get_target("rest"), select=",".join(names))
        write_tree(tree, bundle)
        openapi = json.loads((bundle / "openapi.json").read_text())
        defs = openapi.get("components", {}).get("schemas", {})
        port = free_port()
        log = Path(tmp) / "server.log"
        with log.open("wb") as sink:
            proc = subprocess.Popen(
                [python, "-m", "uvicorn", "app:app", "--host", "127.0.0.1", "--port", str(port)],
                cwd=bundle,
                stdout=sink,
                stderr=subprocess.STDOUT,
                env={**os.environ, "MPLBACKEND": "Agg"},
            )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and proc.poll() is None:
                try:
                    with urllib.request.urlopen(url + "/health", timeout=1) as r:
                        if r.status == 200:
                            outcome["started"] = True
                            break
                except (urllib.error.URLError, OSError):
                    time.sleep(0.1)
            if not outcome["started"]:
                outcome["log"] = log.read_text(errors="replace")[-2000:]
                return outcome
            for name in names:
                op = openapi["paths"][f"/capabilities/{name}"]["post"]
                content = op.get("requestBody", {}).get("content", {}).get("application/json", {})
                statuses = []
                for body in bodies(name, content.get("schema", {"type": "object"}), defs):
                    request = urllib.request.Request(
                        f"{url}/capabilities/{name}",
                        data=json.dumps(body).encode(),
                        headers={"content-type": "application/json"},
                    )
                    try:
                        with urllib.request.urlopen(request, timeout=30) as r:
                            statuses.append(r.status)
                    except urllib.error.HTTPError as exc:
                        statuses.append(exc.code)
                    if statuses[-1] == 200:
                        break
                outcome["calls"][name] = 200 if statuses[-1] == 200 else max(statuses)
                capability = analysis.ir.capability(name) if analysis.ir else None
                if capability is not None and any(
                    p.annotation is None or p.annotation in ("Any", "object")
                    for p in capability.params
                ):
                    outcome.setdefault("untyped", []).append(name)
            text = log.read_text(errors="replace")
            outcome["name_errors"] = text.count("NameError")
            outcome["log"] = (
                text[-3000:] if any(s >= 500 for s in outcome["calls"].values()) else ""
            )
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("git_dirs", nargs="+", type=Path)
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--limit", type=int, default=0, help="notebooks per repository (0: all)")
    args = parser.parse_args()
    requirements = parse_requirements(REQUIREMENTS, "<bench>")
    totals = {"notebooks": 0, "before": 0, "after": 0, "refused_by_name": 0, "with_helpers": 0}
    served: list[tuple[str, list[str], dict[str, Any]]] = []
    for git_dir in args.git_dirs:
        repo = git_dir.parent.name.replace("+", "/")
        found = notebooks(git_dir)
        if args.limit:
            found = found[: args.limit]
        counts = {"notebooks": len(found), "before": 0, "after": 0}
        for path, data in found:
            before_data = as_before(data)
            old = analyse(before_data, path, requirements, before=True) if before_data else None
            new = analyse(data, path, requirements, before=False)
            if old is None and before_data is not None and not Path(path).stem.isidentifier():
                totals["refused_by_name"] += 1
            counts["before"] += len(eligible(old)) if old else 0
            names = eligible(new) if new else []
            counts["after"] += len(names)
            if names and new is not None:
                totals["with_helpers"] += 1
                if args.serve:
                    served.append(
                        (
                            f"{repo}:{path}",
                            names,
                            serve_and_call(new, names, args.python),
                        )
                    )
        print(
            f"{repo}: {counts['notebooks']} notebooks, eligible helpers before "
            f"{counts['before']}, after {counts['after']}"
        )
        for key in ("notebooks", "before", "after"):
            totals[key] += counts[key]
    print(
        f"total: {totals['notebooks']} notebooks ({totals['refused_by_name']} refused by their "
        f"file name before), eligible helpers before {totals['before']}, after {totals['after']} "
        f"in {totals['with_helpers']} notebooks"
    )
    if args.serve:
        started = sum(1 for _, _, o in served if o["started"])
        calls = [s for _, _, o in served for s in o["calls"].values()]
        name_errors = sum(o.get("name_errors", 0) for _, _, o in served)
        typed_5xx = [
            f"{where}:{name}"
            for where, _, o in served
            for name, status in o["calls"].items()
            if status >= 500 and name not in o.get("untyped", [])
        ]
        print(
            f"served: {started}/{len(served)} bundles started; "
            f"{len(calls)} helpers given a valid call: "
            f"{sum(1 for s in calls if s == 200)} answered 200, "
            f"{sum(1 for s in calls if 400 <= s < 500)} 4xx, "
            f"{sum(1 for s in calls if s >= 500)} 5xx; "
            f"NameError in logs: {name_errors}; 5xx of helpers whose parameters are all "
            f"annotated: {len(typed_5xx)} {typed_5xx}"
        )
        for where, _, outcome in served:
            if not outcome["started"] or any(s >= 500 for s in outcome["calls"].values()):
                print(f"--- {where}: started={outcome['started']} calls={outcome['calls']}")
                print(outcome.get("log", "")[-1500:])


if __name__ == "__main__":
    main()
