"""A package's module importing a sibling by its bare name (``import config``).

Scripts run from a package's folder do this: ``python tools.py`` puts the folder on
``sys.path``, so ``import config`` finds ``config.py`` beside it. The bundle imports the
module as what it is in the repository (``pkg.tools``, with the source root on
``sys.path``), where no top-level ``config`` exists: the server would fail to start with
``No module named 'config'``. Attributing the name to a declared distribution (SVC-R040)
would call it eligible and unstartable; the import is refused as a local import the bundle
cannot hold (SVC-R021), naming the sibling and the two spellings that work.
"""

from typing import Protocol

from svcc.ir.imports import package_of


class _Graph(Protocol):
    modules: dict[str, bool]
    namespaces: frozenset[str]


def bare_sibling(graph: _Graph, importer: str, imported: str) -> str | None:
    """The sibling module (or package) of ``importer`` that the absolute import
    ``imported`` names by its bare top-level name, or ``None``."""
    package = package_of(importer, graph.modules.get(importer, False))
    if not package:
        return None
    sibling = f"{package}.{imported.split('.', 1)[0]}"
    return sibling if sibling in graph.modules or sibling in graph.namespaces else None


def sibling_import_problem(importer: str, imported: str, sibling: str) -> str:
    top = imported.split(".", 1)[0]
    package = sibling.rpartition(".")[0]
    return (
        f"import {imported!r} names the sibling module {sibling!r} by its bare name: that "
        f"works for a script run from {package.replace('.', '/')}/, but the bundle imports "
        f"{importer}, where no top-level {top!r} exists (No module named {top!r}); write "
        f"`from . import {top}` or `from {package} import {top}`"
    )


__all__ = ["bare_sibling", "sibling_import_problem"]
