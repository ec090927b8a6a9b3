"""Module names from file names: people name notebooks ``Gradient Descent.ipynb``.

A stem that is already a Python identifier names the module unchanged. One that is not is
turned into one (``Gradient Descent`` -> ``gradient_descent``, ``01-intro`` -> ``m_01_intro``)
and the analysis says so with an ``SVC-F013`` note, so the capability ids a user sees are
never a surprise; ``--module-name`` still names the module explicitly. A derived name that
clashes with a reserved one is refused by the usual module-name checks, as any other name.
"""

import keyword
import re
import unicodedata

from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics.codes import F013_DERIVED_NAME

_NOT_WORD = re.compile(r"\W+")


def derive_module_name(stem: str) -> str:
    """``stem`` itself when it is an identifier, else a derived one (``""`` when nothing of
    it can name a module, such as ``---``: the caller's name check then refuses it)."""
    if stem.isidentifier() and not keyword.iskeyword(stem):
        return stem
    if keyword.iskeyword(stem):
        return f"{stem}_"
    words = _NOT_WORD.sub("_", unicodedata.normalize("NFKC", stem)).strip("_").lower()
    words = re.sub(r"_+", "_", words)
    if not words:
        return ""
    name = f"m_{words}" if not (words[0].isalpha() or words[0] == "_") else words
    if not name.isidentifier():  # a character \\w accepts that cannot start or join a name
        name = "".join(c if ("a" + c).isidentifier() else "_" for c in name)
    return f"{name}_" if keyword.iskeyword(name) else name


def derive_dotted(module: str) -> str:
    """A dotted name whose last part (the file's stem) is derived; packages stay as named
    (a folder that is not an identifier is never a package part)."""
    package, _, stem = module.rpartition(".")
    derived = derive_module_name(stem) or stem
    return f"{package}.{derived}" if package else derived


def derived_name_note(stem: str, module: str) -> Diagnostic | None:
    """The ``SVC-F013`` note when ``module``'s last part was derived from ``stem``."""
    last = module.rpartition(".")[2]
    if stem == last or derive_module_name(stem) != last:
        return None
    return diag(
        F013_DERIVED_NAME,
        f"module named {module!r} from the file name {stem!r} (not a Python identifier); "
        "name it with --module-name NAME",
        None,
    )


__all__ = ["derive_dotted", "derive_module_name", "derived_name_note"]
