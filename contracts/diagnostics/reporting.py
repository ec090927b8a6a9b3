"""How a diagnostic is shown outside svcc: its strength and its page in the manual.

Editors (``svcc lsp``) and code scanning (``svcc inspect --format sarif``) both need to say
how strongly a reason blocks and where its code is explained; the rule is written once here
so an alert in a pull request and a squiggle in an editor never disagree.
"""

import os
from typing import TYPE_CHECKING, Final, Literal

from svcc.contracts.diagnostics.codes import REGISTRY

if TYPE_CHECKING:
    from svcc.contracts.diagnostics.codes import Code

# SARIF's ``level`` values; the language server maps them onto its four severities.
Level = Literal["error", "warning", "note", "none"]

# Where the manual is published; ``SVCC_MANUAL_URL`` points links at a copy hosted elsewhere
# (a team's own build of ``docs/``).
MANUAL_URL: Final = "https://svcc.readthedocs.io/en/latest/"
# The page listing every code (``docs/diagnostics.md``), one anchor per code.
CODES_PAGE: Final = "diagnostics/"


def manual_url() -> str:
    """The manual's base URL, ending in ``/``."""
    base = os.environ.get("SVCC_MANUAL_URL") or MANUAL_URL
    return base if base.endswith("/") else base + "/"


def code_url(code: str) -> str:
    """The manual's entry for ``code`` (``.../diagnostics/#svc-r007``)."""
    return f"{manual_url()}{CODES_PAGE}#{code.lower()}"


def code_level(entry: "Code") -> Level:
    """A code's strength: a reason that makes a function ``unsupported`` or ``ambiguous``
    (or stops the front end) is an ``error``; one that makes it ``conditional`` (it could be
    served once the module or the declarations change) a ``warning``; a warning a ``note``
    (the function is still served); a note what svcc did, no problem at all (``none``)."""
    if entry.severity == "note":
        return "none"
    if entry.severity == "warning":
        return "note"
    return "warning" if entry.klass == "conditional" else "error"


def level_of(code: str) -> Level:
    return code_level(REGISTRY[code])


def rule_name(entry: "Code") -> str:
    """A code's title as one PascalCase word (SARIF's ``rule.name``):
    ``parameter without annotation`` → ``ParameterWithoutAnnotation``."""
    words = "".join(c if c.isalnum() else " " for c in entry.title).split()
    return "".join(w[:1].upper() + w[1:] for w in words)


__all__ = [
    "CODES_PAGE",
    "Level",
    "MANUAL_URL",
    "code_level",
    "code_url",
    "level_of",
    "manual_url",
    "rule_name",
]
