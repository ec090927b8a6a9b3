"""Importing the bundled source, checking each callable's shape, and binding validated values.

The IR records every parameter's name, kind and whether it has a default; the server
compares that with the imported function before serving, so a function renamed, removed
or re-shaped since generation stops startup instead of failing on the first request.
Binding keeps Python's call semantics: positional-only parameters are passed by position
(the request schema guarantees there is no gap), everything else by keyword, and an
omitted parameter is simply not passed so the function applies its own default.
"""

import importlib
import inspect
import os
import sys
import traceback
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .integrity import StartupError
from .services import attribute_of

_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional_only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional_or_keyword",
    inspect.Parameter.VAR_POSITIONAL: "var_positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword_only",
    inspect.Parameter.VAR_KEYWORD: "var_keyword",
}


class CallShape:
    """How one capability is called: which parameters go by position, in order."""

    __slots__ = ("convert", "is_async", "name", "positional", "stream", "walk_result")

    def __init__(
        self, name: str, positional: tuple[str, ...], is_async: bool, stream: bool = False
    ) -> None:
        self.name = name
        self.positional = positional
        self.is_async = is_async
        # a generator: its items are streamed (``streaming``), never returned at once
        self.stream = stream
        # validated JSON -> the objects the annotations ask for (``conversion``), if any
        self.convert: Callable[[dict[str, Any]], dict[str, Any]] | None = None
        # the declared result holds a NamedTuple: encoded as an object (``encoding``)
        self.walk_result = False

    @classmethod
    def from_ir(cls, capability: Mapping[str, Any]) -> "CallShape":
        params = capability["params"]
        positional = tuple(p["name"] for p in params if p["kind"] == "positional_only")
        return cls(
            capability["name"],
            positional,
            capability["execution"] == "async",
            capability.get("stream") is not None,
        )

    def bind(self, values: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """Split validated values into ``(args, kwargs)``; ``values`` is consumed. A value
        that cannot become its object raises ``RequestInvalid`` (a 422)."""
        if self.convert is not None:
            values = self.convert(values)
        if not self.positional:
            return [], values
        args = [values.pop(name) for name in self.positional if name in values]
        return args, values


def enter_source(bundle: Path) -> None:
    """Make ``source/`` the working directory before the served code is imported: a path
    the code reads relative to the working directory (``open("prices.csv")``, as a notebook
    or a script run from its folder does) then names the declared data file the bundle
    holds at that place below ``source/``. The server's own setting files are read from
    where it was started (``auth.read_setting_file``)."""
    from .auth import STARTED_IN  # noqa: F401 -- fixed before the directory changes

    os.chdir(bundle / "source")


def import_source(bundle: Path, module: str) -> Any:
    """Import the bundled module from ``source/`` (first on ``sys.path``, and the working
    directory: :func:`enter_source`)."""
    source = str(bundle / "source")
    if source not in sys.path:
        sys.path.insert(0, source)
    enter_source(bundle)
    try:
        return importlib.import_module(module)
    except BaseException as exc:  # the user's module ran and failed: report, never trace
        if os.environ.get("SVC_DEBUG"):
            traceback.print_exc()
        detail = f"{type(exc).__name__}: {exc}".strip().splitlines()
        raise StartupError(
            f"importing module {module!r} failed: {detail[0] if detail else type(exc).__name__}"
        ) from None


def shape_problem(function: Any, capability: Mapping[str, Any]) -> str | None:
    """Why ``function`` is not the callable the IR describes, or ``None``."""
    name = capability["name"]
    # a service method is bound to its instance: its function is the one the IR read
    target = function.__func__ if inspect.ismethod(function) else function
    if not callable(function) or not inspect.isfunction(inspect.unwrap(target)):
        return f"{name} is no longer a function"
    is_async = inspect.iscoroutinefunction(function) or inspect.isasyncgenfunction(function)
    if is_async != (capability["execution"] == "async"):
        was = "async" if capability["execution"] == "async" else "sync"
        return f"{name} was {was} at generation and is not now"
    generator = inspect.isgeneratorfunction(function) or inspect.isasyncgenfunction(function)
    if "form" in capability and generator != (capability["form"] != "function"):
        was = "a function" if generator else "a generator"
        return f"{name} was {was} at generation and is not now"
    actual = parameters(function)
    if actual is None:
        return f"{name} has no readable signature"
    expected = [(p["name"], p["kind"], bool(p["default"])) for p in capability["params"]]
    if actual == expected:
        return None
    for index, (want, have) in enumerate(zip(expected, actual, strict=False)):
        if want != have:
            return (
                f"{name}: parameter {index + 1} was {_describe(want)} at generation "
                f"and is now {_describe(have)}"
            )
    if len(expected) > len(actual):
        return f"{name}: parameter {_describe(expected[len(actual)])} was removed"
    return f"{name}: parameter {_describe(actual[len(expected)])} was added"


def parameters(function: Any) -> list[tuple[str, str, bool]] | None:
    """Each parameter of ``function`` as ``(name, kind, has_default)``, or ``None`` when it
    has no readable signature.

    A plain function's are read from its code object and defaults, as ``inspect.signature``
    reads them for one, without building a signature: where each call runs the module
    afresh, the shape is checked on every call. Anything else (a wrapper, a partial, a
    declared ``__signature__``) goes through ``inspect.signature``."""
    if (
        type(function) is types.FunctionType
        and not hasattr(function, "__wrapped__")
        and not hasattr(function, "__signature__")
    ):
        code = function.__code__
        count, posonly, kwonly = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
        names = code.co_varnames
        first_default = count - len(function.__defaults__ or ())
        kwdefaults = function.__kwdefaults__ or {}
        out = [
            (
                names[i],
                "positional_only" if i < posonly else "positional_or_keyword",
                i >= first_default,
            )
            for i in range(count)
        ]
        rest = count + kwonly  # then the names of ``*args`` and ``**kwargs``, if present
        if code.co_flags & inspect.CO_VARARGS:
            out.append((names[rest], "var_positional", False))
            rest += 1
        out += [(n, "keyword_only", n in kwdefaults) for n in names[count : count + kwonly]]
        if code.co_flags & inspect.CO_VARKEYWORDS:
            out.append((names[rest], "var_keyword", False))
        return out
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    return [
        (p.name, _KINDS[p.kind], p.default is not inspect.Parameter.empty)
        for p in signature.parameters.values()
    ]


def _describe(param: tuple[str, str, bool]) -> str:
    name, kind, has_default = param
    return f"{name!r} ({kind.replace('_', '-')}{', with default' if has_default else ''})"


def resolve_capabilities(
    module: Any, capabilities: list[Mapping[str, Any]]
) -> dict[str, tuple[Callable[..., Any], CallShape]]:
    """Every capability's function and call shape; any mismatch stops startup."""
    out: dict[str, tuple[Callable[..., Any], CallShape]] = {}
    for capability in capabilities:
        name = capability["name"]
        function = attribute_of(module, name)  # a service method: its instance's (services)
        if function is None:
            raise StartupError(
                f"capability {name!r} is missing from module {module.__name__!r} "
                "(removed or renamed since generation)"
            )
        problem = shape_problem(function, capability)
        if problem:
            raise StartupError(f"callable shape changed since generation: {problem}")
        out[name] = (function, CallShape.from_ir(capability))
    return out
