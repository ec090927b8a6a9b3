"""Every registered target (built-in or third-party) on every corpus IR: same bytes twice,
also under another hash seed, and only relative POSIX paths."""

import functools
import hashlib
import json
import re
import subprocess
import sys

import attrs
import pytest
from helpers import case_input, cases
from svcc.compiler.bundles import BundleRequest, emit_target
from svcc.compiler.driver import Analysis, analyze_file
from svcc.compiler.program_kinds import FILE
from svcc.compiler.registry import discover
from svcc.contracts.errors import IneligibleError
from svcc.contracts.target import EmitContext, FileTree

# oci wraps a repository bundle (a single-file IR is refused by design); its own tests cover
# determinism (tests/backends/test_oci_context.py).
ENTRIES = discover()  # once: each call reads every installed distribution's metadata
TARGETS = sorted(name for name in ENTRIES if name != "oci")
MCP_TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
# Targets whose required options have no default get example values here.
OPTIONS: dict[str, dict[str, object]] = {
    "k8s": {"image": "registry.test:5443/team/app@sha256:" + "a" * 64, "inputs_sha256": "b" * 64},
    "runtime-image": {"base_image": "registry.test:5444/ci/base@sha256:" + "c" * 64},
}


@functools.cache
def _analyses() -> tuple[Analysis, ...]:
    """Every corpus module, restricted to its eligible capabilities: a target only ever
    receives IR that passed selection (generate rules 2-3). Analysed once per process and
    shared by every target's test (an ``Analysis`` is frozen)."""
    out = []
    for case in cases():
        analysis = analyze_file(case_input(case), module_name=case, python_version="3.11")
        if analysis.ir is None or analysis.readiness is None:
            continue
        eligible = tuple(
            c
            for c in analysis.ir.capabilities
            if analysis.readiness.assessment(c.id).can_generate_interface  # type: ignore[union-attr]
        )
        if eligible:
            out.append(attrs.evolve(analysis, ir=attrs.evolve(analysis.ir, capabilities=eligible)))
    return tuple(out)


def _emit(target_name: str, analysis: Analysis) -> FileTree | str:
    """The tree, or the message of a refusal (exit 1: IR the target cannot lower)."""
    assert analysis.ir is not None
    selected = [(analysis.ir, cap) for cap in analysis.ir.capabilities]
    ir, readiness, program = FILE.program(analysis, selected, BundleRequest())
    ctx = EmitContext(readiness=readiness, program=program)
    try:
        target = attrs.evolve(ENTRIES[target_name].load(), **OPTIONS.get(target_name, {}))
        return emit_target(target, ir, ctx)  # through the protocol: wrappers too
    except IneligibleError as exc:
        return str(exc)


def _digest(tree: FileTree | str) -> str:
    if isinstance(tree, str):
        return "refused: " + tree
    h = hashlib.sha256()
    for path, data in tree:
        h.update(path.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


@pytest.mark.parametrize("target", TARGETS)
def test_target_is_deterministic_with_valid_paths(target: str) -> None:
    digests = {}
    emitted = 0
    refused = set()
    for analysis in _analyses():
        first, second = _emit(target, analysis), _emit(target, analysis)
        assert first == second
        digests[analysis.path + analysis.module] = _digest(first)
        if isinstance(first, str):
            refused.add(analysis.module)
            continue
        emitted += 1
        assert len(first) > 0
        for path in first.paths():
            assert not path.startswith("/")
            assert ".." not in path.split("/")
            assert "\\" not in path
    # The only refusal a target may make on eligible IR is one it documents: MCP tool names
    # are ASCII (1-128 of letters, digits, '_', '-', '.'); every other tree must be emitted.
    expected = {
        a.module
        for a in _analyses()
        if target == "mcp" and any(not MCP_TOOL_NAME.fullmatch(c.name) for c in a.ir.capabilities)  # type: ignore[union-attr]
    }
    assert refused == expected
    assert emitted == len(digests) - len(expected)
    code = (
        "import json, sys\n"
        "sys.path[:0] = [sys.argv[1], sys.argv[1] + '/backends']\n"
        "import test_conformance as t\n"
        "print(json.dumps({a.path + a.module: t._digest(t._emit(sys.argv[2], a))"
        " for a in t._analyses()}))\n"
    )
    tests_dir = str(case_input(cases()[0]).parent.parent.parent)
    # both hash seeds at once: independent processes, and a second core when there is one
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", code, tests_dir, target],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        )
        for seed in ("7", "31337")
    ]
    for proc in runs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        assert json.loads(out) == digests
