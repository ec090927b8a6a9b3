"""``cog.yaml``: a Cog predictor directory read as a project (when it has no
``pyproject.toml``).

Honoured: ``predict`` (``"file.py:Class"``: the class's ``predict`` method is what the
directory serves, as ``[tool.svcc] select`` names it) and ``build.python_packages`` (the
declared requirements). Read and not honoured: ``build.python_version`` (the bundle runs on
the interpreter that serves it), ``build.gpu``, ``build.cuda``, ``build.system_packages``,
``build.run`` (an image's concern: ``svcc``'s images install only the requirements),
``image``, ``train``, ``concurrency``.
"""

from pathlib import Path
from typing import Any, Final

from attrs import frozen

COG_YAML: Final = "cog.yaml"


class CogConfigError(ValueError):
    """``cog.yaml`` is not a mapping with the shapes Cog documents; the message says which."""


@frozen
class CogConfig:
    """What a ``cog.yaml`` says: the method served and the declared requirements."""

    select: tuple[str, ...]
    dependencies: tuple[str, ...]


def read_cog_config(root: Path, max_bytes: int) -> CogConfig | None:
    """The directory's ``cog.yaml``, or ``None`` when it has none."""
    import yaml

    path = root / COG_YAML
    if not path.is_file():
        return None
    if path.stat().st_size > max_bytes:
        raise CogConfigError(f"{COG_YAML} is over the {max_bytes}-byte limit")
    try:
        doc = yaml.safe_load(path.read_bytes())
    except yaml.YAMLError as exc:
        raise CogConfigError(f"{COG_YAML} is not valid YAML: {exc}") from None
    if not isinstance(doc, dict):
        raise CogConfigError(f"{COG_YAML} is not a mapping")
    return CogConfig(select=_select(doc.get("predict")), dependencies=_packages(doc))


def _select(predict: Any) -> tuple[str, ...]:
    if predict is None:
        return ()
    if not isinstance(predict, str) or predict.count(":") != 1:
        raise CogConfigError(f'{COG_YAML}: predict must be "file.py:Class", not {predict!r}')
    file, cls = predict.split(":")
    if not file.endswith(".py") or not cls.isidentifier():
        raise CogConfigError(f'{COG_YAML}: predict must be "file.py:Class", not {predict!r}')
    module = file[: -len(".py")].removeprefix("./").replace("/", ".")
    return (f"{module}.{cls}.predict",)


def _packages(doc: dict[str, Any]) -> tuple[str, ...]:
    build = doc.get("build") or {}
    if not isinstance(build, dict):
        raise CogConfigError(f"{COG_YAML}: build is not a mapping")
    packages = build.get("python_packages") or []
    if not isinstance(packages, list) or not all(isinstance(p, str) for p in packages):
        raise CogConfigError(f"{COG_YAML}: build.python_packages is not a list of strings")
    return tuple(packages)
