"""Rendering for the CLI: readiness tables for people, canonical JSON for machines.

Colour only when stdout is a terminal and ``NO_COLOR`` is unset.
"""

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from svcc.compiler.diagnostics import Diagnostic, excerpt, where
from svcc.compiler.driver import (
    Analysis,
    CompileResult,
    analyze_directory,
    analyze_file,
    render_document,
    render_ir,
)
from svcc.compiler.errors import InputError, SvccError
from svcc.compiler.passes.readiness import Assessment
from svcc.compiler.requirements import DeclaredRequirements

if TYPE_CHECKING:
    from svcc.compiler.target import Target

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


def _reason_lines(analysis: Analysis, r: Diagnostic, colour: bool, indent: str) -> list[str]:
    sev = _colour(colour, r.severity, r.severity)
    at = f" {where(r.span)}" if r.span is not None else ""
    lines = [f"{r.code} {sev}{at}: {r.message}"]
    if r.severity == "error":
        lines += [f"{indent}    {x}" for x in excerpt(r.span, analysis.lines_for(r.span))]
    return lines


def module_wide(assessments: Sequence[Assessment]) -> list[Diagnostic]:
    """Reasons every capability carries (a module-level effect, an import): said once."""
    if len(assessments) < 2:
        return []
    shared = set(assessments[0].reasons).intersection(*(a.reasons for a in assessments[1:]))
    return [r for r in assessments[0].reasons if r in shared]


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
    shared = module_wide(report.assessments)
    if shared:
        lines.append("  every function:")
        for r in shared:
            lines += ["    " + x for x in _reason_lines(analysis, r, colour, "")]
    width = max(4, *(len(a.name) for a in report.assessments))
    lines.append(f"  {'NAME'.ljust(width)}  {'CLASS'.ljust(11)}  REASONS")
    indent = " " * (width + 15)
    for a in report.assessments:
        klass = _colour(colour, a.klass, a.klass.ljust(11))
        own = [r for r in a.reasons if r not in shared]
        row = f"  {a.name.ljust(width)}  {klass}  "
        if not own:
            lines.append(row + ("-" if not shared else "(only the reasons every function has)"))
        for i, r in enumerate(own):
            first, *rest = _reason_lines(analysis, r, colour, indent)
            lines.append((row if i == 0 else indent) + first)
            lines += rest
    return "\n".join(lines)


def inspect_file(
    path: Path, args: argparse.Namespace, fmt: str, requirements: DeclaredRequirements | None
) -> int:
    analysis = analyze_file(
        path,
        module_name=args.module_name,
        python_version=args.python_version,
        requirements=requirements,
        encoding=args.encoding,
        serialize=args.ir or fmt == "json",  # the text table shows no IR: no converter
    )
    if analysis.error is not None:
        raise InputError(analysis.error_message(str(path)))
    if args.ir:
        assert analysis.ir_json is not None
        _write(analysis.ir_json)
    elif fmt == "json":
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
    root: Path, args: argparse.Namespace, fmt: str, requirements: DeclaredRequirements | None
) -> int:
    common: dict[str, Any] = {
        "python_version": args.python_version,
        "requirements": requirements,
        "encoding": args.encoding,
    }
    if fmt == "text" and not args.ir:
        out = sys.stdout.buffer
        for _, text in analyze_directory(root, render=_text_entry, **common):
            out.write(text)
        out.flush()
        return 0
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
    return 0


def compile_result(result: CompileResult, fmt: str) -> None:
    if fmt == "json":
        from svcc.ir.canonical import canonical_json

        _write(canonical_json(result.to_json()))
        return
    lines = [f"wrote {len(result.files)} files to {result.output_dir} (target {result.target})"]
    lines += [f"  {cap}" for cap in result.capabilities]
    _write(("\n".join(lines) + "\n").encode())


def targets(fmt: str) -> None:
    from svcc.compiler.registry import discover, target_options

    found = discover()
    listed = []
    for entry in found.values():
        try:
            cls: type[Target] | None = entry.load_class()
            options = target_options(cls) if cls is not None else ()
        except SvccError as exc:  # a broken plug-in is listed, not fatal to the listing
            cls, options, problem = None, (), str(exc)
        listed.append((entry, cls, options, problem if cls is None else ""))
    if fmt == "json":
        from svcc.ir.canonical import canonical_json

        _write(
            canonical_json(
                {
                    "targets": [
                        {
                            "name": e.name,
                            "value": e.value,
                            "distribution": e.distribution,
                            "description": cls.description if cls else None,
                            "servable": cls.bundle is not None if cls else None,
                            "supports_execution_policy": (
                                cls.supports_execution_policy if cls else None
                            ),
                            "options": [o.to_json() for o in options],
                            "error": problem or None,
                        }
                        for e, cls, options, problem in listed
                    ]
                }
            )
        )
        return
    if not found:
        _write(b"no targets installed\n")
        return
    width = max(len(n) for n in found)
    lines = []
    for e, cls, options, problem in listed:
        about = cls.description if cls else f"error: {problem}"
        lines.append(f"{e.name.ljust(width)}  {about}  ({e.value}, {e.distribution})")
        for o in options:
            value = f" {o.metavar or o.kind.upper()}" if o.kind != "bool" else ""
            extra = " (required)" if o.required else ""
            if o.choices:
                extra += f" (one of {', '.join(o.choices)})"
            if o.default is not None:
                extra += f" (default {o.default})"
            lines.append(f"{' ' * width}    {o.flag}{value}: {o.help}{extra}")
    _write("".join(f"{line}\n" for line in lines).encode())
