"""``ContainerizerConfiguration`` and friends: the ``conf`` of the generation operations.

Defaults follow the specification exactly (Python ``(3, 8)``, ``alpine`` /
``alpine3.18``, port 5001, 2 workers, timeout 60, ``gunicorn``, ``wsgi.py``,
``gunicorn.conf.py``, ``app.py``). Parsing is strict: an unknown key or a wrong type is a
:class:`ConfigError` naming the JSON path, which the service answers with 400.
"""

import re
from typing import Any, Final

from attrs import field, frozen, validators

DEFAULT_SERVER_APP: Final = "gunicorn"
_PACKAGE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*(?:[<>=!~]=?[A-Za-z0-9.*+!-]+)?")
_SYSTEM_PACKAGE: Final = re.compile(r"[a-z0-9][a-z0-9.+-]*")
_FILE_NAME: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
_HOST: Final = re.compile(r"[0-9A-Za-z.:\[\]-]+")


class ConfigError(ValueError):
    """An invalid ``conf``; the message names the field."""


def _matches(pattern: re.Pattern[str], what: str) -> Any:
    def check(_: object, attribute: Any, value: Any) -> None:
        values = value if isinstance(value, tuple) else (value,)
        for item in values:
            if not pattern.fullmatch(item):
                raise ValueError(f"{attribute.name}: {item!r} is not a valid {what}")

    return check


def _positive(_: object, attribute: Any, value: int) -> None:
    if value < 1:
        raise ValueError(f"{attribute.name} must be at least 1")


@frozen(kw_only=True)
class ServerConfiguration:
    server_app: str = field(default=DEFAULT_SERVER_APP, validator=validators.in_(["gunicorn"]))
    wsgi_file_name: str = field(default="wsgi.py", validator=_matches(_FILE_NAME, "file name"))
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

    name: str = field(validator=_matches(_PACKAGE, "requirement"))
    packages: tuple[str, ...] = field(default=(), validator=_matches(_SYSTEM_PACKAGE, "package"))


def _version(_: object, __: Any, value: tuple[int, ...]) -> None:
    if len(value) != 2 or value[0] != 3 or not 0 <= value[1] <= 99:
        raise ValueError(f"python_version: {value!r} is not a Python 3 version like [3, 12]")


@frozen(kw_only=True)
class ContainerizerConfiguration:
    python_version: tuple[int, int] = field(default=(3, 8), validator=_version)
    encoding: str = "utf-8"
    container_image: str = field(
        default="alpine", validator=_matches(re.compile(r"[a-z0-9][a-z0-9._/-]*"), "image name")
    )
    container_image_tag: str = field(
        default="alpine3.18", validator=_matches(re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*"), "tag")
    )
    dependencies: tuple[Dependency, ...] = ()
    custom_packages: tuple[str, ...] = field(default=(), validator=_matches(_PACKAGE, "package"))
    project_path: str = "."
    main_folder: str | None = None
    api_filename: str = field(default="app.py", validator=_matches(_FILE_NAME, "file name"))
    server: ServerConfiguration = ServerConfiguration()
    svc_requirements: tuple[str, ...] = field(default=(), validator=_matches(_PACKAGE, "package"))

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

        return parse_python_version(value, "python_version")  # the one rule for "3.N"
    if isinstance(value, list) and len(value) == 2 and all(type(v) is int for v in value):
        return (value[0], value[1])
    raise TypeError('python_version: expected "3.N" or [3, N]')


def parse_configuration(data: Any) -> ContainerizerConfiguration:
    """Decoded JSON → configuration; any problem is a one-line :class:`ConfigError`."""
    from cattrs import ClassValidationError, Converter
    from svcc.compiler.explain import structure_problems

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
