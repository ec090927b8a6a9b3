"""The readiness pass: a verification pass, ``ModuleIR -> ReadinessReport``.

Contract: takes valid IR, never edits it, and gives every capability exactly one class
(``eligible``, ``conditional``, ``ambiguous``, ``unsupported``) with the reasons that
produced it, each pointing at the statement that causes it. The environment (modules
beside the source, declared requirements) is an input here and never part of the IR.
"""

import sys
from collections.abc import Callable
from typing import Any, ClassVar

import attrs
from attrs import field, frozen
from svcc.compiler.diagnostics import Diagnostic, diag
from svcc.compiler.diagnostics import codes as C
from svcc.compiler.diagnostics.codes import CLASS_ORDER, ReadinessClass
from svcc.ir.model import Capability, Import, ModuleIR, Span
from svcc.ir.schema import READINESS_SCHEMA
from svcc.ir.types import (
    AnyType,
    TypedDictType,
    TypeNode,
    UnresolvedType,
    UnsupportedType,
    iter_leaves,
)


@frozen(kw_only=True)
class Environment:
    """What the source can import besides the standard library."""

    local_modules: frozenset[str] = frozenset()
    declared_imports: frozenset[str] = frozenset()
    declared_requirements: tuple[str, ...] = ()
    # Repositories: resolves an import over the module graph (why it fails, or ``None``);
    # replaces the single-file rules below when set.
    resolve_import: Callable[[Import], str | None] | None = None


@frozen(kw_only=True)
class Assessment:
    capability_id: str
    name: str
    klass: ReadinessClass
    reasons: tuple[Diagnostic, ...]

    @property
    def can_generate_interface(self) -> bool:
        return self.klass == "eligible"

    def blocking(self) -> tuple[Diagnostic, ...]:
        return tuple(r for r in self.reasons if r.severity == "error")

    def to_json(self) -> dict[str, Any]:
        return {
            "capability_id": self.capability_id,
            "name": self.name,
            "class": self.klass,
            "can_generate_interface": self.can_generate_interface,
            "reasons": [r.to_json() for r in self.reasons],
        }


@frozen(kw_only=True)
class ReadinessReport:
    module: str
    source: dict[str, Any]
    ir_digest: str
    assessments: tuple[Assessment, ...]
    requirements: tuple[str, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = field(default=())

    def assessment(self, name_or_id: str) -> Assessment | None:
        for a in self.assessments:
            if name_or_id in (a.name, a.capability_id):
                return a
        return None

    def to_json(self) -> dict[str, Any]:
        counts = dict.fromkeys(CLASS_ORDER, 0)
        for a in self.assessments:
            counts[a.klass] += 1
        return {
            "schema": READINESS_SCHEMA,
            "module": self.module,
            "source": self.source,
            "ir_digest": self.ir_digest,
            "requirements": list(self.requirements),
            "diagnostics": [d.to_json() for d in self.diagnostics],
            "summary": counts,
            "assessments": [a.to_json() for a in self.assessments],
        }


def _order(d: Diagnostic) -> tuple[int, int, int, str, str]:
    s = d.span
    return (s.cell or 0, s.line, s.column, d.code, d.message) if s else (0, 0, 0, d.code, d.message)


class ReadinessPass:
    name: ClassVar[str] = "readiness"

    def run(self, ir: ModuleIR, env: Environment, ir_digest: str) -> ReadinessReport:
        module_wide = self._module_reasons(ir, env)
        assessments = []
        for cap in ir.capabilities:
            reasons = sorted(self._capability_reasons(ir, cap, env) + module_wide, key=_order)
            klass: ReadinessClass = "eligible"
            for reason in reasons:
                forced = reason.entry.klass
                if (
                    reason.severity == "error"
                    and forced
                    and CLASS_ORDER[forced] > CLASS_ORDER[klass]
                ):
                    klass = forced
            assessments.append(
                Assessment(capability_id=cap.id, name=cap.name, klass=klass, reasons=tuple(reasons))
            )
        return ReadinessReport(
            module=ir.module,
            source=attrs.asdict(ir.source),  # plain fields: no converter needed
            ir_digest=ir_digest,
            assessments=tuple(assessments),
            requirements=env.declared_requirements,
        )

    # -- module-wide -------------------------------------------------------------------------
    def _module_reasons(self, ir: ModuleIR, env: Environment) -> list[Diagnostic]:
        out: list[Diagnostic] = []
        for stmt in ir.statements:
            if stmt.kind == "effect":
                out.append(
                    diag(
                        C.R007_MODULE_EFFECT,
                        f"module-level {stmt.detail} runs at import",
                        stmt.span,
                    )
                )
        for imp in ir.imports:
            if imp.scope == "" and not imp.guarded:
                problem = import_problem(imp, env)
                if problem:
                    out.append(diag(C.R008_UNRESOLVED_IMPORT, problem, imp.span))
        for cls in ir.classes:
            if not cls.plain:
                out.append(
                    diag(
                        C.R010_COMPLEX_CLASS,
                        f"class {cls.name}: {cls.reason} runs code at import",
                        cls.reason_span or cls.span,
                    )
                )
        return out

    # -- per capability ----------------------------------------------------------------------
    def _capability_reasons(
        self, ir: ModuleIR, cap: Capability, env: Environment
    ) -> list[Diagnostic]:
        out: list[Diagnostic] = []
        for dec in cap.decorators:
            out.append(
                diag(C.R001_DECORATED, f"decorator @{dec.text} may replace {cap.name}", dec.span)
            )
        if cap.guards:
            out.append(
                diag(
                    C.R006_CONDITIONAL_DEF,
                    f"{cap.name} is defined under a module-level {cap.guards[-1]}",
                    cap.span,
                )
            )
        for binding in ir.bindings:
            if binding.name != cap.name or (binding.kind == "def" and binding.span == cap.span):
                continue
            if binding.kind == "delete":
                out.append(
                    diag(C.R003_DELETED, f"{cap.name} is deleted at module level", binding.span)
                )
            else:
                out.append(
                    diag(
                        C.R002_REBOUND,
                        f"{cap.name} is also bound here ({binding.kind})",
                        binding.span,
                    )
                )
        for write in ir.globals:
            if write.name == cap.name:
                out.append(
                    diag(
                        C.R019_GLOBAL_REBIND,
                        f"{write.function}() declares `global {cap.name}`",
                        write.span,
                    )
                )
        for param in cap.params:
            if param.kind == "var_positional":
                out.append(
                    diag(C.R014_VAR_POSITIONAL, f"*{param.name} has no named field", param.span)
                )
                continue
            if param.kind == "var_keyword":
                out.append(
                    diag(
                        C.R015_VAR_KEYWORD, f"**{param.name} makes the input open-ended", param.span
                    )
                )
                continue
            if param.annotation is None:
                out.append(
                    diag(
                        C.R004_UNANNOTATED,
                        f"parameter {param.name!r} has no annotation: any JSON value",
                        param.span,
                    )
                )
            elif isinstance(param.type, AnyType):
                why = f"parameter {param.name!r} is {param.annotation}: any JSON value"
                out.append(diag(C.R005_ANY, why, param.span))
            out.extend(self._type_reasons(ir, param.type, f"parameter {param.name!r}", param.span))
        if cap.form == "generator":
            out.append(diag(C.R016_GENERATOR, f"{cap.name} is a generator", cap.span))
        elif cap.form == "async_generator":
            out.append(diag(C.R017_ASYNC_GENERATOR, f"{cap.name} is an async generator", cap.span))
        if cap.returns.span is not None:
            for leaf in iter_leaves(cap.returns.type):
                if isinstance(leaf, UnsupportedType | UnresolvedType):
                    out.append(
                        diag(
                            C.R018_RETURN_TYPE,
                            f"return type {leaf.text!r}: {_why(leaf)}; documented as "
                            "any JSON value",
                            cap.returns.span,
                        )
                    )
                    break
        for imp in ir.imports:
            if imp.scope == cap.qualname and not imp.guarded:
                problem = import_problem(imp, env)
                if problem:
                    out.append(diag(C.R009_UNRESOLVED_CALL_IMPORT, problem, imp.span))
        return out

    def _type_reasons(
        self, ir: ModuleIR, node: TypeNode, what: str, span: Span
    ) -> list[Diagnostic]:
        out: list[Diagnostic] = []
        seen: set[str] = set()
        pending: list[tuple[TypeNode, str]] = [(node, what)]
        while pending:
            current, where = pending.pop(0)
            for leaf in iter_leaves(current):
                if isinstance(leaf, UnsupportedType):
                    out.append(
                        diag(
                            C.R011_UNSUPPORTED_TYPE, f"{where}: {leaf.text!r}: {leaf.reason}", span
                        )
                    )
                elif isinstance(leaf, UnresolvedType):
                    code = (
                        C.R013_STAR_IMPORT_TYPE
                        if leaf.reason == "star-import"
                        else (C.R012_UNRESOLVED_TYPE)
                    )
                    out.append(diag(code, f"{where}: {leaf.text!r}: {_why(leaf)}", span))
                elif isinstance(leaf, TypedDictType) and leaf.name not in seen:
                    seen.add(leaf.name)
                    decl = ir.typed_dict(leaf.name)
                    if decl is None:
                        out.append(
                            diag(
                                C.R012_UNRESOLVED_TYPE,
                                f"{where}: TypedDict {leaf.name!r} is not defined",
                                span,
                            )
                        )
                        continue
                    pending.extend(
                        (f.type, f"{where} field {leaf.name}.{f.name}") for f in decl.fields
                    )
        return out


def module_reasons(ir: ModuleIR, env: Environment) -> list[Diagnostic]:
    """The reasons that apply to every capability of ``ir`` (its import-time risks); the
    repository pass propagates them to the modules that import ``ir``."""
    return ReadinessPass()._module_reasons(ir, env)


def _why(leaf: UnsupportedType | UnresolvedType) -> str:
    if isinstance(leaf, UnsupportedType):
        return leaf.reason
    return {
        "star-import": "not defined here; a star import may provide it",
        "unknown-name": "name not defined or imported",
        "invalid-annotation": "not a type expression svcc can read",
    }[leaf.reason]


def import_problem(imp: Import, env: Environment) -> str | None:
    """Why an import cannot be satisfied by the bundle's environment, or ``None``."""
    if env.resolve_import is not None:
        return env.resolve_import(imp)
    hint = "declare its distribution in a requirements file and pass --requirements FILE"
    if imp.level > 0:
        targets = [imp.module.split(".", 1)[0]] if imp.module else list(imp.names)
        if imp.level == 1 and targets and all(t in env.local_modules for t in targets):
            return None
        shown = "." * imp.level + imp.module
        return f"relative import {shown!r} does not resolve to a module beside the source"
    root = imp.module.split(".", 1)[0]
    if (
        root == "__future__"
        or root in sys.stdlib_module_names
        or root in env.local_modules
        or root in env.declared_imports
    ):
        return None
    return f"import {imp.module!r} is not standard library, beside the source, or declared; {hint}"
