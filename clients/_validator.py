"""The bundle's own request validator, loaded from the bundle's verified runtime bytes.

A generated server builds its validators from ``openapi.json`` with
``svc_runtime/validation.py``. Export checks every example body with that very module
(the bytes the manifest hashed, executed under a private package name and dropped
afterwards), so a body written into a collection is one the server accepts. Only the
runtime's validation modules run; the user's source is never imported.
"""

import hashlib
import sys
import types
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol

from svcc.clients._bundle import VALIDATION_MODULES, RestBundle
from svcc.contracts.errors import InputError


class Validator(Protocol):
    def validate_json(self, body: bytes) -> dict[str, Any]: ...


class Rejected(Exception):
    """The body does not satisfy the schema; ``errors`` are the runtime's 422 items."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__(errors)
        self.errors = errors


class BundleValidators:
    """``check(schema, body)`` with the bundle's ``RequestValidator``."""

    def __init__(self, module: types.ModuleType, definitions: Mapping[str, Any]) -> None:
        self._module = module
        self._definitions = definitions

    def check(self, schema: Mapping[str, Any], body: bytes) -> None:
        try:
            validator: Validator = self._module.RequestValidator(schema, self._definitions)
        except self._module.StartupError as exc:
            raise InputError(f"the bundle's validator refuses a request schema: {exc}") from None
        try:
            validator.validate_json(body)
        except self._module.RequestInvalid as exc:
            raise Rejected(list(exc.errors)) from None


@contextmanager
def bundle_validators(bundle: RestBundle) -> Iterator[BundleValidators]:
    """The bundle's validation module, importable only inside the block."""
    try:
        import pydantic_core  # noqa: F401  (the runtime's one dependency)
    except ImportError:  # pragma: no cover - a dependency of svcc
        raise InputError("pydantic-core is not installed; it runs the bundle's validator") from None
    digest = hashlib.sha256(b"".join(bundle.runtime.values())).hexdigest()[:16]
    package = f"_svcc_bundle_runtime_{digest}"
    names = [package, *(f"{package}.{m}" for m in VALIDATION_MODULES if m != "__init__")]
    try:
        for name, module_name in zip(names, VALIDATION_MODULES, strict=True):
            module = types.ModuleType(name)
            module.__package__ = package
            if name == package:
                module.__path__ = []
            path = f"{bundle.path}/svc_runtime/{module_name}.py"
            module.__file__ = path
            sys.modules[name] = module
            try:
                code = compile(bundle.runtime[f"svc_runtime/{module_name}.py"], path, "exec")
                exec(code, module.__dict__)  # the bundle's runtime bytes, verified above
            except Exception as exc:
                raise InputError(
                    f"{bundle.path}: svc_runtime/{module_name}.py cannot be loaded "
                    f"({type(exc).__name__}: {exc})"
                ) from None
        validation = sys.modules[f"{package}.validation"]
        for attribute in ("RequestValidator", "RequestInvalid", "StartupError"):
            if not hasattr(validation, attribute):
                raise InputError(
                    f"{bundle.path}: svc_runtime/validation.py has no {attribute}; "
                    "regenerate the bundle with this svcc"
                )
        yield BundleValidators(validation, bundle.definitions)
    finally:
        for name in names:
            sys.modules.pop(name, None)
