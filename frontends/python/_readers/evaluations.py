"""Module-level statements: their shape (``StatementKind``) and what each evaluates at
import (calls, reads, decorators, code). Shapes and what they evaluate are facts; which
evaluations are harmless (a known pure decorator, a plain base class) is the readiness
pass's rule."""

import ast
from collections.abc import Callable

from svcc.frontends.python._effects import argument_names, literal_argument, origin, plain_facts
from svcc.frontends.python._readers.paths import PathReader, module_path
from svcc.frontends.python._readers.state import FunctionNode
from svcc.frontends.python._source import short
from svcc.frontends.python._statements import (
    assigned_names,
    first_code_running,
    is_literal,
    is_main_guard,
    is_name_chain,
    is_type_checking,
    is_type_expression,
    is_typing_constructor,
)
from svcc.frontends.python.data_reads import literal_read
from svcc.ir.model import Evaluation, StatementKind
from svcc.ir.records import evolve


class EvaluationReader(PathReader):
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
                    # a pattern (compiled to check it), or the literal path a read names
                    literal=(literal_argument(call) or self.values.pattern(call))
                    if callee.startswith("re.")
                    else literal_read(call, callee, self.symbols.qualify),
                    names=argument_names(call, resolve),
                    path=module_path(self._read_path(call)),
                    span=self.src.span(call),
                )
            )
        return found

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
        raised = self.values.raises(stmt)
        if raised is not None:  # ``X = int("abc")``: importing the module fails
            node, why = raised
            seg = short(self.src.segment(node), 40)
            text = f"{found[1]} (`{seg}`: {why}, so importing the module fails)"
            return found[0], found[1], found[2], [*found[3], self._code(text, node)]
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
            return self._classify_expression(stmt)
        if isinstance(stmt, ast.Pass):
            return "pass", "pass", stmt, []
        if isinstance(stmt, ast.If):
            return self._classify_if(stmt)
        if isinstance(stmt, ast.Try | ast.TryStar):
            return self._classify_try(stmt)
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

    def _classify_expression(
        self, stmt: ast.Expr
    ) -> tuple[StatementKind, str, ast.AST, list[Evaluation]]:
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

    def _classify_if(self, stmt: ast.If) -> tuple[StatementKind, str, ast.AST, list[Evaluation]]:
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
        imported = self.values.imported_if(stmt)
        group = None if imported is None else self._fallback_group_at.get(imported[0])
        if imported is None or group is None:
            found += self._nested([*stmt.body, *stmt.orelse], " under a module-level if")
            return "if", "if block", stmt, found
        # ``if REGEX_AVAILABLE:``: one branch runs only where the ``try`` body imported
        for index, branch in enumerate((stmt.body, stmt.orelse)):
            nested = self._nested(branch, " under a module-level if")
            if index == imported[1]:
                nested = [evolve(e, only_if_imported=group) for e in nested]
            found += nested
        return "if", "if block", stmt, found

    def _classify_try(
        self, stmt: ast.Try | ast.TryStar
    ) -> tuple[StatementKind, str, ast.AST, list[Evaluation]]:
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
                evolve(e, text=f"{e.text}{suffix}") if e.kind == "code" else e for e in inner
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


_LITERAL_TYPES = tuple(
    f"builtins.{t}()"
    for t in ("str", "bytes", "int", "float", "bool", "list", "tuple", "dict", "set")
)
