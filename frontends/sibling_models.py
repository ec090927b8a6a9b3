"""Models imported from a sibling module get their JSON shape, as if defined beside the function.

The Python front end reads one module: an annotation naming a class another module defines
(``from shop.models import Size``) is a class it cannot see, so it records the annotation as
having no JSON shape. When that other module is one of the same repository or file closure,
this step (the front end's last, a linker's) asks the front end what the class is *in its own
module*: it lowers the sibling's source with one extra TypedDict appended whose fields are
annotated with the names asked for, so the class is read by the one reader of class bodies
(enums, dataclasses, pydantic models, TypedDicts), in its own module's symbol table, exactly
as if the function were written there. The shapes found replace the shapeless annotations,
and the declarations they need (a model's, a TypedDict's and theirs, transitively) are copied
into the importing module's IR under the class's absolute name (``shop.models.Size``), which
the served bundle's runtime imports (``svc_runtime.conversion``): a name with a dot is
``module.Class``. Their spans are the importing site's (the place a reason about them
points at is in the module being judged). A name the sibling re-exports from a third module
is followed the same way, a few modules deep (:data:`MAX_DEPTH`). Nothing is run; nothing
that is not a sibling module's source is read.
"""

import keyword
import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Final

import attrs
from svcc.ir.imports import package_of, resolve_relative
from svcc.ir.model import ModelDecl, ModuleIR, Span, TypedDictDecl, TypedDictField
from svcc.ir.types import (
    DictType,
    EnumType,
    ListType,
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
    from svcc.frontends.python import FrontendResult

# The front end's words for a class of another module (``_types.TypeResolver._qualified``).
_SHAPELESS: Final = re.compile(r"^`(\.*[A-Za-z_][\w.]*)` has no JSON shape$")
# Re-exports followed (``from shop import Size`` where ``shop/__init__.py`` imports it).
MAX_DEPTH: Final = 4
_PROBE: Final = "_SvccSiblingProbe"
_PROBE_TYPING: Final = "_svcc_sibling_probe_typing"

# A sibling module's source and whether it is a package (``__init__.py``), by dotted name.
SourceOf = Callable[[str], tuple[bytes, bool] | None]
Decl = ModelDecl | TypedDictDecl


def link_models(
    result: "FrontendResult",
    *,
    module: str,
    is_package: bool,
    source_of: SourceOf,
    python_version: tuple[int, int],
) -> "FrontendResult":
    """``result`` with every shapeless annotation naming a sibling module's class replaced
    by that class's shape (unchanged when there is none: no sibling is read then)."""
    ir = result.ir
    if ir is None or not any(True for _ in _wanted(ir)):
        return result
    linker = _Linker(source_of, python_version)
    linked = linker.link(ir, module, is_package, 0)
    return result if linked is ir else attrs.evolve(result, ir=linked)


def _type_sites(ir: ModuleIR) -> Iterator[tuple[TypeNode, Span | None]]:
    """Every type the IR holds, with the span of its site."""
    for cap in ir.capabilities:
        for param in cap.params:
            yield param.type, param.span
        yield cap.returns.type, cap.returns.span or cap.span
        if cap.stream is not None:
            yield cap.stream.item, cap.stream.span or cap.span
    for model in ir.models:
        for field in model.fields:
            yield field.type, field.span
    for typed in ir.typed_dicts:
        for item in typed.fields:
            yield item.type, item.span


def _wanted(ir: ModuleIR) -> Iterator[str]:
    """The qualified names the front end found no shape for (``.models.Size``)."""
    for node, _ in _type_sites(ir):
        for leaf in iter_leaves(node):
            if isinstance(leaf, UnsupportedType):
                match = _SHAPELESS.match(leaf.reason)
                if match:
                    yield match.group(1)


def _map(node: TypeNode, leaf: Callable[[TypeNode], TypeNode]) -> TypeNode:
    """``node`` with each leaf replaced by ``leaf(it)`` (the same object when none changes)."""
    if isinstance(node, ListType):
        item = _map(node.item, leaf)
        return node if item is node.item else attrs.evolve(node, item=item)
    if isinstance(node, DictType):
        value = _map(node.value, leaf)
        return node if value is node.value else attrs.evolve(node, value=value)
    if isinstance(node, TupleType):
        items = tuple(_map(i, leaf) for i in node.items)
        variadic = None if node.variadic is None else _map(node.variadic, leaf)
        if variadic is node.variadic and all(
            a is b for a, b in zip(items, node.items, strict=True)
        ):
            return node
        return attrs.evolve(node, items=items, variadic=variadic)
    if isinstance(node, UnionType):
        options = tuple(_map(o, leaf) for o in node.options)
        if all(a is b for a, b in zip(options, node.options, strict=True)):
            return node
        return attrs.evolve(node, options=options)
    return leaf(node)


def _absolute(qual: str, module: str, is_package: bool) -> str | None:
    level = len(qual) - len(qual.lstrip("."))
    if not level:
        return qual
    return resolve_relative(package_of(module, is_package), level, qual[level:])


Shape = tuple[TypeNode, dict[str, Decl]]


class Siblings:
    """A tree's modules' sources (each with ``module``, ``data`` and ``is_package``),
    indexed on first use (most modules never ask), and the shapes found in them, shared by
    every module of the tree lowered in this process: a sibling is lowered once per batch
    of names asked, not once per module importing from it."""

    def __init__(self, files: "Iterable[Any]") -> None:
        self._files = files
        self._index: dict[str, tuple[bytes, bool]] | None = None
        # (module, class name, Python version) → its shape, or None (no shape, or a cycle)
        self.shapes: dict[tuple[str, str, tuple[int, int]], Shape | None] = {}
        # (module, Python version) → the module lowered once with a probe field for each
        # name it binds at its top level (see ``_Linker._probe``)
        self.probes: dict[tuple[str, tuple[int, int]], Probe | None] = {}

    def __call__(self, module: str) -> tuple[bytes, bool] | None:
        if self._index is None:
            self._index = {f.module: (f.data, f.is_package) for f in self._files}
        return self._index.get(module)


def sources_of(files: "Iterable[Any]") -> Siblings:
    """The :class:`Siblings` of a tree's files."""
    return Siblings(files)


class _Linker:
    def __init__(self, source_of: SourceOf, python_version: tuple[int, int]) -> None:
        self.source_of = source_of
        self.version = python_version
        # (module, name, version) → the shape and the declarations it needs (absolute names)
        shared = source_of if isinstance(source_of, Siblings) else None
        self.shapes: dict[tuple[str, str, tuple[int, int]], Shape | None] = (
            {} if shared is None else shared.shapes
        )
        self.probes: dict[tuple[str, tuple[int, int]], Probe | None] = (
            {} if shared is None else shared.probes
        )

    def link(self, ir: ModuleIR, module: str, is_package: bool, depth: int) -> ModuleIR:
        """``ir`` (of ``module``) with the shapes its sibling modules give."""
        found = self._shapes(ir, module, is_package, depth)
        return _linked(ir, found) if found else ir

    def _shapes(self, ir: ModuleIR, module: str, is_package: bool, depth: int) -> dict[str, Shape]:
        """The shapes of what ``ir`` names in sibling modules, by qualified name, each
        sibling probed once for the names asked of it."""
        targets: dict[str, tuple[str, str]] = {}
        for qual in sorted(set(_wanted(ir))):
            target = _absolute(qual, module, is_package)
            owner, _, name = (target or "").rpartition(".")
            if owner and name.isidentifier() and depth < MAX_DEPTH:
                targets[qual] = (owner, name)
        missing: dict[str, list[str]] = {}
        for owner, name in targets.values():
            if (owner, name, self.version) not in self.shapes:
                missing.setdefault(owner, []).append(name)
        for owner, names in sorted(missing.items()):
            self._probe(owner, sorted(set(names)), depth)
        found: dict[str, Shape] = {}
        for qual, (owner, name) in targets.items():
            shape = self.shapes.get((owner, name, self.version))
            if shape is not None:
                found[qual] = shape
        return found

    def _probe(self, module: str, names: list[str], depth: int) -> None:
        """The shapes of ``names``, classes of ``module``, read in it with one lowering: one
        TypedDict field each (recorded as None first: a cycle of re-exports ends there)."""
        for name in names:
            self.shapes[(module, name, self.version)] = None
        found = self.source_of(module)
        if found is None:
            return
        data, is_package = found
        probed = self._probed(module, data, names)
        if probed is None:
            return
        ir, asked = probed
        # only what the probe reaches is linked in turn, not the sibling's own functions
        typed = tuple(asked if t.name == _PROBE else t for t in ir.typed_dicts)
        ir = attrs.evolve(ir, capabilities=(), typed_dicts=typed)
        ir = self.link(ir, module, is_package, depth + 1)
        linked = next((t for t in ir.typed_dicts if t.name == _PROBE), None)
        if linked is None or len(linked.fields) != len(names):
            return
        for name, field in zip(names, linked.fields, strict=True):
            self.shapes[(module, name, self.version)] = _shape_of(field.type, ir, module)

    def _probed(
        self, module: str, data: bytes, names: list[str]
    ) -> tuple[ModuleIR, TypedDictDecl] | None:
        """``module`` lowered with the probe, and the probe's declaration with one field per
        name of ``names``, in order (None: the probe has not one for each, as it had none).

        A module is asked for names again and again (the standard library's ``typing``, by
        most modules and through re-exports), each time one lowering of it. So the first
        probe of a module has a field for every name its text binds at its top level too,
        and a later one takes its fields from that lowering: each field is read on its own,
        so a field's type is the same among any others. A name the first probe had no field
        for is probed alone."""
        key = (module, self.version)
        if key not in self.probes:
            self.probes[key] = self._lowered(module, data, sorted({*names, *_bound_names(data)}))
        held = self.probes[key]
        if held is None or not all(n in held.fields for n in names):
            held = self._lowered(module, data, names)  # probed alone
        if held is None:
            return None
        fields = [f for n in names if (f := held.fields[n]) is not None]
        if len(fields) != len(names):
            return None  # as when probed alone: a name without its field
        return held.ir, attrs.evolve(held.decl, fields=tuple(fields))

    def _lowered(self, module: str, data: bytes, names: list[str]) -> "Probe | None":
        """``module``'s source with a probe field for each of ``names`` appended, lowered
        (None: it did not lower)."""
        from svcc.frontends.python import read_python

        fields = "".join(f"    f{i}: {name}\n" for i, name in enumerate(names))
        probe = (
            f"\n\nimport typing as {_PROBE_TYPING}\n\n\n"
            f"class {_PROBE}({_PROBE_TYPING}.TypedDict):\n{fields}"
        )
        result = read_python(
            data + probe.encode("ascii"),
            path=f"{module.replace('.', '/')}.py",
            module=module,
            python_version=self.version,
        )
        ir = result.ir
        decl = None if ir is None else next((t for t in ir.typed_dicts if t.name == _PROBE), None)
        if ir is None or decl is None:
            return None
        by_name = {f.name: f for f in decl.fields}
        return Probe(ir, decl, {name: by_name.get(f"f{i}") for i, name in enumerate(names)})


class Probe:
    """A module lowered with a probe: its IR, the probe's declaration, and the probe's
    field of each name asked (None: the front end made no field of it)."""

    __slots__ = ("decl", "fields", "ir")

    def __init__(
        self, ir: ModuleIR, decl: TypedDictDecl, fields: "dict[str, TypedDictField | None]"
    ) -> None:
        self.ir = ir
        self.decl = decl
        self.fields = fields


# A name bound at a line's start: a class, a function, an assignment or annotation target,
# or the last name of an import (``import a.b as c``, ``from x import y``, ``y, z``).
_BOUND: Final = re.compile(
    rb"^(?:(?:async[ \t]+)?def|class)[ \t]+([A-Za-z_]\w*)|^([A-Za-z_]\w*)[ \t]*(?::|=[^=])",
    re.M,
)
_IMPORTED: Final = re.compile(rb"^(?:from[ \t]+[\w.]+[ \t]+)?import[ \t]+([^\n#;]+)", re.M)
# names a probe field never asks (a soft keyword is a name)
_NOT_NAMES: Final = frozenset(keyword.kwlist)
MAX_PROBE_NAMES: Final = 2_000


def _bound_names(data: bytes) -> set[str]:
    """The names a module's text visibly binds at its top level (a cheap reading: a name
    missed is probed alone when asked, a name that is not one has a field of no shape)."""
    names: set[str] = set()
    for match in _BOUND.finditer(data):
        names.add((match.group(1) or match.group(2)).decode("ascii"))
    for match in _IMPORTED.finditer(data):
        for part in match.group(1).decode("ascii", "replace").strip("()\\ \t\r").split(","):
            words = part.split()
            if words and words[-1].isidentifier():  # ``a.b`` binds ``a``: found by the text
                names.add(words[-1])
    names -= _NOT_NAMES
    return set(sorted(names)[:MAX_PROBE_NAMES])


def _linked(ir: ModuleIR, found: dict[str, Shape]) -> ModuleIR:
    """``ir`` with each shapeless annotation ``found`` gives a shape for replaced, and the
    declarations those shapes need added (spans: the importing site's)."""
    added: dict[str, Decl] = {}

    def replace(anchor: Span | None) -> Callable[[TypeNode], TypeNode]:
        def leaf(node: TypeNode) -> TypeNode:
            if not isinstance(node, UnsupportedType):
                return node
            match = _SHAPELESS.match(node.reason)
            if match is None or match.group(1) not in found:
                return node
            shape, decls = found[match.group(1)]
            if isinstance(shape, UnsupportedType):
                return attrs.evolve(node, reason=shape.reason)
            for name, decl in decls.items():
                if name not in added:
                    added[name] = _respan(decl, anchor) if anchor is not None else decl
            return shape

        return leaf

    linked = _rewrite(ir, replace)
    models = tuple(d for d in added.values() if isinstance(d, ModelDecl))
    typed = tuple(d for d in added.values() if isinstance(d, TypedDictDecl))
    own = {d.name for d in ir.models} | {d.name for d in ir.typed_dicts}
    return attrs.evolve(
        linked,
        models=(*linked.models, *(d for d in models if d.name not in own)),
        typed_dicts=(*linked.typed_dicts, *(d for d in typed if d.name not in own)),
    )


def _shape_of(shape: TypeNode, ir: ModuleIR, module: str) -> Shape | None:
    """A probe field's type as the importing module takes it (None: no shape to give)."""
    if isinstance(shape, UnresolvedType):
        return None
    if isinstance(shape, UnsupportedType):
        return None if _SHAPELESS.match(shape.reason) else (shape, {})
    shape = _qualified(shape, module)
    return shape, _needed(shape, ir, module)


def _qualified(node: TypeNode, module: str) -> TypeNode:
    """Names of ``module``'s own classes made absolute (``Size`` → ``shop.models.Size``)."""

    def leaf(node: TypeNode) -> TypeNode:
        if isinstance(node, EnumType | ModelType | TypedDictType) and "." not in node.name:
            return attrs.evolve(node, name=f"{module}.{node.name}")
        return node

    return _map(node, leaf)


def _needed(shape: TypeNode, ir: ModuleIR, module: str) -> dict[str, Decl]:
    """The declarations ``shape`` needs, transitively, renamed as :func:`_qualified` does."""
    local: dict[str, Decl] = {d.name: d for d in ir.models}
    local |= {d.name: d for d in ir.typed_dicts}

    def absolute(name: str) -> str:
        return name if "." in name else f"{module}.{name}"

    by_absolute = {absolute(n): d for n, d in local.items()}
    out: dict[str, Decl] = {}
    pending = [shape]
    while pending:
        for leaf in iter_leaves(pending.pop()):
            if not isinstance(leaf, ModelType | TypedDictType) or leaf.name in out:
                continue
            decl = by_absolute.get(leaf.name)
            if decl is None:
                continue
            renamed: Decl
            if isinstance(decl, TypedDictDecl):
                renamed = attrs.evolve(
                    decl,
                    name=leaf.name,
                    fields=tuple(
                        attrs.evolve(f, type=_qualified(f.type, module)) for f in decl.fields
                    ),
                    bases=tuple(absolute(b) for b in decl.bases),
                )
                pending += [TypedDictType(name=b) for b in renamed.bases]
                pending += [f.type for f in renamed.fields]
            else:
                renamed = attrs.evolve(
                    decl,
                    name=leaf.name,
                    fields=tuple(
                        attrs.evolve(f, type=_qualified(f.type, module)) for f in decl.fields
                    ),
                )
                pending += [f.type for f in renamed.fields]
            out[leaf.name] = renamed
    return out


def _rewrite(
    ir: ModuleIR, replace: Callable[[Span | None], Callable[[TypeNode], TypeNode]]
) -> ModuleIR:
    """``ir`` with every type site's type mapped (its own site's span as the anchor)."""
    caps = []
    for cap in ir.capabilities:
        params = tuple(attrs.evolve(p, type=_map(p.type, replace(p.span))) for p in cap.params)
        anchor = cap.returns.span or cap.span
        returns = attrs.evolve(cap.returns, type=_map(cap.returns.type, replace(anchor)))
        stream = cap.stream
        if stream is not None:
            item = _map(stream.item, replace(stream.span or cap.span))
            stream = attrs.evolve(stream, item=item)
        caps.append(attrs.evolve(cap, params=params, returns=returns, stream=stream))

    def fields(decl: Any) -> Any:
        return attrs.evolve(
            decl,
            fields=tuple(attrs.evolve(f, type=_map(f.type, replace(f.span))) for f in decl.fields),
        )

    return attrs.evolve(
        ir,
        capabilities=tuple(caps),
        models=tuple(fields(d) for d in ir.models),
        typed_dicts=tuple(fields(d) for d in ir.typed_dicts),
    )


def _respan(value: Any, span: Span) -> Any:
    """``value`` (a declaration) with every span in it replaced by ``span``."""
    if isinstance(value, Span):
        return span
    if isinstance(value, tuple):
        return tuple(_respan(v, span) for v in value)
    if attrs.has(type(value)):
        changes = {}
        for field in attrs.fields(type(value)):
            current = getattr(value, field.name)
            if isinstance(current, Span | tuple) or attrs.has(type(current)):
                changes[field.name] = _respan(current, span)
        return attrs.evolve(value, **changes) if changes else value
    return value
