"""Name-keyed views of one ``ModuleIR``, built once per IR object.

The IR keeps its facts as tuples in source order (its canonical form). The passes and the
schema lowering ask "what rebinds this name", "which imports are inside this function",
"which TypedDict is called X" once per capability: answered by scanning the tuples, N
capabilities cost N x (size of the module). These maps answer each question in constant
time; they are built in one pass over the IR, once per IR object (a weak reference drops
them with the IR).

TypedDict fields are stored once, at the class that declares them, with the names of its
TypedDict bases (an inheritance chain of depth D would otherwise hold D²/2 fields);
:meth:`ModuleIndex.typed_dict_fields` gives a TypedDict's complete field list exactly as
Python's ``TypedDict`` builds ``__annotations__`` (bases in order, then its own fields;
a later definition of a name wins its value and keeps its first position).
"""

import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, TypeVar

from svcc.ir.model import (
    Binding,
    Capability,
    GlobalRead,
    GlobalWrite,
    Import,
    ModelDecl,
    ModuleIR,
    TypedDictDecl,
    TypedDictField,
)

T = TypeVar("T")


class ModuleIndex:
    """Lookups over one IR. Build with :func:`module_index` (memoised per IR object)."""

    __slots__ = (
        "_fields",
        "bindings",
        "capabilities",
        "derived",
        "global_reads",
        "globals",
        "imports",
        "models",
        "typed_dicts",
    )

    def __init__(self, ir: ModuleIR) -> None:
        self.capabilities: dict[str, Capability] = {}
        for cap in ir.capabilities:
            self.capabilities.setdefault(cap.name, cap)
            self.capabilities.setdefault(cap.id, cap)
        self.bindings: dict[str, list[Binding]] = _group(ir.bindings, lambda b: b.name)
        self.globals: dict[str, list[GlobalWrite]] = _group(ir.globals, lambda g: g.name)
        self.global_reads: dict[str, list[GlobalRead]] = _group(
            ir.global_reads, lambda r: r.function
        )
        self.imports: dict[str, list[Import]] = _group(ir.imports, lambda i: i.scope)
        self.typed_dicts: dict[str, TypedDictDecl] = {}
        for decl in ir.typed_dicts:
            self.typed_dicts.setdefault(decl.name, decl)
        self.models: dict[str, ModelDecl] = {}
        for model in ir.models:
            self.models.setdefault(model.name, model)
        self._fields: dict[str, tuple[TypedDictField, ...]] = {}
        # Views other layers derive from this IR (a back end's lowered TypedDict schemas),
        # keyed by their owner's name, so they too are computed once per IR object.
        self.derived: dict[str, Any] = {}

    def once(self, key: str, compute: Callable[[], T]) -> T:
        """``derived[key]``, computed by ``compute`` the first time it is asked: a fact of
        the whole module that every capability's judging asks again."""
        if key not in self.derived:
            self.derived[key] = compute()
        found: T = self.derived[key]
        return found

    def typed_dict_fields(self, name: str) -> tuple[TypedDictField, ...]:
        """Every field of TypedDict ``name``, inherited ones included (``KeyError`` when it is
        not declared). Memoised per requested name only, so walking a chain never stores
        every level's list."""
        found = self._fields.get(name)
        if found is None:
            found = flattened_fields(self.typed_dicts, name)
            self._fields[name] = found
        return found


def flattened_fields(
    typed_dicts: Mapping[str, TypedDictDecl], name: str
) -> tuple[TypedDictField, ...]:
    """The complete field list of ``typed_dicts[name]`` (see the module docstring): linear in
    the answer for single inheritance, each base's list built once for multiple inheritance."""
    return tuple(_flatten(typed_dicts, name, frozenset(), {}).values())


def _flatten(
    typed_dicts: Mapping[str, TypedDictDecl],
    name: str,
    active: frozenset[str],
    memo: dict[str, dict[str, TypedDictField]],
) -> dict[str, TypedDictField]:
    # Walk up the single-base part of the chain iteratively (no recursion per level),
    # then merge root first: base fields in order, each class's own fields after.
    chain = [typed_dicts[name]]
    seen = {name}
    while len(chain[-1].bases) == 1:
        base = chain[-1].bases[0]
        if base in seen or base in active or base not in typed_dicts:
            break
        seen.add(base)
        chain.append(typed_dicts[base])
    fields: dict[str, TypedDictField] = {}
    top = chain[-1]
    if len(top.bases) > 1:
        inner = active | seen
        for base in top.bases:
            if base not in inner and base in typed_dicts:
                if base not in memo:  # a diamond reaches it more than once
                    memo[base] = _flatten(typed_dicts, base, inner, memo)
                fields.update(memo[base])
    for decl in reversed(chain):
        fields.update((f.name, f) for f in decl.fields)
    return fields


def _group(items: Iterable[T], key: Callable[[T], str]) -> dict[str, list[T]]:
    out: dict[str, list[T]] = {}
    for item in items:
        out.setdefault(key(item), []).append(item)
    return out


_INDEXES: Final[dict[int, tuple["weakref.ref[ModuleIR]", ModuleIndex]]] = {}


def module_index(ir: ModuleIR) -> ModuleIndex:
    """The index of ``ir``, built on first use and kept while ``ir`` lives."""
    key = id(ir)
    entry = _INDEXES.get(key)
    if entry is not None and entry[0]() is ir:
        return entry[1]
    index = ModuleIndex(ir)
    _INDEXES[key] = (weakref.ref(ir, lambda _, key=key: _INDEXES.pop(key, None)), index)  # type: ignore[misc]
    return index
