"""Rendering for the CLI: readiness tables for people, canonical JSON for machines.

Colour only when stdout is a terminal and ``NO_COLOR`` is unset.
"""

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from svcc.cli import program
from svcc.compiler.driver import Analysis, analyze, render_document
from svcc.compiler.options import AnalyzeOptions
from svcc.compiler.passes.readiness import Assessment
from svcc.contracts.diagnostics import Diagnostic, excerpt, where
from svcc.contracts.diagnostics.codes import CLASS_ORDER
from svcc.contracts.errors import InputError, SvccError
from svcc.contracts.names import escaped
from svcc.ir.model import ModuleIR

if TYPE_CHECKING:
    from pathlib import Path

    from svcc.cli.sarif import SourceFile as SarifSource
    from svcc.compiler.bundles import CompileResult
    from svcc.contracts.requirements import DeclaredRequirements
    from svcc.contracts.target import Target

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


def _write_pieces(pieces: Iterable[bytes | memoryview]) -> None:
    """``_write`` of the pieces joined, without joining them (one copy of a large output
    fewer)."""
    sys.stdout.buffer.writelines(pieces)
    sys.stdout.flush()


def _reason_lines(analysis: Analysis, r: Diagnostic, colour: bool, indent: str) -> list[str]:
    sev = _colour(colour, r.severity, r.severity)
    at = f" {where(r.span)}" if r.span is not None else ""
    lines = [f"{r.code} {sev}{at}: {r.message}"]
    if r.severity == "error":
        lines += [f"{indent}    {x}" for x in excerpt(r.span, analysis.lines_for(r.span))]
    hint = r.hint if r.hint is not None else r.entry.hint
    if hint:
        lines.append(f"{indent}    hint: {hint}")
    return lines


def module_wide(assessments: Sequence[Assessment]) -> list[Diagnostic]:
    """Reasons every capability carries (a module-level effect, an import): said once."""
    if len(assessments) < 2:
        return []
    shared = set(assessments[0].reasons).intersection(*(a.reasons for a in assessments[1:]))
    return [r for r in assessments[0].reasons if r in shared]


def classes_only(ir: ModuleIR | None) -> list[str]:
    """What to say of a module whose public classes hold its code but are no service class
    (each needs constructor arguments, or has no public method)."""
    public = [c.name for c in ir.classes if not c.name.startswith("_")] if ir else []
    if not public:
        return []
    shown = ", ".join(public[:5]) + (", ..." if len(public) > 5 else "")
    return [
        f"classes {shown} hold the code, and none is a service class",
        "hint: a class built with no arguments (defaults for every __init__ parameter) is "
        "served method by method as Class.method; or add a module-level function that "
        "calls the class",
    ]


def readiness_table(analysis: Analysis, colour: bool, shown: str | None = None) -> str:
    """``shown``: the path as printed (a directory's notebook: escaped), else the path."""
    report = analysis.readiness
    assert report is not None
    lines = []
    counts = report.to_json()["summary"]
    summary = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    lines.append(
        f"{shown or analysis.path} (module {analysis.module}): "
        f"{len(report.assessments)} capabilities{': ' + summary if summary else ''}"
    )
    for d in analysis.diagnostics:
        lines.append(f"  note: {d.code} {d.location(escaped(analysis.path))}: {d.message}")
    if not report.assessments:
        lines.append("  (no public module-level functions)")
        lines.extend(f"  {line}" for line in classes_only(analysis.ir))
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
    lines += hint_lines(report.assessments, width)
    return "\n".join(lines)


_SHOWN_HINTS = (
    ("readOnlyHint", "read-only", "not read-only"),
    ("destructiveHint", "destructive", "not destructive"),
    ("idempotentHint", "idempotent", "not idempotent"),
    ("openWorldHint", "open world", "closed world"),
)


def hint_lines(assessments: Sequence[Any], width: int) -> list[str]:
    """The tool hints of each capability (``readiness.json``'s ``effects``), with the
    kinds of effect they rest on: what an agent host is told about the tool."""
    lines = [f"  {'NAME'.ljust(width)}  TOOL HINTS (EFFECTS)"]
    for a in assessments:
        if a.effects is None:
            continue
        doc = a.effects.to_json()
        said = ", ".join(yes if doc["hints"][h] else no for h, yes, no in _SHOWN_HINTS)
        kinds = ", ".join(doc["facts"]) or "computes only"
        lines.append(f"  {a.name.ljust(width)}  {said} ({kinds})")
    return lines


def inspect_file(
    path: "str | Path",
    args: argparse.Namespace,
    fmt: str,
    requirements: "DeclaredRequirements | None",
) -> int:
    analysis = analyze(
        path,
        AnalyzeOptions(
            module_name=args.module_name,
            python_version=args.python_version,
            requirements=requirements,
            encoding=args.encoding,
            serialize=args.ir or fmt == "json",  # the text table shows no IR: no converter
            allow=getattr(args, "allow", frozenset()),
            data=getattr(args, "data", ()),
        ),
    )
    if fmt == "sarif" and not args.ir:  # a file that does not parse is a result too
        from svcc.cli import sarif

        _write_sarif(sarif.file_sources(str(path), analysis), analysis.error is None)
        if analysis.error is None:
            return 0
        sys.stderr.write(f"{program()}: error: {analysis.error_message(escaped(str(path)))}\n")
        return 2
    if analysis.error is not None:
        raise InputError(analysis.error_message(str(path)))
    if args.ir:
        assert analysis.ir_json is not None
        _write(analysis.ir_json)
    elif fmt == "json":
        _write(render_document(analysis))
    else:
        _write(
            (readiness_table(analysis, _use_colour()) + "\n").encode("utf-8", "backslashreplace")
        )
    return 0


def inspect_repository(
    root: "Path", args: argparse.Namespace, fmt: str, requirements: "DeclaredRequirements | None"
) -> int:
    """``inspect DIR``: the repository front end, readiness over the module graph, one
    section per module with dotted names (text) or one document (json)."""
    from svcc.ir.canonical import canonical_json

    analysis = analyze(
        root,
        AnalyzeOptions(
            python_version=args.python_version,
            requirements=requirements,
            strict=False,
            workers=None,  # all cores, as the README says
            documents=fmt == "json" and not args.ir,  # rendered by the workers (see there)
            allow=getattr(args, "allow", frozenset()),
            # refused for a directory by the library, as for compile (they were ignored here)
            module_name=args.module_name,
            data=getattr(args, "data", ()),
            encoding=args.encoding,
            include_tests=getattr(args, "include_tests", False),
            notebooks=not args.ir,
        ),
    )
    repository = analysis.repository
    assert repository is not None  # a directory's analysis
    if args.ir:
        modules = repository.modules
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
    # a module's document is an ``{"error": ...}`` exactly when it has no report (rendering
    # every document here only to look for that key was 1.8 s of the stdlib's serial part)
    # (the files by their paths, as the documents are keyed: a module, a refused entry, a
    # notebook alike)
    failed = [repository.modules[m].file.path for m in analysis.failed_modules()]
    failed += [path for path, d in repository.tree.problems if d.severity == "error"]
    notebooks = analysis.notebooks
    failed += [path for path, a in notebooks.items() if a.error is not None]
    failed.sort()
    if fmt == "sarif":
        from svcc.cli import sarif

        sources = sarif.directory_sources(str(root), analysis, notebooks)
        _write_sarif(sources, not failed)
        return _directory_status(failed)
    if fmt == "json":  # the modules' documents rendered on every core (see there)
        from svcc.compiler.repository_document import document_pieces

        notebook_documents = {p: a.document() for p, a in notebooks.items()}
        _write_pieces(document_pieces(analysis, notebook_documents))
        return _directory_status(failed)
    colour = _use_colour()
    tree = repository.tree
    shown = escaped(str(root))
    lines = [
        f"{shown}: package {tree.package}"
        if tree.package
        else f"{shown}: source roots {', '.join(escaped(r) for r in tree.roots)}"
    ]
    for d in repository.diagnostics:  # a refused entry is an error (it sets the exit status)
        lines.append(f"  {d.severity}: {d.code} {d.message}")
    for module in sorted(analysis.reports):
        doc = analysis.module_document(module)
        source = repository.modules[module]
        if "error" in doc:
            error = next(d for d in source.result.diagnostics if d.severity == "error")
            lines.append(f"{error.location(escaped(source.file.path))}: error: {error.message}")
            continue
        report = analysis.reports[module]
        assert report is not None
        lines.append(_repository_table(module, escaped(source.file.path), report, colour))
    for path, nb in notebooks.items():
        if nb.error is not None:
            lines.append(f"{nb.error_message(escaped(path))}")
        else:
            lines.append(readiness_table(nb, colour, escaped(path)))
    lines += repository_summary([r for r in analysis.reports.values() if r is not None])
    _write(("\n".join(lines) + "\n").encode("utf-8", "backslashreplace"))
    return _directory_status(failed)


def _write_sarif(sources: "list[SarifSource]", successful: bool) -> None:
    from svcc.cli import sarif
    from svcc.ir.canonical import canonical_json

    _write(canonical_json(sarif.sarif_log(sources, successful=successful)))


def _directory_status(failed: list[str]) -> int:
    """Exit 2 when any module could not be analysed (its entry says why), else 0."""
    if not failed:
        return 0
    first = escaped(failed[0])
    sys.stderr.write(
        f"{program()}: error: {len(failed)} file(s) could not be analysed (first: {first})\n"
    )
    return 2


def _ir_bytes(module: Any) -> bytes | None:
    """The module's canonical IR JSON: as a lowering worker encoded it (the IR is not
    decoded only to be encoded again), else encoded here."""
    from svcc.ir.serde import ir_to_json

    encoded: bytes | None = module.result.ir_json
    if encoded is not None:
        return encoded
    return ir_to_json(module.ir) if module.ir is not None else None


def _repository_table(module: str, path: str, report: Any, colour: bool) -> str:
    """One module's section: the reasons its functions share said once ("every
    function:"), then each function with its own."""
    lines = [f"{path} (module {module}): {len(report.assessments)} capabilities"]
    shared = module_wide(report.assessments)
    if shared:
        lines.append("    every function:")
        lines += [f"      {_short_reason(r, colour)}" for r in shared]
    for a in report.assessments:
        klass = _colour(colour, a.klass, a.klass.ljust(11))
        lines.append(f"  {module}.{a.name}  {klass}")
        for r in a.reasons:
            if r not in shared:
                lines.append(f"      {_short_reason(r, colour)}")
    return "\n".join(lines)


def _short_reason(r: Diagnostic, colour: bool) -> str:
    where = f"line {r.span.line}" if r.span is not None else "-"
    sev = _colour(colour, r.severity, r.severity)
    return f"{r.code} {sev} {where}: {r.message}"


def repository_summary(reports: Sequence[Any], top: int = 5) -> list[str]:
    """Counts per class over every function, and the most common blocking reasons with
    how many functions each blocks (a reason counted once per function)."""
    counts: Counter[str] = Counter()
    blocked: Counter[tuple[str, str]] = Counter()
    for report in reports:
        for a in report.assessments:
            counts[a.klass] += 1
            for key in {(r.code, r.message) for r in a.blocking()}:
                blocked[key] += 1
    total = sum(counts.values())
    shown = ", ".join(f"{counts[k]} {k}" for k in CLASS_ORDER if counts[k])
    lines = [f"summary: {total} functions{': ' + shown if shown else ''}"]
    if blocked:
        lines.append("most common reasons:")
        for (code, message), n in sorted(blocked.items(), key=lambda i: (-i[1], i[0]))[:top]:
            lines.append(f"  {n:>4} function{'s' if n != 1 else ' '}  {code} {message}")
    return lines


def compile_result(result: "CompileResult", fmt: str) -> None:
    if fmt == "json":
        from svcc.ir.canonical import canonical_json

        _write(canonical_json(result.to_json()))
        return
    lines = [f"wrote {len(result.files)} files to {result.output_dir} (target {result.target})"]
    lines += [f"  {cap}" for cap in result.capabilities]
    _write(("\n".join(lines) + "\n").encode("utf-8", "backslashreplace"))


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
    _write("".join(f"{line}\n" for line in lines).encode("utf-8", "backslashreplace"))
