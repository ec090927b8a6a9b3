"""``svcc inspect --format sarif``: readiness as a SARIF 2.1.0 log, for code scanning.

One rule per SVC code (every code of the table, so a rule's index never depends on the
input), ``ruleId`` the code; one result per reason and file. A module-wide reason (an
import-time ``print``) is every function's reason: it is one result naming every
capability it blocks, not one alert per function. Levels come from
:mod:`svcc.contracts.diagnostics.reporting` (the language server uses the same rule).

Locations are the paths as given on the command line (a directory's files joined to it),
so a log written at a repository's root is what GitHub code scanning resolves against the
checkout. Columns count code points (``run.columnKind``). A notebook's reasons point at a
cell, which SARIF cannot address inside the ``.ipynb`` JSON: they locate the file, and the
cell and line are in the message and the result's properties.
"""

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from attrs import frozen
from svcc import __version__
from svcc.contracts.diagnostics.codes import REGISTRY
from svcc.contracts.diagnostics.reporting import (
    code_level,
    code_url,
    level_of,
    manual_url,
    rule_name,
)

if TYPE_CHECKING:
    from svcc.compiler.driver import Analysis
    from svcc.compiler.passes.readiness import Assessment
    from svcc.contracts.diagnostics import Diagnostic
    from svcc.ir.model import Span

SARIF_SCHEMA: Final = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION: Final = "2.1.0"


@frozen
class SourceFile:
    """One analysed file as the log shows it: its URI, whether its spans count in notebook
    cells, its front end's diagnostics and its functions' verdicts."""

    uri: str
    notebook: bool
    diagnostics: "Sequence[Diagnostic]"
    assessments: "Sequence[Assessment]" = ()


def uri_of(path: str) -> str:
    """A path as a SARIF URI reference: relative paths stay relative (POSIX, normalised),
    absolute ones become ``file://`` URIs."""
    from urllib.parse import quote

    posix = path.replace("\\", "/")
    if posixpath.isabs(posix):
        return "file://" + quote(posixpath.normpath(posix))
    return quote(posixpath.normpath(posix))


def file_sources(shown: str, analysis: "Analysis") -> list[SourceFile]:
    """``inspect FILE``: the file (or notebook) under the path the user gave."""
    report = analysis.readiness
    return [
        SourceFile(
            uri_of(shown),
            analysis.source_format == "notebook",
            analysis.diagnostics,
            report.assessments if report is not None else (),
        )
    ]


def directory_sources(
    root: str, analysis: "Analysis", notebooks: "Mapping[str, Analysis]"
) -> list[SourceFile]:
    """``inspect DIR``: every module, every refused entry and every notebook below ``root``
    (their tree paths joined to it), in path order."""
    repository = analysis.repository
    assert repository is not None
    out: list[SourceFile] = []
    for module, report in analysis.reports.items():
        source = repository.modules[module]
        out.append(
            SourceFile(
                uri_of(posixpath.join(root, source.file.path)),
                False,
                source.result.diagnostics,
                report.assessments if report is not None else (),
            )
        )
    for path, problem in repository.tree.problems:
        out.append(SourceFile(uri_of(posixpath.join(root, path)), False, (problem,)))
    for path, nb in notebooks.items():
        out.extend(file_sources(posixpath.join(root, path), nb))
    return sorted(out, key=lambda s: s.uri)


def sarif_log(sources: Iterable[SourceFile], *, successful: bool = True) -> dict[str, Any]:
    """The whole log: one run of svcc over ``sources``."""
    rules = list(REGISTRY.values())
    index = {entry.code: i for i, entry in enumerate(rules)}
    results: list[dict[str, Any]] = []
    for source in sources:
        results += _results(source, index)
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "svcc",
                        "version": __version__,
                        "informationUri": manual_url(),
                        "rules": [_rule(entry) for entry in rules],
                    }
                },
                "invocations": [{"executionSuccessful": successful}],
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def _rule(entry: Any) -> dict[str, Any]:
    help_text = entry.hint or entry.explanation
    return {
        "id": entry.code,
        "name": rule_name(entry),
        "shortDescription": {"text": entry.title},
        "fullDescription": {"text": entry.explanation},
        "help": {"text": help_text},
        "helpUri": code_url(entry.code),
        "defaultConfiguration": {"level": code_level(entry)},
        "properties": {
            "severity": entry.severity,
            "dimension": entry.dimension,
            **({"class": entry.klass} if entry.klass else {}),
            "tags": ["readiness" if entry.code.startswith("SVC-R") else "front-end"],
        },
    }


def _results(source: SourceFile, index: dict[str, int]) -> list[dict[str, Any]]:
    """``source``'s diagnostics, then its reasons, each said once with every capability
    it is a reason of."""
    found: dict[Diagnostic, list[Assessment]] = {}
    for d in source.diagnostics:
        found.setdefault(d, [])
    for a in source.assessments:
        for r in a.reasons:
            found.setdefault(r, []).append(a)
    return [_result(d, source, owners, index) for d, owners in found.items()]


def _result(
    d: "Diagnostic", source: SourceFile, owners: "list[Assessment]", index: dict[str, int]
) -> dict[str, Any]:
    hint = d.hint if d.hint is not None else d.entry.hint
    text = d.message
    span = d.span
    if source.notebook and span is not None:
        text = f"cell {span.cell}, line {span.line}: {text}"
    if hint:
        text += f"\nhint: {hint}"
    physical: dict[str, Any] = {"artifactLocation": {"uri": source.uri}}
    if span is not None and not source.notebook:
        physical["region"] = region(span)
    result: dict[str, Any] = {
        "ruleId": d.code,
        "ruleIndex": index[d.code],
        "level": level_of(d.code),
        "message": {"text": text},
        "locations": [
            {
                "physicalLocation": physical,
                **(
                    {
                        "logicalLocations": [
                            {
                                "name": a.name,
                                "fullyQualifiedName": a.capability_id,
                                "kind": "function",
                            }
                            for a in owners
                        ]
                    }
                    if owners
                    else {}
                ),
            }
        ],
    }
    properties: dict[str, Any] = {}
    if owners:
        properties["capabilities"] = {a.capability_id: a.klass for a in owners}
    if source.notebook and span is not None:
        properties |= {"cell": span.cell, "line": span.line}
    if properties:
        result["properties"] = properties
    return result


def region(span: "Span") -> dict[str, int]:
    """A span as a SARIF region: lines 1-based as the span's, columns made 1-based (SARIF's
    ``endColumn`` is the column after the last character, as the span's ``end_column``)."""
    end_line = max(span.end_line, span.line)
    end_column = span.end_column + 1
    if end_line == span.line:
        end_column = max(end_column, span.column + 2)  # a region holds at least one character
    return {
        "startLine": span.line,
        "startColumn": span.column + 1,
        "endLine": end_line,
        "endColumn": end_column,
    }
