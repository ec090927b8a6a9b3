"""Readiness rules of the types and results svcc serves (codes SVC-R050..R059).

Kept apart from the general rules in ``readiness``, which calls :func:`type_reasons` once per
capability: a declared return type the result encoder cannot encode (R050, the verdict
holds the promise), a model whose fields cannot be read statically (R051), a parameter
left out of the interface (R052, see ``svcc.ir.interface``), a numpy or pandas type whose
library is not declared (R053), a parameter descriptor (``cog.Input``, ``Field``) that
cannot be read or applies to no value of its type (R055); and a parameter (R011) or result
(R050) reaching a chain of TypedDicts and models too long for any server to take
(:func:`chain_depths`).
"""

from collections.abc import Callable, Iterator
from typing import Final

from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics import codes as C
from svcc.ir.bounds import misplaced
from svcc.ir.index import ModuleIndex, module_index
from svcc.ir.interface import answered, left_out
from svcc.ir.model import Capability, ModuleIR, Parameter
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
# hold. A chain is a valid module, and readiness called a chain of 3,000 eligible, but no call
# could be made: MCP's transport takes 128 levels of JSON nesting (3 of them its envelope: a
# chain of 126 was refused on every call), REST's JSON parser 200 (every call a 422), and
# past about 600 the runtime's recursive validator build failed at startup.
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


def type_reasons(
    ir: ModuleIR, cap: Capability, available: Callable[[str], bool], governed: bool = False
) -> list[Diagnostic]:
    """The R050..R054 reasons of ``cap``; ``available(root)`` says an import resolves;
    ``governed``: generation with an execution policy."""
    index = module_index(ir)
    out: list[Diagnostic] = []
    if governed:
        for param in cap.params:
            leaf = None if left_out(param) else _needs_conversion(ir, param.type)
            if leaf is not None:
                what = getattr(leaf, "name", leaf.KIND)
                out.append(
                    diag(
                        C.R054_GOVERNED_CONVERSION,
                        f"parameter {param.name!r} needs a {what} object, which governed "
                        "workers do not build (served in direct mode)",
                        param.span,
                    )
                )
    returns = answered(cap)  # a stream's item, judged as a result is
    what = "return type" if cap.stream is None else "item type"
    if returns.span is not None:
        for leaf in reachable(ir, returns.type):
            if isinstance(leaf, UnsupportedType) and leaf.reason not in ENCODABLE_REASONS:
                out.append(
                    diag(
                        C.R050_RETURN_NOT_ENCODABLE,
                        f"{what} {leaf.text!r}: {leaf.reason}; no call could be answered",
                        returns.span,
                    )
                )
                break
    nodes = [(p.type, p.span) for p in cap.params if not left_out(p)]
    if returns.span is not None:
        nodes.append((returns.type, returns.span))
    reported: set[str] = set()
    for node, span in nodes:
        for leaf in reachable(ir, node):
            library = LIBRARIES.get(type(leaf))
            if library is not None and library not in reported and not available(library):
                reported.add(library)
                out.append(
                    diag(
                        C.R053_ARRAY_LIBRARY_UNDECLARED,
                        f"{leaf.KIND} values need {library}, which is not declared",
                        span,
                    )
                )
            if isinstance(leaf, ModelType) and leaf.name not in reported:
                reported.add(leaf.name)
                decl = index.models.get(leaf.name)
                for item in decl.unreadable if decl is not None else ():
                    out.append(
                        diag(
                            C.R051_MODEL_UNREADABLE,
                            f"model {leaf.name}: {item.text} is not a literal",
                            item.span,
                        )
                    )
    for param in cap.params:
        chain = (
            None
            if left_out(param)
            else _chain_reason(index, param.type, f"parameter {param.name!r}")
        )
        if chain is not None:
            out.append(diag(C.R011_UNSUPPORTED_TYPE, chain, param.span))
    if returns.span is not None:
        chain = _chain_reason(index, returns.type, f"the {what}")
        if chain is not None:
            out.append(
                diag(
                    C.R050_RETURN_NOT_ENCODABLE,
                    f"{chain}; no call could be answered",
                    returns.span,
                )
            )
    for param in cap.params:
        out.extend(_descriptor_reasons(param))
        if left_out(param):
            out.append(
                diag(
                    C.R052_PARAMETER_LEFT_OUT,
                    f"parameter {param.name!r} ({param.annotation}) has no JSON shape: left out "
                    "of the interface, the function's default applies",
                    param.span,
                )
            )
    return out


def _descriptor_reasons(param: Parameter) -> Iterator[Diagnostic]:
    """SVC-R055: what a parameter's ``Input(...)``/``Field(...)`` states that svcc cannot
    read, or would document and check on no value (a bound for another type)."""
    found = param.input
    if found is None:
        return
    for item in found.unreadable:
        yield diag(
            C.R055_INPUT_UNREADABLE,
            f"parameter {param.name!r}: {item.text}",
            item.span,
        )
    if left_out(param):
        return
    for why in misplaced(found, param.type):
        yield diag(C.R055_INPUT_UNREADABLE, f"parameter {param.name!r}: {why}", found.span)
