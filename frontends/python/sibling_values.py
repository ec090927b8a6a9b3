"""The values of a repository's other modules, as the import-time evaluator of one module
reads them (``from . import misc`` then ``misc.URI_COMPONENTS``; ``from .abnf import
PATTERN``): each other module is read and evaluated once, by the same evaluator, never run.

A value read from module ``M`` at import is ``M``'s value when ``M`` has finished running,
which is what an importer sees unless ``M`` is still running: when ``M`` imports (through
its own module-level imports, transitively) the module reading it, the read is unknown.
A value is plain data only (the module's own markers stay its own), copied in, and the
reader may not change a container it copied (see ``EvaluatorState._foreign_value``).
A base class from another module runs nothing when it is a class that module binds once,
with no decorator, no metaclass, no subclass hook, and bases of the same kind.

Bounded as the evaluator is: at most ``MAX_MODULES`` modules read per repository, each at
most ``MAX_BYTES``; past that a value is unknown.
"""

import ast
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final

from svcc.frontends.python import _sibling_context
from svcc.frontends.python._eval_state import OPERATOR_ERRORS
from svcc.frontends.python._evaluator import ModuleValues
from svcc.frontends.python._source import SourceDecodeError, decode_source
from svcc.frontends.python._statements import nested_bindings
from svcc.frontends.python._types import Symbols
from svcc.frontends.python._values import FunctionRef, Unknown, is_plain
from svcc.ir.imports import package_of, resolve_relative
from svcc.ir.python_version import running_version

# A module's dotted name -> its bytes and whether it is a package, or ``None`` when the
# repository has no such module.
Lookup = Callable[[str], tuple[bytes, bool] | None]

MAX_MODULES: Final = 200
MAX_BYTES: Final = 1_000_000
MAX_BASE_DEPTH: Final = 3
# Hooks a class runs when a subclass of it is made.
_SUBCLASS_HOOKS: Final = frozenset({"__init_subclass__", "__mro_entries__", "__class_getitem__"})


class _Read:
    def __init__(self, values: ModuleValues, imports: frozenset[str], names: set[str]) -> None:
        self.values = values
        self.imports = imports  # repository modules its import runs (module-level imports)
        self.names = names  # names its statements bind other than by importing


class Siblings:
    """The repository's modules for the evaluator (``_sibling_context.SiblingValues``)."""

    def __init__(self, lookup: Lookup, python_version: tuple[int, int]) -> None:
        self.lookup = lookup
        self.version = python_version
        self._read: dict[str, _Read | None] = {}
        self._running: set[str] = set()

    # -- the evaluator's questions ----------------------------------------------------------
    def absolute(self, reader: str, level: int, module: str) -> str | None:
        found = self.lookup(reader)
        return resolve_relative(package_of(reader, bool(found and found[1])), level, module)

    def value(self, reader: str, name: str, node: ast.AST) -> object:
        module, attribute = self._split(reader, name, node)
        read = self._module(module)
        if read is None or module == reader:
            raise Unknown(node, f"`{name}`: a module the evaluator could not read")
        if self._reaches(module, reader):
            raise Unknown(node, f"`{name}`: its module imports this one (it may not have run)")
        values = read.values
        if attribute in values.functions and attribute not in values.values:
            return FunctionRef(values.functions[attribute], own=False)
        if attribute not in values.values:
            raise Unknown(node, f"`{name}` is not a value the evaluator knows")
        value = values.values[attribute]
        if not is_plain(value):
            raise Unknown(node, f"`{name}` is not plain data")
        return value

    def identity(self, reader: str, name: str) -> bool:
        try:
            return self._identity(reader, name, 0)
        except Unknown:
            return False

    def _identity(self, reader: str, name: str, depth: int) -> bool:
        module, attribute = self._split(reader, name, ast.Constant(None))
        read = self._module(module)
        if read is None or module == reader or depth > MAX_BASE_DEPTH:
            return False
        imported = read.values.imported.get(attribute)
        if imported is not None:  # ``from .compat import with_str_method`` there
            return self._identity(module, imported, depth + 1)
        return attribute in read.values.identities

    def plain_class(self, reader: str, name: str) -> bool:
        try:
            return self._plain_class(reader, name, 0)
        except Unknown:
            return False

    # -- reading ----------------------------------------------------------------------------
    def _split(self, reader: str, name: str, node: ast.AST) -> tuple[str, str]:
        """``(module, attribute)`` for a dotted name read in ``reader``: the module a
        repository module, the attribute one name (a module itself is not a value)."""
        if name.startswith("."):
            level = len(name) - len(name.lstrip("."))
            base = self.absolute(reader, level, "")
            if base is None:
                raise Unknown(node, f"`{name}` reaches above the top package")
            name = f"{base}.{name[level:]}"
        module, _, attribute = name.rpartition(".")
        if not module or self.lookup(name) is not None or self.lookup(module) is None:
            raise Unknown(node, f"`{name}` is not a value of a module of the repository")
        parent, _, last = module.rpartition(".")
        read_parent = self._module(parent) if parent else None
        if parent and (read_parent is None or {last, "*"} & read_parent.names):
            raise Unknown(node, f"`{name}`: its package binds `{last}` itself")
        return module, attribute

    def _module(self, module: str) -> _Read | None:
        if module in self._read:
            return self._read[module]
        if module in self._running or len(self._read) >= MAX_MODULES:
            return None
        found = self.lookup(module)
        read = None
        if found is not None and len(found[0]) <= MAX_BYTES:
            self._running.add(module)
            try:
                read = self._evaluate(module, *found)
            finally:
                self._running.discard(module)
        self._read[module] = read
        return read

    def _evaluate(self, module: str, data: bytes, is_package: bool) -> _Read | None:
        try:
            text, _ = decode_source(data)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                feature = min(self.version, running_version())
                tree = ast.parse(text, feature_version=feature)
        except (SourceDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        symbols = Symbols()
        values = ModuleValues(symbols.qualify, self.version, module)
        package = package_of(module, is_package)
        imports: set[str] = set()
        names: set[str] = set()
        for stmt in tree.body:
            try:
                values.run(stmt)
            except (Unknown, RecursionError, *OPERATOR_ERRORS):
                return None
            _note_imports(stmt, package, symbols, imports)
            if not isinstance(stmt, ast.Import | ast.ImportFrom):
                names.update(nested_bindings(stmt))
            elif any(alias.name == "*" for alias in stmt.names):
                names.add("*")
        # its own packages ran before it (Python imports them first): they are not what
        # its import runs
        ancestors = {module.rsplit(".", n)[0] for n in range(1, module.count(".") + 1)}
        local = {m for m in imports - ancestors if self.lookup(m) is not None}
        return _Read(values, frozenset(local), names)

    def _reaches(self, start: str, target: str) -> bool:
        """Whether importing ``start`` runs ``target`` (unknown counts as yes)."""
        seen = {start}
        pending = [start]
        while pending:
            read = self._module(pending.pop())
            if read is None:
                return True
            for name in read.imports:
                if name == target:
                    return True
                if name not in seen:
                    if len(seen) >= MAX_MODULES:
                        return True
                    seen.add(name)
                    pending.append(name)
        return False

    def _plain_class(self, reader: str, name: str, depth: int) -> bool:
        if depth > MAX_BASE_DEPTH:
            return False
        module, attribute = self._split(reader, name, ast.Constant(None))
        read = self._module(module)
        if read is None or module == reader:
            return False
        values = read.values
        imported = values.imported.get(attribute)
        if imported is not None:  # ``from ._mixin import URIMixin`` in that module
            return self._plain_class(module, imported, depth + 1)
        node = values.class_nodes.get(attribute)
        if node is None or node.decorator_list or node.keywords:
            return False
        own = {n for item in node.body for n in nested_bindings(item)}
        if own & _SUBCLASS_HOOKS:
            return False
        for base in node.bases:
            qualified = values.qualify(base)
            if qualified == "builtins.object" or values.is_plain_base(base):
                continue
            if qualified is None or not qualified.startswith("local."):
                return False
            if not self._plain_class(module, f"{module}.{qualified[6:]}", depth + 1):
                return False
        return True


def _note_imports(stmt: ast.stmt, package: str, symbols: Symbols, imports: set[str]) -> None:
    """Record what ``stmt`` imports: in ``symbols`` (for the names the evaluator qualifies
    next) and, with the packages on the way, in ``imports`` (every module-level import,
    also in a class body or an ``if``/``try``: not in a function's body)."""
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        stack.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Import):
            for alias in node.names:
                _with_parents(alias.name, imports)
                head = alias.name.split(".", 1)[0]
                symbols.imports[alias.asname or head] = alias.name if alias.asname else head
        elif isinstance(node, ast.ImportFrom):
            base = (
                node.module
                if not node.level
                else resolve_relative(package, node.level, node.module or "")
            )
            if not base:
                continue
            _with_parents(base, imports)
            for alias in node.names:
                if alias.name != "*":
                    imports.add(f"{base}.{alias.name}")  # a submodule, when it is one
                    raw = "." * node.level + (node.module or "")  # as the lowerer's symbols
                    sep = "" if raw.endswith(".") else "."
                    symbols.imports[alias.asname or alias.name] = f"{raw}{sep}{alias.name}"


def _with_parents(name: str, into: set[str]) -> None:
    parts = name.split(".")
    for end in range(1, len(parts) + 1):
        into.add(".".join(parts[:end]))


@contextmanager
def reading(lookup: Lookup, python_version: tuple[int, int]) -> Iterator[None]:
    """The repository's modules readable by the evaluator while the block lowers it."""
    _sibling_context.push(Siblings(lookup, python_version))
    try:
        yield
    finally:
        _sibling_context.pop()
