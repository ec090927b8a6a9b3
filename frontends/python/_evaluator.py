"""The abstract evaluator of a module's import-time code: constant propagation and partial
evaluation over the syntax tree, never running the source.

``ModuleValues.run`` is handed the module's top-level statements in order (the lowerer's
first pass) and keeps what each name holds when it is known (see ``_values``): literals,
operators, string formatting, comprehensions and loops over known finite iterables that
fill module-level containers, the reviewed standard-library table (``_fold_table``), Enum
members, ``sys.version_info`` of the target, calls of the module's own functions whose
bodies it can evaluate on known arguments, instances of its own plain classes (``__init__``
run), its decorator factories applied, and the values of the repository's other modules
(``sibling_values``). What it learns, the lowerer records as facts:

- a statement it evaluated whole, with no effect, is a folded constant;
- an ``if`` whose test it decided, and a ``try`` of imports whose outcome it decided
  (``live``): only the branch that runs is judged and defines names;
- the folded first argument of a ``re.`` call (``pattern``), checked as a literal one;
- a decorator that returns its argument (``identity``: the module's, another module's, or a
  factory's application), or only makes a closure (``wrapping``);
- a class base it made or read as plain (``namedtuple`` of known fields, another module's
  plain class: ``is_plain_base``).

Everything is bounded (``_values``): past a bound a value is unknown, never a hang.
"""

import ast
import keyword
import re
from typing import Final

from svcc.frontends.python import _fold_table as table
from svcc.frontends.python._call_through import calls_through, is_warning
from svcc.frontends.python._eval_metaclass import MetaclassRuns, single_target
from svcc.frontends.python._eval_state import (
    OPERATOR_ERRORS,
    Break,
    Closure,
    Continue,
    Position,
    Qualify,
    Return,
    Scope,
    call_key,
    defaults_run_code,
    position,
    stdlib_module,
)
from svcc.frontends.python._fallbacks import alternatives, catches_import_error
from svcc.frontends.python._statements import bound_names
from svcc.frontends.python._target_platform import platform_failure
from svcc.frontends.python._values import (
    ClassValue,
    EnumMember,
    FunctionRef,
    Raises,
    Unknown,
)
from svcc.frontends.python._walk import children, walk

__all__ = ["ModuleValues", "Position", "Qualify", "position", "stdlib_module"]

_ENUM_BASES: Final = frozenset({"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag"})


# The dunder names a class the evaluator makes instances of may bind: ``__init__`` (run),
# and methods Python calls only on an operation the evaluator refuses on an instance
# (comparison, ``str``, ``len``, iteration, truth is never tested).
_INSTANCE_DUNDERS: Final = frozenset(
    {"__init__", "__doc__", "__module__", "__qualname__", "__repr__", "__str__", "__eq__",
     "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__len__", "__iter__",
     "__contains__", "__getitem__", "__call__", "__format__", "__bool__"}
)  # fmt: skip
_IMPORT_ERRORS: Final = frozenset({"builtins.ImportError", "builtins.ModuleNotFoundError"})
# isinstance's classes made once (``A | B`` makes a union at each test, tested slower)
_FUNCTIONS: Final = (ast.FunctionDef, ast.AsyncFunctionDef)
_BRANCHES: Final = (ast.If, ast.Try, ast.TryStar)
_NOT_FOLDED: Final = (ast.Import, ast.ImportFrom, ast.Pass)


NOT_KNOWN: Final = object()


class ModuleValues(MetaclassRuns):
    def live(self, stmt: ast.stmt) -> list[ast.stmt] | None:
        """The statements of the branch of a decided ``if``/``try`` that runs, or ``None``."""
        choice = self.decided.get(position(stmt))
        if choice is None:
            return None
        if isinstance(stmt, ast.If):
            return list(stmt.body if choice == 0 else stmt.orelse)
        if isinstance(stmt, ast.Try | ast.TryStar):
            if choice == 0:
                return [*stmt.body, *stmt.orelse, *stmt.finalbody]
            ran = stmt.body[: self.ran_before.get(position(stmt), 0)]
            return [*ran, *stmt.handlers[choice - 1].body, *stmt.finalbody]
        return None

    def is_folded(self, stmt: ast.stmt) -> bool:
        return position(stmt) in self.folded

    def pattern(self, call: ast.Call) -> str | None:
        return self.patterns.get(call_key(call))

    def raises(self, stmt: ast.stmt) -> tuple[ast.expr, str] | None:
        """Where and why a top-level statement raises for certain when the module is
        imported (a known call on plain data, outside any ``try`` or ``with``)."""
        return self.raises_at.get(position(stmt))

    def unknown(self, stmt: ast.stmt) -> tuple[ast.expr, str] | None:
        """Where (a position-only node) and why a top-level statement could not be
        evaluated, when a sub-expression stopped it."""
        return self.unknown_at.get(position(stmt))

    def is_identity(self, decorator: ast.expr) -> bool:
        return position(decorator) in self.identity_decorators

    def fallback_identity(self, decorator: ast.expr) -> Position | None:
        """The ``try`` whose handler defines ``decorator`` as an identity, when the name is
        the import's or that identity (whichever ran), else ``None``."""
        return self.fallback_decorators.get(position(decorator))

    def is_wrapping(self, decorator: ast.expr) -> bool:
        """A decorator whose application at definition only makes a closure."""
        return position(decorator) in self.wrapping_decorators

    def is_metaclass_run(self, keyword: ast.keyword) -> bool:
        """``metaclass=M``, the module's own metaclass, whose ``__init__`` the evaluator ran
        on the class it makes (see ``_metaclass``): it runs nothing else."""
        return position(keyword) in self.metaclass_runs

    def is_plain_base(self, base: ast.expr) -> bool:
        """A class base the evaluator made (``namedtuple("P", FIELDS)`` of known, valid
        fields): it runs nothing of the module and raises nothing."""
        return position(base) in self.plain_bases

    def run(self, stmt: ast.stmt) -> None:
        """Evaluate one top-level statement, in order, recording what the lowerer asks."""
        self.steps = 0
        self.mutated = False
        written: set[str] = set()
        try:
            if self._definition(stmt):
                return
            if isinstance(stmt, _BRANCHES) and self._branch(stmt):
                return
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                return
            if isinstance(stmt, ast.Try) and self._guarded_metadata(stmt):
                return
            self.global_writes = set()
            try:
                self._exec(stmt, None)
            finally:
                written, self.global_writes = self.global_writes, None
            if not isinstance(stmt, _NOT_FOLDED):
                self.folded.add(position(stmt))
        except (Unknown, Break, Continue, Return, RecursionError, *OPERATOR_ERRORS) as exc:
            for name in written:  # a helper's ``global`` bindings, made before it stopped
                self._unbind(name)
            if (
                isinstance(exc, Unknown)
                and isinstance(exc.node, ast.expr)
                and hasattr(exc.node, "end_col_offset")
            ):
                where = ast.Constant(
                    value=None,
                    lineno=exc.node.lineno,
                    col_offset=exc.node.col_offset,
                    end_lineno=exc.node.end_lineno,
                    end_col_offset=exc.node.end_col_offset,
                )
                self.unknown_at[position(stmt)] = (where, exc.why)
                if isinstance(exc, Raises) and exc.definite and not _catches(stmt):
                    self.raises_at[position(stmt)] = (where, exc.why)
            self._patterns(stmt)  # its arguments are read before anything it calls runs
            self._forget(stmt)
        if isinstance(stmt, ast.Try | ast.TryStar) and position(stmt) not in self.decided:
            for name in _fallback_identities(stmt, self.qualify):
                self.fallback_identities[name] = position(stmt)
            for name, imported in _fallback_flags(stmt, self.qualify).items():
                self.fallback_flags[name] = (position(stmt), imported)

    def imported_if(self, stmt: ast.If) -> tuple[Position, int] | None:
        """For an undecided ``if REGEX_AVAILABLE:`` (or ``not``) of a flag an undecided
        ``try`` of imports binds: that ``try``'s position and the branch (0: body, 1:
        ``else``) that runs only when the ``try`` body's imports succeeded."""
        return self.imported_branch.get(position(stmt))

    def _definition(self, stmt: ast.stmt) -> bool:
        if isinstance(stmt, _FUNCTIONS):
            self._decorators(stmt)
            self._unbind(stmt.name)
            self._define(stmt)
            return True
        if isinstance(stmt, ast.ClassDef):
            for dec in stmt.decorator_list:  # a class decorator: only the identity
                own = isinstance(dec, ast.Name) and dec.id in self.identities
                if own or self._sibling_identity(dec):
                    self.identity_decorators.add(position(dec))
            self._bases(stmt)
            self._unbind(stmt.name)
            self._class_body(stmt)
            self._metaclass(stmt)
            value = self._class(stmt)
            if value is not None:
                self.values[stmt.name] = value
            self.class_nodes[stmt.name] = stmt
            self._patterns(stmt)
            return True
        return False

    def _define(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if isinstance(fn, ast.AsyncFunctionDef) or fn.decorator_list:
            return
        self.functions[fn.name] = fn
        if _is_identity(fn):
            self.identities.add(fn.name)
        elif self._is_wrapper(fn):
            self.wrappers.add(fn.name)

    def _is_wrapper(self, fn: ast.FunctionDef) -> bool:
        """``def deco(f):`` whose body only defines functions (undecorated, or decorated
        ``@functools.wraps(f)``) and returns one of them: applying it at definition makes a
        closure and runs nothing else. The function it returns is another one (its
        capability keeps the decorator, SVC-R001); only the import is harmless."""
        spec = fn.args
        params = [a.arg for a in [*spec.posonlyargs, *spec.args]]
        if len(params) != 1 or spec.vararg or spec.kwarg or spec.kwonlyargs:
            return False
        body = [
            s
            for s in fn.body
            if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        ]
        if len(body) < 2 or not isinstance(body[-1], ast.Return):
            return False
        defined: set[str] = set()
        for item in body[:-1]:
            if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                return False
            for dec in item.decorator_list:
                if not (
                    isinstance(dec, ast.Call)
                    and self.qualify(dec.func) == "functools.wraps"
                    and len(dec.args) == 1
                    and not dec.keywords
                    and isinstance(dec.args[0], ast.Name)
                    and dec.args[0].id == params[0]
                ):
                    return False
            if defaults_run_code(item):
                return False
            defined.add(item.name)
        returned = body[-1].value
        return isinstance(returned, ast.Name) and returned.id in defined

    def _sibling_identity(self, dec: ast.expr) -> bool:
        """A decorator imported from another module of the repository, where it is a
        function returning its argument (``from .compat import with_str_method``)."""
        if self.siblings is None or not isinstance(dec, ast.Name | ast.Attribute):
            return False
        if isinstance(dec, ast.Name) and dec.id in self.bound and dec.id not in self.imported:
            return False  # bound since by something else
        name = self.qualify(dec)
        if name is None or name.startswith(("local.", "builtins.")):
            return False
        return self.siblings.identity(self.module, name)

    def _decorators(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """Record ``fn``'s decorators that are the module's identities or wrappers."""
        for dec in fn.decorator_list:
            if (isinstance(dec, ast.Name) and dec.id in self.identities) or (
                self._sibling_identity(dec)
            ):
                self.identity_decorators.add(position(dec))
            elif isinstance(dec, ast.Name) and dec.id in self.wrappers:
                self.wrapping_decorators.add(position(dec))
            elif isinstance(dec, ast.Name) and dec.id in self.fallback_identities:
                self.fallback_decorators[position(dec)] = self.fallback_identities[dec.id]
            elif len(fn.decorator_list) == 1 and isinstance(fn, ast.FunctionDef):
                self._application(dec, fn)

    def _application(self, dec: ast.expr, fn: ast.FunctionDef) -> None:
        """A decorator the evaluator applies to the function (``@deprecated(version=...)``,
        a factory of the module's own returning a partial of itself or a closure): an
        identity when it returns the function, a wrapping decorator when a closure."""
        function = FunctionRef(fn, owner=self, tracked=True)
        try:
            self.steps = 0
            made = self.apply(self._eval(dec, None), [function], {}, dec)
        except (Unknown, Break, Continue, Return, RecursionError, *OPERATOR_ERRORS):
            return
        if made is function:
            self.identity_decorators.add(position(dec))
            self.applied[position(dec)] = function
        elif isinstance(made, Closure):
            called = calls_through(
                made.node,
                made.scope.names,
                function,
                qualify=self.qualify,
                module_bound=self.bound,
                argument_is_warning=lambda name: self._warning_argument(dec, made.node, name),
            )
            if called is None:
                self.wrapping_decorators.add(position(dec))
            else:  # served as the wrapper: the same call, and a warning
                self.identity_decorators.add(position(dec))
                self.wrapper_calls[position(dec)] = called

    def wrapper_reach(self, decorator: ast.expr) -> tuple[str, ...]:
        """What a decorator's call-through wrapper calls besides the function (a warning),
        added to the capability's reach so its tool effects show it."""
        return self.wrapper_calls.get(position(decorator), ())

    def _warning_argument(self, dec: ast.expr, closure: ast.FunctionDef, name: str) -> bool:
        """The factory's keyword-only parameter ``name`` is a built-in warning class: its
        default, the decorator's keyword (``@deprecated(category=PendingDeprecationWarning)``)
        and every keyword the factory passes on (``partial(deprecated, category=category)``)
        name one, and the factory binds it nowhere else."""
        factory = next(
            (f for f in self.functions.values() if any(n is closure for n in walk(f))), None
        )
        if factory is None or (isinstance(dec, ast.Call) and dec.args):
            return False
        spec = factory.args
        params = dict(zip([a.arg for a in spec.kwonlyargs], spec.kw_defaults, strict=True))
        if params.get(name) is None:
            return False
        given = [params[name]]
        if isinstance(dec, ast.Call):
            if any(k.arg is None for k in dec.keywords):
                return False
            given += [k.value for k in dec.keywords if k.arg == name]
        for node in _walk_outside(factory, closure):  # the closure's own reads: its check
            if isinstance(node, ast.keyword) and (node.arg == name or node.arg is None):
                passed = isinstance(node.value, ast.Name) and node.value.id == name
                if not passed:
                    given.append(node.value)
            elif (
                isinstance(node, ast.Name)
                and node.id == name
                and not isinstance(node.ctx, ast.Load)
            ):
                return False  # bound again in the factory
            elif isinstance(node, ast.Starred):
                return False  # arguments passed on unseen
        return all(is_warning(e, self.bound) for e in given)

    def _bases(self, stmt: ast.ClassDef) -> None:
        for base in stmt.bases:
            if isinstance(base, ast.Name | ast.Attribute) and self.siblings is not None:
                name = self.qualify(base)
                foreign = name is not None and not name.startswith(("local.", "builtins."))
                if foreign and self.siblings.plain_class(self.module, name):  # type: ignore[arg-type]
                    self.plain_bases.add(position(base))
                continue
            if not (isinstance(base, ast.Call) and self.qualify(base.func) in _NAMEDTUPLES):
                continue
            try:
                self.steps = 0
                args = self._elements(base.args, None)
                kwargs = {k.arg: self._eval(k.value, None) for k in base.keywords if k.arg}
            except (Unknown, RecursionError, *OPERATOR_ERRORS):
                continue
            if len(kwargs) == len(base.keywords) and _valid_namedtuple(args, kwargs):
                self.plain_bases.add(position(base))

    def _class_body(self, stmt: ast.ClassDef) -> None:
        """Fold the class body's assignments whose value the evaluator computes from the
        module's names (``_EMPTY_HASH = hash(range(0, 0))``): the lowerer then does not
        judge them as code. A value reading a name the body bound before is not folded (it
        would be read in the module's scope, not the class's)."""
        own: set[str] = set()
        namespace = Scope({}, None, is_class=True)
        for item in stmt.body:
            if isinstance(item, _FUNCTIONS):  # most items: a method binds its name only
                namespace.names.pop(item.name, None)
                # most have no decorator: nothing to record or walk; a decorator naming
                # the class's own binding is not the module's
                decorators = item.decorator_list
                names = {n.id for d in decorators for n in walk(d) if isinstance(n, ast.Name)}
                if decorators and not own & names:
                    self._decorators(item)
                own.add(item.name)
                continue
            value = item.value if isinstance(item, ast.Assign | ast.AnnAssign) else None
            reads = {n.id for n in walk(value) if isinstance(n, ast.Name)} if value else set()
            known: object = NOT_KNOWN
            if value is not None and not (reads & (own - namespace.names.keys())):
                try:
                    self.steps = 0
                    known = self._eval(value, namespace)
                    self.folded.add(position(item))
                except (Unknown, RecursionError, *OPERATOR_ERRORS):
                    pass
            binds = bound_names(item)  # once: popped, then added to ``own``
            for name in binds:
                namespace.names.pop(name, None)
            target = single_target(item)
            if target is not None and known is not NOT_KNOWN:
                namespace.names[target] = known
            own.update(binds)

    def _class(self, stmt: ast.ClassDef) -> ClassValue | None:
        """An Enum's members, or a plain class's literal attributes (no decorator, bases
        from the reviewed table of plain standard-library classes: ``object``,
        ``datetime.tzinfo``, ``Exception``, ...). Only a class of base ``object`` has
        instances the evaluator makes and runs methods on; one of another plain base is
        made without arguments as an opaque value."""
        if stmt.decorator_list or stmt.keywords:
            return None
        parent = self._own_base(stmt)
        bases = [] if parent is not None else [self.qualify(b) for b in stmt.bases]
        enum = any(b in _ENUM_BASES for b in bases)
        if not enum and any(b not in table.PLAIN_BASES for b in bases):
            return None
        only_object = all(b == "builtins.object" for b in bases)
        attributes: dict[str, object] = {}
        methods: dict[str, object] = {}
        binds: set[str] = set()  # every name the body binds (each item's asked once)
        for item in stmt.body:
            item_binds = bound_names(item)
            binds.update(item_binds)
            for name in item_binds:  # bound again: what it held is gone
                attributes.pop(name, None)
                methods.pop(name, None)
            if (
                isinstance(item, ast.Assign)
                and len(item.targets) == 1
                and isinstance(item.targets[0], ast.Name)
            ):
                name = item.targets[0].id
                try:
                    value = self._eval(item.value, None)
                except Unknown:
                    continue
                if enum and not name.startswith("_"):
                    value = EnumMember(stmt.name, name, value)
                attributes[name] = value
            elif isinstance(item, ast.FunctionDef) and not item.decorator_list:
                methods[item.name] = item
        plain = not enum and not binds & {"__init__", "__new__", "__del__"}
        dunders = {n for n in binds if n.startswith("__") and n.endswith("__")}
        instantiable = (
            not enum
            and only_object
            and dunders <= _INSTANCE_DUNDERS
            and ("__init__" not in binds or "__init__" in methods)
        )
        definitions: tuple[ast.ClassDef, ...] = (stmt,)
        if parent is not None:  # the base's names, but those this body binds again
            attributes = {k: v for k, v in parent.attributes.items() if k not in binds} | attributes
            methods = {k: v for k, v in parent.methods.items() if k not in binds} | methods
            binds |= parent.names
            plain = plain and parent.constructible
            definitions += parent.definitions
        return ClassValue(
            stmt.name,
            attributes,
            constructible=plain,
            instantiable=instantiable,
            methods=methods,
            names=frozenset(binds),
            definitions=definitions,
        )

    def _guarded_metadata(self, stmt: ast.Try) -> bool:
        """``try: __version__ = importlib.metadata.version(__name__)`` / ``except
        PackageNotFoundError: __version__ = "unknown"``: the body reads the installed
        distributions' metadata (a bundle does not install the library as one, so there the
        handler runs); every handler catches ``PackageNotFoundError`` and only binds values
        the evaluator knows. Harmless either way; the names it binds hold either value, so
        they are bound, not known."""
        if stmt.orelse or stmt.finalbody or not stmt.handlers:
            return False
        for item in stmt.body:
            if not (
                isinstance(item, ast.Assign | ast.AnnAssign)
                and isinstance(item.value, ast.Call)
                and self.qualify(item.value.func) in _METADATA_READS
                and not item.value.keywords
                and len(item.value.args) == 1
                and _distribution_name(item.value.args[0])
                and all(isinstance(t, ast.Name) for t in _targets(item))
            ):
                return False
        for handler in stmt.handlers:
            parts = (
                []
                if handler.type is None
                else handler.type.elts
                if isinstance(handler.type, ast.Tuple)
                else [handler.type]
            )
            if parts and not any(self.qualify(p) in _CATCHES_NOT_FOUND for p in parts):
                return False
            if handler.name is not None:
                return False
            self._exec_block(handler.body, None)  # raises Unknown: judged as before
        for name in bound_names(stmt):
            self._unbind(name)
        self.folded.add(position(stmt))
        return True

    def _own_base(self, stmt: ast.ClassDef) -> ClassValue | None:
        """The one base of ``stmt`` when it is a class of the module, bound once and still
        bound, whose instances the evaluator makes (``class AnsiFore(AnsiCodes)``)."""
        if len(stmt.bases) != 1 or not isinstance(stmt.bases[0], ast.Name):
            return None
        name = stmt.bases[0].id
        value = self.values.get(name)
        if name not in self.class_nodes or not isinstance(value, ClassValue):
            return None
        return value if value.instantiable else None

    def _branch(self, stmt: ast.If | ast.Try | ast.TryStar) -> bool:
        """Decide an ``if`` test or a ``try`` of imports; run the live branch. ``False``
        when undecided (the statement is then evaluated as a whole, or forgotten)."""
        if isinstance(stmt, ast.If):
            try:
                truth = self._truth(stmt.test, None)
            except Unknown:
                self._imported_branch(stmt)
                return False
            self.decided[position(stmt)] = 0 if truth else 1
        else:
            choice = self._import_fallback(stmt)
            if choice is None and isinstance(stmt, ast.Try):
                failure = platform_failure(stmt, self.qualify, self.bound)
                if failure is None:
                    return False
                choice, self.ran_before[position(stmt)] = failure
            if choice is None:
                return False
            self.decided[position(stmt)] = choice
        for sub in self.live(stmt) or []:
            self.run(sub)
        return True

    def _imported_branch(self, stmt: ast.If) -> None:
        test, negated = stmt.test, False
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, negated = test.operand, True
        if isinstance(test, ast.Name) and test.id in self.fallback_flags:
            at, imported = self.fallback_flags[test.id]
            self.imported_branch[position(stmt)] = (at, 0 if imported != negated else 1)

    def _import_fallback(self, stmt: ast.Try | ast.TryStar) -> int | None:
        """``try: import X`` / ``except ImportError: ...``: the ``try`` body (0) runs when
        the target's standard library provides every module it imports."""
        if not stmt.body or not all(isinstance(s, ast.Import | ast.ImportFrom) for s in stmt.body):
            return None
        if not any(self._catches_import_error(h.type) for h in stmt.handlers):
            return None
        modules: list[str] = []
        for s in stmt.body:
            if isinstance(s, ast.Import):
                modules.extend(a.name for a in s.names)
            elif isinstance(s, ast.ImportFrom) and s.level == 0 and s.module:
                modules.append(s.module)
            else:
                return None
        # A third-party module may or may not be installed where the bundle runs (the
        # environment's business, not the module's): only the standard library decides.
        return 0 if all(stdlib_module(m) for m in modules) else None

    def _catches_import_error(self, node: ast.expr | None) -> bool:
        if node is None:
            return False
        parts = node.elts if isinstance(node, ast.Tuple) else [node]
        return any(self.qualify(p) in _IMPORT_ERRORS for p in parts)

    def _forget(self, stmt: ast.stmt) -> None:
        """After a statement not evaluated whole: what it binds, and every mutable value it
        may have reached, is unknown."""
        for name in bound_names(stmt):
            self._unbind(name)
        mentioned = {n.id for n in walk(stmt) if isinstance(n, ast.Name)}
        if self.mutated or (self.shared and mentioned & self.mutable):
            for name in list(self.mutable):
                self._unbind(name)
            self.shared = False
        else:
            for name in mentioned & self.mutable:
                self._unbind(name)

    def _patterns(self, node: ast.AST) -> None:
        """Fold the first argument of every ``re.`` call the statement makes, for the
        pattern check the readiness pass makes of a literal."""
        if self.imports is not None and not any(
            origin == "re" or origin.startswith("re.") for origin in self.imports.values()
        ):
            return  # no name resolves into ``re``: no call here is one of its functions
        for call in _import_time_nodes(node):
            if not (isinstance(call, ast.Call) and call.args):
                continue
            callee = self.qualify(call.func) if isinstance(call.func, ast.Attribute) else None
            if callee is None or not callee.startswith("re."):
                continue
            first = call.args[0]
            if isinstance(first, ast.Constant) and not isinstance(first.value, bytes):
                continue
            try:
                self.steps = 0
                value = self._eval(call.args[0], None)
            except (Unknown, RecursionError, *OPERATOR_ERRORS):
                continue
            if isinstance(value, bytes):
                value = _bytes_pattern(value)
            if isinstance(value, str):
                self.patterns[call_key(call)] = value


def _catches(stmt: ast.stmt) -> bool:
    """Whether something in ``stmt`` may catch or suppress what it raises (a ``try``, a
    ``with``'s context manager), or it is a definition (whose body does not run)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return True
    return any(isinstance(n, ast.Try | ast.TryStar | ast.With | ast.AsyncWith) for n in walk(stmt))


def _walk_outside(root: ast.AST, skipped: ast.AST) -> list[ast.AST]:
    """The nodes of ``root``, those of ``skipped`` left out."""
    found: list[ast.AST] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node is skipped:
            continue
        found.append(node)
        stack.extend(children(node))
    return found


def _fallback_flags(stmt: ast.Try | ast.TryStar, qualify: Qualify) -> dict[str, bool]:
    """``try: import regex`` / ``except ImportError: import re as regex; FLAG = False`` /
    ``else: FLAG = True``: each name bound to a ``bool`` literal exactly once where the body
    imported (its ``else``) and once in every handler catching the failure, to the other
    value; with the value where the body imported. A ``try`` whose body does more than
    import, or with a ``finally``, binds none."""
    found = alternatives(stmt, qualify)
    if found is None or stmt.finalbody:
        return {}
    if not all(isinstance(s, ast.Import | ast.ImportFrom) for s in stmt.body):
        return {}
    imported = _bool_bindings(stmt.orelse)
    flags: dict[str, bool] = {}
    for name, value in imported.items():
        handlers = [_bool_bindings(h.body) for h in stmt.handlers]
        if handlers and all(h.get(name) is (not value) for h in handlers):
            flags[name] = value
    return flags


def _bool_bindings(body: list[ast.stmt]) -> dict[str, bool]:
    """Names bound once, at the top of ``body``, to ``True``/``False`` and nowhere else in it."""
    found: dict[str, bool] = {}
    seen: set[str] = set()
    for stmt in body:
        for name in bound_names(stmt):
            if name in seen:
                found.pop(name, None)
                continue
            seen.add(name)
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, bool)
            ):
                found[name] = stmt.value.value
    return found


_NAMEDTUPLES: Final = frozenset({"collections.namedtuple"})
_METADATA_READS: Final = frozenset({"importlib.metadata.version"})
_CATCHES_NOT_FOUND: Final = frozenset(
    {"importlib.metadata.PackageNotFoundError", "builtins.Exception", "builtins.BaseException",
     "builtins.ModuleNotFoundError", "builtins.ImportError"}
)  # fmt: skip


def _distribution_name(node: ast.expr) -> bool:
    """A literal name, or the module's own (``__name__``, ``__package__``)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return isinstance(node, ast.Name) and node.id in ("__name__", "__package__")


def _targets(item: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return list(item.targets) if isinstance(item, ast.Assign) else [item.target]


def _valid_namedtuple(args: list[object], kwargs: dict[str, object]) -> bool:
    """Whether ``namedtuple(*args, **kwargs)`` returns a class without raising: a valid
    type name, field names that are identifiers, no keyword, none twice, none starting
    with ``_`` (unless ``rename``), defaults no more than the fields."""
    if len(args) > 2 or not set(kwargs) <= {"field_names", "rename", "defaults", "module"}:
        return False
    named = dict(zip(("typename", "field_names"), args, strict=False)) | kwargs
    typename, fields = named.get("typename"), named.get("field_names")
    rename = named.get("rename", False)
    if not isinstance(typename, str) or not isinstance(rename, bool):
        return False
    if isinstance(fields, str):
        fields = fields.replace(",", " ").split()
    if not isinstance(fields, list | tuple) or not all(isinstance(f, str) for f in fields):
        return False
    defaults = named.get("defaults")
    if defaults is not None and not (
        isinstance(defaults, list | tuple) and len(defaults) <= len(fields)
    ):
        return False
    if not isinstance(named.get("module"), str | type(None)):
        return False
    names = [typename] if rename else [typename, *fields]
    if any(not n.isidentifier() or keyword.iskeyword(n) for n in names):
        return False
    return rename or (
        len(set(fields)) == len(fields) and not any(f.startswith("_") for f in fields)
    )


def _import_time_nodes(node: ast.AST) -> list[ast.AST]:
    """The nodes of ``node`` that run when it runs: not the bodies of the functions and
    lambdas it defines (a class's methods run when called)."""
    out: list[ast.AST] = []
    stack = [node]
    while stack:
        current = stack.pop()
        out.append(current)
        if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef):
            stack.extend(current.decorator_list)
            continue
        if isinstance(current, ast.Lambda):
            continue
        stack.extend(children(current))
    return out


def _bytes_pattern(pattern: bytes) -> str | None:
    """A bytes pattern as the text the readiness pass compiles to check a literal one: its
    Latin-1 reading, when the bytes pattern itself compiles (checked here, on bytes)."""
    try:
        re.compile(pattern)
    except (re.error, ValueError, OverflowError, RecursionError):
        return None
    return pattern.decode("latin-1")


def _fallback_identities(stmt: ast.Try | ast.TryStar, qualify: Qualify) -> list[str]:
    """The names the ``try`` body imports that a catching handler (importing nothing,
    raising nothing) defines as an identity: ``tool`` is then the import's when it is
    provided, else the identity."""
    found = alternatives(stmt, qualify)
    if found is None or not found[1]:
        return []
    imported = {
        alias.asname or alias.name.split(".", 1)[0]
        for s in stmt.body
        if isinstance(s, ast.Import | ast.ImportFrom)
        for alias in s.names
    }
    out: list[str] = []
    for handler in stmt.handlers:
        if not catches_import_error(handler, qualify):
            continue
        for item in handler.body:
            if (
                isinstance(item, ast.FunctionDef)
                and not item.decorator_list
                and item.name in imported
                and _is_identity(item)
            ):
                out.append(item.name)
    return out


def _is_identity(fn: ast.FunctionDef) -> bool:
    """``def tool(f): return f``, also with a docstring, and ``def tool(*a, **k)`` that
    returns its first argument when called bare; a ``functools.wraps`` wrapper that only
    calls through is not followed (its signature is the wrapper's)."""
    spec = fn.args
    params = [a.arg for a in [*spec.posonlyargs, *spec.args]]
    body = [
        s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]
    if len(params) != 1 or spec.vararg or spec.kwarg or spec.kwonlyargs:
        return False
    return (
        len(body) == 1
        and isinstance(body[0], ast.Return)
        and isinstance(body[0].value, ast.Name)
        and body[0].value.id == params[0]
    )
