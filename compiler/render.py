"""Rendering for the CLI: readiness tables for people, canonical JSON for machines.

Colour only when stdout is a terminal and ``NO_COLOR`` is unset.
"""

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from svcc.compiler.driver import (
    Analysis,
    CompileResult,
    analyze_directory,
    analyze_file,
    render_document,
    render_ir,
)
from svcc.compiler.errors import InputError
from svcc.compiler.requirements import DeclaredRequirements

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


def _text_entry(analysis: Analysis) -> bytes:
    """A directory worker's renderer for text output (runs in the worker process)."""
    if analysis.readiness is None:
        return f"{analysis.error_message()}: error\n".encode()
    return (readiness_table(analysis, False) + "\n").encode()


def inspect_directory(
    root: Path, args: argparse.Namespace, requirements: DeclaredRequirements | None
) -> int:
    failed: list[str] = []
    common: dict[str, Any] = {
        "python_version": args.python_version,
        "requirements": requirements,
        "encoding": args.encoding,
        "on_failure": failed.append,
    }
    if args.format == "text" and not args.ir:
        out = sys.stdout.buffer
        for _, text in analyze_directory(root, render=_text_entry, **common):
            out.write(text)
        out.flush()
        return _directory_status(failed)
    renderer = render_ir if args.ir else render_document
    out = sys.stdout.buffer
    out.write(b'{"files":{')
    first = True
    for rel, doc in analyze_directory(root, render=renderer, **common):
        if not first:
            out.write(b",")
        first = False
        out.write(json.dumps(rel, ensure_ascii=False).encode() + b":" + doc.rstrip(b"\n"))
    out.write(b"}}\n")
    out.flush()
    return _directory_status(failed)


def _directory_status(failed: list[str]) -> int:
    """Exit 2 when any file could not be analysed (its entry says why), else 0."""
    if not failed:
        return 0
    sys.stderr.write(
        f"svcc: error: {len(failed)} file(s) could not be analysed (first: {failed[0]})\n"
    )
    return 2


def compile_result(result: CompileResult, fmt: str) -> None:
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
