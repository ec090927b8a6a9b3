"""The IR records: one module's facts, read from its source without running it.

Everything here is a frozen attrs class holding tuples, and every element read from
source carries a :class:`Span`. The IR states facts (what is bound where, which
imports are guarded, what a default's source text is); judging those facts is the
readiness pass's job, so the IR never depends on the environment (installed
packages, declared requirements, sibling files).
"""

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from attrs import frozen
else:  # the same records, their methods generated ahead of time
    from svcc.ir.records import frozen

from svcc.ir.schema import IR_SCHEMA
from svcc.ir.types import LiteralValue, TypeNode


@frozen(kw_only=True)
class Span:
    """A source region. Lines are 1-based, columns 0-based characters.

    For notebooks, ``cell`` is the 1-based position of the cell among all cells and
    ``line`` counts within that cell; for ``.py`` input ``cell`` is ``None``.
    """

    line: int
    column: int
    end_line: int
    end_column: int
    cell: int | None = None


SourceFormat = Literal["python", "notebook"]


@frozen(kw_only=True)
class SourceInfo:
    """Where the module came from. ``path`` is relative (a file name, or a path inside the
    analysed directory), never absolute, so the IR is the same on every machine."""

    path: str
    format: SourceFormat
    sha256: str
    module_sha256: str
    encoding: str
    python_version: str


@frozen(kw_only=True)
class Default:
    """A default's presence and its source text; the expression is never evaluated."""

    text: str
    span: Span


ParamKind = Literal[
    "positional_only", "positional_or_keyword", "var_positional", "keyword_only", "var_keyword"
]


ParamUseKind = Literal[
    "call",
    "isinstance",
    "issubclass",
    "decorator",
    "attribute",
    "method",
    "attribute-subscript",
    "tuple-subscript",
    "argument",
]


@frozen(kw_only=True)
class ParamUse:
    """A use of a parameter in its function's body that needs a callable or a class:
    ``p(...)``, ``isinstance(x, p)``, ``issubclass(c, p)``, ``@p``; or an object no JSON
    value is: an attribute (``p.shape``), a method (``p.drop(...)``) or a subscripted
    attribute (``p.loc[...]``) that ``dict``, ``list``, ``str``, ``int``, ``float``,
    ``bool`` and ``None`` all lack (``attribute`` names it), an index tuple holding a slice
    (``p[:, 0]``), or an argument of a callable that needs an object no JSON value is
    (``pd.concat([p])``: ``attribute`` names the callee). The object uses count on values
    taken from the parameter too (``p[i].reshape``, ``for row in p: row.name``, an alias):
    ``receiver`` is then their source text. Not recorded after the body rebinds the name to
    anything else (``p = np.asarray(p)``), nor under ``try``/``except AttributeError`` or a
    type test. Only the first use of each kind is recorded."""

    kind: ParamUseKind
    span: Span
    attribute: str | None = None
    receiver: str | None = None


ConstraintValue = int | float | str


@frozen(kw_only=True)
class Constraint:
    """A literal pydantic ``Field`` bound: ``gt``/``ge``/``lt``/``le`` (numbers),
    ``min_length``/``max_length`` (integers), ``pattern`` (a string)."""

    name: str
    value: ConstraintValue


@frozen(kw_only=True)
class Unreadable:
    """Part of a model that cannot be read statically (a computed ``Field`` argument)."""

    text: str
    span: Span


InputValue = str | int | float | bool | None


@frozen(kw_only=True)
class LiteralDefault:
    """A default stated as a literal (``Input(default=0.5)``): published as the schema's
    ``default`` and applied by the served validator when the value is omitted."""

    value: InputValue


@frozen(kw_only=True)
class InputDescriptor:
    """A parameter's ``cog.Input(...)``/``pydantic.Field(...)`` (its default) or
    ``Annotated[T, Field(...)]`` metadata, read without running it. ``callee`` is the
    descriptor's origin (``cog.Input``); ``constraints`` its literal bounds, named as a model
    field's are (cog's ``regex`` is ``pattern``); ``choices`` cog's ``choices=`` (the schema's
    ``enum``); ``default`` the literal ``default=`` (``None``: none, or not a literal);
    ``unreadable`` every keyword that is computed or that svcc does not serve (SVC-R055)."""

    callee: str
    constraints: tuple[Constraint, ...] = ()
    choices: tuple[LiteralValue, ...] = ()
    default: LiteralDefault | None = None
    # A default descriptor without a ``default=``: the request must supply the value (the
    # parameter's Python default is the descriptor itself).
    required: bool = False
    unreadable: tuple[Unreadable, ...] = ()
    span: Span


@frozen(kw_only=True)
class Parameter:
    name: str
    kind: ParamKind
    annotation: str | None
    type: TypeNode
    default: Default | None
    span: Span
    uses: tuple[ParamUse, ...] = ()
    # The description the code attaches (``Annotated[T, Field(description="...")]``, a
    # default ``Field(...)``/``cog.Input(...)``), a string literal; docstrings are not read here.
    description: str | None = None
    # What a descriptor states about the value: a default ``cog.Input(...)``/``Field(...)``
    # or ``Annotated[T, Field(...)]`` metadata (see ``InputDescriptor``); ``None`` without one.
    input: InputDescriptor | None = None

    @property
    def required(self) -> bool:
        """The request must supply the value: no default, or a descriptor without one."""
        return self.default is None or (self.input is not None and self.input.required)


@frozen(kw_only=True)
class Returns:
    annotation: str | None
    type: TypeNode
    span: Span | None


@frozen(kw_only=True)
class Decorator:
    text: str
    span: Span
    # ``try: from fw import tool`` / ``except ImportError: def tool(f): return f``: the
    # ``Fallback.group`` of that ``try``; the decorator is the identity when none of the
    # group's alternatives is provided, the framework's otherwise. ``None`` for any other.
    identity_unless: int | None = None


FunctionForm = Literal["function", "generator", "async_generator"]


@frozen(kw_only=True)
class Stream:
    """What a generator capability yields, read from its return annotation: the items' type
    (``T`` of ``Iterator[T]``, ``Iterable[T]``, ``Generator[T, None, ...]``,
    ``AsyncIterator[T]``, ``AsyncIterable[T]``, ``AsyncGenerator[T, None]``; ``AnyType``
    when there is no annotation or the form is bare). ``annotation`` is ``T``'s source text
    and ``span`` its place (``None`` when none is written); ``iterator`` is false when the
    return annotation is no such form (``-> list[int]``, ``Generator[T, str, None]``: a
    send type), ``sends`` the first ``yield`` whose value the body uses (a ``send()``-style
    generator). Serving one is the readiness pass's judgement."""

    item: TypeNode
    annotation: str | None
    span: Span | None
    iterator: bool = True
    sends: Span | None = None


EvaluationKind = Literal["code", "decorator", "base", "call", "read"]


@frozen(kw_only=True)
class Evaluation:
    """Something a module-level statement evaluates at import, recorded as a fact: code
    (a loop, a statement that is not a definition, anything not read further), a call, a
    read of a dotted name (``read``: ``callee`` is its origin, ``os.environ``), a
    decorator, or a class base. ``callee`` is the decorator's or base's resolved dotted
    name (``None`` when it cannot be resolved); ``literal_arguments`` says a decorator is
    used bare or called with literals only. Whether it is harmless is the readiness
    pass's judgement."""

    kind: EvaluationKind
    text: str
    callee: str | None = None
    literal_arguments: bool = True
    span: Span
    # For a ``call`` (one call of an expression whose every other part is plain: names,
    # attributes, literals, operators, subscripts, comprehensions): for a ``re.`` call, the
    # first positional argument's value when it is a string literal (the pattern), and
    # the dotted names its arguments read (flags such as ``re.IGNORECASE``, parameters).
    # ``callee`` is the called object's origin: a dotted name (``re.compile``),
    # ``local.NAME`` for the module's own
    # functions and classes, and ``ORIGIN().attr`` for a method of what a call returned
    # (``pathlib.Path().parent.read_text``; an operator's result keeps its left operand's
    # origin, a literal's is its type's: ``builtins.str()``).
    literal: str | None = None
    names: tuple[str, ...] = ()
    # The file a call reads when its path is built from ``__file__`` with literal parts
    # (``Path(__file__).parent / "model.json"``, ``os.path.join(os.path.dirname(__file__),
    # "x.csv")``): POSIX, relative to the module's folder, climbing above it with leading
    # ``..`` parts (``Path(__file__).parent.parent / "data"`` is ``../data``), ``__file__``
    # for the module itself. An absolute part (``HERE / "/etc/x"``) makes it no such path:
    # per call it is the ``literal`` read. For ``open`` only when its mode is absent or a
    # literal read mode.
    path: str | None = None
    # Under an ``if`` of a flag a ``try`` of imports binds (``if REGEX_AVAILABLE:``), in the
    # branch that runs only when that ``try``'s body imported: its ``Fallback.group``. The
    # readiness pass does not judge it when the body's imports are not provided (the
    # handler's ``re`` then runs, and the branch is dead). ``None`` for any other.
    only_if_imported: int | None = None


@frozen(kw_only=True)
class FileRead:
    """A file a capability reads on every call that its own ``effects`` cannot record: in a
    function of the module it calls (``through``: the functions the calls go through, the
    first called by the capability at ``call``; ``Class.method`` for a class's static or class
    method), or through a local name bound more than once. ``reads`` holds the read once per
    value its path may have (one per binding of the name, else one), each recorded as a read
    in the capability's own body is (``Evaluation.path`` or ``literal``, the read's span); the
    readiness pass judges them together, or not at all when they are judged differently."""

    reads: tuple[Evaluation, ...]
    through: tuple[str, ...] = ()
    call: Span | None = None


@frozen(kw_only=True)
class Capability:
    """A public module-level function: one candidate operation/tool."""

    id: str
    name: str
    qualname: str
    execution: Literal["sync", "async"]
    form: FunctionForm
    params: tuple[Parameter, ...]
    returns: Returns
    docstring: str | None
    decorators: tuple[Decorator, ...]
    # Enclosing module-level compound statements ("if", "try", "for", ...), outermost first;
    # empty for a plain top-level ``def``.
    guards: tuple[str, ...]
    span: Span
    # Calls and reads in the body that reach the environment, processes, code evaluation,
    # files or the command line (imported names under ``_effects.SENSITIVE`` of the
    # Python front end, and ``parse_args``/``parse_known_args`` calls), first of each callee, in
    # source order; ``names`` lists what the arguments read (a parameter's name included).
    effects: tuple[Evaluation, ...] = ()
    # Files read on every call that ``effects`` does not record: see ``FileRead``.
    file_reads: tuple[FileRead, ...] = ()
    # Every callee the capability reaches when it runs, through the module's own functions
    # (sorted origins and markers: see ``svcc.frontends.python._reach``); the facts the tool
    # annotations rest on.
    reach: tuple[str, ...] = ()
    # A generator's items (``form`` is ``generator`` or ``async_generator``), else ``None``.
    stream: Stream | None = None


BindingKind = Literal[
    "def", "class", "import", "assign", "augassign", "delete", "for", "with", "other"
]


@frozen(kw_only=True)
class Binding:
    """One module-level (re)binding, at import time, of a capability's name."""

    name: str
    kind: BindingKind
    conditional: bool
    span: Span


@frozen(kw_only=True)
class Fallback:
    """The ``try``/``except ImportError`` statement an import is one alternative of: the
    module imports when one alternative's modules all import (or when a handler with no
    import of its own substitutes the names), so the alternatives are judged together.

    ``group`` numbers the module's such statements (shared by their alternatives);
    ``alternative`` is 0 for the ``try`` body, ``n`` for its ``n``-th handler; ``substitute``
    is true when a handler catching the error imports nothing and raises nothing (``X =
    None``, ``pass``, ``def tool(f): return f``): the module then imports without any
    alternative, and only what calls into a missing one fails."""

    group: int
    alternative: int
    substitute: bool


@frozen(kw_only=True)
class Import:
    """One imported module. ``scope`` is ``""`` at module level, else the function's qualname.

    ``guarded`` is true inside ``try``/``if`` (optional-dependency fallbacks) and under
    ``if TYPE_CHECKING:`` (``type_checking``), where a missing module cannot stop a server.
    """

    module: str
    names: tuple[str, ...]
    level: int
    scope: str
    guarded: bool
    type_checking: bool
    span: Span
    # One alternative of a ``try``/``except ImportError`` (see ``Fallback``), else ``None``.
    fallback: Fallback | None = None


StatementKind = Literal[
    "import",
    "def",
    "class",
    "typeddict",
    "constant",
    "alias",
    "expression",
    "type-alias",
    "annotation",
    "docstring",
    "pass",
    "main-guard",
    "type-checking",
    "assign",
    "if",
    "try",
    "statement",
]


@frozen(kw_only=True)
class NameRead:
    """A name a module-level statement looks up outside itself when it runs at import."""

    name: str
    span: Span


@frozen(kw_only=True)
class Statement:
    """A module-level statement: its syntactic shape (``kind``, ``detail``), what it binds
    and reads, and what it evaluates at import (``evaluations``, nested blocks included,
    in source order)."""

    kind: StatementKind
    detail: str
    # Every module-level name the statement may bind, nested blocks included.
    binds: tuple[str, ...]
    span: Span
    # Names read from module scope when the statement runs at import, first read of each,
    # in order (unconditional parts only: not the bodies of if/try/loops/with/match).
    reads: tuple[NameRead, ...] = ()
    evaluations: tuple[Evaluation, ...] = ()


@frozen(kw_only=True)
class ClassDecl:
    """A module-level class that is not a TypedDict.

    ``bases`` are resolved dotted names (``builtins.Exception``, ``enum.Enum``,
    ``local.Base``) or the source text when unresolvable. ``evaluations`` are what defining
    the class evaluates at import (decorators, bases, keywords, body statements other than
    annotations, literal assignments and docstrings, methods' decorators and defaults).
    """

    name: str
    bases: tuple[str, ...]
    keywords: tuple[str, ...]
    decorators: tuple[Decorator, ...]
    evaluations: tuple[Evaluation, ...]
    span: Span


@frozen(kw_only=True)
class TypedDictField:
    name: str
    annotation: str
    type: TypeNode
    required: bool
    span: Span


@frozen(kw_only=True)
class TypedDictDecl:
    """A TypedDict: the fields its own body declares (requiredness resolved) and the names of
    its TypedDict ``bases`` in order. Inherited fields are not repeated here (a chain of depth
    D would hold D²/2 of them); ``svcc.ir.index.ModuleIndex.typed_dict_fields`` lists them all."""

    name: str
    total: bool
    fields: tuple[TypedDictField, ...]
    span: Span
    bases: tuple[str, ...] = ()


ModelForm = Literal["dataclass", "pydantic", "namedtuple"]


@frozen(kw_only=True)
class ModelField:
    """One field of a model. ``name`` is the JSON property (a pydantic alias when given),
    ``attribute`` the Python name; ``required`` is "no default"."""

    name: str
    attribute: str
    annotation: str
    type: TypeNode
    required: bool
    default: Default | None
    constraints: tuple[Constraint, ...]
    span: Span
    # ``Field(description="...")`` (or ``Annotated`` metadata), a string literal.
    description: str | None = None


@frozen(kw_only=True)
class ModelDecl:
    """A dataclass, pydantic ``BaseModel`` or ``NamedTuple`` read from its class body:
    every field, inherited ones first (as Python orders them). ``extra`` is the JSON
    object's rule for unknown keys (``forbid``: refused; pydantic's ``ignore``/``allow``
    are kept so the model applies its own rule)."""

    name: str
    form: ModelForm
    fields: tuple[ModelField, ...]
    extra: Literal["forbid", "ignore", "allow"]
    unreadable: tuple[Unreadable, ...]
    span: Span


@frozen(kw_only=True)
class GlobalWrite:
    """``global NAME`` inside a function: the function may rebind a module-level name."""

    name: str
    function: str
    span: Span


@frozen(kw_only=True)
class GlobalRead:
    """A capability's body reads a module-level name that a function of the module declares
    ``global`` (recorded only for such names; the first read per function and name)."""

    name: str
    function: str
    span: Span


@frozen(kw_only=True)
class Helper:
    """A function or class of the module that module-level code calls at import (directly,
    or through another helper, to a bounded depth): what running its body evaluates.

    For a class, the bodies of ``__init__``, ``__new__`` and ``__post_init__``. ``calls`` are
    the body's calls (as module-level calls are recorded); ``opaque`` is the first part the
    facts do not describe (a ``global``, ``with``, ``while``, ``yield``, nested scope, a
    decorated method, another dunder method), ``None`` when there is none."""

    name: str
    calls: tuple[Evaluation, ...]
    opaque: Evaluation | None
    span: Span


@frozen(kw_only=True)
class StateWrite:
    """A service method's assignment to an attribute of its instance (``self.count += 1``):
    state one call leaves for the next (``method`` is the method's name)."""

    method: str
    attribute: str
    span: Span


@frozen(kw_only=True)
class ServiceDecl:
    """A service class: a public module-level class whose public methods are capabilities
    (``Class.method``), served from one instance built after import.

    ``setup`` is the method called once right after construction (``setup``, Cog's; else
    ``load``, Truss's; ``None`` when the class defines neither). ``construction`` holds what
    building it evaluates (the bodies of ``__init__`` and the setup method, recorded as a
    module-level helper's calls are), ``opaque`` their first part the facts do not describe.
    ``required`` names the constructor's parameters without a default (a class the server
    cannot build); ``bases`` are the resolved base names."""

    name: str
    bases: tuple[str, ...]
    setup: str | None
    construction: tuple[Evaluation, ...]
    opaque: Evaluation | None
    required: tuple[str, ...]
    state_writes: tuple[StateWrite, ...]
    span: Span


@frozen(kw_only=True)
class ModuleIR:
    schema: str = IR_SCHEMA
    module: str
    source: SourceInfo
    docstring: str | None
    future_annotations: bool
    statements: tuple[Statement, ...]
    bindings: tuple[Binding, ...]
    imports: tuple[Import, ...]
    classes: tuple[ClassDecl, ...]
    typed_dicts: tuple[TypedDictDecl, ...]
    globals: tuple[GlobalWrite, ...]
    capabilities: tuple[Capability, ...]
    global_reads: tuple[GlobalRead, ...] = ()
    models: tuple[ModelDecl, ...] = ()
    helpers: tuple[Helper, ...] = ()
    services: tuple[ServiceDecl, ...] = ()

    def service(self, name: str) -> ServiceDecl | None:
        """The service class a method capability (qualname ``Class.method``) belongs to."""
        owner = name.partition(".")[0] if "." in name else None
        return next((s for s in self.services if s.name == owner), None)

    def capability(self, name_or_id: str) -> Capability | None:
        for cap in self.capabilities:
            if name_or_id in (cap.name, cap.id):
                return cap
        return None

    def typed_dict(self, name: str) -> TypedDictDecl | None:
        for decl in self.typed_dicts:
            if decl.name == name:
                return decl
        return None
