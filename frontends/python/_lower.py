"""A parsed module (``ast``) → ``ModuleIR``. Reads; never imports or evaluates.

Two passes over the top-level statements: the first builds the symbol table that
annotations resolve against (imports, TypedDicts, aliases, classes); the second
records the facts: statements with their import-time behaviour, bindings, imports,
classes, TypedDicts and the public functions (capabilities).

``ModuleLowerer`` is the driver: it walks the statements and hands each to the readers
(``_readers``), each owning one kind of fact over the state they share (``LowererState``).
The readers are base classes of the driver, one chain (symbols, paths, evaluations,
helpers, bindings, classes, parameter uses, capabilities), each using the ones before it:
their methods read and write the one state without passing it around, and a body moved
between them stays the same text.
"""

import ast
from collections.abc import Iterator, Sequence

from svcc.frontends.python._docstrings import get_docstring
from svcc.frontends.python._fallbacks import alternatives
from svcc.frontends.python._readers.capabilities import CapabilityReader, doc_text
from svcc.frontends.python._readers.state import FunctionNode
from svcc.frontends.python._statements import (
    assigned_names,
    bound_names,
    import_bindings,
    import_time_reads,
    is_main_guard,
    is_type_checking,
)
from svcc.frontends.python._walk import shared_walks
from svcc.ir.model import BindingKind, Fallback, ModuleIR, NameRead, Statement


def public_defs(stmt: ast.stmt) -> Iterator[str]:
    """Names of public functions defined by ``stmt`` at module level, inside any compound
    statement (a superset of what ``ModuleLowerer._collect`` records as capabilities)."""
    stack = [stmt]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef):
            if not current.name.startswith("_"):
                yield current.name
        elif isinstance(current, ast.If | ast.For | ast.AsyncFor | ast.While):
            stack.extend([*current.body, *current.orelse])
        elif isinstance(current, ast.Try | ast.TryStar):
            stack.extend([*current.body, *current.orelse, *current.finalbody])
            for handler in current.handlers:
                stack.extend(handler.body)
        elif isinstance(current, ast.With | ast.AsyncWith):
            stack.extend(current.body)
        elif isinstance(current, ast.Match):
            for case in current.cases:
                stack.extend(case.body)


# What ``public_defs`` finds anything in (exact types: the parser makes no subclasses): a
# function, or a block holding statements; a class or a simple statement has none.
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_DEFINES_NESTED = frozenset(
    {ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.TryStar, ast.With, ast.AsyncWith}
    | {ast.Match}
)


def _runtime_binds(stmt: ast.stmt, kind: str) -> Sequence[str]:
    """The names a module-level statement binds when the module runs: an ``if
    TYPE_CHECKING:`` block binds only what its ``else`` branch binds (a name its body
    defines for the type checker is unbound at run time: reading it at import is a
    ``NameError``)."""
    if kind == "type-checking" and isinstance(stmt, ast.If):
        return [name for sub in stmt.orelse for name in bound_names(sub)]
    return bound_names(stmt)


class ModuleLowerer(CapabilityReader):
    """A module's IR: its two passes, and the walk of module-level statements."""

    def lower(self) -> ModuleIR:
        try:
            with shared_walks():  # each body walked once, whichever readers walk it
                return self._lower()
        finally:
            # ``_reading`` holds bound methods of this lowerer (a reference cycle): cleared,
            # reference counting frees the lowerer and its syntax tree at once. Kept, each
            # module's whole tree waited for the cyclic collector, which a directory's
            # lowering pauses (``collection_paused``): 900 MB held for the standard library,
            # and the page faults of it a quarter of the CPU time.
            self._reading.clear()

    def _lower(self) -> ModuleIR:
        for position, stmt in enumerate(self._body()):
            if position == 0:
                self.docstring = get_docstring(ast.Module(body=[stmt], type_ignores=[]))
            if (
                isinstance(stmt, ast.ImportFrom)
                and stmt.module == "__future__"
                and any(a.name == "annotations" for a in stmt.names)
            ):
                self.future_annotations = True
            self.values.run(stmt)
            self._collect_symbols([stmt])
            if type(stmt) in _DEFINES_NESTED:  # a block: the functions defined inside it
                self._def_names.update(public_defs(stmt))
            elif isinstance(stmt, _FUNCTIONS) and not stmt.name.startswith("_"):
                self._def_names.add(stmt.name)
        for stmt in self._body():
            kind, detail, node, evaluations = self._classify(stmt)
            self.statements.append(
                Statement(
                    kind=kind,
                    detail=detail,
                    binds=tuple(dict.fromkeys(_runtime_binds(stmt, kind))),
                    span=self.src.span(node),
                    reads=tuple(
                        [
                            NameRead(name=name, span=self.src.span(read))
                            for name, read in import_time_reads(
                                stmt, not self.future_annotations
                            ).items()
                        ]
                    ),
                    evaluations=tuple(evaluations),
                )
            )
            self._collect(stmt, guards=(), guarded=False)
            self._bind_origins(stmt)
            self._module_names.add(stmt)
        return ModuleIR(
            module=self.module,
            source=self.source,
            docstring=doc_text(self.docstring),
            future_annotations=self.future_annotations,
            statements=tuple(self.statements),
            bindings=self._capability_bindings(),
            imports=tuple(self.imports),
            classes=tuple(self.classes),
            typed_dicts=tuple(self.typed_dicts.values()),
            globals=tuple(self.globals),
            capabilities=self._finished_capabilities(),
            global_reads=self._global_reads(),
            models=tuple(self.models.values()),
            helpers=self._helpers(),
            services=tuple(self.services.values()),
        )

    def _collect(
        self, stmt: ast.stmt, guards: tuple[str, ...], guarded: bool, type_checking: bool = False
    ) -> None:
        """Record the facts of a module-level statement; ``guards`` name the blocks around
        it, ``guarded`` whether it may not run (its imports are guarded)."""
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            if not type_checking:
                self._collect_function(stmt, guards)
        elif isinstance(stmt, ast.ClassDef):
            self._collect_class(stmt, guards, guarded, type_checking)
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            self._record_import(stmt, "", guarded or type_checking, type_checking)
            if not type_checking:
                for name in import_bindings(stmt):
                    self._bind(name, "import", guards, stmt)
        elif isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
            kind: BindingKind = "augassign" if isinstance(stmt, ast.AugAssign) else "assign"
            for name in self._binds_of(stmt):
                self._bind(name, kind, guards, stmt)
            if isinstance(stmt, ast.Assign):
                self._functional_typed_dict(stmt)
        elif isinstance(stmt, ast.If):
            self._collect_if(stmt, guards, guarded, type_checking)
        elif isinstance(stmt, ast.Try | ast.TryStar):
            self._collect_try(stmt, guards, type_checking)
        else:
            self._collect_block(stmt, guards, guarded)

    def _collect_function(self, stmt: FunctionNode, guards: tuple[str, ...]) -> None:
        self._bind(stmt.name, "def", guards, stmt)
        if self.src.mentions(stmt, "import") or self.src.mentions(stmt, "global"):
            self._scan_function(stmt, stmt.name)
        if not stmt.name.startswith("_"):
            self.capabilities.pop(stmt.name, None)  # the last definition wins
            self.capabilities[stmt.name] = self._capability(stmt, guards)
            self._capability_nodes[stmt.name] = stmt

    def _collect_class(
        self, stmt: ast.ClassDef, guards: tuple[str, ...], guarded: bool, type_checking: bool
    ) -> None:
        if type_checking:
            if stmt.name in self.symbols.typed_dicts:  # the checker's, served as a dict
                self._store_typed_dict(self._typed_dict(stmt))
            return
        self._bind(stmt.name, "class", guards, stmt)
        if self._mentions_import(stmt):
            self._scan_class(stmt, stmt.name, guarded)
        if stmt.name in self.symbols.typed_dicts:
            self._store_typed_dict(self._typed_dict(stmt))
        else:
            self.classes.append(self._class_decl(stmt))
            self._model(stmt)
            self._service(stmt, guards)

    def _collect_block(self, stmt: ast.stmt, guards: tuple[str, ...], guarded: bool) -> None:
        """A ``del``, a loop, a ``with`` or a ``match``: what it binds, and its blocks."""
        if isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                for name in assigned_names(target) or []:
                    self._bind(name, "delete", guards, stmt)
        elif isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
            self._collect_loop(stmt, guards, guarded)
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            for item in stmt.items:
                if item.optional_vars is not None:
                    for name in assigned_names(item.optional_vars) or []:
                        self._bind(name, "with", guards, stmt)
            for sub in stmt.body:
                self._collect(sub, (*guards, "with"), guarded)
        elif isinstance(stmt, ast.Match):
            for case in stmt.cases:
                for sub in case.body:
                    self._collect(sub, (*guards, "match"), guarded)

    def _collect_loop(
        self, stmt: ast.For | ast.AsyncFor | ast.While, guards: tuple[str, ...], guarded: bool
    ) -> None:
        if isinstance(stmt, ast.For | ast.AsyncFor):
            for name in assigned_names(stmt.target) or []:
                self._bind(name, "for", (*guards, "for"), stmt)
            for sub in [*stmt.body, *stmt.orelse]:
                self._collect(sub, (*guards, "for"), guarded)
        else:
            for sub in [*stmt.body, *stmt.orelse]:
                self._collect(sub, (*guards, "while"), guarded)

    def _collect_if(
        self, stmt: ast.If, guards: tuple[str, ...], guarded: bool, type_checking: bool
    ) -> None:
        if is_main_guard(stmt.test):
            return
        if is_type_checking(stmt.test, self.symbols):
            for sub in stmt.body:
                self._collect(sub, (*guards, "if"), True, type_checking=True)
            for sub in stmt.orelse:
                self._collect(sub, (*guards, "if"), True)
            return
        if (live := self.values.live(stmt)) is not None:  # a decided test: no guard
            for sub in live:
                self._collect(sub, guards, guarded, type_checking)
            return
        for sub in [*stmt.body, *stmt.orelse]:
            self._collect(sub, (*guards, "if"), True, type_checking)

    def _collect_try(
        self, stmt: ast.Try | ast.TryStar, guards: tuple[str, ...], type_checking: bool
    ) -> None:
        if (live := self.values.live(stmt)) is not None:  # a decided import fallback
            for sub in live:
                self._collect(sub, guards, True, type_checking)
            return
        # Only a ``try`` that runs whenever the module does: one under an undecided
        # ``if`` (or inside another ``try``, whose handler may catch its failure) keeps
        # its imports guarded, as a plain import there is.
        grouped = {} if type_checking or guards else self._fallbacks(stmt)
        parts = [*stmt.body, *stmt.orelse, *stmt.finalbody]
        for handler in stmt.handlers:
            parts.extend(handler.body)
        for sub in parts:
            self._fallback = grouped.get(id(sub))
            self._collect(sub, (*guards, "try"), True, type_checking)
            self._fallback = None

    def _fallbacks(self, stmt: ast.Try | ast.TryStar) -> dict[int, Fallback]:
        """The alternative each import of an import fallback is of, by the import's
        ``id`` (judged together: see ``_fallbacks``); empty when ``stmt`` is none."""
        found = alternatives(stmt, self.symbols.qualify)
        grouped: dict[int, Fallback] = {}
        if found is not None:
            bodies, substitute = found
            group = self._fallback_groups
            self._fallback_groups += 1
            self._fallback_group_at[(stmt.lineno, stmt.col_offset)] = group
            for n, body in enumerate(bodies):
                for sub in body:
                    if isinstance(sub, ast.Import | ast.ImportFrom):
                        grouped[id(sub)] = Fallback(
                            group=group, alternative=n, substitute=substitute
                        )
        return grouped
