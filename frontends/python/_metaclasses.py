"""Which of a module's classes the import-time evaluator runs as a metaclass: ``class
M(type)`` whose body only defines undecorated methods, none of them a dunder Python calls
behind the code's back (``__new__``, ``__prepare__``, ``__call__``, ``__getattr__``, ...)
other than ``__init__``. Making a class with it runs ``type.__new__`` (no module code) and
then ``M.__init__``, which the evaluator runs on the class being made."""

import ast

from svcc.frontends.python._eval_state import Qualify


def metaclass_methods(meta: ast.ClassDef, qualify: Qualify) -> dict[str, ast.FunctionDef] | None:
    """``M``'s methods by name when the evaluator can run ``M`` as a metaclass, else
    ``None``."""
    if meta.decorator_list or meta.keywords or len(meta.bases) != 1:
        return None
    if qualify(meta.bases[0]) != "builtins.type":
        return None
    methods: dict[str, ast.FunctionDef] = {}
    for item in meta.body:
        if isinstance(item, ast.Pass) or (
            isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant)
        ):
            continue
        if not isinstance(item, ast.FunctionDef) or item.decorator_list:
            return None
        dunder = item.name.startswith("__") and item.name.endswith("__")
        shadows = not dunder and hasattr(type, item.name)
        if (dunder and item.name != "__init__") or item.name in methods or shadows:
            return None  # a hook, a method bound twice, or one shadowing ``type``'s own
        methods[item.name] = item
    return methods
