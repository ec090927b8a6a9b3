"""A Cog project's ``cog.yaml``: which predictor to serve and what it declares.

Cog (replicate/cog) describes a model server with ``cog.yaml`` beside the code:
``predict: "predict.py:Predictor"`` names the predictor (a ``BasePredictor`` class, or a
function) and ``build:`` the environment. svcc reads the file without running anything
(``yaml.safe_load``, at most :data:`MAX_BYTES`), honours what it can serve the same way
(the predictor, the Python packages and requirements file) and names every other key as not
honoured (``gpu``, ``python_version``, ``system_packages``, ``run``...), so a user sees what
the generated bundle does not do. A file that cannot be read, or whose ``predict``
is missing or points outside the directory, is an :class:`InputError` (exit 2, one line).
"""

from pathlib import Path, PurePosixPath
from typing import Any, Final

from attrs import frozen
from svcc.contracts.diagnostics import Diagnostic, diag
from svcc.contracts.diagnostics.codes import F038_COG_KEYS
from svcc.contracts.errors import InputError
from svcc.contracts.requirements import DeclaredRequirements, parse_requirements

COG_FILE: Final = "cog.yaml"
MAX_BYTES: Final = 64 * 1024
# A requirements file named by ``build.python_requirements`` is read up to this size.
MAX_REQUIREMENTS_BYTES: Final = 256 * 1024
# The keys svcc honours (the predictor and the Python side of ``build``)
HONOURED: Final = ("predict", "build.python_packages", "build.python_requirements")


@frozen(kw_only=True)
class CogConfig:
    """What ``cog.yaml`` says, as svcc serves it. ``predict_file`` is POSIX, relative to
    the directory; ``module`` its dotted path from the directory (the repository front end
    names the module from its source root: ``src/predict.py`` is ``predict`` there, so match
    capabilities by file); ``predictor`` the class (or function) name; ``python_version`` is
    recorded, not honoured; ``requirements`` the declared lines (``build.python_packages``,
    then the lines of ``build.python_requirements``); ``honoured`` and ``ignored`` name each
    key present (``build.gpu``), in file order."""

    predict_file: str
    module: str
    predictor: str
    requirements: tuple[str, ...]
    python_version: str | None
    honoured: tuple[str, ...]
    ignored: tuple[str, ...]

    @property
    def capability_id(self) -> str:
        """The served capability's id when the predictor is a function and the directory
        is its file's source root (``python:<module>:<name>``); a class's methods are
        ``<name>.<method>``."""
        return f"python:{self.module}:{self.predictor}"

    def declared(self) -> DeclaredRequirements | None:
        """The declared requirements, as a requirements file's are (``None``: none)."""
        if not self.requirements:
            return None
        return parse_requirements("\n".join(self.requirements), COG_FILE)


def keys_note(cog: CogConfig) -> Diagnostic:
    """SVC-F038: the keys of ``cog.yaml`` svcc honours, and each one it does not."""
    said = f"{COG_FILE}: honoured: {', '.join(cog.honoured)}"
    if cog.ignored:
        said += f"; not honoured (the bundle does not do them): {', '.join(cog.ignored)}"
    return diag(F038_COG_KEYS, said, None)


def find_cog(directory: Path) -> Path | None:
    """``directory``'s ``cog.yaml`` (a regular file, not a link), or ``None``."""
    path = directory / COG_FILE
    return path if path.is_file() and not path.is_symlink() else None


def read_cog(directory: Path) -> CogConfig | None:
    """``directory``'s ``cog.yaml`` read (``None`` when it has none); a refusal is an
    :class:`InputError` naming the file."""
    path = find_cog(directory)
    if path is None:
        return None
    data = _load(path)
    where = COG_FILE
    predict = data.get("predict")
    if not isinstance(predict, str) or not predict.strip():
        raise InputError(f'{where}: `predict` must name the predictor, as "predict.py:Predictor"')
    predict_file, predictor = _predictor(predict.strip(), directory, where)
    build = data.get("build", {})
    if build is None:
        build = {}
    if not isinstance(build, dict):
        raise InputError(f"{where}: `build` must be a mapping")
    requirements = [*_packages(build.get("python_packages"), where)]
    # an invalid line is refused in one line naming where it is (exit 2)
    parse_requirements("\n".join(requirements), f"{where}: build.python_packages")
    requirements_file = build.get("python_requirements")
    ignored: list[str] = []
    if requirements_file is not None:
        lines, options = _requirements_file(requirements_file, directory, where)
        parse_requirements("\n".join(lines), f"{where}: {requirements_file}")
        requirements.extend(lines)
        ignored.extend(f"build.python_requirements {o}" for o in options)
    version = build.get("python_version")
    if version is not None and not isinstance(version, str):
        raise InputError(
            f'{where}: `build.python_version` must be a quoted version such as "3.11" '
            f"(YAML reads {version!r})"
        )
    present: list[str] = []
    for key in data:
        if key == "build":
            present.extend(f"build.{k}" for k in build)
        else:
            present.append(str(key))
    honoured = tuple(k for k in present if k in HONOURED)
    ignored = [k for k in present if k not in HONOURED] + ignored
    return CogConfig(
        predict_file=predict_file,
        module=".".join(PurePosixPath(predict_file).with_suffix("").parts),
        predictor=predictor,
        requirements=tuple(requirements),
        python_version=None if version is None else str(version),
        honoured=honoured,
        ignored=tuple(ignored),
    )


def _load(path: Path) -> dict[str, Any]:
    import yaml

    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise InputError(f"{COG_FILE}: cannot be read: {exc.strerror or exc}") from None
    if len(raw) > MAX_BYTES:
        raise InputError(f"{COG_FILE}: larger than {MAX_BYTES} bytes")
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(f"{COG_FILE}: not UTF-8 text") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise InputError(f"{COG_FILE}: not valid YAML{at}: {problem}") from None
    except RecursionError:
        raise InputError(f"{COG_FILE}: nested too deeply") from None
    if not isinstance(data, dict):
        raise InputError(f"{COG_FILE}: must be a mapping of keys (predict, build, ...)")
    return data


def _inside(relpath: str, directory: Path, where: str, what: str) -> str:
    """``relpath`` as a POSIX path inside ``directory`` (no ``..``, not absolute, no link
    leading out); refused otherwise."""
    pure = PurePosixPath(relpath)
    if pure.is_absolute() or ".." in pure.parts or "\\" in relpath or not pure.parts:
        raise InputError(f"{where}: {what} {relpath!r} is outside the directory")
    target = directory.joinpath(*pure.parts)
    try:
        target.resolve().relative_to(directory.resolve())
    except ValueError:
        raise InputError(f"{where}: {what} {relpath!r} is outside the directory") from None
    if not target.is_file():
        raise InputError(f"{where}: {what} {relpath!r} is not a file of the directory")
    return pure.as_posix()


def _predictor(predict: str, directory: Path, where: str) -> tuple[str, str]:
    file, sep, name = predict.rpartition(":")
    if not sep or not file.endswith(".py") or not name.isidentifier():
        raise InputError(
            f'{where}: `predict: {predict}` must be FILE.py:NAME, as "predict.py:Predictor"'
        )
    relpath = _inside(file.removeprefix("./"), directory, where, "predict file")
    parts = PurePosixPath(relpath).with_suffix("").parts
    if not all(p.isidentifier() for p in parts):
        raise InputError(f"{where}: predict file {relpath!r} is not an importable module path")
    return relpath, name


def _packages(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{where}: `build.python_packages` must be a list of requirements")
    return [v.strip() for v in value if v.strip()]


def _requirements_file(value: Any, directory: Path, where: str) -> tuple[list[str], list[str]]:
    """The requirement lines of ``build.python_requirements`` and its option lines
    (``--extra-index-url ...``: not honoured, named)."""
    if not isinstance(value, str):
        raise InputError(f"{where}: `build.python_requirements` must be a file name")
    relpath = _inside(value, directory, where, "python_requirements")
    with directory.joinpath(relpath).open("rb") as handle:
        raw = handle.read(MAX_REQUIREMENTS_BYTES + 1)
    if len(raw) > MAX_REQUIREMENTS_BYTES:
        raise InputError(f"{where}: {relpath} is larger than {MAX_REQUIREMENTS_BYTES} bytes")
    lines: list[str] = []
    options: list[str] = []
    for line in raw.decode("utf-8", "replace").splitlines():
        entry = line.split(" #", 1)[0].strip()
        if not entry or entry.startswith("#"):
            continue
        (options if entry.startswith("-") else lines).append(entry)
    return lines, [o.split()[0] for o in options]
