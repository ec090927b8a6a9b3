"""What the readers of a module share: the symbol table, the evaluator's values and the facts
recorded so far. One object per module lowered; each reader (a base class of
``ModuleLowerer``, see ``frontends/python/_lower.py``) owns one kind of fact over it."""

import ast
from collections.abc import Callable, Iterable

from svcc.frontends.python._evaluator import ModuleValues
from svcc.frontends.python._file_paths import FilePath
from svcc.frontends.python._source import SourceText
from svcc.frontends.python._types import Symbols, TypeResolver
from svcc.frontends.python.data_reads import Body
from svcc.frontends.python.unbound import ModuleNames
from svcc.ir.model import (
    BindingKind,
    Capability,
    ClassDecl,
    Fallback,
    FileRead,
    GlobalWrite,
    Import,
    ModelDecl,
    ServiceDecl,
    SourceInfo,
    Statement,
    TypedDictDecl,
)

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


class LowererState:
    """The facts recorded so far and what reading them needs; ``lower`` turns them into IR."""

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
        self._module_names = ModuleNames(src.mentions)  # what the served module binds
        # What import-time code computes, read in the first pass (see ``_evaluator``).
        major, minor = source.python_version.split(".")
        self.values = ModuleValues(
            self.symbols.qualify, (int(major), int(minor)), module, self.symbols.imports
        )
        # The alternative the import being recorded is of (see ``_fallbacks``).
        self._fallback: Fallback | None = None
        self._fallback_groups = 0
        self._fallback_group_at: dict[tuple[int, int], int] = {}  # a ``try``'s position
