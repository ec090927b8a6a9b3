"""Classes made by the module's own metaclass, for the import-time evaluator: making
``class C(metaclass=M)`` runs ``M.__init__`` on the class its body made, which the evaluator
follows (see ``_metaclasses`` for which metaclasses it runs)."""

import ast

from svcc.frontends.python._eval_state import (
    OPERATOR_ERRORS,
    Break,
    Continue,
    Return,
    position,
)
from svcc.frontends.python._eval_statements import Statements
from svcc.frontends.python._metaclasses import metaclass_methods
from svcc.frontends.python._statements import is_literal
from svcc.frontends.python._values import OPAQUE, ClassObject, FunctionRef, Unknown


def single_target(item: ast.stmt) -> str | None:
    """The one name an ``x = ...`` / ``x: T = ...`` binds, else ``None``."""
    if isinstance(item, ast.Assign) and len(item.targets) == 1:
        target = item.targets[0]
    elif isinstance(item, ast.AnnAssign) and item.value is not None:
        target = item.target
    else:
        return None
    return target.id if isinstance(target, ast.Name) else None


class MetaclassRuns(Statements):
    def _metaclass(self, stmt: ast.ClassDef) -> None:
        """``class C(metaclass=M)`` where ``M(type)`` is the module's own: making ``C`` runs
        ``M.__init__(C, name, bases, namespace)``. The evaluator runs it on ``C`` as made so
        far (see ``_metaclasses``); when that is known, the keyword runs nothing else."""
        if len(stmt.keywords) != 1 or stmt.bases or stmt.decorator_list:
            return
        keyword = stmt.keywords[0]
        if keyword.arg != "metaclass" or not isinstance(keyword.value, ast.Name):
            return
        meta = self.class_nodes.get(keyword.value.id)
        if meta is None or keyword.value.id in self.values:
            return
        methods = metaclass_methods(meta, self.qualify)
        if methods is None:
            return
        try:
            self.steps = 0
            made = ClassObject(stmt.name, self._members(stmt), methods, keyword.value.id, self)
            init = methods.get("__init__")
            if isinstance(init, ast.FunctionDef):
                self._local_call(init, [made, stmt.name, (), OPAQUE], {}, keyword.value)
        except (Unknown, Break, Continue, Return, RecursionError, *OPERATOR_ERRORS):
            return
        self.metaclass_runs.add(position(keyword))

    def _members(self, stmt: ast.ClassDef) -> dict[str, object]:
        """What the class body binds, when it only defines methods (undecorated, or with
        decorators the evaluator applied: what they recorded is kept) and literal
        attributes."""
        members: dict[str, object] = {}
        for item in stmt.body:
            if isinstance(item, ast.Pass) or (
                isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant)
            ):
                continue
            if isinstance(item, ast.AnnAssign) and item.value is None:
                continue  # an annotation: no member
            if isinstance(item, ast.FunctionDef):
                if not item.decorator_list:
                    members[item.name] = FunctionRef(item, owner=self, tracked=True)
                    continue
                applied = self.applied.get(position(item.decorator_list[0]))
                if len(item.decorator_list) != 1 or applied is None or applied.node is not item:
                    raise Unknown(item, "a method decorator the evaluator did not apply")
                members[item.name] = applied  # what the decorator recorded on it
                continue
            target = single_target(item)
            value = item.value if isinstance(item, ast.Assign | ast.AnnAssign) else None
            if target is None or value is None or not is_literal(value):
                raise Unknown(item, "a class body statement the metaclass would see")
            members[target] = self._eval(value, None)
        return members
