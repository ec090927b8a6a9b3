"""The readiness pass: a verification pass, ``ModuleIR -> ReadinessReport``.

Contract: takes valid IR, never edits it, and gives every capability exactly one class
(``eligible``, ``conditional``, ``ambiguous``, ``unsupported``) with the reasons that
produced it, each pointing at the statement that causes it. The environment (modules
beside the source, declared requirements) is an input here and never part of the IR.
"""

import builtins
import sys
from collections.abc import Callable
from typing import Any, ClassVar, Final

import attrs
from attrs import field, frozen
from svcc.compiler.closure import EMPTY, LocalClosure
from svcc.compiler.diagnostics import Diagnostic, diag
from svcc.compiler.diagnostics import codes as C
from svcc.compiler.diagnostics.codes import CLASS_ORDER, Code, ReadinessClass
from svcc.compiler.passes.type_readiness import (
    ENCODABLE_REASONS,
    MODEL_BASES,
    MODEL_DECORATORS,
    NEVER_JSON_KINDS,
    type_reasons,
)
from svcc.ir.imports import resolve_relative
from svcc.ir.index import module_index
from svcc.ir.interface import left_out
from svcc.ir.model import Capability, Evaluation, Import, ModuleIR, Span
from svcc.ir.record import Record
from svcc.ir.schema import READINESS_SCHEMA
from svcc.ir.types import (
    AnyType,
    ModelType,
    TupleType,
    TypedDictType,
    TypeNode,
    UnionType,
    UnresolvedType,
    UnsupportedType,
    iter_leaves,
)


@frozen(kw_only=True, repr=False)
class Environment(Record):
    """What the source can import besides the standard library.

    ``closure`` holds the modules beside the source that the bundle will contain (found by
    :mod:`svcc.compiler.closure`); ``package`` is the main module's package, against which
    its relative imports resolve; ``reserved`` are the names the bundle's own files take.
    """

    closure: LocalClosure = EMPTY
    package: str = ""
    reserved: frozenset[str] = frozenset()
    declared_imports: frozenset[str] = frozenset()
    declared_requirements: tuple[str, ...] = ()
    # Governed execution: results must be exactly JSON (generation with a policy).
    governed: bool = False
    # Repositories: resolves an import over the module graph (why it fails, or ``None``);
    # replaces the single-file rules when set.
    resolve_import: Callable[[Import], str | None] | None = None


@frozen(kw_only=True, repr=False)
class Assessment(Record):
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


@frozen(kw_only=True, repr=False)
class ReadinessReport(Record):
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

    def run(
        self,
        ir: ModuleIR,
        env: Environment,
        ir_digest: str,
        diagnostics: tuple[Diagnostic, ...] = (),
    ) -> ReadinessReport:
        """``diagnostics`` are the front end's (notebook magics, ...): the report carries
        them so that the bundle's ``readiness.json`` is the very document ``inspect`` prints."""
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
            diagnostics=diagnostics,
        )

    # -- module-wide -------------------------------------------------------------------------
    def _module_reasons(self, ir: ModuleIR, env: Environment) -> list[Diagnostic]:
        out: list[Diagnostic] = []
        for stmt in ir.statements:
            effect = first_effect(stmt.evaluations, {})
            if effect is not None:
                out.append(
                    diag(
                        C.R007_MODULE_EFFECT,
                        f"module-level {effect.text} runs at import",
                        effect.span,
                    )
                )
        resolver = ImportResolver(env)
        for imp in ir.imports:
            if imp.scope == "" and not imp.guarded:
                found = resolver.problem(imp, C.R008_UNRESOLVED_IMPORT)
                if found:
                    out.append(diag(found[0], found[1], imp.span))
        if env.package and env.package in env.closure.modules:
            problem = resolver.closure_problem([env.package])
            if problem:
                out.append(
                    diag(
                        C.R021_LOCAL_IMPORT,
                        f"importing {ir.module} runs its package {env.package!r}: {problem}",
                        None,
                    )
                )
        out.extend(_undefined_at_import(ir))
        plain: dict[str, bool] = {}  # local classes defined so far: is each one plain?
        for cls in ir.classes:
            effect = first_effect(cls.evaluations, plain)
            plain[cls.name] = effect is None
            if effect is not None:
                out.append(
                    diag(
                        C.R010_COMPLEX_CLASS,
                        f"class {cls.name}: {effect.text} runs code at import",
                        effect.span,
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
        index = module_index(ir)
        for binding in index.bindings.get(cap.name, ()):
            if binding.kind == "def" and binding.span == cap.span:
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
        for write in index.globals.get(cap.name, ()):
            out.append(
                diag(
                    C.R019_GLOBAL_REBIND,
                    f"{write.function}() declares `global {cap.name}`",
                    write.span,
                )
            )
        for read in index.global_reads.get(cap.qualname, ()):
            writers = sorted({w.function for w in index.globals.get(read.name, ())})
            out.append(
                diag(
                    C.R025_CALL_HISTORY,
                    f"reads `{read.name}`, which {', '.join(f'{w}()' for w in writers)} "
                    f"rebind{'s' if len(writers) == 1 else ''} through `global {read.name}`: "
                    "what a call does depends on the calls before it",
                    read.span,
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
            if isinstance(param.type, AnyType):
                out.extend(
                    diag(C.R020_UNTYPED_CALLABLE, _use_message(param.name, use.kind), use.span)
                    for use in param.uses
                )
            if not left_out(param):  # else SVC-R052 (type_reasons)
                out.extend(
                    self._type_reasons(ir, param.type, f"parameter {param.name!r}", param.span)
                )
        if cap.form == "generator":
            out.append(diag(C.R016_GENERATOR, f"{cap.name} is a generator", cap.span))
        elif cap.form == "async_generator":
            out.append(diag(C.R017_ASYNC_GENERATOR, f"{cap.name} is an async generator", cap.span))
        if cap.returns.span is not None:
            for leaf in iter_leaves(cap.returns.type):
                if isinstance(leaf, UnresolvedType) or (
                    isinstance(leaf, UnsupportedType)
                    and (leaf.reason in ENCODABLE_REASONS or cap.form != "function")
                ):  # other unsupported leaves: SVC-R050 (type_reasons)
                    out.append(
                        diag(
                            C.R018_RETURN_TYPE,
                            f"return type {leaf.text!r}: {_why(leaf)}; documented as "
                            "any JSON value",
                            cap.returns.span,
                        )
                    )
                    break
        if env.governed and cap.returns.span is not None and never_json(cap.returns.type):
            out.append(
                diag(
                    C.R022_GOVERNED_RETURN,
                    f"return type {cap.returns.annotation!r} can never be a JSON value, and "
                    "governed workers return exactly JSON",
                    cap.returns.span,
                )
            )
        out.extend(type_reasons(ir, cap, lambda root: _available(root, env), env.governed))
        resolver = ImportResolver(env)
        for imp in index.imports.get(cap.qualname, ()):
            if not imp.guarded:
                found = resolver.problem(imp, C.R009_UNRESOLVED_CALL_IMPORT)
                if found:
                    out.append(diag(found[0], found[1], imp.span))
        return out

    def _type_reasons(
        self, ir: ModuleIR, node: TypeNode, what: str, span: Span
    ) -> list[Diagnostic]:
        out: list[Diagnostic] = []
        seen: set[str] = set()
        pending: list[tuple[TypeNode, str]] = [(node, what)]
        while pending:
            current, where = pending.pop()
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
                elif isinstance(leaf, ModelType) and leaf.name not in seen:
                    seen.add(leaf.name)
                    decl = ir.model(leaf.name)
                    pending.extend(
                        (f.type, f"{where} field {leaf.name}.{f.attribute}")
                        for f in (decl.fields if decl is not None else ())
                    )
                elif isinstance(leaf, TypedDictType) and leaf.name not in seen:
                    seen.add(leaf.name)
                    index = module_index(ir)
                    if leaf.name not in index.typed_dicts:
                        out.append(
                            diag(
                                C.R012_UNRESOLVED_TYPE,
                                f"{where}: TypedDict {leaf.name!r} is not defined",
                                span,
                            )
                        )
                        continue
                    pending.extend(
                        (f.type, f"{where} field {leaf.name}.{f.name}")
                        for f in index.typed_dict_fields(leaf.name)
                    )
        return out


def module_reasons(ir: ModuleIR, env: Environment) -> list[Diagnostic]:
    """The reasons that apply to every capability of ``ir`` (its import-time risks); the
    repository pass propagates them to the modules that import ``ir``."""
    return ReadinessPass()._module_reasons(ir, env)


def _typing(*names: str) -> frozenset[str]:
    return frozenset(
        f"{module}.{name}" for module in ("typing", "typing_extensions") for name in names
    )


# Decorators whose evaluation at definition time runs no user code (bare, or called with
# literal arguments only).
HARMLESS_DECORATORS: Final = (
    frozenset(
        {
            "functools.cache",
            "functools.lru_cache",
            "functools.cached_property",
            "functools.total_ordering",
            "functools.singledispatch",
            "dataclasses.dataclass",
            "abc.abstractmethod",
            "enum.unique",
            "contextlib.contextmanager",
            "contextlib.asynccontextmanager",
            "builtins.staticmethod",
            "builtins.classmethod",
            "builtins.property",
        }
    )
    | _typing("overload", "final", "runtime_checkable", "no_type_check", "override")
    | MODEL_DECORATORS
)

# Class bases that add no import-time behaviour of their own (plus local plain classes).
PLAIN_BASE_PREFIXES: Final = (
    "builtins.",
    "typing.",
    "typing_extensions.",
    "enum.",
    "abc.ABC",
    *MODEL_BASES,
)


def first_effect(evaluations: tuple[Evaluation, ...], plain: dict[str, bool]) -> Evaluation | None:
    """The first evaluation that may run user code at import, or ``None``. ``plain`` says,
    for the local classes defined so far, whether each is a plain base."""
    for evaluation in evaluations:
        callee = evaluation.callee or ""
        if evaluation.kind == "decorator":
            if callee in HARMLESS_DECORATORS and evaluation.literal_arguments:
                continue
        elif evaluation.kind == "base":
            if callee.startswith("local."):
                if plain.get(callee.split(".", 1)[1], False):
                    continue
            elif callee.startswith(PLAIN_BASE_PREFIXES):
                continue
        return evaluation
    return None


# Names every module has before its first statement runs.
_MODULE_NAMES: Final = frozenset(dir(builtins)) | frozenset(
    {
        "__name__", "__doc__", "__file__", "__spec__", "__loader__", "__package__",
        "__builtins__", "__path__", "__cached__", "__annotations__", "__dict__",
    }
)  # fmt: skip


def _undefined_at_import(ir: ModuleIR) -> list[Diagnostic]:
    """Names read at import before anything binds them: the import raises NameError
    (``Alias = Alias``, a TypedDict field of an unknown type). A star import may bind
    anything, so it turns the rule off."""
    if any("*" in imp.names for imp in ir.imports if imp.scope == ""):
        return []
    bound = set(_MODULE_NAMES)
    out: list[Diagnostic] = []
    for stmt in ir.statements:
        for read in stmt.reads:
            if read.name not in bound:
                out.append(
                    diag(
                        C.R023_UNDEFINED_AT_IMPORT,
                        f"{read.name!r} is read at import before anything binds it (NameError)",
                        read.span,
                    )
                )
                bound.add(read.name)  # report each name once
        bound.update(stmt.binds)
    return out


def _use_message(name: str, kind: str) -> str:
    what = {
        "call": f"{name}(...) calls it",
        "isinstance": f"isinstance(..., {name}) needs a class",
        "issubclass": f"issubclass(..., {name}) needs a class",
        "decorator": f"@{name} needs a callable",
    }[kind]
    return f"parameter {name!r} has no JSON type and {what}: no JSON value can be one"


def never_json(node: TypeNode) -> bool:
    """True when no value of the type is exactly JSON (a tuple is never a list, a set or
    bytes or a class instance never any JSON type). Unknown and ``Any`` may be JSON."""
    if isinstance(node, (TupleType, UnsupportedType, *NEVER_JSON_KINDS)):
        return True
    if isinstance(node, UnionType):
        return all(never_json(option) for option in node.options)
    return False


def _why(leaf: UnsupportedType | UnresolvedType) -> str:
    if isinstance(leaf, UnsupportedType):
        return leaf.reason
    return {
        "star-import": "not defined here; a star import may provide it",
        "unknown-name": "name not defined or imported",
        "invalid-annotation": "not a type expression svcc can read",
    }[leaf.reason]


HINT: Final = "declare its distribution in a requirements file and pass --requirements FILE"


def _available(root: str, env: Environment) -> bool:
    return root == "__future__" or root in sys.stdlib_module_names or root in env.declared_imports


class ImportResolver:
    """The import rules: an import resolves to a module beside the source that the bundle
    will hold (and whose own imports resolve, transitively), or to the standard library,
    or to a declared requirement. Local modules win over the standard library, as they do
    when the file runs as a script (``source/`` is first on ``sys.path`` in a bundle)."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self._memo: dict[str, str | None] = {}

    def problem(self, imp: Import, unresolved: Code) -> tuple[Code, str] | None:
        env = self.env
        if env.resolve_import is not None:
            message = env.resolve_import(imp)
            if message is None:
                return None
            # a relative import that does not resolve in the repository cannot be bundled
            return (C.R021_LOCAL_IMPORT if imp.level > 0 else unresolved), message
        if imp.level > 0:
            shown = "." * imp.level + imp.module
            base = resolve_relative(env.package, imp.level, imp.module)
            if base is None:
                if not env.package:
                    return C.R021_LOCAL_IMPORT, (
                        f"relative import {shown!r} needs a package, and the module is "
                        "top-level: pass --module-name PKG.NAME (or inspect the file inside "
                        "its package folder)"
                    )
                return C.R021_LOCAL_IMPORT, (
                    f"relative import {shown!r} reaches above the top package "
                    f"{env.package.split('.')[0]!r}"
                )
            if base not in env.closure.located:
                return C.R021_LOCAL_IMPORT, (
                    f"relative import {shown!r} resolves to {base!r}, which is not in the "
                    "file's directory tree, so the bundle cannot contain it"
                )
            return self._local(base)
        root = imp.module.split(".", 1)[0]
        if root in env.closure.located:
            if imp.module not in env.closure.located:
                return C.R021_LOCAL_IMPORT, f"{imp.module!r} is not found beside the source"
            return self._local(imp.module)
        if _available(root, env):
            return None
        return unresolved, (
            f"import {imp.module!r} is not standard library, beside the source, or declared; {HINT}"
        )

    def _local(self, name: str) -> tuple[Code, str] | None:
        root = name.split(".", 1)[0]
        if root in self.env.reserved:
            return C.R021_LOCAL_IMPORT, (
                f"local module {root!r} clashes with a module of the bundle itself; rename it"
            )
        problem = self.closure_problem([name])
        return (C.R021_LOCAL_IMPORT, problem) if problem else None

    def closure_problem(self, names: list[str]) -> str | None:
        """Why importing the local modules ``names`` (with the packages on their way and
        what they import, transitively) would fail, or ``None``."""
        closure = self.env.closure
        if closure.truncated:
            return "the local import closure is too large for a single-file bundle"
        key = ",".join(names)
        if key in self._memo:
            return self._memo[key]
        result: str | None = None
        stack = list(names)
        seen: set[str] = set()
        while stack and result is None:
            name = stack.pop()
            parts = name.split(".")
            for depth in range(1, len(parts) + 1):
                prefix = ".".join(parts[:depth])
                if prefix in seen:
                    continue
                seen.add(prefix)
                module = closure.modules.get(prefix)
                if module is None:
                    continue
                if module.error is not None:
                    result = module.error
                    break
                for required in module.requires:
                    top = required.split(".", 1)[0]
                    if top in closure.located:
                        if required not in closure.located:
                            result = f"{module.path} imports {required!r}, not found beside it"
                            break
                        stack.append(required)
                    elif not _available(top, self.env):
                        result = (
                            f"{module.path} imports {required!r}, which is not standard "
                            f"library, beside the source, or declared; {HINT}"
                        )
                        break
                if result is not None:
                    break
        self._memo[key] = result
        return result
