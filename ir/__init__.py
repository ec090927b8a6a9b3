"""The capability IR: facts read from source, never evaluated.

Public names are re-exported here; the modules behind them are ``model`` (the
records), ``types`` (the closed type algebra), ``serde`` (the one converter) and
``canonical`` (the exact bytes and digests).
"""

from svcc.ir.canonical import canonical_json, digest_bytes
from svcc.ir.model import (
    Binding,
    Capability,
    ClassDecl,
    Decorator,
    Default,
    Evaluation,
    Fallback,
    FileRead,
    GlobalRead,
    GlobalWrite,
    Helper,
    Import,
    ModuleIR,
    NameRead,
    Parameter,
    ParamKind,
    ParamUse,
    Returns,
    SourceInfo,
    Span,
    Statement,
    StatementKind,
    Stream,
    TypedDictDecl,
    TypedDictField,
)
from svcc.ir.schema import IR_SCHEMA, READINESS_SCHEMA

__all__ = [
    "IR_SCHEMA",
    "READINESS_SCHEMA",
    "Binding",
    "Capability",
    "ClassDecl",
    "Decorator",
    "Default",
    "GlobalRead",
    "GlobalWrite",
    "Helper",
    "Import",
    "Evaluation",
    "Fallback",
    "FileRead",
    "ModuleIR",
    "NameRead",
    "ParamKind",
    "ParamUse",
    "Parameter",
    "Returns",
    "SourceInfo",
    "Span",
    "Statement",
    "StatementKind",
    "Stream",
    "TypedDictDecl",
    "TypedDictField",
    "canonical_json",
    "digest_bytes",
]
