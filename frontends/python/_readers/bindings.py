"""Names and where they come from: module-level bindings, the origins of the module's
names, the import statements (module level and inside classes and functions), the
``global`` declarations and the capabilities' reads of those globals."""

import ast

from svcc.frontends.python._readers.helpers import HelperReader
from svcc.frontends.python._readers.state import FunctionNode
from svcc.frontends.python._statements import (
    assigned_names,
    import_bindings,
    is_main_guard,
    is_type_checking,
    nested_bindings,
)
from svcc.frontends.python._walk import walk
from svcc.ir.model import Binding, BindingKind, GlobalRead, GlobalWrite, Import


class BindingReader(HelperReader):
    def _binds_of(self, stmt: ast.stmt) -> list[str]:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return [stmt.name]
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            return import_bindings(stmt)
        if isinstance(stmt, ast.Assign):
            out: list[str] = []
            for t in stmt.targets:
                out.extend(assigned_names(t) or [])
            return out
        if isinstance(stmt, ast.AnnAssign | ast.AugAssign):
            if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
                return []
            return assigned_names(stmt.target) or []
        return []

    def _bind_origins(self, stmt: ast.stmt) -> None:
        """Record the origins of the names ``stmt`` binds (module level, in order)."""
        origins = self._origins
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            origins[stmt.name] = f"local.{stmt.name}"
            self._functions[stmt.name] = stmt
        elif isinstance(stmt, ast.ClassDef):
            origins[stmt.name] = (
                f"typeddict.{stmt.name}"
                if stmt.name in self.symbols.typed_dicts
                else f"local.{stmt.name}"
            )
            self._class_nodes[stmt.name] = stmt
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            for name in import_bindings(stmt):
                origins.pop(name, None)  # the symbol table's qualified name
        elif (
            isinstance(stmt, ast.Assign | ast.AnnAssign)
            and stmt.value is not None
            and len(targets := stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]) == 1
            and isinstance(targets[0], ast.Name)
        ):
            origins[targets[0].id] = self._resolve(stmt.value)
            path = self._path_of(stmt.value)
            if path is None:
                self._paths.pop(targets[0].id, None)
            else:
                self._paths[targets[0].id] = path
        elif isinstance(stmt, ast.Try | ast.TryStar | ast.If) and not is_main_guard(
            getattr(stmt, "test", None) or ast.Constant(None)
        ):
            blocks = [*stmt.body, *stmt.orelse]
            if (live := self._live(stmt)) is not None:
                blocks = live
            elif not isinstance(stmt, ast.If):
                blocks += stmt.finalbody
                for handler in stmt.handlers:
                    blocks.extend(handler.body)
            for sub in blocks:
                self._bind_origins(sub)
        else:
            for name in nested_bindings(stmt):
                origins[name] = "?"

    def _bind(self, name: str, kind: BindingKind, guards: tuple[str, ...], node: ast.AST) -> None:
        # Only a capability's bindings reach the IR, and capabilities are public defs: other
        # names' nodes are not kept (they would keep every statement's tree alive).
        if name in self._def_names:
            self._bindings.append((name, kind, bool(guards), node))

    def _capability_bindings(self) -> tuple[Binding, ...]:
        """Module-level bindings of the names the passes judge: the capabilities' names.
        Other names' bindings are not recorded (a module binds thousands of them)."""
        names = set(self.capabilities)
        return tuple(
            Binding(name=name, kind=kind, conditional=conditional, span=self.src.span(node))
            for name, kind, conditional, node in self._bindings
            if name in names
        )

    def _record_import(
        self, stmt: ast.Import | ast.ImportFrom, scope: str, guarded: bool, type_checking: bool
    ) -> None:
        span = self.src.span(stmt)
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                self.imports.append(
                    Import(
                        module=alias.name,
                        names=(),
                        level=0,
                        scope=scope,
                        guarded=guarded,
                        type_checking=type_checking,
                        span=span,
                        fallback=self._fallback,
                    )
                )
            return
        self.imports.append(
            Import(
                module=stmt.module or "",
                names=tuple(a.name for a in stmt.names),
                level=stmt.level,
                scope=scope,
                guarded=guarded,
                type_checking=type_checking,
                span=span,
                fallback=self._fallback,
            )
        )

    def _mentions_import(self, node: ast.stmt) -> bool:
        """Whether the statement's lines hold the word ``import``: most classes import
        nothing, and reading their lines costs a fraction of walking every method's body
        (lowering class-heavy standard-library packages measured 12-20% slower with the walk
        on every class)."""
        return self.src.mentions(node, "import")

    def _scan_class(self, cls: ast.ClassDef, qualname: str, guarded: bool) -> None:
        """Imports in a module-level class: those of its body run at import (module scope,
        judged like any other), those of its methods when called (scope ``Class.method``).
        The IR records every import statement that can run, so a bundle carries the modules
        a class loads and nothing reads a module's imports a second time."""
        stack: list[tuple[ast.stmt, bool]] = [(s, guarded) for s in reversed(cls.body)]
        while stack:
            stmt, inner = stack.pop()
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                self._record_import(stmt, "", inner, False)
            elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self._scan_function(stmt, f"{qualname}.{stmt.name}", with_globals=False)
            elif isinstance(stmt, ast.ClassDef):
                self._scan_class(stmt, f"{qualname}.{stmt.name}", inner)
            elif isinstance(stmt, ast.If) and is_type_checking(stmt.test, self.symbols):
                stack.extend((s, True) for s in reversed(stmt.orelse))
            elif isinstance(stmt, ast.Try | ast.TryStar | ast.If):
                stack.extend((s, True) for s in reversed(_branches(stmt)))
            elif isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
                stack.extend((s, inner) for s in reversed([*stmt.body, *stmt.orelse]))
            elif isinstance(stmt, ast.With | ast.AsyncWith):
                stack.extend((s, inner) for s in reversed(stmt.body))
            elif isinstance(stmt, ast.Match):
                for case in reversed(stmt.cases):
                    stack.extend((s, inner) for s in reversed(case.body))

    def _scan_function(self, fn: FunctionNode, scope: str, *, with_globals: bool = True) -> None:
        """Imports and ``global`` declarations anywhere in the body (statements only); a
        method's ``global`` declarations are not recorded (no capability is a method)."""
        stack: list[tuple[ast.stmt, bool]] = [(s, False) for s in reversed(fn.body)]
        while stack:
            stmt, guarded = stack.pop()
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                self._record_import(stmt, scope, guarded, False)
            elif isinstance(stmt, ast.Global) and with_globals:
                span = self.src.span(stmt)
                for name in stmt.names:
                    self.globals.append(GlobalWrite(name=name, function=scope, span=span))
            elif isinstance(stmt, ast.Try | ast.TryStar | ast.If):
                stack.extend((s, True) for s in reversed(_branches(stmt)))
            elif isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
                stack.extend((s, guarded) for s in reversed([*stmt.body, *stmt.orelse]))
            elif isinstance(
                stmt,
                ast.With | ast.AsyncWith | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
            ):
                stack.extend((s, guarded) for s in reversed(stmt.body))
            elif isinstance(stmt, ast.Match):
                for case in reversed(stmt.cases):
                    stack.extend((s, guarded) for s in reversed(case.body))

    def _global_reads(self) -> tuple[GlobalRead, ...]:
        """Where a capability reads a module name that a function declares ``global``
        (first read per function and name). A name the capability binds itself, as a
        parameter, a local or through its own ``global`` (a lazily filled cache), is left
        out; the readiness pass judges what remains."""
        shared = {g.name for g in self.globals}
        if not shared:
            return ()
        own_writes: dict[str, set[str]] = {}
        for write in self.globals:
            own_writes.setdefault(write.function, set()).add(write.name)
        out: list[GlobalRead] = []
        for name, cap in self.capabilities.items():
            fn = self._capability_nodes[name]
            skip = own_writes.get(name, set()) | {p.name for p in cap.params}
            first: dict[str, ast.Name] = {}
            for stmt in fn.body:
                for node in walk(stmt):  # ``ast.walk``'s order: the first read is the same
                    if isinstance(node, ast.Name) and node.id in shared:
                        if isinstance(node.ctx, ast.Load):
                            first.setdefault(node.id, node)
                        else:
                            skip.add(node.id)  # a local of that name (or a nested scope's)
            out.extend(
                GlobalRead(name=n, function=name, span=self.src.span(node))
                for n, node in first.items()
                if n not in skip
            )
        return tuple(out)


def _branches(stmt: ast.Try | ast.TryStar | ast.If) -> list[ast.stmt]:
    """The statements of every branch of ``stmt``, in order: any of them may not run, so
    an import among them is guarded."""
    children: list[ast.stmt] = [*stmt.body, *stmt.orelse]
    if not isinstance(stmt, ast.If):
        children += stmt.finalbody
        for handler in stmt.handlers:
            children.extend(handler.body)
    return children
