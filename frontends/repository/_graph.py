"""The module graph: every import of every module, resolved inside the repository or listed
as external.

Resolution follows Python's import system statically: ``import a.b`` and ``from a.b import c``
load ``a``, then ``a.b`` (and ``a.b.c`` when that is a module); a relative import is anchored at
the importing module's package. An import whose first component names a package or module of
the repository is local and must resolve to one of its modules (or namespace packages);
anything else is external and is judged against the standard library and the declared
dependencies by the readiness pass.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from attrs import frozen
from svcc.ir.imports import package_of, resolve_relative
from svcc.ir.model import Import, Span


@frozen(kw_only=True)
class Edge:
    """``importer`` loads ``target`` (a repository module) through the import at ``span``.

    ``scope`` is ``""`` for a module-level import, else the function's qualname."""

    importer: str
    target: str
    scope: str
    span: Span


@frozen(kw_only=True)
class Resolution:
    """One import statement resolved: local modules it loads, or why it does not resolve."""

    local: tuple[str, ...]
    external: str | None
    problem: str | None


def _span_fields(span: Span) -> tuple[int, int, int, int, int | None]:
    return span.line, span.column, span.end_line, span.end_column, span.cell


def _restored(
    modules: dict[str, bool],
    namespaces: frozenset[str],
    edges: dict[str, list[tuple[str, str, int, int, int, int, int | None]]],
    external: dict[str, set[str]],
    resolutions: dict[tuple[str, int], tuple[tuple[str, ...], str | None, str | None]],
) -> "ModuleGraph":
    """A :class:`ModuleGraph` from what its ``__reduce__`` wrote (nothing resolved again)."""
    graph = ModuleGraph(modules, namespaces, {})
    graph.external = external
    graph.resolutions = {
        key: Resolution(local=local, external=ext, problem=problem)
        for key, (local, ext, problem) in resolutions.items()
    }
    graph.edges = {
        module: [
            Edge(
                importer=module,
                target=target,
                scope=scope,
                span=Span(line=line, column=column, end_line=end_line, end_column=end, cell=cell),
            )
            for target, scope, line, column, end_line, end, cell in rows
        ]
        for module, rows in edges.items()
    }
    return graph


def parents(module: str) -> list[str]:
    """``a.b.c`` → ``["a", "a.b"]``: the packages Python imports before ``a.b.c``."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


class ModuleGraph:
    """Modules (dotted name → is-package), namespace packages, and the resolved edges."""

    def __init__(
        self,
        modules: dict[str, bool],
        namespaces: frozenset[str],
        imports: Mapping[str, Sequence[Import]],
    ) -> None:
        """``imports``: each lowered module's import statements (``ModuleIR.imports``)."""
        self.modules = modules
        self.namespaces = namespaces
        self.tops = frozenset(m.split(".", 1)[0] for m in [*modules, *namespaces])
        self.resolutions: dict[tuple[str, int], Resolution] = {}
        self.edges: dict[str, list[Edge]] = {m: [] for m in modules}
        self.external: dict[str, set[str]] = {m: set() for m in modules}
        for name, statements in imports.items():
            for index, imp in enumerate(statements):
                res = self.resolve(name, imp)
                self.resolutions[(name, index)] = res
                for target in res.local:
                    self.edges[name].append(
                        Edge(importer=name, target=target, scope=imp.scope, span=imp.span)
                    )
                if res.external:
                    self.external[name].add(res.external)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as plain tuples and strings, the records rebuilt on loading: the graph
        goes to every directory worker, and pickling its edges and resolutions one record
        at a time (27,000 of them for the standard library) was a fifth of a second of the
        parent's serial part, and as much again in each worker."""
        edges = {
            module: [(e.target, e.scope, *_span_fields(e.span)) for e in edges]
            for module, edges in self.edges.items()
        }
        resolutions = {key: (r.local, r.external, r.problem) for key, r in self.resolutions.items()}
        state = (self.modules, self.namespaces, edges, self.external, resolutions)
        return _restored, state

    def exists(self, name: str) -> bool:
        return name in self.modules or name in self.namespaces

    def loaded(self, target: str) -> list[str]:
        """The modules executed by importing ``target``: its parents that are regular
        packages (namespace packages run nothing), then ``target`` itself."""
        return [m for m in [*parents(target), target] if m in self.modules]

    def resolve(self, importer: str, imp: Import) -> Resolution:
        if imp.level > 0:
            package = package_of(importer, self.modules.get(importer, False))
            base = resolve_relative(package, imp.level, imp.module)
            shown = "." * imp.level + imp.module
            if base is None:
                problem = (
                    f"relative import {shown!r} goes beyond the top-level package"
                    if package
                    else f"relative import {shown!r} in a top-level module (no parent package): "
                    "Python refuses it; make the folder a package or import it absolutely"
                )
                return Resolution(local=(), external=None, problem=problem)
            return self._local(base, imp, shown)
        top = imp.module.split(".", 1)[0]
        if top in self.tops:
            return self._local(imp.module, imp, imp.module)
        return Resolution(local=(), external=imp.module, problem=None)

    def _local(self, base: str, imp: Import, shown: str) -> Resolution:
        if not base or not self.exists(base):
            return Resolution(
                local=(),
                external=None,
                problem=f"import {shown!r}: no module {base or shown!r} in the repository",
            )
        loaded = self.loaded(base)
        for name in imp.names:
            sub = f"{base}.{name}"
            if name != "*" and sub in self.modules:
                loaded.append(sub)
            elif name != "*" and sub in self.namespaces:
                continue
            elif base not in self.modules:
                # ``from namespace import x``: x must be a module (a namespace has no names)
                return Resolution(
                    local=(),
                    external=None,
                    problem=f"import {shown!r}: {name!r} is not a module of namespace {base!r}",
                )
        return Resolution(local=tuple(dict.fromkeys(loaded)), external=None, problem=None)

    def import_closure(self, starts: Iterable[str]) -> list[str]:
        """Every repository module executed when ``starts`` are imported (module-level
        imports, transitively; cycles terminate), in discovery order."""
        from collections import deque

        seen: dict[str, None] = {}
        pending = deque(m for s in starts for m in self.loaded(s))
        while pending:
            current = pending.popleft()
            if current in seen:
                continue
            seen[current] = None
            pending.extend(e.target for e in self.edges.get(current, []) if e.scope == "")
        return list(seen)

    def to_json(self) -> dict[str, object]:
        return {
            "modules": sorted(self.modules),
            "namespace_packages": sorted(self.namespaces),
            "edges": {
                m: sorted({e.target for e in edges}) for m, edges in sorted(self.edges.items())
            },
            "external": {m: sorted(ext) for m, ext in sorted(self.external.items()) if ext},
        }
