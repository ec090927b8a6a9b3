"""Golden bundle trees: ``tests/golden/<case>/<target>/`` holds the whole emitted bundle.

A case opts in with ``targets = [...]`` in its ``options.toml``. The comparison is of whole
trees (missing, extra and different files all fail); ``pytest --snapshot-update`` rewrites
them, and the diff is reviewed as the behaviour change. A target folder for a target the
case does not list is stale and fails. Emitted Python is checked by ruff and compileall.

JSON files are stored pretty-printed so that a diff can be read; the exact emitted bytes of
every file (canonical one-line JSON included) stay pinned by ``SHA256SUMS`` in each folder.
The IR and readiness documents a bundle shares with the case's analysis golden are stored
once per case (``analysis/``); the bundle's folder points there.

The runtime copies (``svc_runtime/``) are not stored: they must be byte-identical to
``svcc.runtime`` (checked here), and their digests are pinned once, in
``tests/golden/svc_runtime.SHA256SUMS``: a stored manifest points there instead of repeating
them (its ``SHA256SUMS`` line pins it without them; with them it is the exact emitted
bytes, checked), so a runtime edit changes one golden file, not every bundle's.

Every servable target's golden bundle is also started, whole, with the command its target
declares (``BundleSpec.serve``) and called once: a runtime module a bundle needs but does not
carry fails there.
"""

import json
import py_compile
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from golden_ext import pretty
from golden_tree import check_tree, sums
from helpers import (
    GOLDEN,
    ROOT,
    case_input,
    case_options,
    case_requirements,
    cases,
    governed_traces,
)
from servers import free_port, spawn
from svcc.compiler.bundles import build_bundle
from svcc.compiler.driver import analyze_file
from svcc.compiler.registry import get_target, servable_targets
from svcc.compiler.writer import write_tree
from svcc.contracts.policy import parse_policy
from svcc.contracts.target import BundleSpec, FileTree
from svcc.ir.canonical import canonical_json

# Every installed target that writes a service, third-party ones included: each declares
# its glue file, so a new target is covered by listing it in a case's options.toml.
BUNDLES = servable_targets()
RUNTIME_DIR = "svc_runtime/"
CASES = [(case, target) for case in cases() for target in case_options(case).get("targets", [])]


def emit(case: str, target: str) -> FileTree:
    options = case_options(case)
    source = case_input(case)
    analysis = analyze_file(
        source,
        module_name=options.get("module_name", case),
        python_version=options.get("python_version", "3.11"),
        data=[str(source.parent / p) for p in options.get("data", [])],  # as --data
        allow=frozenset(options.get("allow", [])),
        requirements=case_requirements(case),  # as --allow
    )
    policy = options.get("execution_policy")
    execution = parse_policy(policy, "options.toml") if policy is not None else None
    return build_bundle(analysis, get_target(target), execution=execution)[1]


# The runtime copies' digests, pinned once for every golden bundle: a runtime edit changes
# this one file, not every stored manifest.
RUNTIME_SUMS = GOLDEN / "svc_runtime.SHA256SUMS"
PINNED_ELSEWHERE = f"sha256 in tests/golden/{RUNTIME_SUMS.name}"


def without_runtime_digests(manifest: bytes) -> dict[str, object]:
    """The manifest with each ``svc_runtime/`` file's digest replaced by a pointer to the
    one pinned list."""
    doc = json.loads(manifest)
    files = doc.get("files")
    if isinstance(files, dict):
        doc["files"] = {
            p: PINNED_ELSEWHERE if p.startswith(RUNTIME_DIR) else d for p, d in files.items()
        }
    return doc


def is_manifest(path: str) -> bool:
    return any(path == spec.manifest for spec in BUNDLES.values())


def carries_runtime(path: str, data: bytes) -> bool:
    """A manifest that lists runtime copies (a bundle without any keeps its own bytes)."""
    return is_manifest(path) and RUNTIME_DIR.encode() in data


def stored_form(path: str, data: bytes) -> bytes:
    """What the golden folder holds for an emitted file: JSON pretty-printed (a manifest
    without the runtime digests), else as is."""
    if carries_runtime(path, data):
        return pretty(without_runtime_digests(data)).encode()
    if path.endswith(".json"):
        return pretty(json.loads(data)).encode()
    return data


# Documents a bundle shares with the case's analysis golden (``analysis/``, test_golden):
# stored once per case, the bundle's folder pointing there (SHA256SUMS pins its exact bytes).
SHARED_WITH_ANALYSIS = ("capability-ir.json", "readiness.json")


def case_form(case: str) -> "Callable[[str, bytes], bytes]":
    """``stored_form`` for one case: a document equal to the analysis golden's is a pointer."""

    def form(path: str, data: bytes) -> bytes:
        golden = GOLDEN / case / "analysis" / path
        shared = path in SHARED_WITH_ANALYSIS and golden.exists()
        if shared and json.loads(data) == json.loads(golden.read_bytes()):
            return f"the same document as ../analysis/{path} (stored once per case)\n".encode()
        return stored_form(path, data)

    return form


def pinned(path: str, data: bytes) -> bytes:
    """What ``SHA256SUMS`` pins: the exact bytes, a manifest's without its runtime digests
    (those are pinned once, in ``RUNTIME_SUMS``; together they give the exact bytes)."""
    return canonical_json(without_runtime_digests(data)) if carries_runtime(path, data) else data


def runtime_digests(emitted: dict[str, bytes]) -> dict[str, str]:
    manifest = next(data for path, data in emitted.items() if is_manifest(path))
    files = json.loads(manifest).get("files", {})
    return {p: d for p, d in files.items() if p.startswith(RUNTIME_DIR)}


def test_runtime_digests_are_pinned_once(request: pytest.FixtureRequest) -> None:
    """``svc_runtime.SHA256SUMS``: every runtime copy any golden bundle carries, once."""
    seen: dict[str, bytes] = {}
    for case, target in CASES:
        for path, data in emit(case, target):
            if path.startswith(RUNTIME_DIR):
                seen[path] = data
    if request.config.getoption("--snapshot-update"):
        RUNTIME_SUMS.write_bytes(sums(seen))
    assert RUNTIME_SUMS.read_bytes() == sums(seen), "run pytest --snapshot-update"


@pytest.mark.parametrize(("case", "target"), CASES)
def test_bundle_tree(case: str, target: str, request: pytest.FixtureRequest) -> None:
    whole = dict(emit(case, target))
    emitted = {p: d for p, d in whole.items() if not p.startswith(RUNTIME_DIR)}
    folder = GOLDEN / case / target
    check_tree(folder, emitted, request, stored_form=case_form(case), pinned=pinned)
    # the manifest's exact bytes: the stored form (pinned above) with the runtime digests,
    # each the digest of a file byte-identical to svcc.runtime (next test) and pinned once
    manifest = next(p for p in emitted if is_manifest(p))
    if not carries_runtime(manifest, whole[manifest]):
        return
    assert canonical_json(json.loads(whole[manifest])) == whole[manifest]
    pins = dict(
        reversed(line.split("  ", 1)) for line in RUNTIME_SUMS.read_text().splitlines() if line
    )
    for path, digest in runtime_digests(whole).items():
        assert f"sha256:{pins.get(path)}" == digest, f"{path}: not the pinned runtime copy"


def test_enough_bundle_cases() -> None:
    chosen = {case for case, _ in CASES}
    assert set(BUNDLES) <= {target for _, target in CASES}, "a servable target has no golden"
    assert len(chosen) >= 3
    assert any(case_input(c).suffix == ".ipynb" for c in chosen)
    assert any("." in case_options(c).get("module_name", "") for c in chosen)
    assert any("execution_policy" in case_options(c) for c in chosen)


@pytest.mark.parametrize("case", cases())
def test_no_stale_bundle_folders(case: str) -> None:
    listed = set(case_options(case).get("targets", []))
    present = {t for t in BUNDLES if (GOLDEN / case / t).exists()}
    assert present <= listed


@pytest.mark.parametrize(("case", "target"), CASES)
def test_runtime_copies_are_byte_identical(case: str, target: str) -> None:
    emitted = dict(emit(case, target))
    runtime = [p for p in emitted if p.startswith(RUNTIME_DIR)]
    assert bool(runtime) == bool(BUNDLES[target].runtime_modules)
    for path in runtime:
        assert emitted[path] == (ROOT / "runtime" / path.split("/", 1)[1]).read_bytes()
    governed = any(p.startswith(RUNTIME_DIR + "governed/") for p in runtime)
    assert governed == ("execution_policy" in case_options(case))


def test_emitted_python_is_clean(tmp_path: Path) -> None:
    """The glue of every golden bundle passes ruff (lint and format) and compiles."""
    apps = sorted(str(GOLDEN / case / target / BUNDLES[target].glue) for case, target in CASES)
    apps += sorted(str(p) for p in GOLDEN.glob("*/*/execution/worker.py"))
    for app in apps:
        py_compile.compile(app, cfile=str(tmp_path / "app.pyc"), doraise=True)
    for args in (["check", "--no-cache"], ["format", "--check", "--no-cache"]):
        proc = subprocess.run(
            [sys.executable, "-m", "ruff", *args, "--isolated", "--line-length", "100", *apps],
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(("case", "target"), CASES)
def test_bundles_carry_no_notes_for_svccs_developers(case: str, target: str) -> None:
    """A bundle is read by its users: nothing in it points at svcc's own tests or layout."""
    for path, data in emit(case, target):
        text = data.decode("utf-8", "replace")
        for marker in ("tests/", "test_layering", "runtime/`", "``runtime/``"):
            assert marker not in text, f"{case}/{target}/{path} mentions {marker!r}"


@pytest.mark.parametrize(("case", "target"), CASES)
def test_a_direct_bundle_carries_no_governed_code(case: str, target: str) -> None:
    """Only a governed bundle gets the governed server modules (its glue starts them); a
    direct one holds no code, folder or word of governed execution."""
    emitted = dict(emit(case, target))
    spec = BUNDLES[target]
    extra = {f"{RUNTIME_DIR}{m}.py" for m in spec.governed_runtime_modules}
    if "execution_policy" in case_options(case):
        assert extra <= set(emitted)
        assert governed_traces(emitted, spec.glue) != []  # the check can fail
        return
    assert governed_traces(emitted, spec.glue) == []


def _served_case(target: str) -> str:
    """The first golden case of ``target`` in direct mode (its bundle serves without a
    policy's worker set-up)."""
    return next(c for c, t in CASES if t == target and "execution_policy" not in case_options(c))


def _start(bundle: Path, spec: BundleSpec) -> tuple[bool, str]:
    """Start ``bundle`` with the command its target declares (this venv holds the servers'
    requirements) and make one call: ``(answered, log)``."""
    if not spec.listens:
        from mcp_client import McpBundle

        try:
            session = McpBundle(bundle, command=spec.serve_command(sys.executable, "", 0))
        except AssertionError as exc:
            return False, str(exc)
        try:
            return bool(session.list_tools().tools), session.stderr()
        finally:
            session.close()
    port = free_port()
    log = bundle.parent / "server.log"
    with log.open("wb") as sink:
        proc = spawn(
            spec.serve_command(sys.executable, "127.0.0.1", port),
            cwd=bundle,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
                return answer.status_code == 200, log.read_text(errors="replace")
            except httpx.TransportError:
                time.sleep(0.1)
        return False, log.read_text(errors="replace")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("target", sorted(BUNDLES))
def test_every_servable_golden_bundle_serves(target: str, tmp_path: Path) -> None:
    """Every servable target's golden bundle, written whole (runtime copies included), starts
    with its declared ``serve`` command and answers one call (``/health``, or the MCP tool
    list over stdio)."""
    bundle = write_tree(emit(_served_case(target), target), tmp_path / "bundle")
    answered, log = _start(bundle, BUNDLES[target])
    assert answered, log


def test_a_bundle_missing_a_runtime_module_does_not_serve(tmp_path: Path) -> None:
    """The smoke test can fail: a runtime module the bundle declares but lacks stops it."""
    target = next(t for t in sorted(BUNDLES) if BUNDLES[t].runtime_modules)
    bundle = write_tree(emit(_served_case(target), target), tmp_path / "bundle")
    (bundle / RUNTIME_DIR / f"{BUNDLES[target].runtime_modules[0]}.py").unlink()
    answered, _ = _start(bundle, BUNDLES[target])
    assert not answered
