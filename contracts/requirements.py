"""Declared application dependencies (``--requirements FILE``) and the import names they provide.

Deterministic: the verdict on an import never depends on what is installed beside svcc. A
declared distribution provides the import names of a committed table of well-known
distributions (:data:`KNOWN_IMPORT_NAMES`), the names its line states (``name  # import:
mod[, mod]``), the names ``[tool.svcc] import-names`` states, else its normalised name
(``my-lib`` → ``my_lib``). A distribution with no known import name (in none of the three)
is *unmapped*: an import nothing else provides is attributed to it with a warning
(``SVC-R040``), and the server's startup import proves it.

A requirement with an environment marker (``importlib-metadata; python_version < "3.8"``,
``foo; extra == "cli"``) provides its names only when the marker holds on the target (see
:func:`marker_holds`); its line is carried into the bundle as declared, so pip decides again
where the bundle is installed.
"""

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from attrs import frozen
from svcc.contracts.errors import InputError

if TYPE_CHECKING:
    from packaging.requirements import Requirement

# Well-known distributions and their import names (canonical distribution names). Those
# whose import name is their normalised name are listed too: their import name is known.
KNOWN_IMPORT_NAMES: dict[str, tuple[str, ...]] = {
    "scikit-learn": ("sklearn",),
    "scikit-image": ("skimage",),
    "pillow": ("PIL",),
    "beautifulsoup4": ("bs4",),
    "pyyaml": ("yaml",),
    "opencv-python": ("cv2",),
    "opencv-python-headless": ("cv2",),
    "opencv-contrib-python": ("cv2",),
    "python-dateutil": ("dateutil",),
    "attrs": ("attr", "attrs"),
    "protobuf": ("google",),
    "pyjwt": ("jwt",),
    "python-dotenv": ("dotenv",),
    "msgpack-python": ("msgpack",),
    "pymupdf": ("fitz",),
    "python-multipart": ("multipart", "python_multipart"),
    "pycryptodome": ("Crypto",),
    "pyserial": ("serial",),
    "pyzmq": ("zmq",),
    "google-cloud-storage": ("google",),
    "tensorflow": ("tensorflow",),
    "torch": ("torch",),
    "typing-extensions": ("typing_extensions",),
    "mcp": ("mcp",),
    **{
        name: (name.replace("-", "_"),)
        for name in (
            "numpy", "pandas", "scipy", "matplotlib", "seaborn", "requests", "httpx", "flask",
            "fastapi", "pydantic", "joblib", "xgboost", "lightgbm", "statsmodels", "sympy",
            "networkx", "nltk", "spacy", "transformers", "tqdm", "click", "rich", "jinja2",
            "sqlalchemy", "lxml", "regex", "orjson", "ujson", "toml", "tomli", "packaging",
            "certifi", "idna", "urllib3", "charset-normalizer", "boto3", "botocore", "redis",
            "psycopg2", "pymongo", "aiohttp", "uvicorn", "starlette", "markupsafe", "pytz",
            "tzdata", "six", "cattrs", "lark", "jsonschema", "polars", "pyarrow", "numba",
            "shapely", "geopandas", "plotly", "bokeh", "altair", "openai", "anthropic",
            "tiktoken", "sentencepiece", "tokenizers", "datasets", "onnxruntime", "keras",
        )
    },
}  # fmt: skip

# And back: import name → the distribution to declare for it (the first listed).
DISTRIBUTION_OF: dict[str, str] = {}
for _dist, _modules in KNOWN_IMPORT_NAMES.items():
    for _module in _modules:
        DISTRIBUTION_OF.setdefault(_module, _dist)


@frozen(kw_only=True)
class DeclaredRequirements:
    """``lines`` are the requirement lines as declared (normalised whitespace, file order)."""

    lines: tuple[str, ...]
    distributions: tuple[str, ...]
    import_names: frozenset[str]
    # Declared distributions with no known import name (see the module docstring).
    unmapped: tuple[str, ...] = ()

    def to_json(self) -> list[str]:
        return list(self.distributions)


def canonical_name(name: str) -> str:
    """A distribution name as PEP 503 compares it (``packaging``'s rule)."""
    from packaging.utils import canonicalize_name

    return str(canonicalize_name(name))


def invalid_reason(exc: Exception) -> str:
    """``packaging``'s message for an invalid requirement on one line: its first line, and the
    column its caret marks (the message itself repeats the line and puts a caret under it)."""
    first, *rest = str(exc).splitlines() or [""]
    caret = rest[1].rstrip() if len(rest) > 1 else ""
    return f"{first} at column {len(caret) - 4}" if caret.endswith("^") else first


def requirement_name(line: str) -> str:
    """The canonical distribution name of one requirement line (``Foo[x]>=1`` → ``foo``).
    Raises ``ValueError`` for a line that is not a requirement."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return canonical_name(Requirement(line).name)
    except InvalidRequirement as exc:
        raise ValueError(f"invalid requirement {line!r}: {invalid_reason(exc)}") from None


def is_pinned(line: str) -> bool:
    """Whether a requirement line constrains more than the name (a version, URL or marker)."""
    from packaging.requirements import Requirement

    requirement = Requirement(line)
    return bool(requirement.specifier or requirement.url or requirement.marker)


def marker_holds(requirement: "Requirement", python_version: tuple[int, int]) -> bool:
    """Whether ``requirement`` is installed on the target: its marker holds for the target's
    Python (``--python-version``), whatever its micro version and the machine (x86-64 or
    ARM), on Linux and CPython, with no extra requested (an extra is not required). A marker
    that holds on some of those only, or cannot be evaluated, does not hold: the import it
    would provide may be missing where the bundle runs."""
    from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName

    marker = requirement.marker
    if marker is None:
        return True
    major, minor = python_version
    for micro in (0, 99):
        for machine in ("x86_64", "aarch64"):
            full = f"{major}.{minor}.{micro}"
            environment = {
                "implementation_name": "cpython",
                "implementation_version": full,
                "os_name": "posix",
                "platform_machine": machine,
                "platform_python_implementation": "CPython",
                "platform_release": "",
                "platform_system": "Linux",
                "platform_version": "",
                "python_full_version": full,
                "python_version": f"{major}.{minor}",
                "sys_platform": "linux",
                "extra": "",
            }
            try:
                if not marker.evaluate(environment):
                    return False
            except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName, ValueError):
                return False
    return True


def parse_requirements(
    text: str,
    origin: str,
    import_names: Mapping[str, tuple[str, ...]] | None = None,
    *,
    python_version: tuple[int, int] | None = None,
) -> DeclaredRequirements:
    """``import_names``: ``[tool.svcc] import-names`` (distribution → modules).
    ``python_version``: the target's, which markers are evaluated for (default: the running
    interpreter's, as ``--python-version``'s default)."""
    target = python_version or (sys.version_info.major, sys.version_info.minor)
    from packaging.requirements import InvalidRequirement, Requirement

    lines: list[str] = []
    names: list[str] = []
    stated: dict[str, set[str]] = {
        canonical_name(d): set(m) for d, m in (import_names or {}).items()
    }
    logical = ""
    start = 0
    comment = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        if not logical:
            start = number
            comment = ""
        body, _, tail = raw.partition(" #")
        if tail.strip().startswith("import:"):
            comment = tail.strip()[len("import:") :]
        line = body.strip() if not raw.lstrip().startswith("#") else ""
        if line.endswith("\\"):
            logical += line[:-1] + " "
            continue
        logical += line
        entry, logical = logical.strip(), ""
        if not entry:
            continue
        tokens = [t for t in entry.split() if not t.startswith("--hash")]
        entry = " ".join(tokens)
        if entry.startswith("-"):
            raise InputError(
                f"{origin}:{start}: options such as {entry.split()[0]!r} are not "
                "supported in a declared requirements file; list requirements only"
            )
        try:
            requirement = Requirement(entry)
        except InvalidRequirement as exc:
            raise InputError(
                f"{origin}:{start}: invalid requirement: {invalid_reason(exc)}"
            ) from None
        lines.append(entry)
        if not marker_holds(requirement, target):
            continue
        name = canonical_name(requirement.name)
        names.append(name)
        modules = {m.strip() for m in comment.split(",") if m.strip()}
        if modules:
            bad = sorted(m for m in modules if not all(p.isidentifier() for p in m.split(".")))
            if bad:
                raise InputError(f"{origin}:{start}: `# import:` names {bad[0]!r}, not a module")
            stated.setdefault(name, set()).update(modules)
    if not names:
        return DeclaredRequirements(lines=tuple(lines), distributions=(), import_names=frozenset())
    provided: set[str] = set()
    unmapped: list[str] = []
    for name in sorted(set(names)):
        provided.add(name.replace("-", "_"))
        known = set(KNOWN_IMPORT_NAMES.get(name, ())) | stated.get(name, set())
        provided.update(known)
        if not known:
            unmapped.append(name)
    return DeclaredRequirements(
        lines=tuple(lines),
        distributions=tuple(sorted(set(names))),
        import_names=frozenset(provided),
        unmapped=tuple(unmapped),
    )


def load_requirements(
    path: Path, python_version: tuple[int, int] | None = None
) -> DeclaredRequirements:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: requirements file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read requirements file: {exc}") from None
    return parse_requirements(text, str(path), python_version=python_version)
