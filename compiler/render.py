"""Rendering for the CLI: readiness tables for people, canonical JSON for machines.

Colour only when stdout is a terminal and ``NO_COLOR`` is unset.
"""

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from svcc.compiler.driver import (
    Analysis,
    CompileResult,
    analyze_file,
    render_document,
)
from svcc.compiler.errors import InputError
from svcc.compiler.requirements import DeclaredRequirements

if TYPE_CHECKING:
    from svcc.compiler.repository import RepositoryCompileResult

_COLOURS = {
    "eligible": "32",
    "conditional": "33",
    "ambiguous": "35",
    "unsupported": "31",
    "error": "31",
    "warning": "33",
}


def _colour(enabled: bool, key: str, text: str) -> str:
    code = _COLOURS.get(key)
    return f"\033[{code}m{text}\033[0m" if enabled and code else text


def _use_colour() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _write(data: bytes) -> None:
    sys.stdout.buffer.write(data)
    sys.stdout.flush()


def readiness_table(analysis: Analysis, colour: bool) -> str:
    report = analysis.readiness
    assert report is not None
    lines = []
    counts = report.to_json()["summary"]
    summary = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    lines.append(
        f"{analysis.path} (module {analysis.module}): "
        f"{len(report.assessments)} capabilities{': ' + summary if summary else ''}"
    )
    for d in analysis.diagnostics:
        lines.append(f"  note: {d.code} {d.location(analysis.path)}: {d.message}")
    if not report.assessments:
        lines.append("  (no public module-level functions)")
        return "\n".join(lines)
    width = max(len(a.name) for a in report.assessments)
    width = max(width, 4)
    lines.append(f"  {'NAME'.ljust(width)}  {'CLASS'.ljust(11)}  REASONS")
    for a in report.assessments:
        klass = _colour(colour, a.klass, a.klass.ljust(11))
        first = True
        if not a.reasons:
            lines.append(f"  {a.name.ljust(width)}  {klass}  -")
        for r in a.reasons:
            where = ""
            if r.span is not None:
                where = (
                    f"cell {r.span.cell} line {r.span.line}"
                    if r.span.cell is not None
                    else f"line {r.span.line}"
                )
            sev = _colour(colour, r.severity, r.severity)
            text = f"{r.code} {sev} {where}: {r.message}"
            if first:
                lines.append(f"  {a.name.ljust(width)}  {klass}  {text}")
                first = False
            else:
                lines.append(f"  {' ' * width}  {' ' * 11}  {text}")
    return "\n".join(lines)


def inspect_file(
    path: Path, args: argparse.Namespace, requirements: DeclaredRequirements | None
) -> int:
    analysis = analyze_file(
        path,
        module_name=args.module_name,
        python_version=args.python_version,
        requirements=requirements,
        encoding=args.encoding,
    )
    if analysis.error is not None:
        raise InputError(analysis.error_message(str(path)))
    if args.ir:
        assert analysis.ir_json is not None
        _write(analysis.ir_json)
    elif args.format == "json":
        _write(render_document(analysis))
    else:
        _write((readiness_table(analysis, _use_colour()) + "\n").encode())
    return 0


def inspect_repository(
    root: Path, args: argparse.Namespace, requirements: DeclaredRequirements | None
) -> int:
    """``inspect DIR``: the repository front end, readiness over the module graph, one
    section per module with dotted names (text) or one document (json)."""
    from svcc.compiler.repository import analyze_repository
    from svcc.ir.canonical import canonical_json

    analysis = analyze_repository(
        root, python_version=args.python_version, requirements=requirements, strict=False
    )
    if args.ir:
        modules = analysis.repository.modules
        _write(
            canonical_json(
                {
                    "modules": {
                        name: json.loads(analysis_ir) if (analysis_ir := _ir_bytes(m)) else None
                        for name, m in sorted(modules.items())
                    }
                }
            )
        )
        return 0
    if args.format == "json":
        _write(canonical_json(analysis.document()))
        return 0
    colour = _use_colour()
    lines = [f"{root}: source roots {', '.join(analysis.repository.tree.roots)}"]
    for d in analysis.repository.diagnostics:
        lines.append(f"  note: {d.code} {d.message}")
    for module in sorted(analysis.reports):
        doc = analysis.module_document(module)
        source = analysis.repository.modules[module]
        if "error" in doc:
            error = next(d for d in source.result.diagnostics if d.severity == "error")
            lines.append(f"{error.location(source.file.path)}: error: {error.message}")
            continue
        report = analysis.reports[module]
        assert report is not None
        lines.append(_repository_table(module, source.file.path, report, colour))
    _write(("\n".join(lines) + "\n").encode())
    return 0


def _ir_bytes(module: Any) -> bytes | None:
    from svcc.ir.serde import ir_to_json

    return ir_to_json(module.ir) if module.ir is not None else None


def _repository_table(module: str, path: str, report: Any, colour: bool) -> str:
    lines = [f"{path} (module {module}): {len(report.assessments)} capabilities"]
    for a in report.assessments:
        klass = _colour(colour, a.klass, a.klass.ljust(11))
        lines.append(f"  {module}.{a.name}  {klass}")
        for r in a.reasons:
            where = f"line {r.span.line}" if r.span is not None else "-"
            sev = _colour(colour, r.severity, r.severity)
            lines.append(f"      {r.code} {sev} {where}: {r.message}")
    return "\n".join(lines)


def compile_result(result: "CompileResult | RepositoryCompileResult", fmt: str) -> None:
    if fmt == "json":
        from svcc.ir.canonical import canonical_json

        _write(canonical_json(result.to_json()))
        return
    lines = [f"wrote {len(result.files)} files to {result.output_dir} (target {result.target})"]
    lines += [f"  {cap}" for cap in result.capabilities]
    _write(("\n".join(lines) + "\n").encode())


def targets(fmt: str) -> None:
    from svcc.compiler.registry import discover

    found = discover()
    if fmt == "json":
        from svcc.ir.canonical import canonical_json

        _write(
            canonical_json(
                {
                    "targets": [
                        {"name": e.name, "value": e.value, "distribution": e.distribution}
                        for e in found.values()
                    ]
                }
            )
        )
        return
    if not found:
        _write(b"no targets installed\n")
        return
    width = max(len(n) for n in found)
    _write(
        "".join(
            f"{e.name.ljust(width)}  {e.value}  ({e.distribution})\n" for e in found.values()
        ).encode()
    )
