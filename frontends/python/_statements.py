"""Syntactic judgements about expressions and statements at module level.

These answer "does evaluating this run user-visible code at import?" from the AST alone.
They are conservative where it matters (a call anywhere is an effect) and precise where
a harmless pattern is common (literal constants, type aliases, typing constructors,
well-known pure decorators).
"""

import ast

from svcc.frontends.python._types import Symbols, typing_names

# Calls that only build typing objects: harmless at import when the name is typing's.
TYPING_CONSTRUCTORS = typing_names(
    "TypeVar", "NewType", "ParamSpec", "TypeVarTuple", "TypedDict", "NamedTuple", "TypeAliasType"
)

# Decorators whose evaluation at definition time runs no user code.
HARMLESS_DECORATORS = frozenset(
    {
        "functools.cache",
        "functools.lru_cache",
        "functools.cached_property",
        "functools.total_ordering",
        "functools.singledispatch",
        "dataclasses.dataclass",
        "abc.abstractmethod",
        "enum.unique",
        "contextlib.contextmanager",
        "contextlib.asynccontextmanager",
        "builtins.staticmethod",
        "builtins.classmethod",
        "builtins.property",
    }
) | typing_names("overload", "final", "runtime_checkable", "no_type_check", "override")

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


def first_code_running(node: ast.AST | None) -> ast.AST | None:
    """The first sub-expression that calls or iterates (a call, a comprehension, ...)."""
    if node is None:
        return None
    for sub in ast.walk(node):
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


def decorator_is_harmless(node: ast.expr, symbols: Symbols) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    if symbols.qualify(target) not in HARMLESS_DECORATORS:
        return False
    if isinstance(node, ast.Call):
        return all(is_literal(a) for a in [*node.args, *(k.value for k in node.keywords)])
    return True


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
