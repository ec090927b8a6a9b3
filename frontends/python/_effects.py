"""Facts about what module-level code calls: the calls of an expression and their origins.

The readiness pass decides which calls are harmless at import (a reviewed table of pure
standard-library callables, the module's own pure helpers); this module only reads the
source. An expression is described call by call when every other part of it is plain
(names, attributes, literals, operators, subscripts, comprehensions, lambdas, f-strings);
anything else (``await``, ``yield``, ``:=``) is left to the caller to record as opaque code.

An *origin* names where a value comes from, as far as the source says without running it:
``re.compile`` (an imported name), ``local.helper`` (a function or class of the module),
``pathlib.Path()`` (what calling ``pathlib.Path`` returned), ``pathlib.Path().parent`` (an
attribute of it), ``builtins.str()`` (a literal's type). An operator's result keeps its
left operand's origin (``HERE / "x.json"`` is a path when ``HERE`` is). ``?`` stands for a
receiver the source does not name (a parameter, a local variable).
"""

import ast
from collections.abc import Callable, Mapping
from functools import lru_cache

from svcc.frontends.python._walk import children
from svcc.frontends.removed_names import removed_name

# Expression nodes whose evaluation runs no code of its own beyond the calls inside them
# and the operators on the values (judged through the operands' origins).
_PLAIN_NODES: frozenset[type] = frozenset(
    {
        ast.Constant, ast.Name, ast.Attribute, ast.Subscript, ast.Slice, ast.Tuple,
        ast.List, ast.Set, ast.Dict, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare,
        ast.IfExp, ast.Call, ast.keyword, ast.Starred, ast.JoinedStr, ast.FormattedValue,
        ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.comprehension,
    }
)  # fmt: skip

_LITERAL_ORIGINS: dict[type, str] = {
    ast.Dict: "builtins.dict()",
    ast.DictComp: "builtins.dict()",
    ast.List: "builtins.list()",
    ast.ListComp: "builtins.list()",
    ast.Set: "builtins.set()",
    ast.SetComp: "builtins.set()",
    ast.Tuple: "builtins.tuple()",
    ast.JoinedStr: "builtins.str()",
    ast.GeneratorExp: "builtins.generator()",
}

Qualify = Callable[[ast.expr], str | None]


Resolve = Callable[[ast.expr], str]


def plain_facts(
    node: ast.AST, resolve: Resolve
) -> tuple[list[ast.Call], list[tuple[str, ast.AST]]] | None:
    """The calls ``node`` makes when evaluated, in source order, and the origins of the
    dotted names it reads outside call position (``os.environ``, ``sys.argv``: the first
    read of each; ``resolve`` gives a name chain's origin), or ``None`` when a part of it
    is not plain. A lambda's body runs later: it is
    not entered."""
    calls: list[ast.Call] = []
    reads: dict[str, ast.AST] = {}
    stack: list[ast.AST] = [node]
    while stack:
        current = stack.pop()
        kind = type(current)
        if kind is ast.Lambda:
            continue
        if kind not in _PLAIN_NODES:
            return None
        if kind is ast.Call:
            calls.append(current)  # type: ignore[arg-type]
            func = current.func  # type: ignore[attr-defined]
            stack.extend(current.args)  # type: ignore[attr-defined]
            stack.extend(current.keywords)  # type: ignore[attr-defined]
            while type(func) is ast.Attribute:  # the callee chain is the call's own fact
                func = func.value
            if type(func) is not ast.Name:
                stack.append(func)
            continue
        if (kind is ast.Name or kind is ast.Attribute) and _is_chain(current):
            qual = resolve(current)  # type: ignore[arg-type]
            own = _OWN if kind is ast.Attribute else (*_OWN, "local.")
            if "." in qual and not qual.startswith(own):
                reads.setdefault(qual, current)
            continue
        stack.extend(children(current))
    calls.sort(key=lambda c: (c.lineno, c.col_offset))
    return calls, sorted(reads.items(), key=lambda r: (r[1].lineno, r[1].col_offset))  # type: ignore[attr-defined]


_OWN = ("builtins.", "typeddict.", "alias.", "?")


def _is_chain(node: ast.AST) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return type(node) is ast.Name


def origin(node: ast.AST, qualify: Qualify, names: Mapping[str, str]) -> str:
    """Where the value of ``node`` comes from (see the module docstring); ``names`` maps the
    module's own names bound so far to their origins."""
    kind = type(node)
    if kind is ast.Name:
        name = node.id  # type: ignore[attr-defined]
        if name in names:
            return names[name]
        return qualify(node) or "?"  # type: ignore[arg-type]
    if kind is ast.Attribute:
        qual = qualify(node)  # type: ignore[arg-type]
        if qual is not None:
            return qual
        return f"{origin(node.value, qualify, names)}.{node.attr}"  # type: ignore[attr-defined]
    if kind is ast.Call:
        return f"{origin(node.func, qualify, names)}()"  # type: ignore[attr-defined]
    if kind is ast.BinOp:
        return origin(node.left, qualify, names)  # type: ignore[attr-defined]
    if kind is ast.Subscript:
        return f"{origin(node.value, qualify, names)}[]"  # type: ignore[attr-defined]
    if kind is ast.Constant:
        value = node.value  # type: ignore[attr-defined]
        return f"builtins.{type(value).__name__}()" if value is not None else "builtins.None"
    return _LITERAL_ORIGINS.get(kind, "?")


def callee_of(call: ast.Call, qualify: Qualify, names: Mapping[str, str]) -> str:
    """The origin of the called object."""
    return origin(call.func, qualify, names)


def literal_argument(call: ast.Call) -> str | None:
    """The first positional argument's value when it is a string literal (or literals
    joined with ``+``)."""
    if not call.args:
        return None
    return _string(call.args[0])


def _string(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _string(node.left), _string(node.right)
        if left is not None and right is not None:
            return left + right
    return None


def argument_names(call: ast.Call, qualify: Qualify) -> tuple[str, ...]:
    """The names and attribute chains the arguments read (qualified when imported), first
    of each, in source order; a lambda's body is not entered."""
    out: dict[str, None] = {}
    stack: list[ast.AST] = [*reversed(call.keywords), *reversed(call.args)]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Lambda):
            continue
        if isinstance(current, ast.Name | ast.Attribute):
            qual = qualify(current)
            if qual is not None and not qual.startswith("?"):
                out.setdefault(qual, None)
                continue
            if isinstance(current, ast.Name):
                out.setdefault(current.id, None)
                continue
        stack.extend(reversed(children(current)))
    return tuple(out)


# Imported names whose calls and reads inside a capability the IR records (the readiness
# pass judges which are security effects): prefixes of qualified names.
SENSITIVE: tuple[str, ...] = (
    "os.", "subprocess.", "sys.argv", "sys.orig_argv", "sys.stdin", "builtins.eval",
    "builtins.exec", "builtins.compile", "builtins.open", "builtins.__import__", "pickle.",
    "marshal.", "shelve.", "yaml.", "dill.", "cloudpickle.", "joblib.load", "dotenv.", "pathlib.",
    "shutil.", "io.open", "argparse.", "click.", "pty.", "commands.", "asyncio.create_subprocess",
    "importlib.import_module", "runpy.", "logging.FileHandler", "logging.handlers.",
    "logging.basicConfig",
)  # fmt: skip

# Attributes some JSON value has (dict, list, str, int, float, bool, None): a use of any
# other on an unannotated parameter cannot work on a value parsed from JSON.
JSON_VALUE_ATTRIBUTES: frozenset[str] = frozenset(
    name for kind in (dict, list, str, int, float, bool, type(None)) for name in dir(kind)
)


@lru_cache(maxsize=8192)  # asked of every call and attribute of every capability's body
def recorded(qualified: str) -> bool:
    """Whether a capability's call or read of ``qualified`` is recorded in the IR (a fact
    of the name alone: kept per name, which the bodies of a module repeat)."""
    return qualified.startswith(SENSITIVE) or removed_name(qualified) is not None
