"""Readiness rules of the types and results svcc serves (codes SVC-R050..R059).

Kept apart from the general rules in ``readiness``, whose table takes :data:`TYPE_RULES`,
one entry per rule: a declared return type the result encoder cannot encode (R050, the verdict
holds the promise), a model whose fields cannot be read statically (R051), a parameter
left out of the interface (R052, see ``svcc.ir.interface``), a numpy or pandas type whose
library is not declared (R053), a parameter descriptor (``cog.Input``, ``Field``) that cannot
be read or applies to no value of its type (R055); and a parameter (R011) or result (R050)
reaching a chain of TypedDicts and models too long for any server to take
(:func:`chain_depths`).
"""

from collections.abc import Iterator
from typing import Final

from svcc.compiler.passes.rule_subject import CapabilityRule, Subject, available
from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics import codes as C
from svcc.ir.bounds import misplaced
from svcc.ir.index import ModuleIndex, module_index
from svcc.ir.interface import answered, left_out
from svcc.ir.model import Capability, ModuleIR, Parameter, Span
from svcc.ir.types import (
    DataFrameType,
    EnumType,
    ModelType,
    NdarrayType,
    SeriesType,
    TypedDictType,
    TypeNode,
    UnresolvedType,
    UnsupportedType,
    ValueType,
    iter_leaves,
)

# Class bases and decorators of pydantic models and dataclasses: library code, no user code
# runs when the class is defined (readiness's import-time rules treat them as plain).
MODEL_BASES: Final = ("pydantic.BaseModel", "pydantic.main.BaseModel")
MODEL_DECORATORS: Final = frozenset(
    f"pydantic.{name}"
    for name in (
        "field_validator", "model_validator", "validator", "root_validator", "computed_field",
        "field_serializer", "model_serializer", "functional_validators.field_validator",
        "functional_validators.model_validator",
    )
)  # fmt: skip

# Unsupported *return* leaves the encoder still writes (as arrays, as base64): a warning
# (SVC-R018, documented as any JSON value), not a refusal.
ENCODABLE_REASONS: Final = frozenset(
    {
        "sets are not JSON (use list)",
        "bytes are not JSON (annotate bytes: base64 text)",
        "type variables have no JSON shape",  # the value itself may be any JSON
    }
)
# Values governed workers can never return as-is (their results must already be JSON).
NEVER_JSON_KINDS: Final = (ValueType, EnumType, ModelType, NdarrayType, DataFrameType, SeriesType)
LIBRARIES: Final = {NdarrayType: "numpy", SeriesType: "pandas", DataFrameType: "pandas"}


# Parameter kinds built from the bundled classes or a library in the serving process
# (``runtime/conversion``): governed workers receive validated values only.
CONVERTED_KINDS: Final = (EnumType, ModelType, NdarrayType, DataFrameType, SeriesType)
CONVERTED_VALUES: Final = frozenset({"decimal.Decimal", "builtins.bytes"})


# Leaves some reason names (R011..R013 and R050 unsupported or unresolved, R051, R053 and
# R054 through the converted kinds, models among them).
NOTED_KINDS: Final = (UnsupportedType, UnresolvedType, *CONVERTED_KINDS)


def _noted(leaf: TypeNode) -> bool:
    return isinstance(leaf, NOTED_KINDS) or (
        isinstance(leaf, ValueType) and leaf.name in CONVERTED_VALUES
    )


def noted_names(index: ModuleIndex) -> frozenset[str]:
    """The TypedDicts and models whose fields (inherited ones included) reach a leaf some
    reason names, found once per IR: the walks per capability enter no other, since nothing
    there can be reported (n functions over a chain of n nested TypedDicts walked the whole
    chain per function: n^2). Each declaration's own fields are read once; a name is noted
    when a noted name is one of its fields' types or bases (a field overriding a base's
    only notes more: those walks are merely not cut)."""
    found: frozenset[str] | None = index.derived.get(__name__)
    if found is not None:
        return found
    users: dict[str, set[str]] = {}  # name -> the declarations whose fields or bases name it
    pending: list[str] = []
    declared: list[tuple[str, list[TypeNode], tuple[str, ...]]] = [
        (d.name, [f.type for f in d.fields], d.bases) for d in index.typed_dicts.values()
    ]
    declared += [(d.name, [f.type for f in d.fields], ()) for d in index.models.values()]
    for name, types, bases in declared:
        for base in bases:
            users.setdefault(base, set()).add(name)
        for node in types:
            for leaf in iter_leaves(node):
                if _noted(leaf):
                    pending.append(name)
                if isinstance(leaf, TypedDictType | ModelType):
                    users.setdefault(leaf.name, set()).add(name)
    noted: set[str] = set()
    while pending:
        name = pending.pop()
        if name not in noted:
            noted.add(name)
            pending.extend(users.get(name, ()))
    found = index.derived[__name__] = frozenset(noted)
    return found


# The most TypedDicts and models nested one in another that a served parameter or result may
# hold: a deeper chain is a valid module, but no call could reach it. MCP's transport takes
# 128 levels of JSON nesting (3 of them its envelope), REST's JSON parser 200, and the
# runtime's recursive validator build has its own limit near 600.
MAX_DECLARATION_CHAIN: Final = 100
_DECLARED: Final = (TypedDictType, ModelType)


def chain_depths(index: ModuleIndex) -> dict[str, int]:
    """For every TypedDict and model, how many levels of declarations its values nest: one
    for itself plus the deepest of its fields' declarations, inherited fields included (a
    base adds its fields, not a level); found once per IR, without recursion (a chain may be
    thousands long). An edge back into the chain being walked (a recursive type) counts
    nothing: a value of a recursive type ends where the data ends, and a chain through a
    cycle is never counted longer than it is (no working code refused)."""
    found: dict[str, int] | None = index.derived.get(f"{__name__}.chain")
    if found is not None:
        return found
    held: dict[str, list[str]] = {}  # the declarations a value's own fields hold
    bases: dict[str, tuple[str, ...]] = {}
    for d in index.typed_dicts.values():
        named = [leaf for f in d.fields for leaf in iter_leaves(f.type)]
        held[d.name] = [x.name for x in named if isinstance(x, _DECLARED)]
        bases[d.name] = d.bases
    for m in index.models.values():
        named = [leaf for f in m.fields for leaf in iter_leaves(f.type)]
        held[m.name] = [x.name for x in named if isinstance(x, _DECLARED)]
        bases[m.name] = ()
    depths: dict[str, int] = {}
    walking: set[str] = set()
    for root in held:
        stack = [(root, False)]
        while stack:
            name, done = stack.pop()
            if done:
                walking.discard(name)
                below = [depths.get(n, 0) for n in held[name] if n not in walking]
                inherited = [depths.get(n, 0) for n in bases[name] if n not in walking]
                depths[name] = max(1 + max(below, default=0), max(inherited, default=0))
            elif name not in depths and name not in walking and name in held:
                walking.add(name)
                stack.append((name, True))
                stack.extend((n, False) for n in (*held[name], *bases[name]))
    index.derived[f"{__name__}.chain"] = depths
    return depths


def _longest_chain(index: ModuleIndex) -> int:
    """The deepest of the module's declarations (:func:`chain_depths`), found once per IR:
    a module with none deeper than :data:`MAX_DECLARATION_CHAIN` (every module but a
    pathological one) has no capability to judge for it."""
    return index.once(f"{__name__}.longest", lambda: max(chain_depths(index).values(), default=0))


def _chain_reason(index: ModuleIndex, node: TypeNode, what: str) -> str | None:
    """Why ``node`` (a parameter's or the result's type) cannot be served: it reaches a chain
    of declarations longer than :data:`MAX_DECLARATION_CHAIN`; ``None`` when it does not."""
    depths = chain_depths(index)
    longest = max(
        (depths.get(leaf.name, 0) for leaf in iter_leaves(node) if isinstance(leaf, _DECLARED)),
        default=0,
    )
    if longest <= MAX_DECLARATION_CHAIN:
        return None
    return (
        f"{what} nests {longest} TypedDicts and models one in another (at most "
        f"{MAX_DECLARATION_CHAIN} are served: MCP takes 128 levels of JSON nesting, REST 200)"
    )


def reachable(ir: ModuleIR, node: TypeNode) -> Iterator[TypeNode]:
    """Every node of ``node``'s tree and of the TypedDicts and models it reaches (once), but
    the fields of those that reach nothing a reason names (:func:`noted_names`)."""
    index = module_index(ir)
    noted = noted_names(index)
    seen: set[str] = set()
    pending = [node]
    while pending:
        for leaf in iter_leaves(pending.pop()):
            yield leaf
            if isinstance(leaf, TypedDictType | ModelType) and leaf.name not in seen:
                seen.add(leaf.name)
                if leaf.name not in noted:
                    continue
                if isinstance(leaf, TypedDictType) and leaf.name in index.typed_dicts:
                    pending.extend(f.type for f in index.typed_dict_fields(leaf.name))
                elif isinstance(leaf, ModelType):
                    decl = index.models.get(leaf.name)
                    if decl is not None:
                        pending.extend(f.type for f in decl.fields)


def _needs_conversion(ir: ModuleIR, node: TypeNode) -> TypeNode | None:
    for leaf in reachable(ir, node):
        if isinstance(leaf, CONVERTED_KINDS) or (
            isinstance(leaf, ValueType) and leaf.name in CONVERTED_VALUES
        ):
            return leaf
    return None


def _governed_conversion(s: Subject) -> Iterator[Diagnostic]:
    """SVC-R054: governed workers receive validated JSON values only, never the objects a
    parameter is converted to in the serving process."""
    if not s.env.governed:
        return
    for param in s.cap.params:
        leaf = None if left_out(param) else _needs_conversion(s.ir, param.type)
        if leaf is not None:
            what = getattr(leaf, "name", leaf.KIND)
            yield diag(
                C.R054_GOVERNED_CONVERSION,
                f"parameter {param.name!r} needs a {what} object, which governed "
                "workers do not build (served in direct mode)",
                param.span,
            )


def _answered_what(cap: Capability) -> str:
    return "return type" if cap.stream is None else "item type"


def _unencodable_result(s: Subject) -> Iterator[Diagnostic]:
    """SVC-R050: a declared result (a stream's item, judged as a result is) the encoder
    cannot write: the verdict holds the promise that every call can be answered."""
    returns = answered(s.cap)
    if returns.span is None:
        return
    for leaf in reachable(s.ir, returns.type):
        if isinstance(leaf, UnsupportedType) and leaf.reason not in ENCODABLE_REASONS:
            yield diag(
                C.R050_RETURN_NOT_ENCODABLE,
                f"{_answered_what(s.cap)} {leaf.text!r}: {leaf.reason}; no call could be answered",
                returns.span,
            )
            return


def _served_types(cap: Capability) -> list[tuple[TypeNode, Span]]:
    """The types a capability's interface carries: its parameters' (but those left out)
    and its declared result's."""
    nodes = [(p.type, p.span) for p in cap.params if not left_out(p)]
    returns = answered(cap)
    if returns.span is not None:
        nodes.append((returns.type, returns.span))
    return nodes


def _any_array_type(ir: ModuleIR, index: ModuleIndex) -> bool:
    """Whether a type the module records (a capability's parameter, result or stream item,
    a TypedDict's or a model's field) has a numpy or pandas value in it, found once per IR:
    only then can a capability's served types reach one (:func:`reachable`)."""

    def arrays() -> bool:
        nodes = [f.type for d in index.typed_dicts.values() for f in d.fields]
        nodes += [f.type for d in index.models.values() for f in d.fields]
        for cap in ir.capabilities:
            nodes += [p.type for p in cap.params]
            nodes.append(cap.returns.type)
            if cap.stream is not None:
                nodes.append(cap.stream.item)
        return any(type(leaf) in LIBRARIES for node in nodes for leaf in iter_leaves(node))

    return index.once(f"{__name__}.arrays", arrays)


def _undeclared_array_library(s: Subject) -> Iterator[Diagnostic]:
    """SVC-R053: a numpy or pandas value whose library is not declared (said once)."""
    if not _any_array_type(s.ir, s.index):
        return  # no numpy or pandas value anywhere in the module (most modules)
    reported: set[str] = set()
    for node, span in _served_types(s.cap):
        for leaf in reachable(s.ir, node):
            library = LIBRARIES.get(type(leaf))
            if library is not None and library not in reported and not available(library, s.env):
                reported.add(library)
                yield diag(
                    C.R053_ARRAY_LIBRARY_UNDECLARED,
                    f"{leaf.KIND} values need {library}, which is not declared",
                    span,
                )


def _any_unreadable(index: ModuleIndex) -> bool:
    """Whether a model of the module has something that cannot be read (found once per IR):
    only such a model gives :func:`_unreadable_model` a reason."""
    return index.once(
        f"{__name__}.unreadable", lambda: any(d.unreadable for d in index.models.values())
    )


def _unreadable_model(s: Subject) -> Iterator[Diagnostic]:
    """SVC-R051: a model whose fields cannot be read statically (each said once)."""
    if not _any_unreadable(s.index):
        return  # no model of the module has a field that cannot be read (most modules)
    reported: set[str] = set()
    for node, _ in _served_types(s.cap):
        for leaf in reachable(s.ir, node):
            if isinstance(leaf, ModelType) and leaf.name not in reported:
                reported.add(leaf.name)
                decl = s.index.models.get(leaf.name)
                for item in decl.unreadable if decl is not None else ():
                    yield diag(
                        C.R051_MODEL_UNREADABLE,
                        f"model {leaf.name}: {item.text} is not a literal",
                        item.span,
                    )


def _declaration_chain(s: Subject) -> Iterator[Diagnostic]:
    """SVC-R011 (a parameter) and SVC-R050 (the result): a chain of TypedDicts and models
    nested deeper than any server takes (:data:`MAX_DECLARATION_CHAIN`)."""
    if _longest_chain(s.index) <= MAX_DECLARATION_CHAIN:
        return  # no chain of the module is too deep: none a capability reaches
    for param in s.cap.params:
        if not left_out(param):
            chain = _chain_reason(s.index, param.type, f"parameter {param.name!r}")
            if chain is not None:
                yield diag(C.R011_UNSUPPORTED_TYPE, chain, param.span)
    returns = answered(s.cap)
    if returns.span is not None:
        chain = _chain_reason(s.index, returns.type, f"the {_answered_what(s.cap)}")
        if chain is not None:
            yield diag(
                C.R050_RETURN_NOT_ENCODABLE, f"{chain}; no call could be answered", returns.span
            )


def _left_out(s: Subject) -> Iterator[Diagnostic]:
    """SVC-R052: a parameter with no JSON shape is left out of the interface (see
    ``svcc.ir.interface``); the function's default applies."""
    for param in s.cap.params:
        if left_out(param):
            yield diag(
                C.R052_PARAMETER_LEFT_OUT,
                f"parameter {param.name!r} ({param.annotation}) has no JSON shape: left out "
                "of the interface, the function's default applies",
                param.span,
            )


# The types-and-results rules, keyed by their first code (``readiness.CAPABILITY_RULES``
# applies them in this order; reasons are sorted by place afterwards).
def _descriptors(s: Subject) -> Iterator[Diagnostic]:
    """SVC-R055: what a parameter's ``Input(...)``/``Field(...)`` states that svcc cannot
    read, or would document and check on no value (a bound for another type)."""
    for param in s.cap.params:
        yield from _descriptor_reasons(param)


def _descriptor_reasons(param: Parameter) -> Iterator[Diagnostic]:
    found = param.input
    if found is None:
        return
    for item in found.unreadable:
        yield diag(C.R055_INPUT_UNREADABLE, f"parameter {param.name!r}: {item.text}", item.span)
    if left_out(param):
        return
    for why in misplaced(found, param.type):
        yield diag(C.R055_INPUT_UNREADABLE, f"parameter {param.name!r}: {why}", found.span)


TYPE_RULES: Final[dict[str, CapabilityRule]] = {
    "SVC-R054": _governed_conversion,
    "SVC-R050": _unencodable_result,
    "SVC-R053": _undeclared_array_library,
    "SVC-R051": _unreadable_model,
    "SVC-R011": _declaration_chain,
    "SVC-R055": _descriptors,
    "SVC-R052": _left_out,
}
