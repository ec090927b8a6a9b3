"""The first pass: the symbol table annotations resolve against (imports, TypedDicts,
aliases, classes, enums and models), read before any fact is recorded."""

import ast

from svcc.frontends.python._models import classify, enum_values
from svcc.frontends.python._readers.state import LowererState
from svcc.frontends.python._statements import is_main_guard, is_type_checking, is_type_expression
from svcc.frontends.python._types import CLASS_HINT, TYPEDDICT, typing_names


class SymbolReader(LowererState):
    def _collect_symbols(self, body: list[ast.stmt], type_checking: bool = False) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                self._symbol_import(stmt)
            elif isinstance(stmt, ast.ClassDef):
                self._symbol_class(stmt)
                if type_checking:
                    self._checker_only_class(stmt.name)
            elif isinstance(stmt, ast.Assign | ast.AnnAssign):
                self._symbol_assign(stmt)
            elif isinstance(stmt, ast.If):
                if not is_main_guard(stmt.test):
                    checker = type_checking or is_type_checking(stmt.test, self.symbols)
                    if not checker and (live := self.values.live(stmt)) is not None:
                        self._collect_symbols(live)
                        continue
                    self._collect_symbols(stmt.body, checker)
                    self._collect_symbols(stmt.orelse, type_checking)
            elif isinstance(stmt, ast.Try | ast.TryStar):
                if (live := self.values.live(stmt)) is not None:
                    self._collect_symbols(live)
                    continue
                self._collect_symbols(stmt.body)
                for handler in stmt.handlers:
                    self._collect_symbols(handler.body)
                self._collect_symbols(stmt.orelse)
                self._collect_symbols(stmt.finalbody)

    def _symbol_import(self, stmt: ast.Import | ast.ImportFrom) -> None:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    self.symbols.imports[alias.asname] = alias.name
                else:
                    head = alias.name.split(".", 1)[0]
                    self.symbols.imports[head] = head
            return
        base = ("." * stmt.level) + (stmt.module or "")
        for alias in stmt.names:
            if alias.name == "*":
                self.symbols.star_import = True
                continue
            sep = "" if base.endswith(".") else "."
            self.symbols.imports[alias.asname or alias.name] = f"{base}{sep}{alias.name}"

    def _symbol_class(self, stmt: ast.ClassDef) -> None:
        self.symbols.imports.pop(stmt.name, None)
        self.symbols.aliases.pop(stmt.name, None)
        if self._is_typeddict_class(stmt):
            self.symbols.typed_dicts.add(stmt.name)
            self.symbols.classes.pop(stmt.name, None)
            return
        self.symbols.typed_dicts.discard(stmt.name)
        self.symbols.enums.pop(stmt.name, None)
        self.symbols.models.pop(stmt.name, None)
        form = classify(stmt, self.symbols)
        if form == "enum":
            self.symbols.enums[stmt.name] = enum_values(stmt, self.symbols)
        elif form is not None:
            self.symbols.models[stmt.name] = form
        self.symbols.classes[stmt.name] = f"class `{stmt.name}` is not a JSON type ({CLASS_HINT})"

    def _checker_only_class(self, name: str) -> None:
        """A class defined under ``if TYPE_CHECKING:`` does not exist when the server runs. A
        TypedDict is still a type the server can serve (a plain ``dict`` at run time, its
        schema in the IR); a dataclass, model, enum or other class must be built by the
        server from its class, so an annotation naming it is refused (``SVC-R011``)."""
        if name in self.symbols.typed_dicts:
            return
        self.symbols.enums.pop(name, None)
        self.symbols.models.pop(name, None)
        self.symbols.classes[name] = (
            f"class `{name}` is defined only under `if TYPE_CHECKING:`, so it does not exist "
            "when the server runs (define it at module level)"
        )

    def _is_typeddict_class(self, stmt: ast.ClassDef) -> bool:
        for base in stmt.bases:
            qual = self.symbols.qualify(base)
            if qual in TYPEDDICT or (qual or "").startswith("typeddict."):
                return True
        return False

    def _symbol_assign(self, stmt: ast.Assign | ast.AnnAssign) -> None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if len(targets) != 1 or not isinstance(targets[0], ast.Name) or stmt.value is None:
            return
        name, value = targets[0].id, stmt.value
        if isinstance(value, ast.Call):
            func = self.symbols.qualify(value.func)
            if func in TYPEDDICT:
                self.symbols.typed_dicts.add(name)
            elif func in _NEWTYPE and len(value.args) == 2:
                self.symbols.aliases[name] = value.args[1]
            elif func in _TYPEVARS:
                self.symbols.classes[name] = "type variables have no JSON shape"
            return
        if is_type_expression(value, self.symbols) and not (
            isinstance(value, ast.Constant) and isinstance(value.value, str)
        ):
            self.symbols.aliases[name] = value


_NEWTYPE = typing_names("NewType")


_TYPEVARS = typing_names("TypeVar", "ParamSpec", "TypeVarTuple")
