"""A parsed module (``ast``) → ``ModuleIR``. Reads; never imports or evaluates.

Two passes over the top-level statements: the first builds the symbol table that
annotations resolve against (imports, TypedDicts, aliases, classes); the second
records the facts: statements with their import-time behaviour, bindings, imports,
classes, TypedDicts and the public functions (capabilities).
"""

import ast
import re
from collections.abc import Callable, Iterable, Iterator
from functools import cache

import attrs
from svcc.contracts.names import is_utf8
from svcc.frontends.python._descriptions import annotation_description, described
from svcc.frontends.python._effects import (
    argument_names,
    literal_argument,
    origin,
    plain_facts,
    recorded,
)
from svcc.frontends.python._evaluator import ModuleValues
from svcc.frontends.python._fallbacks import alternatives
from svcc.frontends.python._file_paths import (
    FILE,
    FilePath,
    ir_path,
    join,
    normalised,
    parent,
    with_name,
)
from svcc.frontends.python._inputs import Source as InputSource
from svcc.frontends.python._inputs import with_input
from svcc.frontends.python._models import (
    ModelReader,
    classify,
    enum_values,
    harmless_field_call,
)
from svcc.frontends.python._param_flow import object_uses
from svcc.frontends.python._reach import Reach
from svcc.frontends.python._read_calls import CalledReads
from svcc.frontends.python._services import (
    changes_instance,
    construction_bodies,
    is_candidate,
    meant_as_service,
    required_parameters,
    service_methods,
    setup_method,
    state_writes,
)
from svcc.frontends.python._source import SourceText, short
from svcc.frontends.python._statements import (
    assigned_names,
    first_code_running,
    import_bindings,
    import_time_reads,
    is_literal,
    is_main_guard,
    is_name_chain,
    is_type_checking,
    is_type_expression,
    is_typing_constructor,
    nested_bindings,
)
from svcc.frontends.python._types import (
    CLASS_HINT,
    REQUIREDNESS,
    TYPEDDICT,
    Symbols,
    TypeResolver,
    printable,
    typing_names,
)
from svcc.frontends.python._walk import children, walk
from svcc.frontends.python.data_reads import Body, path_operand
from svcc.frontends.python.path_arguments import PathFlow, with_path_reads
from svcc.frontends.python.unbound import ModuleNames, with_unbound_reads
from svcc.ir.model import (
    Binding,
    BindingKind,
    Capability,
    ClassDecl,
    Decorator,
    Default,
    Evaluation,
    Fallback,
    FileRead,
    FunctionForm,
    GlobalRead,
    GlobalWrite,
    Helper,
    Import,
    ModelDecl,
    ModuleIR,
    NameRead,
    Parameter,
    ParamKind,
    ParamUse,
    ParamUseKind,
    Returns,
    ServiceDecl,
    SourceInfo,
    Span,
    Statement,
    StatementKind,
    StateWrite,
    Stream,
    TypedDictDecl,
    TypedDictField,
)
from svcc.ir.types import AnyType, TypeNode, UnsupportedType, plain_json

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

_NEWTYPE = typing_names("NewType")
_TYPEVARS = typing_names("TypeVar", "ParamSpec", "TypeVarTuple")
_NAMEDTUPLE = typing_names("NamedTuple")


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


_DESCRIPTIONS: dict[type, str] = {
    ast.For: "for loop",
    ast.AsyncFor: "async for loop",
    ast.While: "while loop",
    ast.With: "with statement",
    ast.AsyncWith: "async with statement",
    ast.Delete: "del statement",
    ast.AugAssign: "augmented assignment",
    ast.Raise: "raise statement",
    ast.Assert: "assert statement",
    ast.Match: "match statement",
    ast.Global: "global statement",
    ast.Nonlocal: "nonlocal statement",
    ast.Await: "await expression",
    ast.ListComp: "comprehension",
    ast.SetComp: "comprehension",
    ast.DictComp: "comprehension",
    ast.GeneratorExp: "generator expression",
    ast.NamedExpr: "assignment expression",
    ast.If: "if block",
}


def _runtime_binds(stmt: ast.stmt, kind: str) -> list[str]:
    """The names a module-level statement binds when the module runs: an ``if
    TYPE_CHECKING:`` block binds only what its ``else`` branch binds (a name its body
    defines for the type checker is unbound at run time: reading it at import is a
    ``NameError``)."""
    if kind == "type-checking" and isinstance(stmt, ast.If):
        return [name for sub in stmt.orelse for name in nested_bindings(sub)]
    return nested_bindings(stmt)


class ModuleLowerer:
    def __init__(
        self,
        tree: ast.Module | Callable[[], Iterable[ast.stmt]],
        src: SourceText,
        *,
        module: str,
        source: SourceInfo,
    ) -> None:
        # The top-level statements, read once per pass: a parsed module, or a function that
        # reads them a slice at a time (long modules: see ``_chunks.SlicedModule``).
        self._body = (lambda: tree.body) if isinstance(tree, ast.Module) else tree
        self.src = src
        self.module = module
        self.source = source
        self.symbols = Symbols()
        self.types = TypeResolver(self.symbols, src.segment)
        self.future_annotations = False
        self.docstring: str | None = None
        # Public names a module-level ``def`` binds: only their bindings are kept (see _bind).
        self._def_names: set[str] = set()
        self.statements: list[Statement] = []
        # (name, kind, conditional, node): materialised only for capability names (see lower()).
        self._bindings: list[tuple[str, BindingKind, bool, ast.AST]] = []
        self.imports: list[Import] = []
        self.classes: list[ClassDecl] = []
        self.typed_dicts: dict[str, TypedDictDecl] = {}
        self.models: dict[str, ModelDecl] = {}
        self._td_dependents: dict[str, set[str]] = {}  # TypedDict name -> names inheriting it
        self.globals: list[GlobalWrite] = []
        self._capability_nodes: dict[str, FunctionNode] = {}
        # by class name, in definition order (a class defined again moves to the end)
        self.services: dict[str, ServiceDecl] = {}
        self._service_capabilities: dict[str, list[str]] = {}  # class -> its capabilities
        # methods that change their instance: the next call sees it (``<state>`` in reach)
        self._instance_changers: set[str] = set()
        self.capabilities: dict[str, Capability] = {}
        # Origins of the module's own names bound so far (see ``_effects``), and the
        # module-level functions and classes, for the helpers module-level code calls.
        self._origins: dict[str, str] = {}
        # Module-level names bound to paths built from ``__file__`` (see ``_path_of``).
        self._paths: dict[str, FilePath] = {}
        self._functions: dict[str, FunctionNode] = {}
        self._class_nodes: dict[str, ast.ClassDef] = {}
        # Per capability: its body's reads, its calls and the reads through a name bound
        # more than once (``_param_uses``), for ``_file_reads``.
        self._reading: dict[str, tuple[Body, list[ast.Call], list[FileRead]]] = {}
        self._module_names = ModuleNames()  # what the served module binds (see _unbound)
        # What import-time code computes, read in the first pass (see ``_evaluator``).
        major, minor = source.python_version.split(".")
        self.values = ModuleValues(self.symbols.qualify, (int(major), int(minor)), module)
        # The alternative the import being recorded is of (see ``_fallbacks``).
        self._fallback: Fallback | None = None
        self._fallback_groups = 0
        self._fallback_group_at: dict[tuple[int, int], int] = {}  # a ``try``'s position

    # -- pass 1: symbols --------------------------------------------------------------------
    def _collect_symbols(self, body: list[ast.stmt], type_checking: bool = False) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                self._symbol_import(stmt)
            elif isinstance(stmt, ast.ClassDef):
                self._symbol_class(stmt)
                if type_checking:
                    self._checker_only_class(stmt.name)
            elif isinstance(stmt, ast.Assign | ast.AnnAssign):
                self._symbol_assign(stmt)
            elif isinstance(stmt, ast.If):
                if not is_main_guard(stmt.test):
                    checker = type_checking or is_type_checking(stmt.test, self.symbols)
                    if not checker and (live := self.values.live(stmt)) is not None:
                        self._collect_symbols(live)
                        continue
                    self._collect_symbols(stmt.body, checker)
                    self._collect_symbols(stmt.orelse, type_checking)
            elif isinstance(stmt, ast.Try | ast.TryStar):
                if (live := self.values.live(stmt)) is not None:
                    self._collect_symbols(live)
                    continue
                self._collect_symbols(stmt.body)
                for handler in stmt.handlers:
                    self._collect_symbols(handler.body)
                self._collect_symbols(stmt.orelse)
                self._collect_symbols(stmt.finalbody)

    def _symbol_import(self, stmt: ast.Import | ast.ImportFrom) -> None:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    self.symbols.imports[alias.asname] = alias.name
                else:
                    head = alias.name.split(".", 1)[0]
                    self.symbols.imports[head] = head
            return
        base = ("." * stmt.level) + (stmt.module or "")
        for alias in stmt.names:
            if alias.name == "*":
                self.symbols.star_import = True
                continue
            sep = "" if base.endswith(".") else "."
            self.symbols.imports[alias.asname or alias.name] = f"{base}{sep}{alias.name}"

    def _symbol_class(self, stmt: ast.ClassDef) -> None:
        self.symbols.imports.pop(stmt.name, None)
        self.symbols.aliases.pop(stmt.name, None)
        if self._is_typeddict_class(stmt):
            self.symbols.typed_dicts.add(stmt.name)
            self.symbols.classes.pop(stmt.name, None)
            return
        self.symbols.typed_dicts.discard(stmt.name)
        self.symbols.enums.pop(stmt.name, None)
        self.symbols.models.pop(stmt.name, None)
        form = classify(stmt, self.symbols)
        if form == "enum":
            self.symbols.enums[stmt.name] = enum_values(stmt, self.symbols)
        elif form is not None:
            self.symbols.models[stmt.name] = form
        self.symbols.classes[stmt.name] = f"class `{stmt.name}` is not a JSON type ({CLASS_HINT})"

    def _checker_only_class(self, name: str) -> None:
        """A class defined under ``if TYPE_CHECKING:`` does not exist when the server runs. A
        TypedDict is still a type the server can serve (a plain ``dict`` at run time, its
        schema in the IR); a dataclass, model, enum or other class must be built by the
        server from its class, so an annotation naming it is refused (``SVC-R011``)."""
        if name in self.symbols.typed_dicts:
            return
        self.symbols.enums.pop(name, None)
        self.symbols.models.pop(name, None)
        self.symbols.classes[name] = (
            f"class `{name}` is defined only under `if TYPE_CHECKING:`, so it does not exist "
            "when the server runs (define it at module level)"
        )

    def _is_typeddict_class(self, stmt: ast.ClassDef) -> bool:
        for base in stmt.bases:
            qual = self.symbols.qualify(base)
            if qual in TYPEDDICT or (qual or "").startswith("typeddict."):
                return True
        return False

    def _symbol_assign(self, stmt: ast.Assign | ast.AnnAssign) -> None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if len(targets) != 1 or not isinstance(targets[0], ast.Name) or stmt.value is None:
            return
        name, value = targets[0].id, stmt.value
        if isinstance(value, ast.Call):
            func = self.symbols.qualify(value.func)
            if func in TYPEDDICT:
                self.symbols.typed_dicts.add(name)
            elif func in _NEWTYPE and len(value.args) == 2:
                self.symbols.aliases[name] = value.args[1]
            elif func in _TYPEVARS:
                self.symbols.classes[name] = "type variables have no JSON shape"
            return
        if is_type_expression(value, self.symbols) and not (
            isinstance(value, ast.Constant) and isinstance(value.value, str)
        ):
            self.symbols.aliases[name] = value

    # -- pass 2: facts ----------------------------------------------------------------------
    def lower(self) -> ModuleIR:
        try:
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
                self.docstring = ast.get_docstring(
                    ast.Module(body=[stmt], type_ignores=[]), clean=True
                )
            if (
                isinstance(stmt, ast.ImportFrom)
                and stmt.module == "__future__"
                and any(a.name == "annotations" for a in stmt.names)
            ):
                self.future_annotations = True
            self.values.run(stmt)
            self._collect_symbols([stmt])
            self._def_names.update(public_defs(stmt))
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
            docstring=_doc(self.docstring),
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

    # Statement classification ------------------------------------------------------------
    # Shapes and what they evaluate are facts; which evaluations are harmless (a known pure
    # decorator, a plain base class) is the readiness pass's rule.
    def _code(self, text: str, node: ast.AST) -> Evaluation:
        return Evaluation(kind="code", text=text, span=self.src.span(node))

    def _resolve(self, node: ast.expr) -> str:
        return origin(node, self.symbols.qualify, self._origins)

    def _evaluate(self, value: ast.expr, node: ast.AST, text: str) -> list[Evaluation]:
        """What evaluating ``value`` runs: one ``call`` per call and one ``read`` per dotted
        name it reads when every other part is plain, else one ``code`` evaluation (``text``
        at ``node``). The first call keeps ``text``; the others are ``call to NAME()``."""
        facts = plain_facts(value, self._resolve)
        if facts is None:
            return [self._code(text, node)]
        calls, reads = facts
        return self._facts(calls, reads, text, self._resolve)

    def _facts(
        self,
        calls: list[ast.Call],
        reads: list[tuple[str, ast.AST]],
        text: str,
        resolve: Callable[[ast.expr], str],
    ) -> list[Evaluation]:
        found = [
            Evaluation(kind="read", text=f"read of {name}", callee=name, span=self.src.span(node))
            for name, node in reads
        ]
        for position, call in enumerate(calls):
            callee = resolve(call.func)
            found.append(
                Evaluation(
                    kind="call",
                    text=text if position == 0 else self._describe(call),
                    callee=callee,
                    literal_arguments=all(
                        is_literal(a) for a in [*call.args, *(k.value for k in call.keywords)]
                    ),
                    # a pattern is the only literal judged (compiled to check it)
                    literal=(literal_argument(call) or self.values.pattern(call))
                    if callee.startswith("re.")
                    else None,
                    names=argument_names(call, resolve),
                    path=_module_path(self._read_path(call)),
                    span=self.src.span(call),
                )
            )
        return found

    def _read_path(self, call: ast.Call) -> str | None:
        """The file a call reads through a path built from ``__file__`` (see
        ``Evaluation.path``; absolute when an absolute part restarted it): its receiver's
        path for a method, else its first argument's."""
        path = self._read_file_path(call)
        return None if path is None else ir_path(path)

    def _read_file_path(self, call: ast.Call) -> FilePath | None:
        func = call.func
        if isinstance(func, ast.Attribute) and not isinstance(func.value, ast.Name | ast.Attribute):
            return self._path_of(func.value)
        if isinstance(func, ast.Attribute) and self.symbols.qualify(func) is None:
            return self._path_of(func.value)
        callee = self.symbols.qualify(func)
        operand = call.args[0] if call.args else None
        if callee in ("builtins.open", "io.open"):
            operand = path_operand(call, callee)  # open(file=p) too
            mode = call.args[1] if len(call.args) > 1 else None
            for keyword in call.keywords:
                if keyword.arg == "mode":
                    mode = keyword.value
            if mode is not None and not (
                isinstance(mode, ast.Constant)
                and isinstance(mode.value, str)
                and set(mode.value) <= set("rbt")
            ):
                return None
        return None if operand is None else self._path_of(operand)

    def _path_of(self, node: ast.expr) -> FilePath | None:
        """``node`` as a path built from ``__file__`` and literals (see ``_file_paths``)."""
        if isinstance(node, ast.Name):
            if node.id == "__file__":
                return FILE
            return self._paths.get(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            base = self._path_of(node.left)
            if base is None or not (
                isinstance(node.right, ast.Constant) and isinstance(node.right.value, str)
            ):
                return None
            return join(base, node.right.value)
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            base = self._path_of(node.value)
            return None if base is None else parent(base)
        if isinstance(node, ast.Subscript):  # Path(__file__).parents[1]
            return self._parents(node)
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        qual = self.symbols.qualify(func) if isinstance(func, ast.Name | ast.Attribute) else None
        literals = [
            a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
        ]
        if qual in _PATH_CONSTRUCTORS | _PATH_SAME and node.args:
            base = self._path_of(node.args[0])
            return normalised(base) if base is not None and qual in _PATH_NORMAL else base
        if qual == "os.path.dirname" and node.args:
            base = self._path_of(node.args[0])
            return None if base is None else parent(base)
        if qual == "os.path.join" and node.args:
            base = self._path_of(node.args[0])
            if len(literals) != len(node.args) - 1:
                return None
            for piece in literals:
                base = join(base, piece) if base is not None else None
            return base
        if isinstance(func, ast.Attribute) and qual is None:
            base = self._path_of(func.value)
            if base is None:
                return None
            if func.attr in ("resolve", "absolute") and not node.args:
                return normalised(base) if func.attr == "resolve" else base
            if func.attr == "joinpath" and len(literals) == len(node.args):
                for part in literals:
                    base = join(base, part) if base is not None else None
                return base
            if func.attr == "with_name" and len(literals) == len(node.args) == 1:
                return with_name(base, literals[0])
        return None

    def _parents(self, node: ast.Subscript) -> FilePath | None:
        """``path.parents[n]`` for a literal ``n`` from 0: ``n + 1`` folders up."""
        if not (isinstance(node.value, ast.Attribute) and node.value.attr == "parents"):
            return None
        index = node.slice
        if not (isinstance(index, ast.Constant) and type(index.value) is int and index.value >= 0):
            return None
        base = self._path_of(node.value.value)
        for _ in range(index.value + 1):
            base = parent(base) if base is not None else None
        return base

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

    # Helpers: the module's functions and classes that module-level code calls ------------
    def _helpers(self) -> tuple[Helper, ...]:
        """The facts of every local function or class called at import, following their
        own calls (and a class's local bases) to ``HELPER_DEPTH`` levels."""
        pending = sorted({n for e in self._all_evaluations() for n in _local_names(e.callee)})
        done: dict[str, Helper] = {}
        for _ in range(HELPER_DEPTH):
            following: set[str] = set()
            for name in pending:
                if name in done:
                    continue
                helper = self._helper(name)
                if helper is None:
                    continue
                done[name] = helper
                following.update(n for e in helper.calls for n in _local_names(e.callee))
                if name in self._class_nodes:
                    for base in self._class_nodes[name].bases:
                        following.update(
                            n for n in [_local_name(self.symbols.qualify(base))] if n is not None
                        )
            pending = sorted(following - set(done))
            if not pending:
                break
        return tuple(done.values())

    def _all_evaluations(self) -> Iterator[Evaluation]:
        for stmt in self.statements:
            yield from stmt.evaluations
        for cls in self.classes:
            yield from cls.evaluations

    def _helper(self, name: str) -> Helper | None:
        if "." in name:  # ``C.m``: a method called on an instance of the module's class
            return self._method_helper(*name.split(".", 1))
        fn = self._functions.get(name)
        if fn is not None:
            calls, opaque = self._body_facts([fn])
            return Helper(name=name, calls=calls, opaque=opaque, span=self.src.span(fn))
        cls = self._class_nodes.get(name)
        if cls is None:
            return None
        bodies: list[FunctionNode] = []
        first: Evaluation | None = None
        for item in cls.body:
            if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            plain_decorators = all(
                self.symbols.qualify(d) in ("builtins.staticmethod", "builtins.classmethod")
                for d in item.decorator_list
            )
            if not plain_decorators:
                first = first or self._code(f"decorated method {item.name}", item)
            elif item.name in _CONSTRUCTION:
                bodies.append(item)
            elif item.name.startswith("__") and item.name.endswith("__"):
                first = first or self._code(f"method {item.name}", item)
        calls, inner = self._body_facts(bodies)
        return Helper(name=name, calls=calls, opaque=first or inner, span=self.src.span(cls))

    def _method_helper(self, cls_name: str, method: str) -> Helper | None:
        """The facts of method ``method`` of the module's class ``cls_name`` (its body runs
        when module-level code calls it on an instance), ``None`` when the class defines no
        such method (an attribute)."""
        cls = self._class_nodes.get(cls_name)
        item = next(
            (
                s
                for s in (cls.body if cls is not None else [])
                if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name == method
            ),
            None,
        )
        if item is None:
            return None
        name = f"{cls_name}.{method}"
        if item.decorator_list or isinstance(item, ast.AsyncFunctionDef):
            return Helper(
                name=name,
                calls=(),
                opaque=self._code(f"decorated method {method}", item),
                span=self.src.span(item),
            )
        calls, opaque = self._body_facts([item])
        return Helper(name=name, calls=calls, opaque=opaque, span=self.src.span(item))

    def _body_facts(
        self, functions: list[FunctionNode]
    ) -> tuple[tuple[Evaluation, ...], Evaluation | None]:
        """The calls and reads of the bodies, and their first part outside the facts."""
        found: list[Evaluation] = []
        for fn in functions:
            args = fn.args
            local = {
                a.arg
                for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
                if a is not None
            }
            for stmt in fn.body:
                local.update(nested_bindings(stmt))
            names = {**self._origins, **dict.fromkeys(local, "?")}

            def resolve(node: ast.expr, names: dict[str, str] = names) -> str:
                return origin(node, self.symbols.qualify, names)

            stack: list[ast.stmt] = list(reversed(fn.body))
            while stack:
                stmt = stack.pop()
                expressions, blocks, ok = _helper_statement(stmt, local)
                if not ok:
                    return tuple(found), self._code(self._describe(stmt), stmt)
                for expr in expressions:
                    facts = plain_facts(expr, resolve)
                    if facts is None:
                        return tuple(found), self._code(self._describe(expr), expr)
                    calls, reads = facts
                    found.extend(
                        self._facts(
                            calls, reads, f"{self._describe(calls[0])}" if calls else "", resolve
                        )
                    )
                stack.extend(reversed(blocks))
        return tuple(found), None

    def _decorator(self, dec: ast.expr, text: str) -> Evaluation:
        target = dec.func if isinstance(dec, ast.Call) else dec
        literal = not isinstance(dec, ast.Call) or all(
            is_literal(a) for a in [*dec.args, *(k.value for k in dec.keywords)]
        )
        return Evaluation(
            kind="decorator",
            text=text,
            callee=self.symbols.qualify(target),
            literal_arguments=literal,
            span=self.src.span(dec),
        )

    def _live(self, stmt: ast.If | ast.Try | ast.TryStar) -> list[ast.stmt] | None:
        """The branch of an ``if``/``try`` the evaluator decided, or ``None`` (an ``if
        TYPE_CHECKING:`` keeps its own reading)."""
        if isinstance(stmt, ast.If) and is_type_checking(stmt.test, self.symbols):
            return None
        return self.values.live(stmt)

    def _classify(self, stmt: ast.stmt) -> tuple[StatementKind, str, ast.AST, list[Evaluation]]:
        found = self._shape(stmt)
        if found[3] and self.values.is_folded(stmt):
            return "constant", "value known at import (evaluated)", stmt, []
        return found

    def _shape(self, stmt: ast.stmt) -> tuple[StatementKind, str, ast.AST, list[Evaluation]]:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            return "import", "import", stmt, []
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            return "def", "function definition", stmt, self._definition_evaluations(stmt)
        if isinstance(stmt, ast.ClassDef):
            if stmt.name in self.symbols.typed_dicts:
                return "typeddict", "TypedDict definition", stmt, []
            return "class", "class definition", stmt, []
        if isinstance(stmt, ast.Assign | ast.AnnAssign):
            return self._classify_assign(stmt)
        if isinstance(stmt, ast.Expr):
            value = stmt.value
            if isinstance(value, ast.Constant):
                if isinstance(value.value, str):
                    return "docstring", "string literal", stmt, []
                if value.value is Ellipsis:
                    return "pass", "ellipsis", stmt, []
            call = first_code_running(value)
            if call is not None:
                return (
                    "expression",
                    "expression statement",
                    call,
                    self._evaluate(value, call, self._describe(call)),
                )
            return "expression", "expression statement without calls", stmt, []
        if isinstance(stmt, ast.Pass):
            return "pass", "pass", stmt, []
        if isinstance(stmt, ast.If):
            if is_main_guard(stmt.test):
                return "main-guard", 'if __name__ == "__main__" block', stmt, []
            if is_type_checking(stmt.test, self.symbols):
                found = self._nested(stmt.orelse, " in the else branch")
                return "type-checking", "if TYPE_CHECKING block", stmt, found
            if (live := self.values.live(stmt)) is not None:
                return (
                    "if",
                    "if block decided statically",
                    stmt,
                    self._nested(live, " under a module-level if"),
                )
            found = self._test(stmt.test, " under a module-level if")
            found += self._nested([*stmt.body, *stmt.orelse], " under a module-level if")
            return "if", "if block", stmt, found
        if isinstance(stmt, ast.Try | ast.TryStar):
            suffix = " under a module-level try"
            if (live := self.values.live(stmt)) is not None:
                return (
                    "try",
                    "try block of imports decided statically",
                    stmt,
                    self._nested(live, suffix),
                )
            found = []
            for handler in stmt.handlers:
                found += self._test(handler.type, suffix)
                found += self._nested(handler.body, suffix)
            found += self._nested([*stmt.body, *stmt.orelse, *stmt.finalbody], suffix)
            return "try", "try block", stmt, found
        if (
            isinstance(stmt, ast.AugAssign)
            and isinstance(stmt.target, ast.Name)
            and self._origins.get(stmt.target.id, "").startswith(_LITERAL_TYPES)
        ):  # ``__all__ += [...]``, ``count += 1``: an operator on a literal's type
            text = self._describe(stmt)
            return "statement", text, stmt, self._evaluate(stmt.value, stmt, text)
        return (
            "statement",
            self._describe(stmt),
            stmt,
            [self._unevaluated(stmt, self._describe(stmt))],
        )

    def _unevaluated(self, stmt: ast.stmt, text: str) -> Evaluation:
        """Code the evaluator could not evaluate: the sub-expression that stopped it is the
        evaluation's span, and its text says why (``for loop (`print(i)`: a call ...)``)."""
        found = self.values.unknown(stmt)
        if found is None:
            return self._code(text, stmt)
        node, why = found
        return self._code(f"{text} (`{short(self.src.segment(node), 40)}`: {why})", node)

    def _test(self, test: ast.expr | None, suffix: str) -> list[Evaluation]:
        call = first_code_running(test)
        if call is None or test is None:
            return []
        return self._evaluate(test, call, f"{self._describe(call)}{suffix}")

    def _nested(self, body: list[ast.stmt], suffix: str) -> list[Evaluation]:
        """What the statements of a block evaluate; a statement that is not a definition
        (an expression, a main guard) counts as code in a block."""
        found: list[Evaluation] = []
        for stmt in body:
            kind, _, node, inner = self._classify(stmt)
            if kind in ("main-guard", "expression") and not inner:
                found.append(self._code(f"{self._describe(node)}{suffix}", node))
            found.extend(
                attrs.evolve(e, text=f"{e.text}{suffix}") if e.kind == "code" else e for e in inner
            )
        return found

    def _classify_assign(
        self, stmt: ast.Assign | ast.AnnAssign
    ) -> tuple[StatementKind, str, ast.AST, list[Evaluation]]:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if any(assigned_names(t) is None for t in targets):
            text = "assignment to an attribute or item"
            return "assign", text, stmt, [self._unevaluated(stmt, text)]
        value = stmt.value
        if value is None:
            return "annotation", "variable annotation", stmt, []
        if is_literal(value):
            return "constant", "literal constant", stmt, []
        if is_type_expression(value, self.symbols) or is_typing_constructor(value, self.symbols):
            return "type-alias", "type alias", stmt, []
        if isinstance(value, ast.Lambda):
            return "def", "lambda definition", stmt, []
        if is_name_chain(value):
            # the read is recorded: ``ARGS = sys.argv`` reads the command line at import
            text = f"alias of {short(self.src.segment(value), 40)}"
            return "alias", text, stmt, self._evaluate(value, stmt, text)
        call = first_code_running(value)
        if call is not None:
            text = f"assignment from {self._describe(call)}"
            found = self._evaluate(value, call, text)
            return "assign", "assignment of a computed value", call, found
        text = "assignment of a computed value"
        return "assign", text, stmt, self._evaluate(value, stmt, text)

    def _fallback_group(self, dec: ast.expr) -> int | None:
        at = self.values.fallback_identity(dec)
        return None if at is None else self._fallback_group_at.get(at)

    def _definition_evaluations(self, fn: FunctionNode, prefix: str = "") -> list[Evaluation]:
        """Decorators, defaults (and annotations without PEP 563) run at definition time;
        ``prefix`` starts each text (a method's: ``method NAME: ``)."""
        found: list[Evaluation] = []
        # (each part skipped whole when empty: this runs on every function and method)
        for dec in fn.decorator_list:
            if self.values.is_identity(dec) or self.values.is_wrapping(dec):  # runs nothing
                continue
            if not prefix and not fn.name.startswith("_") and self._fallback_group(dec) is not None:
                continue  # a capability's: judged with its decorators (``identity_unless``)
            text = f"{prefix}decorator @{short(self.src.segment(dec), 40)} evaluated at definition"
            found.append(self._decorator(dec, text))
        args = fn.args
        if args.defaults or args.kw_defaults:
            for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
                call = first_code_running(default)
                if call is not None:
                    text = f"{prefix}default value evaluating {self._describe(call)}"
                    found.extend(self._evaluate(default, call, text))
        if not self.future_annotations:
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
            if args.vararg is not None:
                every.append(args.vararg)
            if args.kwarg is not None:
                every.append(args.kwarg)
            for annotation in [*[a.annotation for a in every], fn.returns]:
                if annotation is None:  # most parameters: nothing evaluated
                    continue
                call = first_code_running(annotation)
                if call is not None:
                    text = f"{prefix}annotation evaluating {self._describe(call)}"
                    found.extend(self._evaluate(annotation, call, text))
        return found

    def _describe(self, node: ast.AST) -> str:
        if isinstance(node, ast.Call):
            return f"call to {short(self.src.segment(node.func), 40)}()"
        return _DESCRIPTIONS.get(type(node), type(node).__name__.lower() + " statement")

    # Facts: bindings, imports, classes, capabilities ---------------------------------------
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

    def _collect(
        self, stmt: ast.stmt, guards: tuple[str, ...], guarded: bool, type_checking: bool = False
    ) -> None:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            if type_checking:
                return
            self._bind(stmt.name, "def", guards, stmt)
            if self.src.mentions(stmt, "import") or self.src.mentions(stmt, "global"):
                self._scan_function(stmt, stmt.name)
            if not stmt.name.startswith("_"):
                self.capabilities.pop(stmt.name, None)  # the last definition wins
                self.capabilities[stmt.name] = self._capability(stmt, guards)
                self._capability_nodes[stmt.name] = stmt
        elif isinstance(stmt, ast.ClassDef):
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
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                for name in assigned_names(target) or []:
                    self._bind(name, "delete", guards, stmt)
        elif isinstance(stmt, ast.For | ast.AsyncFor):
            for name in assigned_names(stmt.target) or []:
                self._bind(name, "for", (*guards, "for"), stmt)
            for sub in [*stmt.body, *stmt.orelse]:
                self._collect(sub, (*guards, "for"), guarded)
        elif isinstance(stmt, ast.While):
            for sub in [*stmt.body, *stmt.orelse]:
                self._collect(sub, (*guards, "while"), guarded)
        elif isinstance(stmt, ast.If):
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
        elif isinstance(stmt, ast.Try | ast.TryStar):
            if (live := self.values.live(stmt)) is not None:  # a decided import fallback
                for sub in live:
                    self._collect(sub, guards, True, type_checking)
                return
            # Only a ``try`` that runs whenever the module does: one under an undecided
            # ``if`` (or inside another ``try``, whose handler may catch its failure) keeps
            # its imports guarded, as a plain import there is.
            found = None if type_checking or guards else alternatives(stmt, self.symbols.qualify)
            grouped: dict[int, Fallback] = {}
            if found is not None:  # judged together: see ``_fallbacks``
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
            parts = [*stmt.body, *stmt.orelse, *stmt.finalbody]
            for handler in stmt.handlers:
                parts.extend(handler.body)
            for sub in parts:
                self._fallback = grouped.get(id(sub))
                self._collect(sub, (*guards, "try"), True, type_checking)
                self._fallback = None
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

    # Classes --------------------------------------------------------------------------------
    def _class_decl(self, stmt: ast.ClassDef) -> ClassDecl:
        bases = tuple(self.symbols.qualify(b) or self.src.segment(b) for b in stmt.bases)
        decorators = tuple(
            Decorator(text=self.src.segment(d), span=self.src.span(d)) for d in stmt.decorator_list
        )
        return ClassDecl(
            name=stmt.name,
            bases=bases,
            keywords=tuple(self.src.segment(k) for k in stmt.keywords),
            decorators=decorators,
            evaluations=tuple(self._class_evaluations(stmt)),
            span=self.src.span(stmt),
        )

    def _class_evaluations(self, stmt: ast.ClassDef, depth: int = 0) -> list[Evaluation]:
        """What defining the class runs; a nested class's own (three deep, then its
        definition is code)."""
        found = [
            self._decorator(dec, f"decorator @{short(self.src.segment(dec), 40)}")
            for dec in stmt.decorator_list
            if not self.values.is_identity(dec)  # returns the class itself
        ]
        for base in stmt.bases:
            if self.values.is_plain_base(base):  # ``namedtuple("P", FIELDS)``, evaluated
                continue
            target = base.value if isinstance(base, ast.Subscript) else base
            found.append(
                Evaluation(
                    kind="base",
                    text=f"base class {short(self.src.segment(base), 40)}",
                    callee=self.symbols.qualify(target),
                    span=self.src.span(base),
                )
            )
        found.extend(
            self._code(f"class keyword {short(self.src.segment(k), 40)}", k) for k in stmt.keywords
        )
        properties: set[str] = set()  # methods decorated @property so far
        for item in stmt.body:
            if isinstance(
                item, ast.FunctionDef | ast.AsyncFunctionDef
            ):  # the commonest item first (a method)
                accessors = _property_accessors(item, properties, self.src.span)
                found.extend(
                    e
                    for e in self._definition_evaluations(item, f"method {item.name}: ")
                    if not (e.kind == "decorator" and e.span in accessors)
                )
                if any(self.symbols.qualify(d) == "builtins.property" for d in item.decorator_list):
                    properties.add(item.name)
                continue
            if isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant):
                continue
            if isinstance(item, ast.Pass):
                continue
            if (  # runs what its definition runs; a framework reads `Config`/`Meta`
                isinstance(item, ast.ClassDef)
                and depth < 3
                and item.name not in _FRAMEWORK_INNER_CLASSES
            ):
                found.extend(self._class_evaluations(item, depth + 1))
                continue
            if isinstance(item, ast.AnnAssign) and (item.value is None or is_literal(item.value)):
                continue
            if isinstance(item, ast.Assign) and is_literal(item.value):
                continue
            if isinstance(item, ast.Assign | ast.AnnAssign) and harmless_field_call(
                item.value, self.symbols
            ):
                continue
            if self.values.is_folded(item):  # a value the evaluator computed
                continue
            text = f"class body statement ({self._describe(item)})"
            value = item.value if isinstance(item, ast.Assign | ast.AnnAssign) else None
            targets: list[ast.expr] = (
                item.targets
                if isinstance(item, ast.Assign)
                else [item.target]
                if isinstance(item, ast.AnnAssign)
                else []
            )
            if value is not None and all(isinstance(t, ast.Name) for t in targets):
                found.extend(self._evaluate(value, item, text))
                continue
            found.append(self._code(text, item))
        return found

    def _model(self, stmt: ast.ClassDef) -> None:
        """A dataclass, pydantic model or NamedTuple: its fields (the last definition wins)."""
        form = classify(stmt, self.symbols)
        if form is None or form == "enum":
            self.models.pop(stmt.name, None)
            return
        reader = ModelReader(self.symbols, self.types, self.src.segment, self.src.span, self.models)
        self.models.pop(stmt.name, None)
        self.models[stmt.name] = reader.read(stmt, form)

    # TypedDicts -----------------------------------------------------------------------------
    def _typed_dict(self, stmt: ast.ClassDef) -> TypedDictDecl:
        total = True
        for kw in stmt.keywords:
            if kw.arg == "total" and isinstance(kw.value, ast.Constant):
                total = bool(kw.value.value)
        # Bases by name (inherited fields are not copied: see ``TypedDictDecl``); a base not
        # defined yet is ignored, as before.
        bases: list[str] = []
        for base in stmt.bases:
            qual = self.symbols.qualify(base) or ""
            if qual.startswith("typeddict."):
                parent = qual.split(".", 1)[1]
                if parent in self.typed_dicts and parent not in bases:
                    bases.append(parent)
        fields: dict[str, TypedDictField] = {}
        for item in stmt.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                fields[item.target.id] = self._typed_dict_field(
                    item.target.id, item.annotation, total, item
                )
        return TypedDictDecl(
            name=stmt.name,
            total=total,
            fields=tuple(fields.values()),
            span=self.src.span(stmt),
            bases=tuple(bases),
        )

    def _store_typed_dict(self, decl: TypedDictDecl) -> None:
        """Record ``decl``; a TypedDict that redefines a name others inherit from keeps
        the earlier definition's meaning for them (and for itself, in ``class A(A)``): their
        fields are written out in full before the name changes meaning."""
        name = decl.name
        if name in self.typed_dicts:
            if name in decl.bases:
                decl = self._materialised(decl)
            for dependent in sorted(self._td_dependents.pop(name, set())):
                old = self.typed_dicts.get(dependent)
                if old is not None and name in old.bases:
                    self.typed_dicts[dependent] = self._materialised(old)
        for base in decl.bases:
            self._td_dependents.setdefault(base, set()).add(name)
        self.typed_dicts[name] = decl

    def _materialised(self, decl: TypedDictDecl) -> TypedDictDecl:
        from svcc.ir.index import flattened_fields

        temporary = "<materialised>"  # not an identifier: never a TypedDict's name
        fields = flattened_fields({**self.typed_dicts, temporary: decl}, temporary)
        return attrs.evolve(decl, fields=fields, bases=())

    def _typed_dict_field(
        self, name: str, annotation: ast.expr, total: bool, node: ast.AST
    ) -> TypedDictField:
        required = total
        inner = annotation
        while isinstance(inner, ast.Subscript):
            qual = self.symbols.qualify(inner.value)
            if qual in REQUIREDNESS:
                if qual.endswith(".Required"):
                    required = True
                elif qual.endswith(".NotRequired"):
                    required = False
                inner = inner.slice
            elif qual in typing_names("Annotated") and isinstance(inner.slice, ast.Tuple):
                inner = inner.slice.elts[0]
            else:
                break
        return TypedDictField(
            name=name,
            annotation=self.src.segment(annotation),
            type=self.types.resolve(annotation),
            required=required,
            span=self.src.span(node),
        )

    def _functional_typed_dict(self, stmt: ast.Assign) -> None:
        """``Movie = TypedDict("Movie", {"title": str}, total=False)``."""
        value = stmt.value
        if not (
            isinstance(value, ast.Call)
            and self.symbols.qualify(value.func) in TYPEDDICT
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            return
        name = stmt.targets[0].id
        total = True
        for kw in value.keywords:
            if kw.arg == "total" and isinstance(kw.value, ast.Constant):
                total = bool(kw.value.value)
        fields: list[TypedDictField] = []
        if len(value.args) >= 2 and isinstance(value.args[1], ast.Dict):
            for key, ann in zip(value.args[1].keys, value.args[1].values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    field = self._typed_dict_field(printable(key.value), ann, total, key)
                    if not is_utf8(key.value):
                        field = attrs.evolve(
                            field,
                            type=UnsupportedType(
                                text=field.annotation,
                                reason="the key holds a lone surrogate, which is not JSON text",
                            ),
                        )
                    fields.append(field)
        self._store_typed_dict(
            TypedDictDecl(name=name, total=total, fields=tuple(fields), span=self.src.span(stmt))
        )

    # Capabilities ---------------------------------------------------------------------------
    def _service(self, stmt: ast.ClassDef, guards: tuple[str, ...]) -> None:
        """A service class (see ``_services``): each public method a capability
        ``Class.method`` without its instance parameter, and the facts of building it."""
        qualify = self.symbols.qualify
        bases = self.classes[-1].bases
        for stale in self._service_capabilities.pop(stmt.name, ()):
            del self.capabilities[stale]  # the last definition of the class wins
            del self._capability_nodes[stale]
            self._instance_changers.discard(stale)
        self.services.pop(stmt.name, None)
        if stmt.name in self.models or not is_candidate(stmt, bases, qualify):
            return
        required = required_parameters(stmt)
        if required and not meant_as_service(stmt, bases):
            return  # a value type built with arguments (``Point(x, y)``), no service
        methods = service_methods(stmt, qualify)
        for fn in methods:
            name = f"{stmt.name}.{fn.name}"
            self.capabilities.pop(name, None)
            self.capabilities[name] = self._capability(fn, guards, qualname=name)
            self._capability_nodes[name] = fn
            self._service_capabilities.setdefault(stmt.name, []).append(name)
            if changes_instance(fn):
                self._instance_changers.add(name)
        calls, opaque = self._body_facts(construction_bodies(stmt))
        writes = sorted(
            (
                StateWrite(method=fn.name, attribute=attribute, span=self.src.span(node))
                for fn in methods
                for attribute, node in state_writes(fn)
            ),
            key=lambda w: (w.span.line, w.span.column),
        )
        self.services[stmt.name] = ServiceDecl(
            name=stmt.name,
            bases=bases,
            setup=setup_method(stmt),
            construction=calls,
            opaque=opaque,
            required=required,
            state_writes=tuple(writes),
            span=self.src.span(stmt),
        )

    def _capability(
        self, fn: FunctionNode, guards: tuple[str, ...], qualname: str | None = None
    ) -> Capability:
        """``fn`` as a capability; a service method's (``qualname`` ``Class.method``) has
        no instance parameter."""
        name = qualname or fn.name
        is_async = isinstance(fn, ast.AsyncFunctionDef)
        generator = self._is_generator(fn)
        form: FunctionForm = (
            ("async_generator" if is_async else "generator") if generator else "function"
        )
        returns = Returns(
            annotation=self.src.segment(fn.returns) if fn.returns else None,
            type=self.types.resolve(fn.returns) if fn.returns else AnyType(),
            span=self.src.span(fn.returns) if fn.returns else None,
        )
        uses, effects = self._param_uses(fn, name)
        params = tuple(self._params(fn.args, uses))
        return Capability(
            id=f"python:{self.module}:{name}",
            name=name,
            qualname=name,
            execution="async" if is_async else "sync",
            form=form,
            params=params[1:] if qualname else params,
            returns=returns,
            docstring=_doc(ast.get_docstring(fn, clean=True)),
            decorators=tuple(
                Decorator(
                    text=self.src.segment(d),
                    span=self.src.span(d),
                    identity_unless=self._fallback_group(d),
                )
                for d in fn.decorator_list
                if not self.values.is_identity(d)  # returns the function itself
            ),
            guards=guards,
            span=self.src.span(fn),
            effects=effects,
            stream=self._stream(fn) if generator else None,
        )

    def _stream(self, fn: FunctionNode) -> Stream:
        """A generator's items (see ``Stream``): from the return annotation, and whether the
        body uses a ``yield``'s value."""
        found = self.types.stream_item(fn.returns) if fn.returns is not None else None
        item, node = found if found is not None else (AnyType(), None)
        return Stream(
            item=item,
            annotation=self.src.segment(node) if node is not None else None,
            span=self.src.span(node) if node is not None else None,
            iterator=fn.returns is None or found is not None,
            sends=self._sends(fn),
        )

    def _sends(self, fn: FunctionNode) -> Span | None:
        """The first ``yield`` whose value the body uses (``x = yield item``): only a
        ``yield`` standing as a statement discards what ``send()`` passes."""
        stack: list[ast.AST] = list(fn.body)
        statements: set[int] = set()
        found: list[ast.Yield] = []
        while stack:
            node = stack.pop()
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Yield):
                statements.add(id(node.value))
            elif isinstance(node, ast.Yield) and id(node) not in statements:
                found.append(node)
            stack.extend(children(node))
        if not found:
            return None
        first = min(found, key=lambda y: (y.lineno, y.col_offset))
        return self.src.span(first)

    def _param_uses(
        self, fn: FunctionNode, key: str
    ) -> tuple[dict[str, tuple[ParamUse, ...]], tuple[Evaluation, ...]]:
        """Where the body needs a parameter to be a callable, a class or an object no JSON
        value is (first use per kind), and the body's sensitive calls and reads (see
        ``Capability.effects``).

        One walk of the body; a name rebound in the body is still reported as a callable
        (conservative: the readiness pass only asks about parameters without a JSON type),
        but not for its attributes (``df = pd.DataFrame(df)`` makes ``df.drop`` fine)."""
        body = self._body_reads(fn)
        names = body.params
        found: dict[str, dict[ParamUseKind, ParamUse]] = {}
        handled: set[int] = set()
        effects: dict[str, Evaluation] = {}
        qualify = self.symbols.qualify
        own_reads: list[FileRead] = []  # through a name bound more than once
        calls: list[ast.Call] = []  # followed into the module's functions at the end

        def note(node: ast.expr, kind: ParamUseKind, where: ast.AST) -> None:
            if isinstance(node, ast.Name) and node.id in names:
                found.setdefault(node.id, {}).setdefault(
                    kind, ParamUse(kind=kind, span=self.src.span(where))
                )

        def sensitive(callee: str, node: ast.AST, call: ast.Call | None) -> None:
            if callee not in effects:
                effects[callee] = Evaluation(
                    kind="call" if call is not None else "read",
                    text=f"call to {callee}()" if call is not None else f"read of {callee}",
                    callee=callee,
                    literal_arguments=call is None
                    or all(is_literal(a) for a in [*call.args, *(k.value for k in call.keywords)]),
                    names=argument_names(call, qualify) if call is not None else (),
                    span=self.src.span(node),
                )

        for stmt in fn.body:
            for node in walk(stmt):
                kind = type(node)
                if kind is ast.Call:  # exact types: the parser makes no subclasses
                    func = node.func  # type: ignore[attr-defined]
                    note(func, "call", node)
                    calls.append(node)  # type: ignore[arg-type]
                    reads = body.reads(node)  # type: ignore[arg-type]
                    if reads is not None and len(reads) == 1:  # a file read on every call
                        read = reads[0]
                        effects[f"{read.callee}@{read.span.line}:{read.span.column}"] = read
                    elif reads is not None:
                        own_reads.append(FileRead(reads=tuple(reads)))
                    if type(func) is ast.Name or type(func) is ast.Attribute:
                        callee = qualify(func)
                        if callee is not None and recorded(callee):
                            _mark_chain(func, handled)
                            sensitive(callee, node, node)  # type: ignore[arg-type]
                        elif type(func) is ast.Attribute and func.attr in (
                            "parse_args",
                            "parse_known_args",
                        ):
                            sensitive(f"?.{func.attr}", node, node)  # type: ignore[arg-type]
                    if (
                        isinstance(func, ast.Name)
                        and func.id in ("isinstance", "issubclass")
                        and len(node.args) == 2  # type: ignore[attr-defined]
                    ):
                        use: ParamUseKind = (
                            "isinstance" if func.id == "isinstance" else "issubclass"
                        )
                        classes = node.args[1]  # type: ignore[attr-defined]
                        for item in classes.elts if isinstance(classes, ast.Tuple) else [classes]:
                            note(item, use, item)
                elif kind is ast.Attribute:
                    if id(node) in handled:
                        continue
                    callee = qualify(node)  # type: ignore[arg-type]
                    if callee is not None and recorded(callee):
                        _mark_chain(node, handled)
                        sensitive(callee, node, None)
                elif kind in _DEFINITION_NODES:
                    for dec in node.decorator_list:  # type: ignore[attr-defined]
                        target = dec.func if isinstance(dec, ast.Call) else dec
                        note(target, "decorator", dec)
        for flow in object_uses(fn, names, qualify, self.src.segment):  # see _param_flow
            found.setdefault(flow.param, {}).setdefault(
                flow.kind,
                ParamUse(
                    kind=flow.kind,
                    span=self.src.span(flow.node),
                    attribute=flow.attribute,
                    receiver=flow.receiver,
                ),
            )
        ordered = sorted(effects.values(), key=lambda e: (e.span.line, e.span.column))
        self._reading[key] = (body, calls, own_reads)
        return {name: tuple(uses.values()) for name, uses in found.items()}, tuple(ordered)

    def _finished_capabilities(self) -> tuple[Capability, ...]:
        """The capabilities with the facts known once the whole module is read: files read
        through the functions they call, module names nothing binds (``unbound``), paths a
        parameter reaches (``path_arguments``)."""
        caps = self._with_reach(self._file_reads())
        nodes = self._capability_nodes
        walked = cache(walk)  # each body walked once for both readers
        self._module_names.nodes = walked
        caps = with_unbound_reads(caps, nodes, self._module_names, self.src.span)
        flow = PathFlow(self._functions, self._resolve, walked)
        calls = {name: reading[1] for name, reading in self._reading.items()}
        return tuple(with_path_reads(caps, nodes, flow, self.src.span, calls).values())

    def _body_reads(self, fn: FunctionNode) -> Body:
        return Body(fn, self._resolve, self.symbols.qualify, self._read_path, self.src.span)

    def _file_reads(self) -> dict[str, Capability]:
        """The capabilities with the files they read through the module's functions they
        call (see ``_read_calls``), found once every function and name is known."""
        called = CalledReads(
            self._functions,
            self._class_nodes,
            self._origins,
            qualify=self.symbols.qualify,
            make_body=self._body_reads,
            span=self.src.span,
            depth=HELPER_DEPTH,
        )
        out: dict[str, Capability] = {}
        for name, cap in self.capabilities.items():
            body, calls, own_reads = self._reading[name]
            reads = (*own_reads, *called.of(name, body, calls))
            out[name] = attrs.evolve(cap, file_reads=reads) if reads else cap
        return out

    def _with_reach(self, capabilities: dict[str, Capability]) -> dict[str, Capability]:
        """The capabilities with what each reaches when it runs (see ``_reach``), found once
        every function and name of the module is known."""
        reach = Reach(self._functions, self._origins, self.symbols.qualify, HELPER_DEPTH)
        out: dict[str, Capability] = {}
        for name, cap in capabilities.items():
            objects = frozenset(p.name for p in cap.params if not plain_json(p.type))
            found = reach.of(self._capability_nodes[name], objects)
            if name in self._instance_changers:
                found = tuple(sorted({*found, "<state>"}))
            out[name] = attrs.evolve(cap, reach=found) if found else cap
        return out

    def _params(
        self, args: ast.arguments, uses: dict[str, tuple[ParamUse, ...]]
    ) -> list[Parameter]:
        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
        defaults += args.defaults
        out: list[Parameter] = []
        for index, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
            kind: ParamKind = (
                "positional_only" if index < len(args.posonlyargs) else "positional_or_keyword"
            )
            out.append(self._param(arg, kind, default, uses))
        if args.vararg is not None:
            out.append(self._param(args.vararg, "var_positional", None, uses))
        for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
            out.append(self._param(arg, "keyword_only", kw_default, uses))
        if args.kwarg is not None:
            out.append(self._param(args.kwarg, "var_keyword", None, uses))
        return out

    def _param(
        self,
        arg: ast.arg,
        kind: ParamKind,
        default: ast.expr | None,
        uses: dict[str, tuple[ParamUse, ...]],
    ) -> Parameter:
        annotation = arg.annotation
        type_: TypeNode = AnyType() if annotation is None else self.types.resolve(annotation)
        param = Parameter(
            name=arg.arg,
            kind=kind,
            annotation=self.src.segment(annotation) if annotation is not None else None,
            type=type_,
            default=(
                Default(text=self.src.segment(default), span=self.src.span(default))
                if default is not None
                else None
            ),
            span=self.src.span(arg),
            uses=uses.get(arg.arg, ()),
            description=annotation_description(annotation, self.symbols.qualify)
            or described(default, self.symbols.qualify),
        )
        source = InputSource(self.symbols.qualify, self.src.segment, self.src.span)
        return with_input(param, annotation, default, source)

    def _is_generator(self, fn: FunctionNode) -> bool:
        if "yield" not in self.src.text_of_lines(fn.lineno, fn.end_lineno or fn.lineno):
            return False
        stack: list[ast.AST] = list(fn.body)
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Yield | ast.YieldFrom):
                return True
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
                continue
            stack.extend(children(node))
        return False


_PATH_CONSTRUCTORS = frozenset(
    {"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "pathlib.PurePosixPath"}
)
_PATH_SAME = frozenset({"os.path.abspath", "os.path.realpath", "os.path.normpath", "os.fspath"})
_PATH_NORMAL = _PATH_SAME - {"os.fspath"}  # these collapse ``..`` (os.fspath keeps the text)


def _module_path(path: str | None) -> str | None:
    """``path`` when it is the module's or relative to its folder: an absolute one names a
    file of the machine, judged at import as any read (as ``open("/etc/hostname")``)."""
    return None if path is None or path.startswith("/") else path


_LITERAL_TYPES = tuple(
    f"builtins.{t}()"
    for t in ("str", "bytes", "int", "float", "bool", "list", "tuple", "dict", "set")
)

# Inner classes a framework's metaclass reads as settings (pydantic 1's ``Config``, Django's
# and marshmallow's ``Meta``): not a plain nested class.
_FRAMEWORK_INNER_CLASSES = frozenset({"Config", "Meta"})

# How deep module-level calls are followed into the module's own helpers.
HELPER_DEPTH = 3
_CONSTRUCTION = frozenset({"__init__", "__new__", "__post_init__"})


_DEFINITION_NODES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


def _branches(stmt: ast.Try | ast.TryStar | ast.If) -> list[ast.stmt]:
    """The statements of every branch of ``stmt``, in order: any of them may not run, so
    an import among them is guarded."""
    children: list[ast.stmt] = [*stmt.body, *stmt.orelse]
    if not isinstance(stmt, ast.If):
        children += stmt.finalbody
        for handler in stmt.handlers:
            children.extend(handler.body)
    return children


def _mark_chain(node: ast.AST, handled: set[int]) -> None:
    """Mark the attributes inside a recorded chain (``os.environ.get`` recorded: not
    ``os.environ`` again)."""
    while isinstance(node, ast.Attribute):
        handled.add(id(node))
        node = node.value


def _local_name(callee: str | None) -> str | None:
    """``helper`` for ``local.helper``, ``local.helper()``, ``local.Point().x``."""
    if callee is None or not callee.startswith("local."):
        return None
    rest = callee[6:]
    end = len(rest)
    for mark in ".([":
        at = rest.find(mark)
        if at != -1:
            end = min(end, at)
    return rest[:end]


def _property_accessors(
    fn: FunctionNode, properties: set[str], span: Callable[[ast.AST], Span]
) -> set[Span]:
    """The spans of ``@name.setter`` (``.getter``, ``.deleter``) decorators of ``fn`` where
    ``name`` is a ``@property`` of the same class: they copy the property, nothing else."""
    return {
        span(d)
        for d in fn.decorator_list
        if isinstance(d, ast.Attribute)
        and d.attr in ("setter", "getter", "deleter")
        and isinstance(d.value, ast.Name)
        and d.value.id in properties
    }


def _local_names(callee: str | None) -> list[str]:
    """The helpers a call or read of ``callee`` runs: the function or class, and for a
    method of an instance of the module's class (``local.C().m``) the method ``C.m``."""
    name = _local_name(callee)
    if name is None or callee is None:
        return []
    method = re.fullmatch(r"local\.(\w+)\(\)\.(\w+)", callee)
    return [name, f"{method[1]}.{method[2]}"] if method else [name]


def _helper_statement(
    stmt: ast.stmt, local: set[str]
) -> tuple[list[ast.expr], list[ast.stmt], bool]:
    """A helper body statement's evaluated expressions and nested blocks, or ``ok=False``
    when the facts do not describe it (``global``, ``async with``, ``while``, ``yield`` inside,
    nested scopes, imports, writes to names that are not the function's own)."""
    if isinstance(stmt, ast.Expr | ast.Return):
        value = stmt.value
        if value is None or isinstance(value, ast.Constant):
            return [], [], True
        return [value], [], True
    if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            root = target
            while isinstance(root, ast.Attribute | ast.Subscript | ast.Starred):
                root = root.value
            if isinstance(root, ast.Tuple | ast.List):
                if assigned_names(root) is None:
                    return [], [], False
            elif not (isinstance(root, ast.Name) and root.id in local):
                return [], [], False
        value = stmt.value
        return ([] if value is None else [value]), [], True
    if isinstance(stmt, ast.If):
        return [stmt.test], [*stmt.body, *stmt.orelse], True
    if isinstance(stmt, ast.For):
        return [stmt.iter], [*stmt.body, *stmt.orelse], True
    if isinstance(stmt, ast.Try | ast.TryStar):
        blocks = [*stmt.body, *stmt.orelse, *stmt.finalbody]
        types: list[ast.expr] = []
        for handler in stmt.handlers:
            blocks.extend(handler.body)
            if handler.type is not None:
                types.append(handler.type)
        return types, blocks, True
    if isinstance(stmt, ast.With):  # the context's calls are facts; ``as`` binds a local
        if any(
            item.optional_vars is not None
            and not (isinstance(item.optional_vars, ast.Name) and item.optional_vars.id in local)
            for item in stmt.items
        ):
            return [], [], False
        return [item.context_expr for item in stmt.items], list(stmt.body), True
    if isinstance(stmt, ast.Raise):
        return [e for e in (stmt.exc, stmt.cause) if e is not None], [], True
    if isinstance(stmt, ast.Assert):
        return [stmt.test], [], True
    if isinstance(stmt, ast.Pass | ast.Break | ast.Continue):
        return [], [], True
    return [], [], False


def _doc(text: str | None) -> str | None:
    return None if text is None else printable(text)
