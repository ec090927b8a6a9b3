"""Classes: their declarations and what defining them runs, the models (dataclasses,
pydantic, NamedTuple: see ``_models``) and the TypedDicts (class and functional forms)."""

import ast
from collections.abc import Callable

from svcc.contracts.names import is_utf8
from svcc.frontends.python._models import ModelReader, classify, harmless_field_call
from svcc.frontends.python._readers.bindings import BindingReader
from svcc.frontends.python._readers.state import FunctionNode
from svcc.frontends.python._source import short
from svcc.frontends.python._statements import is_literal
from svcc.frontends.python._types import REQUIREDNESS, TYPEDDICT, printable, typing_names
from svcc.ir.model import ClassDecl, Decorator, Evaluation, Span, TypedDictDecl, TypedDictField
from svcc.ir.records import evolve
from svcc.ir.types import UnsupportedType


class ClassReader(BindingReader):
    def _class_decl(self, stmt: ast.ClassDef) -> ClassDecl:
        bases = tuple(self.symbols.qualify(b) or self.src.segment(b) for b in stmt.bases)
        decorators = tuple(
            Decorator(text=self.src.segment(d), span=self.src.span(d)) for d in stmt.decorator_list
        )
        return ClassDecl(
            name=stmt.name,
            bases=bases,
            keywords=tuple(self.src.segment(k) for k in stmt.keywords),
            decorators=decorators,
            evaluations=tuple(self._class_evaluations(stmt)),
            span=self.src.span(stmt),
        )

    def _class_evaluations(self, stmt: ast.ClassDef, depth: int = 0) -> list[Evaluation]:
        """What defining the class runs; a nested class's own (three deep, then its
        definition is code)."""
        found = [
            self._decorator(dec, f"decorator @{short(self.src.segment(dec), 40)}")
            for dec in stmt.decorator_list
            if not self.values.is_identity(dec)  # returns the class itself
        ]
        for base in stmt.bases:
            if self.values.is_plain_base(base):  # ``namedtuple("P", FIELDS)``, evaluated
                continue
            target = base.value if isinstance(base, ast.Subscript) else base
            found.append(
                Evaluation(
                    kind="base",
                    text=f"base class {short(self.src.segment(base), 40)}",
                    callee=self.symbols.qualify(target),
                    span=self.src.span(base),
                )
            )
        found.extend(
            self._code(f"class keyword {short(self.src.segment(k), 40)}", k)
            for k in stmt.keywords
            if not self.values.is_metaclass_run(k)  # the module's metaclass, evaluated
        )
        properties: set[str] = set()  # methods decorated @property so far
        for item in stmt.body:
            if isinstance(
                item, ast.FunctionDef | ast.AsyncFunctionDef
            ):  # the commonest item first (a method)
                accessors = _property_accessors(item, properties, self.src.span)
                found.extend(
                    e
                    for e in self._definition_evaluations(item, f"method {item.name}: ")
                    if not (e.kind == "decorator" and e.span in accessors)
                )
                if any(self.symbols.qualify(d) == "builtins.property" for d in item.decorator_list):
                    properties.add(item.name)
                continue
            if isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant):
                continue
            if isinstance(item, ast.Pass):
                continue
            if (  # runs what its definition runs; a framework reads `Config`/`Meta`
                isinstance(item, ast.ClassDef)
                and depth < 3
                and item.name not in _FRAMEWORK_INNER_CLASSES
            ):
                found.extend(self._class_evaluations(item, depth + 1))
                continue
            if isinstance(item, ast.AnnAssign) and (item.value is None or is_literal(item.value)):
                continue
            if isinstance(item, ast.Assign) and is_literal(item.value):
                continue
            if isinstance(item, ast.Assign | ast.AnnAssign) and harmless_field_call(
                item.value, self.symbols
            ):
                continue
            if self.values.is_folded(item):  # a value the evaluator computed
                continue
            text = f"class body statement ({self._describe(item)})"
            value = item.value if isinstance(item, ast.Assign | ast.AnnAssign) else None
            targets: list[ast.expr] = (
                item.targets
                if isinstance(item, ast.Assign)
                else [item.target]
                if isinstance(item, ast.AnnAssign)
                else []
            )
            if value is not None and all(isinstance(t, ast.Name) for t in targets):
                found.extend(self._evaluate(value, item, text))
                continue
            found.append(self._code(text, item))
        return found

    def _model(self, stmt: ast.ClassDef) -> None:
        """A dataclass, pydantic model or NamedTuple: its fields (the last definition wins)."""
        form = classify(stmt, self.symbols)
        if form is None or form == "enum":
            self.models.pop(stmt.name, None)
            return
        reader = ModelReader(self.symbols, self.types, self.src.segment, self.src.span, self.models)
        self.models.pop(stmt.name, None)
        self.models[stmt.name] = reader.read(stmt, form)

    def _typed_dict(self, stmt: ast.ClassDef) -> TypedDictDecl:
        total = True
        for kw in stmt.keywords:
            if kw.arg == "total" and isinstance(kw.value, ast.Constant):
                total = bool(kw.value.value)
        # Bases by name (inherited fields are not copied: see ``TypedDictDecl``); a base not
        # defined yet is ignored, as before.
        bases: list[str] = []
        for base in stmt.bases:
            qual = self.symbols.qualify(base) or ""
            if qual.startswith("typeddict."):
                parent = qual.split(".", 1)[1]
                if parent in self.typed_dicts and parent not in bases:
                    bases.append(parent)
        fields: dict[str, TypedDictField] = {}
        for item in stmt.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                fields[item.target.id] = self._typed_dict_field(
                    item.target.id, item.annotation, total, item
                )
        return TypedDictDecl(
            name=stmt.name,
            total=total,
            fields=tuple(fields.values()),
            span=self.src.span(stmt),
            bases=tuple(bases),
        )

    def _store_typed_dict(self, decl: TypedDictDecl) -> None:
        """Record ``decl``; a TypedDict that redefines a name others inherit from keeps
        the earlier definition's meaning for them (and for itself, in ``class A(A)``): their
        fields are written out in full before the name changes meaning."""
        name = decl.name
        if name in self.typed_dicts:
            if name in decl.bases:
                decl = self._materialised(decl)
            for dependent in sorted(self._td_dependents.pop(name, set())):
                old = self.typed_dicts.get(dependent)
                if old is not None and name in old.bases:
                    self.typed_dicts[dependent] = self._materialised(old)
        for base in decl.bases:
            self._td_dependents.setdefault(base, set()).add(name)
        self.typed_dicts[name] = decl

    def _materialised(self, decl: TypedDictDecl) -> TypedDictDecl:
        from svcc.ir.index import flattened_fields

        temporary = "<materialised>"  # not an identifier: never a TypedDict's name
        fields = flattened_fields({**self.typed_dicts, temporary: decl}, temporary)
        return evolve(decl, fields=fields, bases=())

    def _typed_dict_field(
        self, name: str, annotation: ast.expr, total: bool, node: ast.AST
    ) -> TypedDictField:
        required = total
        inner = annotation
        while isinstance(inner, ast.Subscript):
            qual = self.symbols.qualify(inner.value)
            if qual in REQUIREDNESS:
                if qual.endswith(".Required"):
                    required = True
                elif qual.endswith(".NotRequired"):
                    required = False
                inner = inner.slice
            elif qual in typing_names("Annotated") and isinstance(inner.slice, ast.Tuple):
                inner = inner.slice.elts[0]
            else:
                break
        return TypedDictField(
            name=name,
            annotation=self.src.segment(annotation),
            type=self.types.resolve(annotation),
            required=required,
            span=self.src.span(node),
        )

    def _functional_typed_dict(self, stmt: ast.Assign) -> None:
        """``Movie = TypedDict("Movie", {"title": str}, total=False)``."""
        value = stmt.value
        if not (
            isinstance(value, ast.Call)
            and self.symbols.qualify(value.func) in TYPEDDICT
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            return
        name = stmt.targets[0].id
        total = True
        for kw in value.keywords:
            if kw.arg == "total" and isinstance(kw.value, ast.Constant):
                total = bool(kw.value.value)
        fields: list[TypedDictField] = []
        if len(value.args) >= 2 and isinstance(value.args[1], ast.Dict):
            for key, ann in zip(value.args[1].keys, value.args[1].values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    field = self._typed_dict_field(printable(key.value), ann, total, key)
                    if not is_utf8(key.value):
                        field = evolve(
                            field,
                            type=UnsupportedType(
                                text=field.annotation,
                                reason="the key holds a lone surrogate, which is not JSON text",
                            ),
                        )
                    fields.append(field)
        self._store_typed_dict(
            TypedDictDecl(name=name, total=total, fields=tuple(fields), span=self.src.span(stmt))
        )


# Inner classes a framework's metaclass reads as settings (pydantic 1's ``Config``, Django's
# and marshmallow's ``Meta``): not a plain nested class.
_FRAMEWORK_INNER_CLASSES = frozenset({"Config", "Meta"})


def _property_accessors(
    fn: FunctionNode, properties: set[str], span: Callable[[ast.AST], Span]
) -> set[Span]:
    """The spans of ``@name.setter`` (``.getter``, ``.deleter``) decorators of ``fn`` where
    ``name`` is a ``@property`` of the same class: they copy the property, nothing else."""
    return {
        span(d)
        for d in fn.decorator_list
        if isinstance(d, ast.Attribute)
        and d.attr in ("setter", "getter", "deleter")
        and isinstance(d.value, ast.Name)
        and d.value.id in properties
    }
