"""What a capability may do when it runs, and the tool hints an agent host acts on.

The front end records every callee a capability reaches, through the module's own functions
(``Capability.reach``), besides its sensitive calls and reads (``Capability.effects``) and
the files it reads through the module's functions (``Capability.file_reads``). This module
sorts those facts into kinds with one reviewed table (:data:`KINDS`) and derives the four
MCP hints from the kinds, conservatively: a callee the table does not know is ``unknown``,
and ``unknown`` gives every hint its unsafe value (MCP's defaults are the unsafe values, so
every hint is always written out).

- ``readOnlyHint`` is true only when nothing reached writes, deletes, starts a process,
  reaches the network, reads or changes the environment, evaluates code, changes the
  server's state or is unknown;
- ``destructiveHint`` is true when it may write or delete files, start a process, evaluate
  code, change the server's state, reach the network (what the other end does is not
  known) or do something unknown;
- ``idempotentHint`` is true only for a function whose facts are reads of files and output
  at most: no randomness or clock, no cache, no state it changes, nothing unknown;
- ``openWorldHint`` is true when it may reach the network, start a process, evaluate code or
  do something unknown.

The same object is the readiness document's ``effects`` of an assessment and the OpenAPI
operation's ``x-svc-effects``; the MCP tool's ``annotations`` carry its hints and the title.
``docs/agent-tools.md`` explains the rules to users.
"""

import functools
import re
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final, Literal

from svcc.compiler.passes.effects import SECURITY_CALLS, is_pure
from svcc.frontends.python import JSON_VALUE_ATTRIBUTES
from svcc.frontends.python.data_reads import normalise
from svcc.ir.model import Capability

if TYPE_CHECKING:
    from attrs import frozen
else:  # the same records, their methods generated ahead of time (svcc.ir.records)
    from svcc.ir.records import frozen

Kind = Literal[
    "reads",
    "writes",
    "processes",
    "network",
    "environment",
    "evaluates",
    "state",
    "cache",
    "nondeterministic",
    "output",
    "unknown",
]
# The order kinds are shown in.
KIND_ORDER: Final[tuple[Kind, ...]] = (
    "reads", "writes", "processes", "network", "environment", "evaluates", "state", "cache",
    "nondeterministic", "output", "unknown",
)  # fmt: skip


def _each(kind: Kind | Literal["pure"], *names: str) -> dict[str, Kind | Literal["pure"]]:
    return dict.fromkeys(names, kind)


# Callee origins (see ``svcc.frontends.python._reach``) and their kind; a key covers every
# name it starts (``hashlib.`` covers ``hashlib.sha256().hexdigest``, ``pickle.load`` covers
# ``pickle.loads``), the longest key wins. What no key covers, and is not in the import-time
# pure tables (``effects.PURE``), is unknown.
KINDS: Final[dict[str, Kind | Literal["pure"]]] = {
    **_each(
        "pure",
        # computation in the standard library: no I/O, no environment, same result each run
        "math.",
        "cmath.",
        "statistics.",
        "itertools.",
        "functools.",
        "operator.",
        "heapq.",
        "bisect.",
        "copy.",
        "string.",
        "textwrap.",
        "json.",
        "base64.",
        "binascii.",
        "hashlib.",
        "hmac.",
        "zlib.",
        "unicodedata.",
        "difflib.",
        "fnmatch.",
        "html.escape",
        "html.unescape",
        "urllib.parse.",
        "ipaddress.",
        "calendar.",
        "colorsys.",
        "dataclasses.",
        "typing.",
        "typing_extensions.",
        "enum.",
        "collections.",
        "decimal.",
        "fractions.",
        "numbers.",
        "re.",
        "array.",
        "struct.",
        "uuid.UUID",
        "datetime.",
        "pprint.pformat",
        "pprint.saferepr",
        "pickle.dumps",
        "shlex.quote",
        "shlex.split",
        "keyword.",
        "abc.",
        "contextlib.",
        "types.",
        "weakref.",
        "io.StringIO",
        "io.BytesIO",
        "time.sleep",
        "asyncio.sleep",
        "asyncio.gather",
        "asyncio.wait_for",
        "asyncio.wait",
        "asyncio.shield",
        "asyncio.timeout",
        "asyncio.to_thread",
        "asyncio.as_completed",
        "sys.getsizeof",
        "sys.intern",
        "sys.maxsize",
        "sys.float_info",
        "sys.version_info",
        "builtins.map",
        "builtins.filter",
        "builtins.iter",
        "builtins.next",
        "builtins.repr",
        "builtins.hash",
        "builtins.getattr",
        "builtins.hasattr",
        "builtins.callable",
        "builtins.id",
        "builtins.ascii",
        "builtins.super",
        "builtins.memoryview",
        "builtins.aiter",
        "builtins.anext",
        "builtins.NotImplemented",
        "builtins.Ellipsis",
    ),
    **_each(
        "reads",
        "builtins.open[r]",
        "io.open[r]",
        "pathlib.Path().open[r]",
        "pathlib.Path().read_text",
        "pathlib.Path().read_bytes",
        "pathlib.Path().exists",
        "pathlib.Path().is_file",
        "pathlib.Path().is_dir",
        "pathlib.Path().iterdir",
        "pathlib.Path().glob",
        "pathlib.Path().rglob",
        "pathlib.Path().stat",
        "pathlib.Path().resolve",
        "pathlib.Path().samefile",
        "os.listdir",
        "os.scandir",
        "os.walk",
        "os.stat",
        "os.lstat",
        "os.path.exists",
        "os.path.lexists",
        "os.path.isfile",
        "os.path.isdir",
        "os.path.islink",
        "os.path.getsize",
        "os.path.getmtime",
        "os.path.realpath",
        "os.access",
        "glob.",
        "importlib.resources.",
        "pkgutil.get_data",
    ),
    **_each(
        "writes",
        "builtins.open[w]",
        "builtins.open[?]",
        "io.open[w]",
        "io.open[?]",
        "pathlib.Path().open",
        "pathlib.Path().write_text",
        "pathlib.Path().write_bytes",
        "pathlib.Path().mkdir",
        "pathlib.Path().touch",
        "pathlib.Path().unlink",
        "pathlib.Path().rmdir",
        "pathlib.Path().rename",
        "pathlib.Path().replace",
        "pathlib.Path().chmod",
        "pathlib.Path().symlink_to",
        "pathlib.Path().hardlink_to",
        "os.remove",
        "os.unlink",
        "os.rename",
        "os.renames",
        "os.replace",
        "os.rmdir",
        "os.removedirs",
        "os.makedirs",
        "os.mkdir",
        "os.open",
        "os.write",
        "os.truncate",
        "os.chmod",
        "os.chown",
        "os.link",
        "os.symlink",
        "os.utime",
        "os.mkfifo",
        "shutil.",
        "tempfile.",
        "sqlite3.",
        "shelve.",
        "dbm.",
        "logging.FileHandler",
        "logging.handlers.",
        "numpy.save",
        "numpy.savez",
        "numpy.savez_compressed",
        "numpy.savetxt",
    ),
    **_each("processes", *SECURITY_CALLS["process"], "multiprocessing.", "concurrent.futures."),
    **_each(
        "network",
        "socket.",
        "ssl.",
        "urllib.request.",
        "urllib3.",
        "http.client.",
        "requests.",
        "httpx.",
        "aiohttp.",
        "ftplib.",
        "smtplib.",
        "poplib.",
        "imaplib.",
        "xmlrpc.client.",
        "websockets.",
        "websocket.",
        "grpc.",
        "paramiko.",
        "boto3.",
        "botocore.",
        "asyncio.open_connection",
        "asyncio.start_server",
        "asyncio.open_unix_connection",
        "webbrowser.",
    ),
    **_each(
        "environment",
        *SECURITY_CALLS["env"],
        "sys.argv",
        "sys.orig_argv",
        "sys.stdin",
        "builtins.input",
        "os.getcwd",
        "os.getlogin",
        "os.getpid",
        "os.getuid",
        "os.cpu_count",
        "os.uname",
        "getpass.",
        "os.path.expanduser",
        "os.path.expandvars",
        "pathlib.Path.home",
        "pathlib.Path.cwd",
        "pathlib.Path().expanduser",
        "platform.",
        "locale.getlocale",
    ),
    **_each("evaluates", *SECURITY_CALLS["eval"]),
    **_each(
        "state",
        "<global>",
        "<state>",
        "os.putenv",
        "os.unsetenv",
        "os.chdir",
        "os.umask",
        "threading.",
        "_thread.",
        "signal.",
        "atexit.",
        "sys.",
        "gc.",
        "faulthandler.",
        "asyncio.",
        "builtins.setattr",
        "builtins.delattr",
        "builtins.globals",
        "logging.basicConfig",
        "logging.disable",
        "logging.captureWarnings",
        "logging.getLogger().setLevel",
        "warnings.filterwarnings",
        "warnings.simplefilter",
        "locale.setlocale",
        "random.seed",
        "numpy.random.seed",
    ),
    "<cache>": "cache",
    **_each(
        "nondeterministic",
        "time.",
        "random.",
        "secrets.",
        "uuid.uuid1",
        "uuid.uuid4",
        "os.urandom",
        "datetime.datetime.now",
        "datetime.datetime.utcnow",
        "datetime.datetime.today",
        "datetime.date.today",
        "numpy.random.",
    ),
    **_each(
        "output",
        "builtins.print",
        "logging.",
        "warnings.warn",
        "pprint.",
        "sys.stdout.",
        "sys.stderr.",
    ),
    "<depth>": "unknown",
}

_HINTS: Final = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
# The kinds that make each hint take its unsafe value, and what each kind means in a reason.
_UNSAFE: Final[dict[str, tuple[Kind, ...]]] = {
    "readOnlyHint": (
        "writes", "processes", "network", "environment", "evaluates", "state", "unknown",
    ),
    "destructiveHint": ("writes", "processes", "network", "evaluates", "state", "unknown"),
    "idempotentHint": (
        "writes", "processes", "network", "environment", "evaluates", "state", "cache",
        "nondeterministic", "unknown",
    ),
    "openWorldHint": ("network", "processes", "evaluates", "unknown"),
}  # fmt: skip
_MEANING: Final[dict[Kind, str]] = {
    "reads": "reads files",
    "writes": "may write or delete files",
    "processes": "starts processes",
    "network": "reaches the network",
    "environment": "reads the server's environment",
    "evaluates": "evaluates code or loads pickled objects",
    "state": "changes the server's state",
    "cache": "caches results",
    "nondeterministic": "uses randomness or a clock",
    "output": "prints or logs",
    "unknown": "calls what the analysis cannot judge",
}
_STDLIB: Final = sys.stdlib_module_names | {"builtins"}


@frozen(kw_only=True)
class ToolEffects:
    """A capability's effect facts (kind → the callees that show it, sorted), its hints and
    the reason for each."""

    facts: tuple[tuple[Kind, tuple[str, ...]], ...]
    hints: tuple[tuple[str, bool], ...]
    reasons: tuple[tuple[str, str], ...]

    def hint(self, name: str) -> bool:
        return dict(self.hints)[name]

    def to_json(self) -> dict[str, Any]:
        """The readiness document's ``effects`` and OpenAPI's ``x-svc-effects``."""
        return {
            "facts": {kind: list(names) for kind, names in self.facts},
            "hints": dict(self.hints),
            "reasons": dict(self.reasons),
        }

    def annotations(self, title: str) -> dict[str, Any]:
        """The MCP tool's ``annotations``: the title and every hint, explicitly."""
        return {"title": title, **dict(self.hints)}


@functools.lru_cache(maxsize=16384)  # a directory reaches the same callees thousands of times
def kind_of(callee: str) -> Kind | None:
    """The kind of one reached callee (``None``: pure), by :data:`KINDS`, the import-time
    pure tables and the methods of JSON values."""
    reference = callee.startswith("&")
    name = normalise(callee[1:] if reference else callee)
    found = _lookup(name)
    if found is None:
        called = name.endswith("()") and is_pure(name[:-2])  # a pure callable's value
        if is_pure(name) or _json_method(name) or name == "<nested>" or called:
            found = "pure"
    if reference:
        # a function used as a value is judged when it is a known effect; another value of
        # the standard library is data (``re.IGNORECASE``), one of a third-party library
        # may be a function that what receives it calls
        if found is not None and found != "pure":
            return found
        if name.split(".", 1)[0] in _STDLIB or found == "pure":
            return None
        return "unknown"
    return None if found == "pure" else (found or "unknown")


_LONGEST_KEY: Final = max(map(len, KINDS))
# Every key's first characters, as many as the shortest key has: a name that starts
# otherwise (``?.strip``, a value the analysis did not follow: most callees) has no prefix
# to look up.
_SHORTEST_KEY: Final = min(map(len, KINDS))
_HEADS: Final = frozenset(key[:_SHORTEST_KEY] for key in KINDS)


def _lookup(name: str) -> Kind | Literal["pure"] | None:
    """The kind of the longest key of :data:`KINDS` that ``name`` starts with: each of
    ``name``'s prefixes looked up, longest first (keys end anywhere, not only at a dot)."""
    if name[:_SHORTEST_KEY] not in _HEADS:
        return None
    for end in range(min(len(name), _LONGEST_KEY), -1, -1):
        kind = KINDS.get(name[:end])
        if kind is not None:
            return kind
    return None


_STEP = re.compile(r"(?:\(\)|\[\])+$")


def _json_method(name: str) -> bool:
    """``?.strip().split``: methods of a value that came from JSON (a parameter of a plain
    JSON type, or a local the analysis did not follow), each a method of ``dict``,
    ``list``, ``str``, ``int``, ``float``, ``bool`` or ``None``."""
    parts = name.split(".")
    if _STEP.sub("", parts[0]) != "?" or len(parts) < 2:
        return False
    return all(_STEP.sub("", part) in JSON_VALUE_ATTRIBUTES for part in parts[1:])


def tool_effects(cap: Capability) -> ToolEffects:
    """The effects and hints of ``cap``."""
    found: dict[Kind, set[str]] = {}
    for callee in _callees(cap):
        fact = _fact(callee)
        if fact is not None:
            found.setdefault(fact[0], set()).add(fact[1])
    facts = tuple((k, tuple(sorted(found[k]))) for k in KIND_ORDER if k in found)
    hints, reasons = _hints(facts)
    return ToolEffects(facts=facts, hints=hints, reasons=reasons)


@functools.lru_cache(maxsize=16384)  # as kind_of: the same callees, capability after capability
def _fact(callee: str) -> tuple[Kind, str] | None:
    """The kind of a reached callee and the callee as a fact shows it (``None``: pure)."""
    kind = kind_of(callee)
    if kind is None:
        return None
    return kind, f"&{normalise(callee[1:])}" if callee.startswith("&") else normalise(callee)


@functools.lru_cache(maxsize=4096)  # the stdlib's 4,039 capabilities reach 2,212 sets of facts
def _hints(
    facts: tuple[tuple[Kind, tuple[str, ...]], ...],
) -> tuple[tuple[tuple[str, bool], ...], tuple[tuple[str, str], ...]]:
    """The hints and their reasons, from the facts alone."""
    found = dict(facts)
    hints: list[tuple[str, bool]] = []
    reasons: list[tuple[str, str]] = []
    for hint in _HINTS:
        unsafe = [k for k in _UNSAFE[hint] if k in found]
        safe_value = hint in ("readOnlyHint", "idempotentHint")
        value = (not safe_value) if unsafe else safe_value
        hints.append((hint, value))
        reasons.append((hint, _reason(hint, value, unsafe, found)))
    return tuple(hints), tuple(reasons)


def _callees(cap: Capability) -> Iterable[str]:
    """Every fact of ``cap`` as a callee origin (``Capability.reach`` holds most)."""
    yield from cap.reach
    for effect in cap.effects:  # reads of names (os.environ[...]) are not calls
        if effect.kind == "read" and effect.callee:
            yield f"&{effect.callee}"
    for read in cap.file_reads:  # files read through the module's functions
        for r in read.reads:
            opener = r.callee in ("builtins.open", "io.open") or (r.callee or "").endswith(".open")
            yield f"{r.callee}[r]" if opener else (r.callee or "?")
    for decorator in cap.decorators:
        if re.match(r"(functools\.)?(lru_)?cache\b", decorator.text.lstrip("@")):
            yield "<cache>"


# Why a hint keeps its safe value, said once per hint.
_SAFE_BECAUSE: Final = {
    "readOnlyHint": "every call it reaches is judged, and none writes, starts a process, "
    "reaches the network, reads the environment or changes the server's state",
    "destructiveHint": "every call it reaches is judged, and none writes, deletes, starts a "
    "process, evaluates code, reaches the network or changes the server's state",
    "idempotentHint": "every call it reaches is judged, and none changes anything or uses "
    "randomness, a clock or a cache",
    "openWorldHint": "every call it reaches is judged, and none reaches the network, starts "
    "a process or evaluates code",
}


def _reason(hint: str, value: bool, unsafe: list[Kind], found: dict[Kind, tuple[str, ...]]) -> str:
    """``false: it may write or delete files (builtins.open[w])``, or why the safe value
    (``found``: each kind's callees, sorted)."""
    said = str(value).lower()
    if unsafe:
        shown = "; ".join(f"{_MEANING[k]} ({', '.join(found[k][:3])})" for k in unsafe)
        return f"{said}: it {shown}"
    return f"{said}: {_SAFE_BECAUSE[hint]}"


def title_of(name: str, docstring: str | None) -> str:
    """A human title: the docstring's first line without its final period, else the name
    in words (``circle_area`` → ``Circle area``)."""
    first = (docstring or "").strip().split("\n", 1)[0].strip()
    if first:
        return first[:-1] if first.endswith(".") and not first.endswith("..") else first
    words = name.rsplit(".", 1)[-1].replace("_", " ").strip() or name
    return words[:1].upper() + words[1:]
