"""IR invariants: what every ``ModuleIR`` must satisfy, whoever built it.

Front ends are tested to produce valid IR and IR read back from JSON is checked too, so a
target can rely on these facts without re-checking them. A violation is a bug (or a
tampered document), reported with the path of each offending element.
"""

from svcc.ir.model import Capability, ModuleIR, SourceFormat, Span
from svcc.ir.schema import IR_SCHEMA
from svcc.ir.types import TypedDictType, TypeNode, iter_leaves

_KIND_ORDER = {
    "positional_only": 0,
    "positional_or_keyword": 1,
    "var_positional": 2,
    "keyword_only": 3,
    "var_keyword": 4,
}


class IRInvariantError(ValueError):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("invalid IR: " + "; ".join(problems))
        self.problems = problems


def _span(span: Span | None, fmt: SourceFormat, where: str, out: list[str]) -> None:
    if span is None:
        return
    if span.line < 1 or span.end_line < span.line or span.column < 0:
        out.append(f"span out of order @ {where}")
    if (span.cell is not None) != (fmt == "notebook"):
        out.append(f"cell must be set exactly for notebook sources @ {where}")


def problems(ir: ModuleIR) -> list[str]:
    out: list[str] = []
    fmt = ir.source.format
    if ir.schema != IR_SCHEMA:
        out.append(f"schema is {ir.schema!r}, expected {IR_SCHEMA!r} @ $.schema")
    declared = {t.name for t in ir.typed_dicts}
    _typed_dict_problems(ir, fmt, declared, out)
    out.extend(_inheritance_cycles(ir))
    capability_names = _capability_problems(ir, fmt, declared, out)
    for i, binding in enumerate(ir.bindings):
        if binding.name not in capability_names:
            out.append(f"binding of {binding.name!r}, not a capability @ $.bindings[{i}]")
    return out


def _undeclared(node: TypeNode, declared: set[str], where: str, out: list[str]) -> None:
    for leaf in iter_leaves(node):
        if isinstance(leaf, TypedDictType) and leaf.name not in declared:
            out.append(f"TypedDict {leaf.name!r} is not declared @ {where}")


def _typed_dict_problems(
    ir: ModuleIR, fmt: SourceFormat, declared: set[str], out: list[str]
) -> None:
    for i, decl in enumerate(ir.typed_dicts):
        where = f"$.typed_dicts[{i}]"
        _span(decl.span, fmt, where, out)
        names = [f.name for f in decl.fields]
        if len(set(names)) != len(names):
            out.append(f"duplicate field names @ {where}")
        for j, field in enumerate(decl.fields):
            _undeclared(field.type, declared, f"{where}.fields[{j}].type", out)
        for j, base in enumerate(decl.bases):
            if base not in declared:
                out.append(f"TypedDict base {base!r} is not declared @ {where}.bases[{j}]")


def _capability_problems(
    ir: ModuleIR, fmt: SourceFormat, declared: set[str], out: list[str]
) -> set[str]:
    """The capabilities' problems (into ``out``); their names, for the bindings'."""
    seen_ids: set[str] = set()
    capability_names = set()
    for i, cap in enumerate(ir.capabilities):
        where = f"$.capabilities[{i}]"
        _span(cap.span, fmt, where, out)
        if cap.id != f"python:{ir.module}:{cap.qualname}":
            out.append(f"id {cap.id!r} does not match module and qualname @ {where}.id")
        if cap.id in seen_ids:
            out.append(f"duplicate capability id {cap.id!r} @ {where}.id")
        seen_ids.add(cap.id)
        capability_names.add(cap.name)
        owner, dot, method = cap.name.rpartition(".")
        if not _public(method) or (dot and (not _public(owner) or ir.service(cap.name) is None)):
            out.append(
                f"capability name {cap.name!r} is not a public identifier or a method of a "
                f"service class @ {where}.name"
            )
        _parameter_problems(cap, fmt, declared, where, out)
        _undeclared(cap.returns.type, declared, f"{where}.returns.type", out)
        if cap.stream is not None and cap.form == "function":
            out.append(f"only a generator has a stream @ {where}.stream")
        if cap.stream is not None:
            _span(cap.stream.span, fmt, f"{where}.stream", out)
            _undeclared(cap.stream.item, declared, f"{where}.stream.item", out)
    return capability_names


def _parameter_problems(
    cap: Capability, fmt: SourceFormat, declared: set[str], where: str, out: list[str]
) -> None:
    params = cap.params
    if not params:
        return
    param_names = [p.name for p in params]
    if len(set(param_names)) != len(param_names):
        out.append(f"duplicate parameter names @ {where}.params")
    kinds = [p.kind for p in params]
    order = [_KIND_ORDER[k] for k in kinds]
    if order != sorted(order):
        out.append(f"parameter kinds out of order @ {where}.params")
    for kind in ("var_positional", "var_keyword"):
        if kinds.count(kind) > 1:
            out.append(f"more than one {kind} parameter @ {where}.params")
    for j, param in enumerate(params):
        _span(param.span, fmt, f"{where}.params[{j}]", out)
        _undeclared(param.type, declared, f"{where}.params[{j}].type", out)


def _public(name: str) -> bool:
    return name.isidentifier() and not name.startswith("_")


def _inheritance_cycles(ir: ModuleIR) -> list[str]:
    """TypedDicts that inherit from themselves, through any number of bases (one
    depth-first walk: each declaration is entered once)."""
    bases = {decl.name: decl.bases for decl in ir.typed_dicts}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    out: list[str] = []
    for i, decl in enumerate(ir.typed_dicts):
        if decl.name in state:
            continue
        stack = [(decl.name, iter(bases[decl.name]))]
        state[decl.name] = 1
        while stack:
            name, pending = stack[-1]
            base = next(pending, None)
            if base is None:
                state[name] = 2
                stack.pop()
            elif base in bases and state.get(base) == 1:
                out.append(f"TypedDict {base!r} inherits from itself @ $.typed_dicts[{i}].bases")
            elif base in bases and base not in state:
                state[base] = 1
                stack.append((base, iter(bases[base])))
    return out


def verify(ir: ModuleIR) -> ModuleIR:
    """Return ``ir`` unchanged, or raise :class:`IRInvariantError` listing every violation."""
    found = problems(ir)
    if found:
        raise IRInvariantError(found)
    return ir
