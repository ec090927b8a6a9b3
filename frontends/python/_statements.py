"""Syntactic judgements about expressions and statements at module level.

These answer "does evaluating this run user-visible code at import?" from the AST alone.
They are conservative where it matters (a call anywhere is an effect) and precise where
a harmless pattern is common (literal constants, type aliases, typing constructors,
well-known pure decorators).
"""

import ast

from svcc.frontends.python._types import Symbols, typing_names
from svcc.frontends.python._walk import children, shared_memo, walk

# Calls that only build typing objects: harmless at import when the name is typing's.
TYPING_CONSTRUCTORS = typing_names(
    "TypeVar", "NewType", "ParamSpec", "TypeVarTuple", "TypedDict", "NamedTuple", "TypeAliasType"
)

_CODE_RUNNING = (
    ast.Call,
    ast.Await,
    ast.Yield,
    ast.YieldFrom,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.NamedExpr,
)


_PLAIN = frozenset({ast.Name, ast.Constant})


def first_code_running(node: ast.AST | None) -> ast.AST | None:
    """The first sub-expression that calls or iterates (a call, a comprehension, ...)."""
    if node is None or type(node) in _PLAIN:  # the parser makes no subclasses
        return None
    if isinstance(node, _CODE_RUNNING):
        return node
    for sub in walk(node):
        if isinstance(sub, ast.Lambda):
            continue
        if isinstance(sub, _CODE_RUNNING):
            return sub
    return None


def is_literal(node: ast.expr) -> bool:
    """A literal constant: constants, containers of literals, operators over literals."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return all(is_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is None or is_literal(k) for k in node.keys) and all(
            is_literal(v) for v in node.values
        )
    if isinstance(node, ast.UnaryOp):
        return is_literal(node.operand)
    if isinstance(node, ast.BinOp):
        return is_literal(node.left) and is_literal(node.right)
    return False


def is_name_chain(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def is_type_expression(node: ast.expr, symbols: Symbols) -> bool:
    """``list[int]``, ``int | None``, ``Optional["X"]``: names that resolve to typing,
    builtins or local types, subscripted by type expressions or literals."""
    if isinstance(node, ast.Constant):
        return node.value is None or isinstance(node.value, str)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return is_type_expression(node.left, symbols) and is_type_expression(node.right, symbols)
    if isinstance(node, ast.Subscript):
        if not is_type_expression(node.value, symbols):
            return False
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return all(
            is_type_expression(a, symbols) or is_literal(a) or isinstance(a, ast.List) for a in args
        )
    if isinstance(node, ast.Name | ast.Attribute):
        qual = symbols.qualify(node)
        if qual is None:
            return False
        head = qual.split(".", 1)[0]
        return head in {
            "typing",
            "typing_extensions",
            "builtins",
            "collections",
            "typeddict",
            "alias",
            "local",
        }
    return False


def is_typing_constructor(node: ast.expr, symbols: Symbols) -> bool:
    if not isinstance(node, ast.Call) or symbols.qualify(node.func) not in TYPING_CONSTRUCTORS:
        return False
    return all(
        is_literal(a) or is_type_expression(a, symbols) or isinstance(a, ast.Dict | ast.List)
        for a in [*node.args, *(k.value for k in node.keywords)]
    )


def is_main_guard(test: ast.expr) -> bool:
    if not (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
    ):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    consts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(consts) == 1


def is_type_checking(test: ast.expr, symbols: Symbols) -> bool:
    if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
        return True
    return symbols.qualify(test) in typing_names("TYPE_CHECKING")


def assigned_names(target: ast.expr) -> list[str] | None:
    """Names bound by an assignment target; ``None`` when it writes an attribute or item."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Starred):
        return assigned_names(target.value)
    if isinstance(target, ast.Tuple | ast.List):
        names: list[str] = []
        for elt in target.elts:
            sub = assigned_names(elt)
            if sub is None:
                return None
            names.extend(sub)
        return names
    return None


def import_bindings(stmt: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(stmt, ast.Import):
        return [a.asname or a.name.split(".", 1)[0] for a in stmt.names]
    return [a.asname or a.name for a in stmt.names if a.name != "*"]


def expression_reads(node: ast.AST | None, out: dict[str, ast.AST], local: set[str]) -> None:
    """Names ``node`` loads when evaluated, except those bound by its own comprehensions
    (and lambdas, whose bodies run later); first load of each name kept."""
    if type(node) is ast.Name:  # the commonest case: no comprehension, no lambda
        if type(node.ctx) is ast.Load and node.id not in local and node.id not in out:
            out[node.id] = node
        return
    if node is None or type(node) is ast.Constant:  # exact types: the parser makes no subclasses
        return
    bound: set[str] = set()
    later: set[int] = set()  # the names of lambda bodies
    loads: list[ast.Name] = []
    # one pass (the parser makes no subclasses, so exact types): the loaded names in walk
    # order, and what the expression's comprehensions and lambdas bind
    for sub in walk(node):
        kind = type(sub)
        if kind is ast.Name:
            if type(sub.ctx) is ast.Load:  # type: ignore[attr-defined]
                loads.append(sub)  # type: ignore[arg-type]
        elif kind is ast.comprehension:
            for target in walk(sub.target):  # type: ignore[attr-defined]
                if isinstance(target, ast.Name):
                    bound.add(target.id)
        elif kind is ast.Lambda:
            args = sub.args  # type: ignore[attr-defined]
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
            every += [a for a in (args.vararg, args.kwarg) if a is not None]
            bound.update(a.arg for a in every)
            later.update(id(n) for n in walk(sub.body) if type(n) is ast.Name)  # type: ignore[attr-defined]
    for name in loads:
        if id(name) in later:
            continue  # read when the lambda is called, not at import
        if name.id not in bound and name.id not in local and name.id not in out:
            out[name.id] = name


_SCOPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
_IMPORTS = frozenset({ast.Import, ast.ImportFrom})
_NAMED = frozenset({ast.ExceptHandler, ast.MatchAs, ast.MatchStar})
_OPAQUE = frozenset({ast.Lambda, ast.comprehension, ast.Constant})


def nested_bindings(stmt: ast.stmt) -> list[str]:
    """Every name a statement binds in the scope it runs in (blocks included, function and
    class bodies excluded). Dispatches on the exact node type (the parser makes no
    subclasses): it runs on every module-level statement."""
    if type(stmt) in _SCOPES:  # the commonest statement in a class body: a method
        return [stmt.name]  # type: ignore[attr-defined]
    return list(bound_names(stmt))  # the caller's own list


def bound_names(stmt: ast.stmt) -> tuple[str, ...]:
    """``nested_bindings(stmt)`` as a tuple, the one the memo keeps (inside
    ``shared_walks``), not copied: for a caller that only reads it (the evaluator and the
    statement loop ask it of every module-level statement)."""
    if type(stmt) in _SCOPES:
        return (stmt.name,)  # type: ignore[attr-defined]
    memo = shared_memo("nested_bindings")  # asked of each statement by several readers
    if memo is None:
        return tuple(_nested_bindings(stmt))
    found: tuple[str, ...] | None = memo.get(stmt)
    if found is None:
        found = memo[stmt] = tuple(_nested_bindings(stmt))
    return found


def _nested_bindings(stmt: ast.stmt) -> list[str]:
    names: list[str] = []
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in _SCOPES:
            names.append(node.name)  # type: ignore[attr-defined]  # its body is another scope
            continue
        if kind in _IMPORTS:
            names.extend(import_bindings(node))  # type: ignore[arg-type]
            continue
        if kind is ast.Name:
            if type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]  # Store, Del
                names.append(node.id)  # type: ignore[attr-defined]
            continue  # no children but its context
        if kind in _NAMED:
            if node.name:  # type: ignore[attr-defined]
                names.append(node.name)  # type: ignore[attr-defined]
        elif kind is ast.MatchMapping and node.rest:  # type: ignore[attr-defined]
            names.append(node.rest)  # type: ignore[attr-defined]
        if kind in _OPAQUE:
            continue
        stack.extend(children(node))
    return names


def import_time_reads(stmt: ast.stmt, evaluated_annotations: bool) -> dict[str, ast.AST]:
    """Names a module-level statement looks up outside itself when it runs at import,
    unconditional parts only (compound bodies may not run, and usually guard a fallback)."""
    out: dict[str, ast.AST] = {}
    _statement_reads(stmt, evaluated_annotations, out, set())
    return out


def _definition_reads(
    stmt: ast.FunctionDef | ast.AsyncFunctionDef,
    annotations: bool,
    out: dict[str, ast.AST],
    local: set[str],
) -> None:
    """What defining a function reads: its decorators, defaults and (unless PEP 563
    postpones them) annotations."""
    # each list read in place, none copied into a new one (asked of every function and
    # method of every module); the first read of each name is the one kept, so in order
    for dec in stmt.decorator_list:
        expression_reads(dec, out, local)
    args = stmt.args
    for default in args.defaults:
        expression_reads(default, out, local)
    for kw_default in args.kw_defaults:
        if kw_default is not None:
            expression_reads(kw_default, out, local)
    if annotations:
        for group in (args.posonlyargs, args.args, args.kwonlyargs):
            for arg in group:
                if arg.annotation is not None:  # most are absent: no call
                    expression_reads(arg.annotation, out, local)
        for star in (args.vararg, args.kwarg):
            if star is not None and star.annotation is not None:
                expression_reads(star.annotation, out, local)
        expression_reads(stmt.returns, out, local)


def _class_reads(
    stmt: ast.ClassDef, annotations: bool, out: dict[str, ast.AST], local: set[str]
) -> None:
    """What defining a class reads: its decorators, bases and keywords, and its body (which
    runs then), each statement seeing the names the earlier ones bound."""
    for expr in [*stmt.decorator_list, *stmt.bases, *(k.value for k in stmt.keywords)]:
        expression_reads(expr, out, local)
    inner = set(local)
    for item in stmt.body:
        _statement_reads(item, annotations, out, inner)
        inner.update(bound_names(item))


def _statement_reads(
    stmt: ast.stmt, annotations: bool, out: dict[str, ast.AST], local: set[str]
) -> None:
    # exact types (the parser makes no subclasses), the commonest statements first
    if type(stmt) is ast.Assign:
        expression_reads(stmt.value, out, local)
        for target in stmt.targets:
            if not isinstance(target, ast.Name):
                expression_reads(target, out, local)
    elif type(stmt) is ast.AnnAssign:
        expression_reads(stmt.value, out, local)
        if annotations and isinstance(stmt.target, ast.Name):
            expression_reads(stmt.annotation, out, local)
    elif type(stmt) is ast.AugAssign:
        expression_reads(stmt.target, out, local)
        expression_reads(stmt.value, out, local)
    elif type(stmt) is ast.Expr:
        expression_reads(stmt.value, out, local)
    elif type(stmt) is ast.FunctionDef or type(stmt) is ast.AsyncFunctionDef:
        _definition_reads(stmt, annotations, out, local)
    elif type(stmt) is ast.ClassDef:
        _class_reads(stmt, annotations, out, local)
    elif type(stmt) is ast.If or type(stmt) is ast.While:
        expression_reads(stmt.test, out, local)
    elif type(stmt) is ast.For or type(stmt) is ast.AsyncFor:
        expression_reads(stmt.iter, out, local)
    elif type(stmt) is ast.With or type(stmt) is ast.AsyncWith:
        for with_item in stmt.items:
            expression_reads(with_item.context_expr, out, local)
