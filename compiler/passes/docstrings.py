"""What a capability's docstring says about its parameters and its result.

One well-kept parser (``docstring_parser``) reads the three common styles (Google ``Args:``,
NumPy ``Parameters`` and reST ``:param x:``), so a docstring written for people also
documents the tool's input and output schemas. The code's own descriptions
(``Annotated[T, Field(description=...)]``, recorded by the front end in
``Parameter.description``) take precedence over the docstring's.
"""

from functools import lru_cache
from typing import TYPE_CHECKING

from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics import codes as C
from svcc.ir.model import Capability

if TYPE_CHECKING:
    from attrs import frozen
else:  # the same records, their methods generated ahead of time (svcc.ir.records)
    from svcc.ir.records import frozen

# Sections of a docstring that document a parameter (``Attributes:`` and ``Raises:`` do not).
_PARAMETER_SECTIONS = frozenset({"param", "parameter", "arg", "argument", "key", "keyword"})
# Every section any of the styles documents a name or a result in is marked by one of these
# (Google ``Args:``, reST ``:param x:``, Epydoc ``@param``, NumPy's dashed underline): a
# docstring with none of them is prose only, and the parser (and its import) is skipped.
_SECTION_MARKS = (":", "@", "-")
# Every parameter section of every style is named by one of these (Google's ``Args:`` and
# ``Parameters:``, NumPy's ``Parameters``, reST's ``:param``/``:arg``/``:key``, Epydoc's
# ``@param``/``@keyword``), in any case: a docstring naming none documents no parameter.
_PARAMETER_WORDS = ("param", "arg", "key")


@frozen(kw_only=True)
class Documented:
    """A docstring's parameter descriptions (name → text, in the docstring's order) and the
    description of what the function returns."""

    params: tuple[tuple[str, str], ...] = ()
    returns: str | None = None


@lru_cache(maxsize=1024)
def parse_docstring(docstring: str | None) -> Documented:
    """The parameter and result descriptions ``docstring`` holds (nothing when it holds
    none, or when it cannot be parsed: a docstring is prose before it is a format)."""
    if not docstring or not any(mark in docstring for mark in _SECTION_MARKS):
        return Documented()
    import docstring_parser  # only for a docstring that may have sections: a slow import

    try:
        parsed = docstring_parser.parse(docstring)
    except docstring_parser.ParseError:
        return Documented()
    params = tuple(
        (p.arg_name, " ".join(p.description.split()))
        for p in parsed.params
        if p.args and p.args[0] in _PARAMETER_SECTIONS and p.description
    )
    returns = parsed.returns.description if parsed.returns is not None else None
    return Documented(params=params, returns=" ".join(returns.split()) if returns else None)


def parameter_descriptions(cap: Capability) -> dict[str, str]:
    """Each parameter's description: the code's own, else the docstring's."""
    documented = dict(parse_docstring(cap.docstring).params)
    out: dict[str, str] = {}
    for param in cap.params:
        text = param.description or documented.get(param.name)
        if text:
            out[param.name] = text
    return out


def result_description(cap: Capability) -> str | None:
    """What the docstring says the function returns."""
    return parse_docstring(cap.docstring).returns


def undocumented_names(cap: Capability) -> list[Diagnostic]:
    """A warning per name the docstring documents that the signature lacks (a renamed or
    removed parameter whose documentation stayed behind); ``*args``/``**kwargs`` count."""
    docstring = cap.docstring
    if not docstring or not any(word in docstring.lower() for word in _PARAMETER_WORDS):
        return []  # most docstrings: prose, not parsed
    names = {p.name for p in cap.params}
    out = []
    for name, _ in parse_docstring(docstring).params:
        bare = name.lstrip("*")
        if bare not in names:
            out.append(
                diag(
                    C.R070_DOCUMENTED_PARAMETER_MISSING,
                    f"the docstring of {cap.name} documents a parameter {bare!r} that the "
                    "signature does not have",
                    cap.span,
                )
            )
    return out
