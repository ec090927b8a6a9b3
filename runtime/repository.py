"""Serving a repository bundle in direct mode: a closed import set, then each capability.

A repository bundle's manifest (``"bundle_kind": "repository"``) declares the modules under
``source/`` (dotted name → file), the namespace packages, and the repository's top-level
package names. The manifest was verified (every declared file against its digest) before
this runs, so no source file is imported before all of them are checked. Then a finder is
put first on ``sys.meta_path``: within the repository's packages it imports exactly the
declared files from ``source/`` and refuses every other name, so neither an undeclared file
dropped into ``source/`` nor a same-named package elsewhere on ``sys.path`` can be imported.
Each capability ``python:<module>:<function>`` is then imported and its shape checked.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from .calls import CallShape, enter_source, shape_problem
from .integrity import StartupError
from .services import attribute_of


class DeclaredSourceFinder(importlib.abc.MetaPathFinder):
    """Imports the repository's packages from the declared files only."""

    def __init__(
        self,
        source: Path,
        modules: Mapping[str, str],
        namespaces: Sequence[str],
        packages: Sequence[str],
    ) -> None:
        self.source = source
        self.modules = dict(modules)
        self.namespaces = set(namespaces)
        self.packages = set(packages)

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,  # noqa: ARG002 -- the finder protocol
        target: ModuleType | None = None,  # noqa: ARG002
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.split(".", 1)[0] not in self.packages:
            return None
        relpath = self.modules.get(fullname)
        if relpath is not None:
            file = self.source.parent.joinpath(*relpath.split("/"))
            is_package = file.name == "__init__.py"
            return importlib.util.spec_from_file_location(
                fullname,
                file,
                submodule_search_locations=[str(file.parent)] if is_package else None,
            )
        if fullname in self.namespaces:
            spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
            spec.submodule_search_locations = [str(self.source.joinpath(*fullname.split(".")))]
            return spec
        raise ModuleNotFoundError(
            f"No module named {fullname!r} (not declared in this repository bundle)",
            name=fullname,
        )


def _import(module: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except BaseException as exc:  # the user's module ran and failed: report, never trace
        if os.environ.get("SVC_DEBUG"):
            traceback.print_exc()
        detail = f"{type(exc).__name__}: {exc}".strip().splitlines()
        raise StartupError(
            f"importing module {module!r} failed: {detail[0] if detail else type(exc).__name__}"
        ) from None


def _repository_section(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    """The manifest's ``repository`` section, checked for the shape the finder needs."""
    repo = manifest.get("repository")
    shapes = (("modules", dict), ("namespace_packages", list), ("packages", list))
    if not isinstance(repo, dict) or any(
        not isinstance(repo.get(key), kind) for key, kind in shapes
    ):
        raise StartupError(
            "the manifest's repository section is missing or malformed (modules, "
            "namespace_packages, packages): the bundle was changed after generation"
        )
    return repo


def install_finder(bundle: Path, manifest: Mapping[str, Any]) -> DeclaredSourceFinder:
    repo = _repository_section(manifest)
    finder = DeclaredSourceFinder(
        bundle / "source", repo["modules"], repo["namespace_packages"], repo["packages"]
    )
    sys.meta_path.insert(0, finder)
    return finder


def resolve_repository_capabilities(
    bundle: Path, manifest: Mapping[str, Any], capabilities: list[Mapping[str, Any]]
) -> dict[str, tuple[Callable[..., Any], CallShape]]:
    """Every capability's function and call shape; any problem stops startup."""
    install_finder(bundle, manifest)
    enter_source(bundle)
    out: dict[str, tuple[Callable[..., Any], CallShape]] = {}
    for capability in capabilities:
        _, module_name, qualname = capability["id"].split(":", 2)
        module = _import(module_name)
        function = attribute_of(module, qualname)
        if function is None:
            raise StartupError(
                f"capability {capability['name']!r} is missing from module {module_name!r} "
                "(removed or renamed since generation)"
            )
        problem = shape_problem(function, capability)
        if problem:
            raise StartupError(f"callable shape changed since generation: {problem}")
        out[capability["name"]] = (function, CallShape.from_ir(capability))
    return out
