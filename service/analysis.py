"""The analysis result of one file, as the service returns it (DESIGN §5).

Legacy keys for existing integrations: ``version`` (the grammar used), ``imports``
(``import x``), ``imports_from`` (``from m import a``), and ``functions``: every public
module-level function with ``args`` (``{name, annotation: {type, of}}``), ``returns`` and
``selected`` (whether ``functions_to_analyze`` / ``ignore`` keep it). Modern keys:
``capabilities`` (the IR's records) and ``readiness`` (the readiness document), both
restricted to the selected functions. Everything comes from the compiler's own passes.
"""

from collections.abc import Collection
from typing import Any

from svcc.compiler.driver import Analysis
from svcc.ir.serde import unstructure
from svcc.ir.types import (
    AnyType,
    BoolType,
    DictType,
    FloatType,
    IntType,
    ListType,
    LiteralType,
    NoneType,
    StrType,
    TupleType,
    TypedDictType,
    TypeNode,
    UnionType,
    UnresolvedType,
    UnsupportedType,
)


def annotation(node: TypeNode) -> dict[str, Any]:
    """``{"type": kind, "of": [inner annotations or literal values]}``."""
    match node:
        case ListType(item=item):
            return {"type": "list", "of": [annotation(item)]}
        case DictType(value=value):
            return {"type": "dict", "of": [{"type": "str", "of": []}, annotation(value)]}
        case TupleType(items=items, variadic=variadic):
            inner = [annotation(i) for i in items]
            if variadic is not None:
                inner = [annotation(variadic), {"type": "...", "of": []}]
            return {"type": "tuple", "of": inner}
        case UnionType(options=options):
            return {"type": "union", "of": [annotation(o) for o in options]}
        case LiteralType(values=values):
            return {"type": "literal", "of": list(values)}
        case TypedDictType(name=name):
            return {"type": name, "of": []}
        case UnsupportedType(text=text) | UnresolvedType(text=text):
            return {"type": text, "of": []}
        case AnyType() | IntType() | FloatType() | StrType() | BoolType() | NoneType():
            return {"type": node.KIND, "of": []}


def result_document(analysis: Analysis) -> dict[str, Any]:
    """Everything about one file, every function selected (filters come later)."""
    if analysis.ir is None or analysis.readiness is None:
        error = analysis.error
        assert error is not None
        return {"error": {"path": analysis.path, **error.to_json()}}
    ir = analysis.ir
    imports = sorted({i.module for i in ir.imports if i.scope == "" and not i.names})
    imports_from = [
        {"module": "." * i.level + i.module, "names": list(i.names)}
        for i in ir.imports
        if i.scope == "" and i.names
    ]
    functions = [
        {
            "name": cap.name,
            "args": [
                {"name": p.name, "kind": p.kind, "annotation": annotation(p.type)}
                for p in cap.params
            ],
            "returns": annotation(cap.returns.type),
            "async": cap.execution == "async",
            "docstring": cap.docstring,
            "selected": True,
        }
        for cap in ir.capabilities
    ]
    return {
        "version": ir.source.python_version,
        "module": ir.module,
        "imports": imports,
        "imports_from": imports_from,
        "functions": functions,
        "capabilities": [unstructure(c) for c in ir.capabilities],
        "readiness": analysis.document(),
    }


def apply_selection(
    document: dict[str, Any], only: Collection[str] | None, ignore: Collection[str]
) -> dict[str, Any]:
    """Mark and restrict to the selected functions (``functions`` keeps every one)."""
    if "error" in document:
        return document

    def keep(name: str) -> bool:
        return (only is None or name in only) and name not in ignore

    for function in document["functions"]:
        function["selected"] = keep(function["name"])
    document["capabilities"] = [c for c in document["capabilities"] if keep(c["name"])]
    readiness = document["readiness"]
    readiness["assessments"] = [a for a in readiness["assessments"] if keep(a["name"])]
    return document
