"""The alternatives of one ``try: import A`` / ``except ImportError: import B`` judged as
one import (``Import.fallback``, read by ``frontends/python/_fallbacks.py``).

The module imports when one alternative is provided (every module it imports is standard
library for the target Python, a module of the bundle, or declared): the group is then
fine, whichever alternative that is. When none is provided:

- without a substitute, the import fails at start: the module is refused (SVC-R008), the
  message naming every alternative;
- with a substitute (a handler that binds the names without importing or raising: ``X =
  None``, ``pass``, an identity ``def``), the module imports, and only code that calls
  into a missing module fails: a capability is refused (SVC-R009) when what it reaches
  when it runs (``Capability.reach``: every callee's origin through the module's own
  functions) calls into one of them, or when that reach stops at the depth bound
  (``<depth>``: what lies past it is not known).

A decorator the handler defines as an identity (``try: from strands import tool`` /
``except ImportError: def tool(f): return f``; ``Decorator.identity_unless``) is that
identity when none of the alternatives is provided: the function keeps its signature. When
one is, it is the framework's decorator: it may replace the function (SVC-R001) and it runs
at import (SVC-R007, for every function of the module).
"""

from collections.abc import Callable, Iterable, Iterator
from itertools import groupby

from svcc.ir.model import Capability, Import, ModuleIR

Provided = Callable[[Import], bool]

_PAST_DEPTH = "<depth>"


def _said(imp: Import) -> str:
    if imp.names:
        return f"from {'.' * imp.level}{imp.module} import {', '.join(imp.names)}"
    return f"import {imp.module}"


def missing(ir: ModuleIR, provided: Provided) -> Iterator[tuple[list[Import], bool]]:
    """The module-level groups none of whose alternatives is provided, each with whether a
    handler substitutes the names."""
    members = sorted(
        (i for i in ir.imports if i.scope == "" and i.fallback and not i.type_checking),
        key=lambda i: (i.fallback.group, i.fallback.alternative) if i.fallback else (0, 0),
    )
    for _, grouped in groupby(members, key=lambda i: i.fallback.group if i.fallback else 0):
        group = list(grouped)
        by_alternative: dict[int, list[Import]] = {}
        for imp in group:
            assert imp.fallback is not None
            by_alternative.setdefault(imp.fallback.alternative, []).append(imp)
        if any(all(provided(i) for i in alt) for alt in by_alternative.values()):
            continue
        assert group[0].fallback is not None
        yield group, group[0].fallback.substitute


def message(group: list[Import], substitute: bool) -> str:
    """What fails, naming every alternative."""
    said = " / ".join(f"`{_said(i)}`" for i in group)
    several = len({i.fallback.alternative for i in group if i.fallback}) > 1
    what = f"none of the alternatives {said} is provided" if several else f"{said} is not provided"
    if substitute:
        return (
            f"{what}: its ImportError handler substitutes the names, so the module imports, "
            "but a call into the missing module fails"
        )
    if several:
        return f"{what}: the import fails at start"
    return (
        f"{what}, and no handler of its `try` imports an alternative or substitutes the "
        "names: the import fails at start"
    )


def reaches(cap: Capability, group: list[Import]) -> bool:
    """Whether the capability may call into a module of the group when it runs."""
    modules = {i.module for i in group if i.level == 0 and i.module}
    for callee in cap.reach:
        if callee == _PAST_DEPTH:
            return True
        head = callee.lstrip("&")
        if any(head == m or head.startswith(m + ".") for m in modules):
            return True
    return False


def group_numbers(groups: Iterable[tuple[list[Import], bool]]) -> set[int]:
    return {g[0].fallback.group for g, _ in groups if g[0].fallback}


def missing_groups(ir: ModuleIR, provided: Provided) -> set[int]:
    """The numbers of the groups none of whose alternatives is provided."""
    return group_numbers(missing(ir, provided))


def unimported_groups(ir: ModuleIR, provided: Provided) -> set[int]:
    """The numbers of the groups whose ``try`` body (alternative 0) is not provided: a branch
    of ``if FLAG:`` that runs only when it imported is dead (``Evaluation.only_if_imported``)."""
    found: set[int] = set()
    for imp in ir.imports:
        alternative = imp.fallback.alternative if imp.fallback else None
        if imp.scope == "" and imp.fallback and alternative == 0 and not provided(imp):
            found.add(imp.fallback.group)
    return found
