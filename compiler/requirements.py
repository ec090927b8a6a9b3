"""Declared application dependencies (``--requirements FILE``) and the import names they provide.

Nothing is inferred silently: a module counts as provided only when a declared
distribution provides it, by installed package metadata when the distribution is
installed beside svcc, by a short documented table of well-known distributions whose
import name differs, and otherwise by the normalised distribution name.
"""

from pathlib import Path

from attrs import frozen
from svcc.compiler.errors import InputError

# Distributions whose import name differs from their normalised name (documented in README).
KNOWN_IMPORT_NAMES: dict[str, tuple[str, ...]] = {
    "scikit-learn": ("sklearn",),
    "scikit-image": ("skimage",),
    "pillow": ("PIL",),
    "beautifulsoup4": ("bs4",),
    "pyyaml": ("yaml",),
    "opencv-python": ("cv2",),
    "opencv-python-headless": ("cv2",),
    "python-dateutil": ("dateutil",),
    "attrs": ("attr", "attrs"),
    "protobuf": ("google",),
    "pyjwt": ("jwt",),
    "python-dotenv": ("dotenv",),
    "msgpack-python": ("msgpack",),
    "pymupdf": ("fitz",),
}


@frozen(kw_only=True)
class DeclaredRequirements:
    """``lines`` are the requirement lines as declared (normalised whitespace, file order)."""

    lines: tuple[str, ...]
    distributions: tuple[str, ...]
    import_names: frozenset[str]

    def to_json(self) -> list[str]:
        return list(self.distributions)


def canonical_name(name: str) -> str:
    """A distribution name as PEP 503 compares it (``packaging``'s rule)."""
    from packaging.utils import canonicalize_name

    return str(canonicalize_name(name))


def requirement_name(line: str) -> str:
    """The canonical distribution name of one requirement line (``Foo[x]>=1`` → ``foo``).
    Raises ``ValueError`` for a line that is not a requirement."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return canonical_name(Requirement(line).name)
    except InvalidRequirement as exc:
        raise ValueError(f"invalid requirement {line!r}: {exc}") from None


def is_pinned(line: str) -> bool:
    """Whether a requirement line constrains more than the name (a version, URL or marker)."""
    from packaging.requirements import Requirement

    requirement = Requirement(line)
    return bool(requirement.specifier or requirement.url or requirement.marker)


def _import_names_from_metadata() -> dict[str, set[str]]:
    from importlib.metadata import packages_distributions

    out: dict[str, set[str]] = {}
    for module, dists in packages_distributions().items():
        for dist in dists:
            out.setdefault(canonical_name(dist), set()).add(module)
    return out


def parse_requirements(text: str, origin: str) -> DeclaredRequirements:
    from packaging.requirements import InvalidRequirement, Requirement

    lines: list[str] = []
    names: list[str] = []
    logical = ""
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not logical:
            start = number
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
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
            raise InputError(f"{origin}:{start}: invalid requirement: {exc}") from None
        lines.append(entry)
        names.append(canonical_name(requirement.name))
    if not names:
        return DeclaredRequirements(lines=(), distributions=(), import_names=frozenset())
    metadata = _import_names_from_metadata()
    provided: set[str] = set()
    for name in names:
        provided.add(name.replace("-", "_"))
        provided.update(KNOWN_IMPORT_NAMES.get(name, ()))
        provided.update(metadata.get(name, ()))
    return DeclaredRequirements(
        lines=tuple(lines),
        distributions=tuple(sorted(set(names))),
        import_names=frozenset(provided),
    )


def load_requirements(path: Path) -> DeclaredRequirements:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: requirements file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read requirements file: {exc}") from None
    return parse_requirements(text, str(path))
