"""Where an import resolves: a module of the repository the bundle holds, the standard library
or a declared requirement; the messages and hints for one that resolves nowhere."""

from typing import Final

from svcc.compiler.passes.cog_shim import imports_cog, shim_problem
from svcc.compiler.passes.rule_subject import Environment, available
from svcc.contracts.diagnostics import codes as C
from svcc.contracts.diagnostics.codes import Code
from svcc.ir.model import Import

HINT: Final = "declare its distribution in a requirements file and pass --requirements FILE"


def hint_for(root: str) -> str:
    """The declaration hint, naming the distribution when the committed table knows it."""
    from svcc.contracts.requirements import DISTRIBUTION_OF

    dist = DISTRIBUTION_OF.get(root)
    if dist is None or dist.replace("-", "_") == root:
        return HINT
    return f"declare its distribution ({dist}) in a requirements file and pass --requirements FILE"


def declare_hint(env: Environment) -> str:
    """The message's tail: a directory declares in pyproject.toml (the code's hint says
    --requirements, as for a file)."""
    return f"; {DECLARE_HINT}" if env.repository else ""


def _attributed(module: str, unmapped: tuple[str, ...]) -> str:
    names = ", ".join(unmapped)
    return (
        f"import {module!r} is attributed to the declared "
        f"distribution{'s' if len(unmapped) > 1 else ''} {names}, whose import name is not "
        "known; the server's startup import proves it"
    )


DECLARE_HINT: Final = (
    "declare it in [project] dependencies of pyproject.toml, [tool.svcc] dependencies, "
    "or with --requirements FILE"
)


def undeclared(module: str, env: Environment) -> str | None:
    """Why an import that is no module of the repository cannot be served (not standard
    library, not declared), said as the user declares one: ``None`` when it resolves."""
    root = module.split(".", 1)[0]
    if available(root, env):
        return None
    if env.repository:
        return (
            f"import {module!r} is not standard library, a module of the repository, or a "
            f"declared dependency; {DECLARE_HINT}"
        )
    return (
        f"import {module!r} is not standard library, beside the source, or declared; "
        f"{hint_for(root)}"
    )


class ImportResolver:
    """The import rules: an import resolves to a module of the repository that the bundle
    will hold (``env.resolve_import``, over the module graph), or to the standard library,
    or to a declared requirement."""

    def __init__(self, env: Environment) -> None:
        self.env = env

    def provided(self, imp: Import) -> bool:
        """Whether the import resolves (standard library, the bundle's, or declared)."""
        found = self.problem(imp, C.R008_UNRESOLVED_IMPORT)
        return found is None or found[0] == C.R040_ATTRIBUTED_IMPORT

    def problem(self, imp: Import, unresolved: Code) -> tuple[Code, str] | None:
        """``(code, message)`` of an import that would fail, or ``None``; ``unresolved`` is
        the code of a missing module (SVC-R008 at module level, SVC-R009 in a body)."""
        env = self.env
        if imports_cog((imp,)):  # the bundle ships its own cog (a declared one is not used)
            why = shim_problem(imp)
            return None if why is None else (unresolved, why)
        if env.resolve_import is not None:
            found = env.resolve_import(imp)
        elif imp.level > 0:  # a module judged alone: it has no package to resolve in
            found = ("local", f"relative import {'.' * imp.level + imp.module!r} has no package")
        else:
            why = undeclared(imp.module, env)
            found = None if why is None else ("external", why)
        if found is None:
            return None
        kind, message = found
        if kind == "local":
            return C.R021_LOCAL_IMPORT, message
        if kind == "external" and env.unmapped:
            return C.R040_ATTRIBUTED_IMPORT, _attributed(imp.module, env.unmapped)
        return unresolved, message
