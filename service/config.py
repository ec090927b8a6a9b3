"""``ContainerizerConfiguration`` and friends: the ``conf`` of the generation operations.

Defaults follow the specification (``alpine`` / ``alpine3.18``, port 5001, 2 workers,
timeout 60, ``gunicorn``, ``wsgi.py``, ``gunicorn.conf.py``, ``app.py``) except the Python
version: the specification's ``(3, 8)`` cannot install or import a generated bundle (its
runtime and pinned server packages need 3.11+), so the default is the oldest Python the
bundles support and anything outside :data:`SUPPORTED_PYTHON` is refused.

Parsing is strict: an unknown key or a wrong type is a :class:`ConfigError` naming the JSON
path, which the service answers with 400. Every value that reaches a generated file is
validated here, in Python, against the grammar of the place it lands in (a module name is an
identifier, a requirement parses with ``packaging``, a folder is a relative path of plain
names); templates only ever receive checked values.
"""

import codecs
import keyword
import re
from typing import Any, Final

from attrs import field, frozen, validators

DEFAULT_SERVER_APP: Final = "gunicorn"
SUPPORTED_PYTHON: Final = ((3, 11), (3, 14))
"""The oldest and newest Python a generated bundle (runtime + pinned server packages) runs on."""
MAX_TEXT: Final = 255
_SYSTEM_PACKAGE: Final = re.compile(r"[a-z0-9][a-z0-9.+-]*")
_FILE_NAME: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
_FOLDER: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_][A-Za-z0-9_.-]*)*")


class ConfigError(ValueError):
    """An invalid ``conf``; the message names the field."""


def _matches(pattern: re.Pattern[str], what: str) -> Any:
    def check(_: object, attribute: Any, value: Any) -> None:
        values = value if isinstance(value, tuple) else (value,)
        for item in values:
            if len(item) > MAX_TEXT:
                raise ValueError(f"{attribute.name}: longer than {MAX_TEXT} characters")
            if not pattern.fullmatch(item):
                raise ValueError(f"{attribute.name}: {item!r} is not a valid {what}")

    return check


def _module_file(_: object, attribute: Any, value: str) -> None:
    """A file Python imports by name: ``<identifier>.py``, ASCII, not a keyword."""
    stem = value[:-3] if value.endswith(".py") else ""
    if (
        len(value) > MAX_TEXT
        or not stem.isascii()
        or not stem.isidentifier()
        or keyword.iskeyword(stem)
    ):
        raise ValueError(
            f"{attribute.name}: {value[:80]!r} is not a Python module file name "
            "(an ASCII identifier followed by .py, e.g. app.py)"
        )


def _requirements(_: object, attribute: Any, value: Any) -> None:
    """Each entry is one PEP 508 requirement (no URL), so nothing else reaches requirements.txt."""
    from packaging.requirements import InvalidRequirement, Requirement
    from svcc.contracts.requirements import invalid_reason

    for item in value if isinstance(value, tuple) else (value,):
        if len(item) > MAX_TEXT or not item.isprintable():
            raise ValueError(f"{attribute.name}: {item[:80]!r} is not a valid requirement")
        try:
            parsed = Requirement(item)
        except InvalidRequirement as exc:
            reason = invalid_reason(exc)
            raise ValueError(
                f"{attribute.name}: {item!r} is not a valid requirement ({reason})"
            ) from None
        if parsed.url:
            raise ValueError(f"{attribute.name}: {item!r}: direct URL references are refused")


def _folder(_: object, attribute: Any, value: str | None) -> None:
    if value is None:
        return
    parts = value.rstrip("/").split("/")
    if (
        len(value) > 1024
        or not _FOLDER.fullmatch(value.rstrip("/"))
        or any(p in (".", "..") or len(p) > MAX_TEXT for p in parts)
    ):
        raise ValueError(
            f"{attribute.name}: {value[:80]!r} is not a relative folder of plain names "
            "(letters, digits, '_', '.', '-'; no '..')"
        )


def _encoding(_: object, attribute: Any, value: str) -> None:
    try:
        if len(value) > MAX_TEXT:
            raise LookupError
        codecs.lookup(value)
    except LookupError:
        raise ValueError(f"{attribute.name}: unknown encoding {value[:80]!r}") from None


def _bounded(_: object, attribute: Any, value: str) -> None:
    if not value or len(value) > 1024 or "\0" in value:
        raise ValueError(f"{attribute.name}: expected a path of 1 to 1024 characters")


def _positive(_: object, attribute: Any, value: int) -> None:
    if value < 1:
        raise ValueError(f"{attribute.name} must be at least 1")


@frozen(kw_only=True)
class ServerConfiguration:
    server_app: str = field(default=DEFAULT_SERVER_APP, validator=validators.in_(["gunicorn"]))
    wsgi_file_name: str = field(default="wsgi.py", validator=_module_file)
    wsgi_conf_file_name: str = field(
        default=f"{DEFAULT_SERVER_APP}.conf.py", validator=_matches(_FILE_NAME, "file name")
    )
    host: str = field(
        default="0.0.0.0", validator=_matches(re.compile(r"[0-9A-Za-z.:\[\]-]+"), "host")
    )
    port: int = field(default=5001, validator=[validators.ge(1), validators.le(65535)])
    workers: int = field(default=2, validator=[_positive, validators.le(256)])
    timeout: int = field(default=60, validator=[_positive, validators.le(86400)])


@frozen(kw_only=True)
class Dependency:
    """A Python dependency and the system packages it needs in the image."""

    name: str = field(validator=_requirements)
    packages: tuple[str, ...] = field(default=(), validator=_matches(_SYSTEM_PACKAGE, "package"))


def _unsupported(shown: str) -> str:
    (major, low), (_, high) = SUPPORTED_PYTHON
    return (
        f"python_version: {shown} is not supported: generated bundles run on "
        f"Python {major}.{low} to {major}.{high}"
    )


def _version(_: object, __: Any, value: tuple[int, ...]) -> None:
    (low_major, low), (_high_major, high) = SUPPORTED_PYTHON
    if len(value) != 2 or value[0] != low_major or not low <= value[1] <= high:
        raise ValueError(_unsupported(".".join(str(v) for v in value)))


@frozen(kw_only=True)
class ContainerizerConfiguration:
    python_version: tuple[int, int] = field(default=SUPPORTED_PYTHON[0], validator=_version)
    encoding: str = field(default="utf-8", validator=_encoding)
    container_image: str = field(
        default="alpine", validator=_matches(re.compile(r"[a-z0-9][a-z0-9._/-]*"), "image name")
    )
    container_image_tag: str = field(
        default="alpine3.18", validator=_matches(re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*"), "tag")
    )
    dependencies: tuple[Dependency, ...] = ()
    custom_packages: tuple[str, ...] = field(default=(), validator=_requirements)
    project_path: str = field(default=".", validator=_bounded)
    main_folder: str | None = field(default=None, validator=_folder)
    api_filename: str = field(default="app.py", validator=_module_file)
    server: ServerConfiguration = ServerConfiguration()
    svc_requirements: tuple[str, ...] = field(default=(), validator=_requirements)

    def __attrs_post_init__(self) -> None:
        names = {
            "api_filename": self.api_filename,
            "server.wsgi_file_name": self.server.wsgi_file_name,
            "server.wsgi_conf_file_name": self.server.wsgi_conf_file_name,
        }
        seen: dict[str, str] = {}
        for what, name in names.items():
            if name in seen:
                raise ValueError(f"{what}: {name!r} is also {seen[name]}; give distinct names")
            seen[name] = what

    @property
    def family(self) -> str:
        """``debian`` (apt-get) or ``alpine`` (apk), chosen from the base image and tag."""
        text = f"{self.container_image}:{self.container_image_tag}".lower()
        if "alpine" in text:
            return "alpine"
        return "debian"


def _strict(kind: type) -> Any:
    def hook(value: Any, _: type) -> Any:
        if type(value) is not kind:
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        return value

    return hook


def _version_hook(value: Any, _: type) -> tuple[int, int]:
    if isinstance(value, str):
        from svcc.ir.python_version import parse_python_version

        try:
            return parse_python_version(value, "python_version")  # the one rule for "3.N"
        except ValueError:
            raise ValueError(_unsupported(value[:20])) from None
    if isinstance(value, list) and len(value) == 2 and all(type(v) is int for v in value):
        return (value[0], value[1])
    raise TypeError('python_version: expected "3.N" or [3, N]')


def parse_configuration(data: Any) -> ContainerizerConfiguration:
    """Decoded JSON → configuration; any problem is a one-line :class:`ConfigError`."""
    from cattrs import ClassValidationError, Converter
    from svcc.contracts.explain import structure_problems

    if not isinstance(data, dict):
        raise ConfigError("conf must be a JSON object")
    converter = Converter(forbid_extra_keys=True, detailed_validation=True)
    for kind in (str, int, bool):
        converter.register_structure_hook(kind, _strict(kind))
    converter.register_structure_hook_func(lambda t: t == tuple[int, int], _version_hook)
    try:
        return converter.structure(data, ContainerizerConfiguration)
    except ClassValidationError as exc:
        problems = structure_problems(exc, "conf")
        raise ConfigError("invalid conf: " + "; ".join(problems)) from None
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"invalid conf: {exc}") from None
