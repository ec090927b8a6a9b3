"""Expressions of the import-time evaluator (see ``_evaluator``): names, attributes,
operators, comparisons (the target's ``sys.version_info`` and ``sys.hexversion`` among them),
f-strings, subscripts and comprehensions, over the value domain of ``_values``. Python's own
operators are applied to plain data only, each bounded before it is computed.
"""

import ast
import builtins
import re
from collections.abc import Callable
from typing import Any, Final

from svcc.frontends.python import _fold_table as table
from svcc.frontends.python._eval_state import (
    METADATA,
    OPERATOR_ERRORS,
    EvaluatorState,
    Made,
    Scope,
    enclosing,
    is_local,
    stdlib_module,
)
from svcc.frontends.python._values import (
    MAX_ITEMS,
    MAX_ITERATIONS,
    MAX_MODULE_STEPS,
    MAX_STEPS,
    MAX_STRING,
    MUTABLE,
    OPAQUE,
    ClassValue,
    EnumMember,
    FunctionRef,
    Instance,
    Opaque,
    TargetHexversion,
    TargetVersion,
    Unknown,
    check_size,
    is_plain,
    range_length,
    unordered,
    weight,
)

# The builtin exception and warning classes: reading one runs nothing.
_BUILTIN_CLASSES: Final = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)
_TYPE_CHECKING: Final = frozenset({"typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING"})


_BINARY: Final[dict[type, Callable[[object, object], object]]] = {
    ast.Add: lambda a, b: a + b,  # type: ignore[operator]
    ast.Sub: lambda a, b: a - b,  # type: ignore[operator]
    ast.Mult: lambda a, b: a * b,  # type: ignore[operator]
    ast.Div: lambda a, b: a / b,  # type: ignore[operator]
    ast.FloorDiv: lambda a, b: a // b,  # type: ignore[operator]
    ast.Mod: lambda a, b: a % b,  # type: ignore[operator]
    ast.Pow: lambda a, b: a**b,  # type: ignore[operator]
    ast.LShift: lambda a, b: a << b,  # type: ignore[operator]
    ast.RShift: lambda a, b: a >> b,  # type: ignore[operator]
    ast.BitOr: lambda a, b: a | b,  # type: ignore[operator]
    ast.BitAnd: lambda a, b: a & b,  # type: ignore[operator]
    ast.BitXor: lambda a, b: a ^ b,  # type: ignore[operator]
}


_COMPARE: Final[dict[type, Callable[[object, object], bool]]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,  # type: ignore[operator]
    ast.LtE: lambda a, b: a <= b,  # type: ignore[operator]
    ast.Gt: lambda a, b: a > b,  # type: ignore[operator]
    ast.GtE: lambda a, b: a >= b,  # type: ignore[operator]
    ast.In: lambda a, b: a in b,  # type: ignore[operator]
    ast.NotIn: lambda a, b: a not in b,  # type: ignore[operator]
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
}


def _compare_hexversion(op: ast.cmpop, left: object, right: object, node: ast.AST) -> bool:
    """``sys.hexversion`` against an integer: decided when every release of the target's
    ``major.minor`` compares the same way."""
    flipped = isinstance(right, TargetHexversion)
    target, other = (right, left) if flipped else (left, right)
    assert isinstance(target, TargetHexversion)
    if type(other) is not int or not isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE):
        raise Unknown(node, "a comparison of the Python version")
    if target.low <= other < target.high:
        raise Unknown(node, "the comparison depends on the target's micro version")
    above = other < target.low  # the version is above ``other``
    if flipped:  # other OP version
        return above == isinstance(op, ast.Lt | ast.LtE)
    return above == isinstance(op, ast.Gt | ast.GtE)


def bounded_format(text: str | bytes, node: ast.AST) -> None:
    """A format with a width or precision past the size limit would allocate it."""
    digits = 0
    for char in text if isinstance(text, str) else text.decode("latin-1"):
        digits = digits + 1 if char.isdigit() else 0
        if digits > 4 or char == "*":
            raise Unknown(node, "a format width past the evaluator's size limit")


# A ``%`` conversion: mapping key, flags, width, precision, length, type.
_PERCENT: Final = re.compile(r"%(\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?", re.S)


def bounded_percent(text: str | bytes, node: ast.AST) -> None:
    """``text % args``: each conversion's width and precision literal, within the size
    limit (a regular expression's ``*`` or ``{1,4}`` elsewhere in the text is text)."""
    chars = text if isinstance(text, str) else text.decode("latin-1")
    for match in _PERCENT.finditer(chars):
        key, width, precision = match.groups()
        if key is not None and "(" in key[1:]:
            bounded_format(chars, node)  # a nested key: read as Python would is not done
            return
        for part in (width, precision):
            if part is not None and (part == "*" or len(part) > 4):
                raise Unknown(node, "a format width past the evaluator's size limit")


class Expressions(EvaluatorState):
    """The value of an expression in a scope, or ``Unknown`` at the sub-expression that
    stopped it."""

    def decide(self, test: ast.expr) -> bool | None:
        try:
            self.steps = 0
            return self._truth(test, None)
        except (Unknown, RecursionError, *OPERATOR_ERRORS):
            return None

    def _truth(self, test: ast.expr, scope: Scope | None) -> bool:
        return self._plain_truth(self._eval(test, scope), test)

    def _eval(self, node: ast.expr, scope: Scope | None) -> object:
        # ``_step`` inlined: every node evaluated passes here
        self.steps += 1
        self.module_steps += 1
        if self.steps > MAX_STEPS or self.module_steps > MAX_MODULE_STEPS:
            raise Unknown(node, "past the evaluator's step limit")
        kind = type(node)
        if kind is ast.Constant:
            return check_size(node.value, node)  # type: ignore[attr-defined]
        handler = _HANDLERS.get(kind)
        if handler is None:
            raise Unknown(node, "an expression the evaluator does not know")
        return handler(self, node, scope)

    def _display(self, node: ast.Tuple | ast.List | ast.Set, scope: Scope | None) -> object:
        items = self._elements(node.elts, scope)
        made = {ast.Tuple: tuple, ast.List: list, ast.Set: set}[type(node)]
        return check_size(self._apply(made, [items], node), node)

    def _binary_operation(self, node: ast.BinOp, scope: Scope | None) -> object:
        left = self._eval(node.left, scope)
        right = self._eval(node.right, scope)
        return self._binary(node.op, left, right, node)

    def _conditional(self, node: ast.IfExp, scope: Scope | None) -> object:
        return self._eval(node.body if self._truth(node.test, scope) else node.orelse, scope)

    def _name(self, node: ast.Name, scope: Scope | None) -> object:
        current = scope
        while current is not None:
            if node.id in current.names:
                return current.names[node.id]
            current = current.parent
        if node.id in self.values:
            return self.values[node.id]
        if node.id in self.imported:
            return self._dotted(self.imported[node.id], node)
        if node.id in self.functions:
            return FunctionRef(self.functions[node.id], owner=self)
        if node.id in self.bound:
            raise Unknown(node, f"`{node.id}` is not a known value")
        if node.id in _BUILTIN_CLASSES:
            return OPAQUE  # ``DeprecationWarning`` as a default: read, not called
        if node.id == "TYPE_CHECKING":
            raise Unknown(node, "`TYPE_CHECKING` is not bound")
        if node.id in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.id]
        if node.id == "__name__":
            return OPAQUE  # the module's name: bound, not known (a test of it is undecided)
        raise Unknown(node, f"`{node.id}` is not a known value")

    def _attribute(self, node: ast.Attribute, scope: Scope | None) -> object:
        head: ast.expr = node
        while isinstance(head, ast.Attribute):
            head = head.value
        if isinstance(head, ast.Name) and head.id not in self.values and not is_local(head, scope):
            name = self.qualify(node)
            if name is not None:
                return self._dotted(name, node)
        own = isinstance(node.value, ast.Name) and (
            node.value.id in self.functions
            or isinstance(self.values.get(node.value.id), ClassValue)
        )
        if own and node.attr in METADATA:
            return OPAQUE  # a local function's or class's docstring or name
        value = self._eval(node.value, scope)
        if isinstance(value, ClassValue) and node.attr in value.attributes:
            return value.attributes[node.attr]
        if isinstance(value, Instance):
            return instance_attribute(value, node)
        if isinstance(value, EnumMember) and node.attr in ("name", "value"):
            return value.name if node.attr == "name" else value.value
        if isinstance(value, TargetVersion) and node.attr in ("major", "minor"):
            return value.major if node.attr == "major" else value.minor
        raise Unknown(node, f"the attribute `{node.attr}` is not known")

    def _dotted(self, name: str, node: ast.expr) -> object:
        if name in table.CONSTANTS:
            value = table.CONSTANTS[name]
            return value.copy() if isinstance(value, MUTABLE) else value  # never the table's
        if name == "sys.version_info":
            return self.version
        if name == "sys.hexversion":
            low = (self.version.major << 24) | (self.version.minor << 16)
            return TargetHexversion(low, low + (1 << 16))
        if name in _TYPE_CHECKING:
            return False
        if name.startswith("sys.version_info."):
            return self._attribute_of_version(name.rsplit(".", 1)[1], node)
        if self.siblings is not None and not stdlib_module(name):
            return self._foreign_value(self.siblings.value(self.module, name, node))
        raise Unknown(node, f"`{name}` is not a value the evaluator knows")

    def _attribute_of_version(self, attr: str, node: ast.expr) -> object:
        if attr == "major":
            return self.version.major
        if attr == "minor":
            return self.version.minor
        raise Unknown(node, "the target's micro version is not known")

    def _elements(self, elts: list[ast.expr], scope: Scope | None) -> list[object]:
        out: list[object] = []
        for elt in elts:
            if isinstance(elt, ast.Starred):
                out.extend(self._iterate(elt.value, scope))
            else:
                out.append(self._eval(elt, scope))
            if len(out) > MAX_ITEMS:  # ``check_size`` of a list, without the call
                raise Unknown(elt, "a container past the evaluator's size limit")
        return out

    def _dict(self, node: ast.Dict, scope: Scope | None) -> object:
        out: dict[object, object] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                merged = self._eval(value, scope)
                if not isinstance(merged, dict):
                    raise Unknown(value, "a `**` of a value that is not a known dict")
                out.update(merged)
            else:
                k = self._eval(key, scope)
                self._hashable(k, key)
                out[k] = self._eval(value, scope)
            if len(out) > MAX_ITEMS:  # ``check_size`` of a dict, without the call
                raise Unknown(node, "a container past the evaluator's size limit")
        return out

    def _hashable(self, value: object, node: ast.expr) -> None:
        try:
            hash(value)
        except TypeError:
            raise Unknown(node, "an unhashable key") from None

    def _binary(self, op: ast.operator, left: object, right: object, node: ast.AST) -> object:
        if not (is_plain(left) and is_plain(right)):
            raise Unknown(node, "an operator on a value that is not plain data")
        operator = _BINARY.get(type(op))
        if operator is None:
            raise Unknown(node, "an operator the evaluator does not know")
        self._bound_binary(op, left, right, node)
        return check_size(self._apply(operator, [left, right], node), node)

    def _bound_binary(self, op: ast.operator, left: object, right: object, node: ast.AST) -> None:
        """Refuse, before computing, an operation whose result would pass the bounds."""
        if isinstance(op, ast.Mult):
            if isinstance(left, int) and isinstance(right, int):
                if abs(left).bit_length() + abs(right).bit_length() > 2 * 4096:
                    raise Unknown(node, "an integer past the evaluator's size limit")
            elif weight(left) * weight(right) > MAX_STRING * 10:
                raise Unknown(node, "a value past the evaluator's size limit")
        elif isinstance(op, ast.Pow) and isinstance(left, int) and isinstance(right, int):
            if right > 0 and abs(left).bit_length() * right > 4096:
                raise Unknown(node, "an integer past the evaluator's size limit")
        elif isinstance(op, ast.LShift) and isinstance(right, int):
            if right > 4096:
                raise Unknown(node, "an integer past the evaluator's size limit")
        elif isinstance(op, ast.Add) and weight(left) + weight(right) > MAX_STRING * 10:
            raise Unknown(node, "a value past the evaluator's size limit")
        elif isinstance(op, ast.Mod) and isinstance(left, str | bytes):
            bounded_percent(left, node)
            if unordered(right):
                raise Unknown(node, "the order of a set of strings changes between runs")
            if weight(left) + weight(right) > MAX_STRING:
                raise Unknown(node, "a value past the evaluator's size limit")

    def _unary(self, node: ast.UnaryOp, operand: object) -> object:
        if isinstance(node.op, ast.Not):
            return not self._plain_truth(operand)
        if not is_plain(operand):
            raise Unknown(node, "an operator on a value that is not plain data")
        ops: dict[type, Callable[[object], object]] = {
            ast.USub: lambda v: -v,  # type: ignore[operator]
            ast.UAdd: lambda v: +v,  # type: ignore[operator]
            ast.Invert: lambda v: ~v,  # type: ignore[operator]
        }
        return self._apply(ops[type(node.op)], [operand], node)

    def _plain_truth(self, value: object, node: ast.AST | None = None) -> bool:
        if isinstance(value, Opaque | Instance):
            raise Unknown(node, "a value the evaluator does not know")
        if isinstance(value, TargetVersion | ClassValue | EnumMember):
            return True
        return bool(value)

    def _boolean(self, node: ast.BoolOp, scope: Scope | None) -> object:
        value: object = None
        for operand in node.values:
            value = self._eval(operand, scope)
            truth = self._plain_truth(value)
            if isinstance(node.op, ast.And) and not truth:
                return value
            if isinstance(node.op, ast.Or) and truth:
                return value
        return value

    def _compare(self, node: ast.Compare, scope: Scope | None) -> bool:
        left = self._eval(node.left, scope)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self._eval(comparator, scope)
            if not self._compare_one(op, left, right, node):
                return False
            left = right
        return True

    def _compare_one(self, op: ast.cmpop, left: object, right: object, node: ast.AST) -> bool:
        if isinstance(left, Opaque) or isinstance(right, Opaque):
            raise Unknown(node, "a comparison with a value the evaluator does not know")
        if isinstance(left, TargetVersion) or isinstance(right, TargetVersion):
            return self._compare_version(op, left, right, node)
        if isinstance(left, TargetHexversion) or isinstance(right, TargetHexversion):
            return _compare_hexversion(op, left, right, node)
        if isinstance(op, ast.Is | ast.IsNot):
            if not (left is None or right is None or isinstance(left, bool | EnumMember)):
                raise Unknown(node, "an identity test of values the evaluator builds")
        elif not (is_plain(left) and is_plain(right)) and not (
            isinstance(op, ast.Eq | ast.NotEq)
            and isinstance(left, EnumMember)
            and isinstance(right, EnumMember)
        ):
            raise Unknown(node, "a comparison of values that are not plain data")
        if (
            isinstance(op, ast.In | ast.NotIn)
            and isinstance(right, str | bytes)
            and weight(left) * weight(right) > MAX_STRING * 100
        ):
            raise Unknown(node, "a value past the evaluator's size limit")
        return bool(self._apply(_COMPARE[type(op)], [left, right], node))

    def _compare_version(self, op: ast.cmpop, left: object, right: object, node: ast.AST) -> bool:
        """``sys.version_info`` against a tuple of ints: decided by ``major.minor``; a
        comparison that the micro version would decide is unknown."""
        flipped = isinstance(right, TargetVersion)
        other = left if flipped else right
        if not (isinstance(other, tuple) and other and all(type(i) is int for i in other)):
            raise Unknown(node, "a comparison of the Python version with a non-tuple")
        if not isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE | ast.Eq | ast.NotEq):
            raise Unknown(node, "a comparison of the Python version")
        mine = (self.version.major, self.version.minor)
        head = tuple(other[:2])
        if head == mine[: len(head)] and len(other) > 2 and any(other[2:]):
            raise Unknown(node, "the comparison depends on the target's micro version")
        if head == mine[: len(head)]:
            # (3, 11) and (3, 11, 0) equal the version's prefix; the version is longer.
            ordering = 0 if len(head) == 2 else 1
            if len(head) == 2 and len(other) == 2:
                ordering = 1  # sys.version_info (3, 11, x, ...) > (3, 11)
        else:
            ordering = 1 if mine > head else -1
        if flipped:
            ordering = -ordering
        results = {
            ast.Lt: ordering < 0,
            ast.LtE: ordering <= 0,
            ast.Gt: ordering > 0,
            ast.GtE: ordering >= 0,
            ast.Eq: ordering == 0,
            ast.NotEq: ordering != 0,
        }
        return results[type(op)]

    def _fstring(self, node: ast.JoinedStr, scope: Scope | None) -> str:
        out: list[str] = []
        size = 0
        for part in node.values:
            if isinstance(part, ast.Constant):
                text = str(part.value)
            elif isinstance(part, ast.FormattedValue):
                value = self._eval(part.value, scope)
                if not isinstance(value, str | int | float | type(None)):
                    raise Unknown(part.value, "a formatted value that is not plain data")
                spec = ""
                if part.format_spec is not None:
                    spec = self._fstring(part.format_spec, scope)  # type: ignore[arg-type]
                    bounded_format(spec, node)
                conversion = {-1: None, 115: str, 114: repr, 97: ascii}[part.conversion]
                if conversion is not None:
                    value = self._apply(conversion, [value], part)
                text = str(self._apply(format, [value, spec], part))
            else:
                raise Unknown(part, "an f-string part the evaluator does not know")
            size += len(text)
            if size > MAX_STRING:
                raise Unknown(node, "a string past the evaluator's size limit")
            out.append(text)
        return "".join(out)

    def _subscript(self, node: ast.Subscript, scope: Scope | None) -> object:
        value = self._eval(node.value, scope)
        if isinstance(node.slice, ast.Slice):
            parts = [
                None if p is None else self._eval(p, scope)
                for p in (node.slice.lower, node.slice.upper, node.slice.step)
            ]
            if not all(p is None or type(p) is int for p in parts):
                raise Unknown(node.slice, "a slice of values that are not integers")
            key: object = slice(*parts)
        else:
            key = self._eval(node.slice, scope)
        if isinstance(value, TargetVersion):
            full = (value.major, value.minor)
            if isinstance(key, int) and key in (0, 1):
                return full[key]
            if (
                isinstance(key, slice)
                and key.start in (None, 0)
                and key.stop in (1, 2)
                and key.step is None
            ):
                return full[key]
            raise Unknown(node, "the target's micro version is not known")
        if not is_plain(value) and not isinstance(value, tuple | list | dict):
            raise Unknown(node, "an item of a value that is not plain data")
        return check_size(self._apply(lambda v, k: v[k], [value, key], node), node)

    def _iterate(self, node: ast.expr, scope: Scope | None) -> list[object]:
        value = self._eval(node, scope)
        return self._sequence(value, node)

    def _sequence(self, value: object, node: ast.AST) -> list[object]:
        if isinstance(value, range):
            if range_length(value) > MAX_ITERATIONS:
                raise Unknown(node, "a loop past the evaluator's iteration limit")
            return list(value)
        if isinstance(value, dict):
            return list(value)
        if isinstance(value, str | bytes | tuple | list | set | frozenset):
            if len(value) > MAX_ITERATIONS:
                raise Unknown(node, "a loop past the evaluator's iteration limit")
            if isinstance(value, set | frozenset) and not all(
                isinstance(v, int | bool | type(None)) for v in value
            ):
                raise Unknown(node, "the order of a set of strings changes between runs")
            return list(value)
        raise Unknown(node, "iteration over a value that is not a known finite collection")

    def _comprehension(self, node: ast.expr, scope: Scope | None) -> object:
        made = Made([], {}, Scope({}, enclosing(scope)), scope)
        try:
            self._produce(node, 0, made)
        finally:
            made.local.names.clear()  # no cycle through a nested function's frame
        if isinstance(node, ast.DictComp):
            return check_size(made.pairs, node)
        if isinstance(node, ast.SetComp):
            return check_size(self._apply(set, [made.results], node), node)
        return check_size(made.results, node)

    def _produce(self, node: ast.expr, index: int, made: "Made") -> None:
        """The comprehension's ``index``-th generator and those after it (a method, not a
        closure: a recursive closure is a reference cycle, and lowering pauses the cyclic
        collector)."""
        generators: list[ast.comprehension] = node.generators  # type: ignore[attr-defined]
        local = made.local
        if index == len(generators):
            made.count += 1
            if made.count > MAX_ITERATIONS:
                raise Unknown(node, "a comprehension past the evaluator's iteration limit")
            if isinstance(node, ast.DictComp):
                key = self._eval(node.key, local)
                self._hashable(key, node.key)
                made.pairs[key] = self._eval(node.value, local)
            else:
                made.results.append(self._eval(node.elt, local))  # type: ignore[attr-defined]
            return
        gen = generators[index]
        if gen.is_async:
            raise Unknown(node, "an async comprehension")
        for item in self._iterate(gen.iter, local if index else made.outer):
            self._assign(gen.target, item, local, None)
            if all(self._truth(cond, local) for cond in gen.ifs):
                self._produce(node, index + 1, made)


def instance_attribute(instance: Instance, node: ast.Attribute) -> object:
    """An attribute of an instance the evaluator made: one its methods set, a bound method
    (made, not run), or a known class attribute; anything else (a property) is unknown."""
    if node.attr in instance.attributes:
        return instance.attributes[node.attr]
    if node.attr in instance.cls.methods:
        return OPAQUE
    if node.attr in instance.cls.attributes:
        return instance.cls.attributes[node.attr]
    raise Unknown(node, f"the attribute `{node.attr}` of a {instance.cls.name} is not known")


# The evaluation of each kind of expression but a constant (a lambda: a function made, its
# body not run). Lambdas, not the methods themselves: ``_call`` is the subclass's.
_Handler = Callable[[Expressions, Any, Scope | None], object]
_HANDLERS: Final[dict[type, _Handler]] = {
    ast.Name: lambda ev, node, scope: ev._name(node, scope),
    ast.Attribute: lambda ev, node, scope: ev._attribute(node, scope),
    ast.Tuple: lambda ev, node, scope: ev._display(node, scope),
    ast.List: lambda ev, node, scope: ev._display(node, scope),
    ast.Set: lambda ev, node, scope: ev._display(node, scope),
    ast.Dict: lambda ev, node, scope: ev._dict(node, scope),
    ast.BinOp: lambda ev, node, scope: ev._binary_operation(node, scope),
    ast.UnaryOp: lambda ev, node, scope: ev._unary(node, ev._eval(node.operand, scope)),
    ast.BoolOp: lambda ev, node, scope: ev._boolean(node, scope),
    ast.Compare: lambda ev, node, scope: ev._compare(node, scope),
    ast.IfExp: lambda ev, node, scope: ev._conditional(node, scope),
    ast.JoinedStr: lambda ev, node, scope: ev._fstring(node, scope),
    ast.Subscript: lambda ev, node, scope: ev._subscript(node, scope),
    ast.Call: lambda ev, node, scope: ev._call(node, scope),
    ast.ListComp: lambda ev, node, scope: ev._comprehension(node, scope),
    ast.SetComp: lambda ev, node, scope: ev._comprehension(node, scope),
    ast.GeneratorExp: lambda ev, node, scope: ev._comprehension(node, scope),
    ast.DictComp: lambda ev, node, scope: ev._comprehension(node, scope),
    ast.Lambda: lambda *_: OPAQUE,
}
