"""What runs at import: the module-level evaluations and class definitions that may run code
(the first effect of each, judged by ``effects.Judge``), and the names read at import before
anything binds them."""

import builtins
from collections.abc import Iterator
from typing import Final

from svcc.compiler.passes import import_fallbacks as fallbacks
from svcc.compiler.passes.effects import PLAIN_BASE_PREFIXES, Judge
from svcc.compiler.passes.import_resolution import ImportResolver
from svcc.compiler.passes.rule_subject import Environment
from svcc.compiler.passes.type_readiness import MODEL_DECORATORS
from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics import codes as C
from svcc.contracts.diagnostics.codes import Code
from svcc.ir.model import ClassDecl, Evaluation, ModuleIR


def effect_reasons(ir: ModuleIR, env: Environment) -> Iterator[Diagnostic]:
    """Module-level statements and class definitions whose evaluation is not known
    harmless (see :mod:`svcc.compiler.passes.effects`)."""
    judge = module_judge(ir, env.data_files, env.governed)
    dead: set[int] = set()
    if any(e.only_if_imported is not None for s in ir.statements for e in s.evaluations):
        dead = fallbacks.unimported_groups(ir, ImportResolver(env).provided)
    for stmt in ir.statements:
        live = tuple(e for e in stmt.evaluations if e.only_if_imported not in dead)
        found = first_effect(live, {}, judge)
        if found is not None:
            effect, (code, why) = found
            tail = f": {why}" if why else ""
            yield diag(code, f"module-level {effect.text} runs at import{tail}", effect.span)
    plain: dict[str, bool] = {}  # local classes defined so far: is each one plain?
    for cls in ir.classes:
        found = first_effect(cls.evaluations, plain, judge)
        # a class with a metaclass (evaluated for its own body) is no plain base: a
        # subclass runs the metaclass again, on a body nobody evaluated
        plain[cls.name] = found is None and not cls.keywords
        if found is not None:
            effect, (code, why) = found
            code = C.R010_COMPLEX_CLASS if code is C.R007_MODULE_EFFECT else code
            tail = f": {why}" if why else ""
            yield diag(
                code, f"class {cls.name}: {effect.text} runs code at import{tail}", effect.span
            )


def module_judge(
    ir: ModuleIR, data_files: frozenset[str] = frozenset(), governed: bool = False
) -> Judge:
    plain: dict[str, bool] = {}

    def plain_class(cls: ClassDecl) -> bool:
        if cls.name not in plain:
            plain[cls.name] = False  # a cycle is not plain
            plain[cls.name] = (
                not cls.keywords
                and first_effect(cls.evaluations, {}, judge) is None
                and all(judge.local_pure(b) for b in cls.bases if b.startswith("local."))
            )
        return plain[cls.name]

    judge = Judge(ir, plain_class, data_files, governed=governed)
    return judge


def _typing(*names: str) -> frozenset[str]:
    return frozenset(
        f"{module}.{name}" for module in ("typing", "typing_extensions") for name in names
    )


# Decorators whose evaluation at definition time runs no user code (bare, or called with
# literal arguments only).
HARMLESS_DECORATORS: Final = (
    MODEL_DECORATORS
    | frozenset(
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
)


def first_effect(
    evaluations: tuple[Evaluation, ...], plain: dict[str, bool], judge: Judge
) -> tuple[Evaluation, tuple[Code, str]] | None:
    """The evaluation that may run code at import with its reason, or ``None``: the first
    with an effect of its own code, else the first unknown one (``open(p).read()``: the
    ``open``, not the method of what it returned). ``plain`` says, for the local classes
    defined so far, whether each is a plain base."""
    unknown: tuple[Evaluation, tuple[Code, str]] | None = None
    for evaluation in evaluations:
        callee = evaluation.callee or ""
        if evaluation.kind == "decorator":
            if callee in HARMLESS_DECORATORS and evaluation.literal_arguments:
                continue
            return evaluation, (C.R007_MODULE_EFFECT, "")
        if evaluation.kind == "base":
            if callee.startswith("local."):
                name = callee.split(".", 1)[1]
                if plain.get(name, False) or (name not in plain and judge.local_pure(callee)):
                    continue
            elif callee.startswith(PLAIN_BASE_PREFIXES):
                continue
            return evaluation, (C.R007_MODULE_EFFECT, "")
        found = judge.effect(evaluation)
        if found is not None:
            if found[0] is not C.R007_MODULE_EFFECT:
                return evaluation, found
            unknown = unknown or (evaluation, found)
    return unknown


# Names every module has before its first statement runs.
_MODULE_NAMES: Final = frozenset(dir(builtins)) | frozenset(
    {
        "__name__", "__doc__", "__file__", "__spec__", "__loader__", "__package__",
        "__builtins__", "__path__", "__cached__", "__annotations__", "__dict__",
    }
)  # fmt: skip


def undefined_at_import(ir: ModuleIR) -> list[Diagnostic]:
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
