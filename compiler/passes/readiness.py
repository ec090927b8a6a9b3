"""The readiness pass: a verification pass, ``ModuleIR -> ReadinessReport``.

Contract: takes valid IR, never edits it, and gives every capability exactly one class
(``eligible``, ``conditional``, ``ambiguous``, ``unsupported``) with the reasons that
produced it, each pointing at the statement that causes it. The environment (modules
beside the source, declared requirements) is an input here and never part of the IR.
"""

import re
from collections.abc import Callable, Iterable, Iterator
from operator import itemgetter
from typing import TYPE_CHECKING, Any, ClassVar, Final

from svcc.compiler.passes import import_fallbacks as fallbacks
from svcc.compiler.passes.data_read_rules import data_read_reasons, source_depth
from svcc.compiler.passes.docstrings import undocumented_names
from svcc.compiler.passes.effects import security_kind
from svcc.compiler.passes.import_resolution import ImportResolver, declare_hint
from svcc.compiler.passes.import_time import (
    effect_reasons,
    first_effect,
    module_judge,
    undefined_at_import,
)
from svcc.compiler.passes.pickled_models import pickled_model_reasons
from svcc.compiler.passes.rule_subject import CapabilityRule, Environment, Subject
from svcc.compiler.passes.service_readiness import construction_reasons, service_reasons
from svcc.compiler.passes.tool_effects import ToolEffects, tool_effects
from svcc.compiler.passes.type_readiness import (
    ENCODABLE_REASONS,
    NEVER_JSON_KINDS,
    TYPE_RULES,
    noted_names,
)
from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics import codes as C
from svcc.contracts.diagnostics.codes import CLASS_ORDER, REGISTRY, ReadinessClass
from svcc.contracts.security import SECURITY_KINDS
from svcc.frontends.python.unbound import IPYTHON_REMOVED, UNBOUND_PREFIX
from svcc.frontends.removed_names import REMOVED_NAMES, removed_name
from svcc.ir.index import ModuleIndex, module_index
from svcc.ir.interface import answered, left_out
from svcc.ir.model import Capability, Import, ModuleIR, ParamUse, ServiceDecl, Span
from svcc.ir.records import plain_fields
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

if TYPE_CHECKING:
    from attrs import field, frozen
else:  # the same records, their methods generated ahead of time (svcc.ir.records)
    from svcc.ir.records import field, frozen


@frozen(kw_only=True)
class Assessment:
    capability_id: str
    name: str
    klass: ReadinessClass
    reasons: tuple[Diagnostic, ...]
    # What the capability may do when it runs and the tool hints derived from it.
    effects: ToolEffects | None = None

    @property
    def can_generate_interface(self) -> bool:
        return self.klass == "eligible"

    def blocking(self) -> tuple[Diagnostic, ...]:
        return tuple(r for r in self.reasons if r.severity == "error")

    def to_json(self) -> dict[str, Any]:
        return {**self.head_json(), "reasons": [r.to_json() for r in self.reasons]}

    def head_json(self) -> dict[str, Any]:
        """``to_json`` but its ``reasons``: a directory's document writes those from texts
        encoded once per diagnostic (``repository_document``)."""
        return {
            "capability_id": self.capability_id,
            "name": self.name,
            "class": self.klass,
            "can_generate_interface": self.can_generate_interface,
            **({"effects": self.effects.to_json()} if self.effects is not None else {}),
        }


@frozen(kw_only=True)
class ReadinessReport:
    module: str
    source: dict[str, Any]
    ir_digest: str
    assessments: tuple[Assessment, ...]
    requirements: tuple[str, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = field(default=())
    # The security effect kinds opted into (--allow); recorded when any.
    allow: tuple[str, ...] = ()
    # The module's service classes: (class, setup method or None); recorded when any.
    services: tuple[tuple[str, str | None], ...] = ()

    def assessment(self, name_or_id: str) -> Assessment | None:
        for a in self.assessments:
            if name_or_id in (a.name, a.capability_id):
                return a
        return None

    def to_json(self) -> dict[str, Any]:
        doc = self.head_json()
        summary = doc.pop("summary")  # the keys in their documented order
        doc["diagnostics"] = [d.to_json() for d in self.diagnostics]
        doc["summary"] = summary
        doc["assessments"] = [a.to_json() for a in self.assessments]
        return doc

    def head_json(self) -> dict[str, Any]:
        """``to_json`` but its ``diagnostics`` and ``assessments`` (see
        :meth:`Assessment.head_json`)."""
        counts = dict.fromkeys(CLASS_ORDER, 0)
        for a in self.assessments:
            counts[a.klass] += 1
        return {
            "schema": READINESS_SCHEMA,
            "module": self.module,
            "source": self.source,
            "ir_digest": self.ir_digest,
            "requirements": list(self.requirements),
            **({"allow": list(self.allow)} if self.allow else {}),
            **(
                {"services": [{"class": c, "setup": s} for c, s in self.services]}
                if self.services
                else {}
            ),
            "summary": counts,
        }


OrderKey = tuple[int, int, int, str, str]
# A reason with its key (``order``): reasons shared by many capabilities (a module's
# import-time risks, what importing it runs) are keyed once, not once per capability.
Keyed = tuple[OrderKey, Diagnostic]


def order(d: Diagnostic) -> OrderKey:
    """The one order of reasons: by place (cell, line, column), then code and message."""
    s = d.span
    return (s.cell or 0, s.line, s.column, d.code, d.message) if s else (0, 0, 0, d.code, d.message)


_KEY: Final = itemgetter(0)


def keyed(reasons: Iterable[Diagnostic]) -> list[Keyed]:
    """Each reason with its key, in their order; ``keyed(r)`` sorted by key is
    ``sorted(r, key=order)`` (sorting is stable), so a sorted keyed list of reasons shared
    by many capabilities can be joined to each one's own (:func:`in_order`)."""
    return [(order(r), r) for r in reasons]


def sorted_keyed(reasons: Iterable[Diagnostic]) -> list[Keyed]:
    """``keyed(reasons)`` sorted: joined to other reasons, a run :func:`in_order` merges."""
    return sorted(keyed(reasons), key=_KEY)


def in_order(reasons: list[Keyed]) -> tuple[Diagnostic, ...]:
    """The reasons (sorted here, by key only: stable, so equal keys keep their order)."""
    reasons.sort(key=_KEY)
    return tuple([r for _, r in reasons])


def classify(reasons: Iterable[Diagnostic]) -> ReadinessClass:
    """The class the reasons force: the strongest class of an error's code."""
    klass: ReadinessClass = "eligible"
    rank = 0
    for reason in reasons:
        entry = REGISTRY[reason.code]  # ``reason.entry``, without a property call per reason
        forced = entry.klass
        if forced and entry.severity == "error" and CLASS_ORDER[forced] > rank:
            klass, rank = forced, CLASS_ORDER[forced]
    return klass


def stronger(first: ReadinessClass, second: ReadinessClass) -> ReadinessClass:
    """The stronger class: ``classify(a + b)`` is ``stronger(classify(a), classify(b))``, so
    the class of reasons shared by many capabilities is computed once."""
    return second if CLASS_ORDER[second] > CLASS_ORDER[first] else first


class ReadinessPass:
    name: ClassVar[str] = "readiness"

    def run(
        self,
        ir: ModuleIR,
        env: Environment,
        ir_digest: str,
        diagnostics: tuple[Diagnostic, ...] = (),
        *,
        module_wide: list[Diagnostic] | None = None,
    ) -> ReadinessReport:
        """``diagnostics`` are the front end's (notebook magics, ...): the report carries
        them so that the bundle's ``readiness.json`` is the very document ``inspect`` prints.
        ``module_wide``: ``module_reasons(ir, env)`` when the caller has them already."""
        if module_wide is None:
            module_wide = module_reasons(ir, env)
        # every capability's: keyed, sorted and classified once (a capability's own reasons
        # come first, as ``sorted(own + module_wide, key=order)`` puts them on a tie)
        shared = sorted_keyed(module_wide)
        shared_class = classify(module_wide)
        index = module_index(ir)
        assessments = []
        for cap in ir.capabilities:
            subject = Subject(ir=ir, index=index, cap=cap, env=env)
            own = [r for rule in CAPABILITY_RULES.values() for r in rule(subject)]
            reasons = keyed(own)
            reasons += shared
            assessments.append(
                Assessment(
                    capability_id=cap.id,
                    name=cap.name,
                    klass=stronger(classify(own), shared_class),
                    reasons=in_order(reasons),
                    effects=tool_effects(cap),
                )
            )
        return ReadinessReport(
            module=ir.module,
            source=plain_fields(ir.source),  # plain fields: no converter needed
            ir_digest=ir_digest,
            assessments=tuple(assessments),
            requirements=env.declared_requirements,
            diagnostics=diagnostics,
            allow=tuple(sorted(env.allow)),
            services=tuple((s.name, s.setup) for s in ir.services),
        )


# -- module-wide rules ------------------------------------------------------------------------


def _import_reasons(ir: ModuleIR, env: Environment) -> Iterator[Diagnostic]:
    resolver = ImportResolver(env)
    for imp in ir.imports:
        if imp.scope == "" and not imp.guarded:
            found = resolver.problem(imp, C.R008_UNRESOLVED_IMPORT)
            if found:
                yield diag(found[0], found[1], imp.span)
    missing = list(fallbacks.missing(ir, resolver.provided))
    absent = fallbacks.group_numbers(missing)
    for cap in ir.capabilities:
        for dec in cap.decorators:
            if dec.identity_unless is not None and dec.identity_unless not in absent:
                yield diag(
                    C.R007_MODULE_EFFECT,
                    f"module-level decorator @{dec.text} evaluated at definition runs at "
                    "import: its import is provided, so it is the framework's decorator, "
                    "not the identity its ImportError handler defines",
                    dec.span,
                )
    for group, substitute in missing:
        if not substitute:
            yield diag(
                C.R008_UNRESOLVED_IMPORT,
                fallbacks.message(group, substitute) + declare_hint(env),
                group[0].span,
            )


ModuleRule = Callable[[ModuleIR, Environment], Iterable[Diagnostic]]

# The rules that apply to every capability of a module (its import-time risks), keyed by
# the first code of their family.
MODULE_RULES: Final[dict[str, ModuleRule]] = {
    "SVC-R007": effect_reasons,
    "SVC-R008": _import_reasons,
    "SVC-R023": lambda ir, _env: undefined_at_import(ir),
}


# -- capability rules -------------------------------------------------------------------------
def _decorators(s: Subject) -> Iterator[Diagnostic]:
    cap = s.cap
    absent: set[int] = set()
    if any(d.identity_unless is not None for d in cap.decorators):
        absent = fallbacks.missing_groups(s.ir, ImportResolver(s.env).provided)
    for dec in cap.decorators:
        if dec.identity_unless in absent:
            continue  # the identity its ImportError handler defines: keeps the signature
        if _is_cache(dec.text, s.ir):
            yield diag(
                C.R032_CACHED_CAPABILITY,
                f"@{dec.text} keeps {cap.name}'s signature; results are cached between calls "
                "in direct mode",
                dec.span,
            )
            continue
        yield diag(C.R001_DECORATED, f"decorator @{dec.text} may replace {cap.name}", dec.span)


def _is_cache(text: str, ir: ModuleIR) -> bool:
    """``@functools.cache``, ``@lru_cache(maxsize=N)`` (a literal), ``@ft.cache``, ..."""
    name = text.split("(", 1)[0].strip()
    if "(" in text and not _LITERAL_CALL.fullmatch(text):
        return False
    head, _, rest = name.partition(".")
    for imp in ir.imports:
        if imp.scope != "" or imp.module != "functools":
            continue
        if rest and not imp.names and head in ("functools",):
            return rest in ("cache", "lru_cache")
        if not rest and head in imp.names:
            return head in ("cache", "lru_cache")
    return False


_LITERAL_CALL = re.compile(
    r"[\w.]+\((?:\s*(?:maxsize\s*=\s*)?(?:None|\d+)\s*(?:,\s*typed\s*=\s*(?:True|False))?\s*)?\)"
)


def _guards(s: Subject) -> Iterator[Diagnostic]:
    cap = s.cap
    if cap.guards:
        yield diag(
            C.R006_CONDITIONAL_DEF,
            f"{cap.name} is defined under a module-level {cap.guards[-1]}",
            cap.span,
        )


def _bindings(s: Subject) -> Iterator[Diagnostic]:
    cap = s.cap
    for binding in s.index.bindings.get(cap.name, ()):
        if binding.kind == "def" and binding.span == cap.span:
            continue
        if binding.kind == "delete":
            yield diag(C.R003_DELETED, f"{cap.name} is deleted at module level", binding.span)
        else:
            yield diag(
                C.R002_REBOUND, f"{cap.name} is also bound here ({binding.kind})", binding.span
            )


def _global_rebind(s: Subject) -> Iterator[Diagnostic]:
    for write in s.index.globals.get(s.cap.name, ()):
        yield diag(
            C.R019_GLOBAL_REBIND,
            f"{write.function}() declares `global {s.cap.name}`",
            write.span,
        )


def _call_history(s: Subject) -> Iterator[Diagnostic]:
    for read in s.index.global_reads.get(s.cap.qualname, ()):
        writers = sorted({w.function for w in s.index.globals.get(read.name, ())})
        yield diag(
            C.R025_CALL_HISTORY,
            f"reads `{read.name}`, which {', '.join(f'{w}()' for w in writers)} "
            f"rebind{'s' if len(writers) == 1 else ''} through `global {read.name}`: "
            "what a call does depends on the calls before it",
            read.span,
        )


def _parameters(s: Subject) -> Iterator[Diagnostic]:
    for param in s.cap.params:
        if param.kind == "var_positional":
            yield diag(C.R014_VAR_POSITIONAL, f"*{param.name} has no named field", param.span)
            continue
        if param.kind == "var_keyword":
            yield diag(C.R015_VAR_KEYWORD, f"**{param.name} makes the input open-ended", param.span)
            continue
        if param.annotation is None:
            yield diag(
                C.R004_UNANNOTATED,
                f"parameter {param.name!r} has no annotation: any JSON value",
                param.span,
            )
        elif isinstance(param.type, AnyType):
            why = f"parameter {param.name!r} is {param.annotation}: any JSON value"
            yield diag(C.R005_ANY, why, param.span)
        if isinstance(param.type, AnyType):
            for use in param.uses:
                if use.kind in _CALLABLE_USES:
                    yield diag(
                        C.R020_UNTYPED_CALLABLE, _use_message(param.name, use.kind), use.span
                    )
                elif param.annotation is None:
                    yield diag(
                        C.R037_UNTYPED_OBJECT_USE,
                        _object_use_message(param.name, use),
                        use.span,
                    )
            continue  # any JSON value: not left out, and no leaf of it is a type reason
        if not left_out(param):  # else SVC-R052 (type_reasons)
            yield from _type_reasons(s.index, param.type, f"parameter {param.name!r}", param.span)


_CALLABLE_USES: Final = frozenset({"call", "isinstance", "issubclass", "decorator"})


def _form(s: Subject) -> Iterator[Diagnostic]:
    """A generator is served as a stream when it only yields items of a declared kind: a
    ``send()``-style one (a yield's value used) or one whose return annotation names no
    iterator of items is refused; items of any JSON value are a warning, as results are."""
    cap = s.cap
    if cap.form == "function":
        return
    code = C.R016_GENERATOR if cap.form == "generator" else C.R017_ASYNC_GENERATOR
    stream = cap.stream
    if stream is None:  # an IR written before streams were recorded
        yield diag(code, f"{cap.name} is a generator whose items are not recorded", cap.span)
        return
    if stream.sends is not None:
        yield diag(
            code,
            f"{cap.name} uses the value of a yield (a send()-style generator): a stream's "
            "client sends nothing back",
            stream.sends,
        )
    if not stream.iterator:
        yield diag(
            code,
            f"{cap.name} yields, but its return annotation {cap.returns.annotation!r} is no "
            "stream of items: annotate Iterator[T] (or Generator[T, None, None], "
            "AsyncIterator[T]; a generator's send type must be None)",
            cap.returns.span or cap.span,
        )
    elif isinstance(stream.item, AnyType):
        yield diag(
            C.R018_RETURN_TYPE,
            f"{cap.name}'s items have no JSON type "
            f"({stream.annotation or 'no item annotation'}); documented as any JSON value",
            stream.span or cap.returns.span or cap.span,
        )


def _return_type(s: Subject) -> Iterator[Diagnostic]:
    returns = answered(s.cap)
    if returns.span is None:
        return
    for leaf in iter_leaves(returns.type):
        if isinstance(leaf, UnresolvedType) or (
            isinstance(leaf, UnsupportedType) and leaf.reason in ENCODABLE_REASONS
        ):  # other unsupported leaves: SVC-R050 (type_reasons)
            yield diag(
                C.R018_RETURN_TYPE,
                f"{_answer(s.cap)} {leaf.text!r}: {_why(leaf)}; documented as any JSON value",
                returns.span,
            )
            return


def _answer(cap: Capability) -> str:
    """How a reason names what a capability answers."""
    return "return type" if cap.stream is None else "item type"


def _governed_return(s: Subject) -> Iterator[Diagnostic]:
    returns = answered(s.cap)
    if s.env.governed and returns.span is not None and never_json(returns.type):
        yield diag(
            C.R022_GOVERNED_RETURN,
            f"{_answer(s.cap)} {returns.annotation!r} can never be a JSON value, and "
            "governed workers return exactly JSON",
            returns.span,
        )


def _call_imports(s: Subject) -> Iterator[Diagnostic]:
    resolver = ImportResolver(s.env)
    for imp in s.index.imports.get(s.cap.qualname, ()):
        if not imp.guarded:
            found = resolver.problem(imp, C.R009_UNRESOLVED_CALL_IMPORT)
            if found:
                yield diag(found[0], found[1], imp.span)
    for group, substitute in _missing_fallbacks(s):
        if substitute and fallbacks.reaches(s.cap, group):
            yield diag(
                C.R009_UNRESOLVED_CALL_IMPORT,
                f"{s.cap.name} may call into a missing module: "
                + fallbacks.message(group, substitute)
                + declare_hint(s.env),
                group[0].span,
            )


def _missing_fallbacks(s: Subject) -> list[tuple[list[Import], bool]]:
    """``fallbacks.missing`` of the module in its environment, found once per module (kept
    with its index, for the environment last asked): every capability asks the same."""
    key = f"{__name__}.missing"
    cached: tuple[Environment, list[tuple[list[Import], bool]]] | None = s.index.derived.get(key)
    if cached is None or cached[0] is not s.env:
        found = []
        if any(i.fallback for i in s.ir.imports):
            found = list(fallbacks.missing(s.ir, ImportResolver(s.env).provided))
        cached = s.index.derived[key] = (s.env, found)
    return cached[1]


def _security(s: Subject) -> Iterator[Diagnostic]:
    """Security effects in the body (one code per kind); an allowed kind is a warning."""
    params = {p.name for p in s.cap.params}
    seen: set[str] = set()
    for effect in s.cap.effects:
        found = security_kind(effect, params)
        if found is None or found[0] in seen:
            continue
        kind, code = found
        seen.add(kind)
        what = effect.text
        if kind in s.env.allow:
            yield diag(
                C.R039_ALLOWED_EFFECT,
                f"{what}: {SECURITY_KINDS[kind]} (allowed: {kind})",
                effect.span,
            )
        else:
            yield diag(
                code,
                f"{what}: {SECURITY_KINDS[kind]}; serving it needs --allow {kind}",
                effect.span,
            )


def _command_line(s: Subject) -> Iterator[Diagnostic]:
    # ``parse_args(argv)`` with a parameter defaulting to None reads sys.argv on a call
    # from JSON that leaves it out
    maybe_none = {
        p.name for p in s.cap.params if p.default is not None and p.default.text == "None"
    }
    for effect in s.cap.effects:
        callee = effect.callee or ""
        parses = callee.endswith((".parse_args", ".parse_known_args")) and (
            not effect.names or bool(maybe_none & set(effect.names))
        )
        if parses or callee.startswith(("sys.argv", "sys.orig_argv", "sys.stdin")):
            yield diag(
                C.R038_COMMAND_LINE,
                f"{s.cap.name} reads the command line ({effect.text})",
                effect.span,
            )
            return
    for dec in s.cap.decorators:
        root = dec.text.split(".", 1)[0].split("(", 1)[0]
        if any(
            imp.module == "click" and (not imp.names or root in imp.names)
            for imp in s.ir.imports
            if imp.scope == ""
        ) and (root == "click" or root in {"command", "group", "argument", "option"}):
            yield diag(
                C.R038_COMMAND_LINE, f"@{dec.text} makes {s.cap.name} a click entry point", dec.span
            )
            return


def _removed_names(s: Subject) -> Iterator[Diagnostic]:
    """Names a library removed (SVC-R060; the table is ``REMOVED_NAMES``). Judged against
    the library as it is now: the verdict never depends on a version pin (requirements are
    known by name only, the same for ``inspect FILE`` and ``inspect DIR``)."""
    seen: set[str] = set()
    for effect in s.cap.effects:
        name = removed_name(effect.callee or "")
        if name is None or name in seen:
            continue
        seen.add(name)
        distribution, version, instead = REMOVED_NAMES[name]
        yield diag(
            C.R060_REMOVED_NAME,
            f"{s.cap.name} reads {name}, which {distribution} {version} removed: use {instead}",
            effect.span,
        )


def _unbound_names(s: Subject) -> Iterator[Diagnostic]:
    """Module names no statement of the served module binds, and body lines the notebook
    conversion removed (SVC-R061): every call fails, or differs from the notebook's."""
    for effect in s.cap.effects:
        callee = effect.callee or ""
        if callee.startswith(UNBOUND_PREFIX):
            yield diag(
                C.R061_UNBOUND_NAME,
                f"{s.cap.name}: {effect.text}, which nothing in the served module binds "
                "(NameError on every call)",
                effect.span,
            )
        elif callee == IPYTHON_REMOVED:
            yield diag(C.R061_UNBOUND_NAME, f"{s.cap.name}: {effect.text}", effect.span)


# One small function per rule, keyed by its first code; ``run`` applies them all, in this
# order (a rule's reasons are sorted by place afterwards). The types-and-results rules
# (SVC-R050..R054) are ``type_readiness.TYPE_RULES``.
CAPABILITY_RULES: Final[dict[str, CapabilityRule]] = {
    "SVC-R001": _decorators,
    "SVC-R006": _guards,
    "SVC-R002": _bindings,
    "SVC-R019": _global_rebind,
    "SVC-R025": _call_history,
    "SVC-R014": _parameters,
    "SVC-R016": _form,
    "SVC-R018": _return_type,
    "SVC-R022": _governed_return,
    **TYPE_RULES,
    "SVC-R009": _call_imports,
    "SVC-R033": _security,
    "SVC-R038": _command_line,
    "SVC-R042": lambda s: data_read_reasons(
        s.cap.effects, s.env.data_files, s.cap.file_reads, source_depth(s.ir), s.env.governed
    ),
    "SVC-R060": _removed_names,
    "SVC-R088": lambda s: pickled_model_reasons(
        s.ir, s.cap, s.env.data_files, s.env.declared_imports
    ),
    "SVC-R085": lambda s: service_reasons(
        s.ir, s.cap, s.env.governed, lambda service: _construction(s, service)
    ),
    "SVC-R061": _unbound_names,
    "SVC-R070": lambda s: undocumented_names(s.cap),
}


def _construction(s: Subject, service: ServiceDecl) -> list[Diagnostic]:
    """The :func:`construction_reasons` of ``service``, judged once per module and
    environment (kept with the module's index): every method of the class shares them, so
    the construction is judged once, not once per method."""
    memo: dict[tuple[str, frozenset[str], bool], list[Diagnostic]] = s.index.derived.setdefault(
        f"{__name__}.construction", {}
    )
    key = (service.name, s.env.data_files, s.env.governed)
    found = memo.get(key)
    if found is None:
        judge = module_judge(s.ir, s.env.data_files, s.env.governed)
        found = memo[key] = construction_reasons(
            service, lambda evaluations: first_effect(evaluations, {}, judge)
        )
    return found


def _type_reasons(index: ModuleIndex, node: TypeNode, what: str, span: Span) -> list[Diagnostic]:
    """Leaves of a parameter's type (and of the TypedDicts it names, once each) that no
    JSON value matches (unsupported) or that cannot be resolved (ambiguous)."""
    out: list[Diagnostic] = []
    noted = noted_names(index)  # the others reach nothing to report: not entered
    seen: set[str] = set()
    pending: list[tuple[TypeNode, str]] = [(node, what)]
    while pending:
        current, where = pending.pop()
        for leaf in iter_leaves(current):
            if isinstance(leaf, UnsupportedType):
                out.append(
                    diag(C.R011_UNSUPPORTED_TYPE, f"{where}: {leaf.text!r}: {leaf.reason}", span)
                )
            elif isinstance(leaf, UnresolvedType):
                code = (
                    C.R013_STAR_IMPORT_TYPE
                    if leaf.reason == "star-import"
                    else C.R012_UNRESOLVED_TYPE
                )
                out.append(diag(code, f"{where}: {leaf.text!r}: {_why(leaf)}", span))
            elif isinstance(leaf, ModelType) and leaf.name not in seen and leaf.name in noted:
                seen.add(leaf.name)
                decl = index.models.get(leaf.name)
                pending.extend(
                    (f.type, f"{where} field {leaf.name}.{f.attribute}")
                    for f in (decl.fields if decl is not None else ())
                )
            elif isinstance(leaf, TypedDictType) and leaf.name not in seen and leaf.name in noted:
                # a TypedDict type names a TypedDict the module defines (the front end makes
                # one only for such a name)
                seen.add(leaf.name)
                pending.extend(
                    (f.type, f"{where} field {leaf.name}.{f.name}")
                    for f in index.typed_dict_fields(leaf.name)
                )
    return out


def module_reasons(ir: ModuleIR, env: Environment) -> list[Diagnostic]:
    """The reasons that apply to every capability of ``ir`` (its import-time risks); the
    repository pass propagates them to the modules that import ``ir``."""
    return [r for rule in MODULE_RULES.values() for r in rule(ir, env)]


def _object_use_message(name: str, use: ParamUse) -> str:
    """Why no JSON value survives ``use`` of parameter ``name`` (or of a value taken from
    it: ``receiver``)."""
    on = use.receiver or name
    taken = f" (taken from {name!r})" if use.receiver else ""
    json_values = "(dict, list, str, number, bool, null)"
    what = {
        "attribute": f"reads {on}.{use.attribute}{taken}, which no JSON value {json_values} has",
        "method": f"calls {on}.{use.attribute}(...){taken}, which no JSON value {json_values} has",
        "attribute-subscript": f"subscripts {on}.{use.attribute}[...]{taken}, which no JSON "
        f"value {json_values} has",
        "tuple-subscript": f"indexes {on}{taken} by a tuple holding a slice (`[:, 0]`), which "
        f"arrays and frames take and no JSON value {json_values} does",
        "argument": f"passes {on}{taken} to {use.attribute}(), which needs an object no JSON "
        f"value {json_values} is",
    }[use.kind]
    return f"parameter {name!r} has no annotation and the body {what}"


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
