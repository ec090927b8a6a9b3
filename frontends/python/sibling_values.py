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

Bounded as the evaluator is: each module read once (at most ``MAX_BYTES``), evaluated once,
and the walk of imports stops at ``MAX_MODULES`` modules (then the answer is "it may import
the reader": unknown). What a module holds does not depend on which module asked first.
"""

import ast
import fcntl
import marshal
import os
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from typing import Final

from svcc.frontends.python import _sibling_context, parse
from svcc.frontends.python._chunks import SLICE_LINES
from svcc.frontends.python._eval_state import OPERATOR_ERRORS
from svcc.frontends.python._evaluator import ModuleValues
from svcc.frontends.python._source import SourceDecodeError, decode_source
from svcc.frontends.python._statements import nested_bindings
from svcc.frontends.python._types import Symbols
from svcc.frontends.python._values import FunctionRef, Unknown, is_plain
from svcc.ir.imports import package_of, resolve_relative

# A module's dotted name -> its bytes and whether it is a package, or ``None`` when the
# repository has no such module.
Lookup = Callable[[str], tuple[bytes, bool] | None]
# What the lowering processes share of a question (see ``_Shared``): marshal's data.
Answer = bool | tuple[tuple[str, ...], ...] | None

MAX_MODULES: Final = 10_000
MAX_BYTES: Final = 1_000_000
MAX_BASE_DEPTH: Final = 3
# Trees kept after a parse (the evaluator's or the lowerer's), the least recently used
# dropped first past this many bytes of their texts in all (a tree takes about 28 bytes
# a character of its text: ~28 MB). A module's facts are read (``_reaches``) long before its
# values are (``_module``), and the modules whose values are read are the ones many others
# import, lowered early: each parse again of one costs milliseconds.
_TREE_BYTES: Final = 1_000_000
# Hooks a class runs when a subclass of it is made.
_SUBCLASS_HOOKS: Final = frozenset({"__init_subclass__", "__mro_entries__", "__class_getitem__"})


class _Facts:
    """What a module's text says before it is evaluated: the repository modules its
    import runs, and the names it binds other than by importing."""

    def __init__(self, imports: frozenset[str], names: frozenset[str]) -> None:
        self.imports = imports
        self.names = names


class _Names:
    """What the questions of a base class or a decorator read of an evaluated module
    besides its classes' answers: the names it imports (``from M import N``, still bound)
    and its identity functions."""

    def __init__(self, imported: dict[str, str], identities: AbstractSet[str]) -> None:
        self.imported = imported
        self.identities = identities

    @classmethod
    def of(cls, values: ModuleValues) -> "_Names":
        return cls(values.imported, values.identities)

    def stored(self) -> "Answer":
        return (tuple(self.imported), tuple(self.imported.values()), tuple(self.identities))

    @classmethod
    def restored(cls, stored: object) -> "_Names | None":
        if not isinstance(stored, tuple) or len(stored) != 3:
            return None
        names, targets, identities = stored
        return cls(dict(zip(names, targets, strict=True)), frozenset(identities))


class Siblings:
    """The repository's modules for the evaluator (``_sibling_context.SiblingValues``)."""

    def __init__(
        self, lookup: Lookup, python_version: tuple[int, int], shared: int | None = None
    ) -> None:
        self.lookup = lookup
        self.version = python_version
        # The file the lowering workers of one tree share answers through: each module is
        # read (parsed, evaluated) once among them, not once in each (see ``_Shared``).
        self._shared = _Shared(shared) if shared is not None else None
        self._facts: dict[str, _Facts | None] = {}
        self._values: dict[str, ModuleValues | None] = {}
        self._running: set[str] = set()
        # module -> its tree, whether it is a package, its text's size (see _TREE_BYTES)
        # (an OrderedDict: a plain dict's first key is found by skipping every key deleted
        # before it, and this one drops its first keys all the time)
        self._trees: OrderedDict[str, tuple[ast.Module, bool, int]] = OrderedDict()
        self._tree_bytes = 0
        self._unparsable: set[str] = set()
        # start module -> every repository module its import runs (``None``: unknown)
        self._closures: dict[str, frozenset[str] | None] = {}
        # Modules whose reading ran out of stack or memory here: what that decided depends
        # on how deep this process was when it asked, so it is not shared.
        self._local: set[str] = set()
        # Told of each module parsed here (its text, grammar and tree): a lowering worker
        # keeps the tree to lower the module from, when no worker has taken it yet.
        self.keep: Callable[[str, str, tuple[int, int], ast.Module], None] | None = None

    def lowered(self, module: str, text: str, version: tuple[int, int], tree: ast.Module) -> None:
        """``module`` was just parsed from ``text`` to be lowered: its facts come from that
        tree rather than from a second parse when another module's evaluation asks (the
        same facts: the repository's text), and so do its values when the tree is still
        held then and was parsed with the same grammar (the tree ``_parse`` would make)."""
        hold = version == self.version and module not in self._values
        if module in self._facts and not hold:
            return
        found = self.lookup(module)
        if found is None or len(found[0]) > MAX_BYTES:
            return
        try:
            same = decode_source(found[0])[0] == text
        except SourceDecodeError:
            return
        if not same:
            return
        if module not in self._facts:
            self._facts[module] = facts = self._facts_of(module, tree, found[1])
            if self._shared is not None:
                self._shared.put(f"facts:{module}", _stored(facts))
        if hold:
            self._hold(module, tree, found[1], len(found[0]))

    # -- the evaluator's questions ----------------------------------------------------------
    def absolute(self, reader: str, level: int, module: str) -> str | None:
        found = self.lookup(reader)
        return resolve_relative(package_of(reader, bool(found and found[1])), level, module)

    def value(self, reader: str, name: str, node: ast.AST) -> object:
        module, attribute = self._split(reader, name, node)
        if module == reader or self._reaches(module, reader):
            raise Unknown(node, f"`{name}`: its module imports this one (it may not have run)")
        values = self._module(module)
        if values is None:
            raise Unknown(node, f"`{name}`: a module the evaluator could not read")
        if attribute in values.functions and attribute not in values.values:
            return FunctionRef(values.functions[attribute], own=False, owner=values)
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
        if module == reader or depth > MAX_BASE_DEPTH or self._reaches(module, reader):
            return False
        names = self._names(module)
        if names is None:
            return False
        imported = names.imported.get(attribute)
        if imported is not None:  # ``from .compat import with_str_method`` there
            return self._identity(module, imported, depth + 1)
        return attribute in names.identities

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
        facts = self._read_facts(parent) if parent else None
        if parent and (facts is None or {last, "*"} & facts.names):
            raise Unknown(node, f"`{name}`: its package binds `{last}` itself")
        return module, attribute

    def _parse(self, module: str) -> tuple[ast.Module, bool] | None:
        held = self._trees.get(module)
        if held is not None:
            self._trees.move_to_end(module)  # the most recently used last
            return held[0], held[1]
        if module in self._unparsable:
            return None
        parsed = self._parse_new(module)
        if parsed is None:
            if module not in self._local:  # (the stack's depth or the memory left: not kept)
                self._unparsable.add(module)
            return None
        found = self.lookup(module)
        self._hold(module, *parsed, len(found[0]) if found is not None else 0)
        return parsed

    def _hold(self, module: str, tree: ast.Module, is_package: bool, size: int) -> None:
        """Keep ``module``'s tree for a later read, within ``_TREE_BYTES``."""
        self._drop(module)
        self._trees[module] = (tree, is_package, size)
        self._tree_bytes += size
        while self._tree_bytes > _TREE_BYTES and len(self._trees) > 1:
            self._tree_bytes -= self._trees.popitem(last=False)[1][2]

    def _drop(self, module: str) -> None:
        held = self._trees.pop(module, None)
        if held is not None:
            self._tree_bytes -= held[2]

    def _parse_new(self, module: str) -> tuple[ast.Module, bool] | None:
        found = self.lookup(module)
        if found is None or len(found[0]) > MAX_BYTES:
            return None
        try:
            text, _ = decode_source(found[0])
            tree = parse(text, self.version, module)  # the lowerer's parse: the same tree
        except (SourceDecodeError, SyntaxError, ValueError):
            return None
        except (RecursionError, MemoryError):
            self._local.add(module)  # the stack's depth or the memory left: not shared
            return None
        if self.keep is not None and text.count("\n") < SLICE_LINES:
            # (a longer module is lowered a slice at a time: its whole tree would not be used)
            self.keep(module, text, self.version, tree)
        return tree, found[1]

    def _read_facts(self, module: str) -> _Facts | None:
        if module in self._facts:
            return self._facts[module]
        found, stored = (
            self._shared.get(f"facts:{module}") if self._shared is not None else (False, None)
        )
        facts = _restored(stored) if found else None
        if not found:
            parsed = self._parse(module)
            facts = None if parsed is None else self._facts_of(module, *parsed)
            if self._shared is not None and module not in self._local:
                self._shared.put(f"facts:{module}", _stored(facts))
        self._facts[module] = facts
        return facts

    def _facts_of(self, module: str, tree: ast.Module, is_package: bool) -> _Facts:
        package = package_of(module, is_package)
        imports: set[str] = set()
        names: set[str] = set()
        for stmt in tree.body:
            _note_imports(stmt, package, Symbols(), imports)
            if not isinstance(stmt, ast.Import | ast.ImportFrom):
                names.update(nested_bindings(stmt))
            elif any(alias.name == "*" for alias in stmt.names):
                names.add("*")
        # its own packages ran before it (Python imports them first): they are not what
        # its import runs
        ancestors = {module.rsplit(".", n)[0] for n in range(1, module.count(".") + 1)}
        local = {m for m in imports - ancestors if self.lookup(m) is not None}
        return _Facts(frozenset(local), frozenset(names))

    def _module(self, module: str) -> ModuleValues | None:
        """The module evaluated (once). A module read while it is being evaluated is not
        known: a read follows an import, and ``_reaches`` refuses a read along a cycle, so
        that does not happen (the answer would depend on the order of reading)."""
        if module in self._values:
            return self._values[module]
        if module in self._running:
            return None
        parsed = self._parse(module)
        values = None
        if parsed is not None:
            self._running.add(module)
            try:
                values = self._evaluate(module, *parsed)
            finally:
                self._running.discard(module)
        self._values[module] = values
        if module in self._facts:  # nothing reads its tree again
            self._drop(module)
        if self._shared is not None and module not in self._local:
            self._share_plain_answers(self._shared, module, values)
        return values

    def _names(self, module: str) -> "_Names | None":
        """What ``module`` imports by name and its identity functions: shared by another
        process that evaluated it, or from its evaluation here (``None``: no values)."""
        shared = self._shared_names(module)
        if shared is not None:
            return shared
        values = self._module(module)
        return None if values is None else _Names.of(values)

    def _shared_names(self, module: str) -> "_Names | None":
        """``module``'s names as another process shared them with its classes' answers
        (``_share_plain_answers``), when this process has not evaluated it: a question of
        its imported names or its classes then costs no parse and no evaluation here."""
        if self._shared is None or module in self._values:
            return None
        found, stored = self._shared.get(f"names:{module}")
        return _Names.restored(stored) if found else None

    def _share_plain_answers(
        self, shared: "_Shared", module: str, values: ModuleValues | None
    ) -> None:
        """What ``_plain_in`` answers of every class the module itself defines, at every
        depth, for the other lowering processes: a module is evaluated for one class, and
        the others ask of its other classes (the standard library's ``typing``, ``enum``,
        ``collections``), each of which cost them a parse and an evaluation of it."""
        if values is None:
            shared.put_many([(f"novalues:{module}", True)])
            return
        answers: list[tuple[str, Answer]] = []
        for name in values.class_nodes:
            if name in values.imported:
                continue
            for depth in range(MAX_BASE_DEPTH + 1):
                try:
                    plain = self._class_in(module, values, name, depth)
                except Unknown:
                    plain = False
                answers.append((f"plain:{module}:{name}:{depth}", plain))
        # last, in the same write: a process that reads it has read the answers above
        answers.append((f"names:{module}", _Names.of(values).stored()))
        shared.put_many(answers)

    def _evaluate(self, module: str, tree: ast.Module, is_package: bool) -> ModuleValues | None:
        symbols = Symbols()
        values = ModuleValues(symbols.qualify, self.version, module, symbols.imports)
        package = package_of(module, is_package)
        for stmt in tree.body:
            try:
                values.run(stmt)
            except (Unknown, RecursionError, *OPERATOR_ERRORS) as exc:
                if isinstance(exc, RecursionError):
                    self._local.add(module)  # the stack's depth decided: not shared
                return None
            _note_imports(stmt, package, symbols, set())
        values.finish()
        return values

    def _reaches(self, start: str, target: str) -> bool:
        """Whether importing ``start`` runs ``target``, another module (unknown counts as
        yes). The closure of ``start`` is walked once for every target."""
        if start not in self._closures:
            self._closures[start] = self._closure(start)
        closure = self._closures[start]
        return closure is None or target in closure

    def _closure(self, start: str) -> frozenset[str] | None:
        """Every repository module importing ``start`` runs, or ``None`` when one of them
        cannot be read or there are more than ``MAX_MODULES``."""
        seen = {start}
        pending = [start]
        while pending:
            facts = self._read_facts(pending.pop())
            if facts is None:
                return None
            for name in facts.imports:
                if name not in seen:
                    if len(seen) >= MAX_MODULES:
                        return None
                    seen.add(name)
                    pending.append(name)
        return frozenset(seen)  # with ``start``: callers never ask about the module itself

    def _plain_class(self, reader: str, name: str, depth: int) -> bool:
        if depth > MAX_BASE_DEPTH:
            return False
        module, attribute = self._split(reader, name, ast.Constant(None))
        if module == reader or self._reaches(module, reader):
            return False
        return self._plain_in(module, attribute, depth)

    def _plain_in(self, module: str, attribute: str, depth: int) -> bool:
        """Whether ``module``'s ``attribute`` is a plain class, whoever reads it (the
        reader only decides whether it may read ``module`` at all): shared between the
        lowering processes, since evaluating ``module`` costs more than the question."""
        key = f"plain:{module}:{attribute}:{depth}"
        found, answer = self._shared.get(key) if self._shared is not None else (False, None)
        if found:
            return answer is True
        if self._shared is not None and self._shared.get(f"novalues:{module}")[0]:
            return False  # what ``_plain_here`` answers when the module has no values
        try:
            plain = self._plain_here(module, attribute, depth)
        except Unknown:  # what ``plain_class`` answers for it
            plain = False
        if self._shared is not None and not self._local:  # (see ``_local``)
            self._shared.put(key, plain)
        return plain

    def _plain_here(self, module: str, attribute: str, depth: int) -> bool:
        shared = self._shared_names(module)
        if shared is not None:  # evaluated by another process, which shared its answers
            imported = shared.imported.get(attribute)
            if imported is not None:
                return self._plain_class(module, imported, depth + 1)
            assert self._shared is not None  # (names are shared only with answers)
            found, answer = self._shared.get(f"plain:{module}:{attribute}:{depth}")
            return found and answer is True  # not found: not a class the module defines
        values = self._module(module)
        if values is None:
            return False
        imported = values.imported.get(attribute)
        if imported is not None:  # ``from ._mixin import URIMixin`` in that module
            return self._plain_class(module, imported, depth + 1)
        return self._class_in(module, values, attribute, depth)

    def _class_in(self, module: str, values: ModuleValues, attribute: str, depth: int) -> bool:
        node = values.class_nodes.get(attribute)
        if node is None or node.decorator_list or node.keywords or depth > MAX_BASE_DEPTH:
            return False
        own = {n for item in node.body for n in nested_bindings(item)}
        if own & _SUBCLASS_HOOKS:
            return False
        for base in node.bases:
            if values.qualify(base) == "builtins.object" or values.is_plain_base(base):
                continue
            if not isinstance(base, ast.Name) or base.id not in values.class_nodes:
                return False
            if values.class_nodes[base.id].lineno > node.lineno:  # bound again after it
                return False
            if not self._class_in(module, values, base.id, depth + 1):
                return False
        return True


class _Shared:
    """Answers shared between the processes lowering one tree, through an unnamed file
    their parent made before forking them (nothing is left behind, whatever ends them):
    records appended under a lock by whichever process answered first, read by the others
    when they need an answer. Each answer depends only on the repository's text (a
    module's facts; whether a module's class is plain), so which process wrote it does
    not change it."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._read_to = 0
        self._seen: dict[str, object] = {}

    def get(self, key: str) -> tuple[bool, object]:
        """``(found, answer)``: whether some process stored an answer for ``key``."""
        if key not in self._seen:
            self._catch_up()
        if key not in self._seen:
            return False, None
        return True, self._seen[key]

    def put(self, key: str, answer: Answer) -> None:
        """Store ``answer`` for ``key``."""
        self.put_many([(key, answer)])

    def put_many(self, answers: Sequence[tuple[str, Answer]]) -> None:
        """Store each ``(key, answer)``, in one write."""
        if not answers:
            return
        records = []
        for key, answer in answers:
            payload = marshal.dumps((key, answer))
            records.append(len(payload).to_bytes(4, "little") + payload)
        record = b"".join(records)
        try:
            fcntl.lockf(self.fd, fcntl.LOCK_EX)
            try:
                start = os.fstat(self.fd).st_size
                try:
                    written = os.pwrite(self.fd, record, start)
                except OSError:
                    written = -1
                if written != len(record):  # a record cut short would stop every reader
                    os.ftruncate(self.fd, start)
            finally:
                fcntl.lockf(self.fd, fcntl.LOCK_UN)
        except OSError:  # sharing saves time only: each process can still answer alone
            pass

    def _catch_up(self) -> None:
        """Read the records appended since the last look. The file's size grows only
        over bytes already written, so every record within it is whole."""
        try:
            data = os.pread(self.fd, os.fstat(self.fd).st_size - self._read_to, self._read_to)
        except OSError:
            return
        at = 0
        while at + 4 <= len(data):
            size = int.from_bytes(data[at : at + 4], "little")
            if at + 4 + size > len(data):
                break
            try:
                key, answer = marshal.loads(data[at + 4 : at + 4 + size])
            except (EOFError, ValueError, TypeError):
                break
            self._seen[key] = answer
            at += 4 + size
        self._read_to += at


def _stored(facts: _Facts | None) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    return None if facts is None else (tuple(facts.imports), tuple(facts.names))


def _restored(stored: object) -> _Facts | None:
    if not isinstance(stored, tuple):
        return None
    imports: tuple[str, ...] = stored[0]
    names: tuple[str, ...] = stored[1]
    return _Facts(frozenset(imports), frozenset(names))


_STATEMENT_LISTS: Final = ("body", "orelse", "handlers", "finalbody", "cases")
_STATEMENT_FIELDS: dict[type, tuple[str, ...]] = {}


def _statement_fields(kind: type) -> tuple[str, ...]:
    """The fields of a statement (or handler, or case) that hold statements, in order."""
    fields = _STATEMENT_FIELDS.get(kind)
    if fields is None:
        fields = _STATEMENT_FIELDS[kind] = tuple(
            f
            for f in kind._fields  # type: ignore[attr-defined]
            if f in _STATEMENT_LISTS
        )
    return fields


def _note_imports(stmt: ast.stmt, package: str, symbols: Symbols, imports: set[str]) -> None:
    """Record what ``stmt`` imports: in ``symbols`` (for the names the evaluator qualifies
    next) and, with the packages on the way, in ``imports`` (every module-level import,
    also in a class body or an ``if``/``try``: not in a function's body)."""
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        # an import is a statement: only the lists of statements (and of the handlers and
        # cases holding them) are entered, in the order of the node's fields
        for field in _statement_fields(type(node)):
            stack.extend(getattr(node, field))
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


def keep_parsed(keep: Callable[[str, str, tuple[int, int], ast.Module], None]) -> None:
    """In a process lowering the tree: ``keep`` is told of each module the evaluator parses
    (its name, text, grammar and tree; see ``Siblings.keep``)."""
    provider = _sibling_context.current()
    if isinstance(provider, Siblings):
        provider.keep = keep


@contextmanager
def reading(
    lookup: Lookup, python_version: tuple[int, int], *, shared: bool = False
) -> Iterator[None]:
    """The repository's modules readable by the evaluator while the block lowers it;
    ``shared``: by processes forked in the block, which share what they read."""
    fd = _unnamed_file() if shared else None  # ``None`` too when none can be made
    _sibling_context.push(Siblings(lookup, python_version, fd))
    try:
        yield
    finally:
        _sibling_context.pop()
        if fd is not None:
            os.close(fd)


def _unnamed_file() -> int | None:
    """A file descriptor of a file without a name (in memory where the system allows), or
    ``None`` when the system gives none (sharing only saves time)."""
    if hasattr(os, "memfd_create"):
        try:
            return os.memfd_create("svcc-facts", os.MFD_CLOEXEC)
        except OSError:
            pass
    try:
        import tempfile  # only here: ``inspect FILE`` does not import it

        with tempfile.TemporaryFile() as file:  # unlinked already; the duplicate keeps it
            return os.dup(file.fileno())
    except OSError:
        return None
