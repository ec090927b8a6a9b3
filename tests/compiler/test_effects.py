"""The reviewed effect tables, entry by entry, and the verdicts they give served for real.

Every pure entry is checked twice: the analysis of a module using it at import keeps its
function eligible, and running that statement (in a subprocess, with an audit hook that
fails on file, process, socket and environment events, and with stdout and stderr captured)
does no I/O and prints nothing. Every effect entry gives its own code. The security kinds
are refused without ``--allow`` and served with it; ``lru_cache`` keeps its signature.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import run_svcc
from servers import generate, serving
from svcc.compiler.driver import analyze_source
from svcc.compiler.passes.effects import EFFECT_READS, EFFECTS, PURE_NAMES

ROOT = Path(__file__).resolve().parents[2]

# A module-level statement per pure entry (default: ``X = NAME()``); ``P`` is a namedtuple
# class and ``T`` a TypeVar defined before each.
PURE_CASES: dict[str, str] = {
    "re.compile": 'X = re.compile(r"a+", re.IGNORECASE)',
    "re.escape": 'X = re.escape("a.b")',
    "re.findall": 'X = re.findall(r"a", "abc")',
    "re.fullmatch": 'X = re.fullmatch(r"a", "a")',
    "re.match": 'X = re.match(r"a", "abc")',
    "re.search": 'X = re.search(r"b", "abc")',
    "re.split": 'X = re.split(r",", "a,b")',
    "re.sub": 'X = re.sub(r"a", "b", "abc")',
    "re.subn": 'X = re.subn(r"a", "b", "abc")',
    "collections.ChainMap": "X = collections.ChainMap({}, {1: 2})",
    "collections.Counter": 'X = collections.Counter("abca")',
    "collections.OrderedDict": "X = collections.OrderedDict(a=1)",
    "collections.defaultdict": "X = collections.defaultdict(list)",
    "collections.deque": "X = collections.deque([1, 2])",
    "collections.namedtuple": 'X = collections.namedtuple("X", "a b")',
    "collections.namedtuple()": "X = P(1, 2)",
    "typing.NewType": 'X = typing.NewType("X", int)',
    "typing.NamedTuple": 'X = typing.NamedTuple("X", [("a", int)])',
    "typing.ParamSpec": 'X = typing.ParamSpec("X")',
    "typing.TypeVar": 'X = typing.TypeVar("X", bound=int)',
    "typing.TypeVarTuple": 'X = typing.TypeVarTuple("X")',
    "typing.TypedDict": 'X = typing.TypedDict("X", {"a": int})',
    "typing.TypeAliasType": 'X = typing.TypeAliasType("X", int)',
    "typing.cast": "X = typing.cast(int, 1)",
    "typing.Generic": "X = typing.Generic[T]",
    "typing.Protocol": "class X(typing.Protocol):\n    def f(self) -> int: ...",
    "typing.dataclass_transform": "X = typing.dataclass_transform()",
    "typing.final": "X = typing.final(len)",
    "typing.no_type_check": "X = typing.no_type_check(lambda: 0)",
    "typing.overload": "X = typing.overload(len)",
    "typing.override": "X = typing.override(len)",
    "typing.runtime_checkable": (
        "class Y(typing.Protocol):\n    pass\n\n\nX = typing.runtime_checkable(Y)"
    ),
    "enum.Enum": 'X = enum.Enum("X", "A B")',
    "enum.Flag": 'X = enum.Flag("X", "A B")',
    "enum.IntEnum": 'X = enum.IntEnum("X", "A B")',
    "enum.IntFlag": 'X = enum.IntFlag("X", "A B")',
    "enum.StrEnum": 'X = enum.StrEnum("X", "A B")',
    "enum.auto": "X = enum.auto()",
    "enum.unique": 'X = enum.unique(enum.Enum("X", "A B"))',
    "enum.verify": "X = enum.verify(enum.UNIQUE)",
    "functools.cache": "X = functools.cache(len)",
    "functools.cached_property": "X = functools.cached_property(len)",
    "functools.cmp_to_key": "X = functools.cmp_to_key(max)",
    "functools.lru_cache": "X = functools.lru_cache(maxsize=8)",
    "functools.partial": "X = functools.partial(int, base=16)",
    "functools.singledispatch": "X = functools.singledispatch(len)",
    "functools.total_ordering": "X = functools.total_ordering(int)",
    "functools.update_wrapper": "X = functools.update_wrapper(functools.partial(len), len)",
    "functools.wraps": "X = functools.wraps(len)",
    "functools.wraps()": "X = functools.wraps(len)(lambda: 0)",
    "functools.lru_cache()": "X = functools.lru_cache(maxsize=8)(len)",
    "dataclasses.dataclass": "X = dataclasses.dataclass(type('X', (), {}))",
    "dataclasses.field": "X = dataclasses.field(default_factory=list)",
    "dataclasses.make_dataclass": 'X = dataclasses.make_dataclass("X", ["a"])',
    "builtins.abs": "X = abs(-1)",
    "builtins.all": "X = all([1])",
    "builtins.any": "X = any([1])",
    "builtins.bin": "X = bin(3)",
    "builtins.bool": "X = bool(1)",
    "builtins.bytearray": 'X = bytearray(b"a")',
    "builtins.bytes": "X = bytes(2)",
    "builtins.chr": "X = chr(65)",
    "builtins.classmethod": "X = classmethod(len)",
    "builtins.complex": "X = complex(1, 2)",
    "builtins.dict": "X = dict(a=1)",
    "builtins.divmod": "X = divmod(7, 2)",
    "builtins.enumerate": "X = list(enumerate([1]))",
    "builtins.float": 'X = float("1.5")',
    "builtins.format": 'X = format(1.5, ".1f")',
    "builtins.frozenset": "X = frozenset([1])",
    "builtins.hex": "X = hex(3)",
    "builtins.int": 'X = int("3")',
    "builtins.isinstance": "X = isinstance(1, int)",
    "builtins.issubclass": "X = issubclass(bool, int)",
    "builtins.len": "X = len([1])",
    "builtins.list": "X = list((1, 2))",
    "builtins.max": "X = max(1, 2)",
    "builtins.min": "X = min(1, 2)",
    "builtins.object": "X = object()",
    "builtins.oct": "X = oct(8)",
    "builtins.ord": 'X = ord("a")',
    "builtins.pow": "X = pow(2, 3)",
    "builtins.property": "X = property(len)",
    "builtins.range": "X = range(3)",
    "builtins.reversed": "X = list(reversed([1, 2]))",
    "builtins.round": "X = round(1.25, 1)",
    "builtins.set": "X = set([1])",
    "builtins.slice": "X = slice(1, 2)",
    "builtins.sorted": "X = sorted([2, 1])",
    "builtins.staticmethod": "X = staticmethod(len)",
    "builtins.str": "X = str(1)",
    "builtins.sum": "X = sum([1, 2])",
    "builtins.tuple": "X = tuple([1])",
    "builtins.type": "X = type(1)",
    "builtins.zip": "X = list(zip([1], [2]))",
    "decimal.Decimal": 'X = decimal.Decimal("1.10")',
    "fractions.Fraction": "X = fractions.Fraction(1, 3)",
    "string.Formatter": "X = string.Formatter()",
    "string.Template": 'X = string.Template("$a")',
    "struct.Struct": 'X = struct.Struct("<I")',
    "struct.calcsize": 'X = struct.calcsize("<I")',
    "uuid.UUID": 'X = uuid.UUID("12345678123456781234567812345678")',
    "datetime.date": "X = datetime.date(2020, 1, 2)",
    "datetime.date.fromisoformat": 'X = datetime.date.fromisoformat("2020-01-02")',
    "datetime.datetime": "X = datetime.datetime(2020, 1, 2, 3, 4)",
    "datetime.datetime.fromisoformat": 'X = datetime.datetime.fromisoformat("2020-01-02")',
    "datetime.datetime.strptime": 'X = datetime.datetime.strptime("2020", "%Y")',
    "datetime.time": "X = datetime.time(1, 2)",
    "datetime.timedelta": "X = datetime.timedelta(days=1)",
    "datetime.timezone": "X = datetime.timezone(datetime.timedelta(hours=1))",
    "logging.Filter": 'X = logging.Filter("x")',
    "logging.Formatter": 'X = logging.Formatter("%(message)s")',
    "logging.LoggerAdapter": 'X = logging.LoggerAdapter(logging.getLogger("x"), {})',
    "logging.NullHandler": "X = logging.NullHandler()",
    "logging.getLogger": "X = logging.getLogger(__name__)",
    "logging.getLogger().addHandler": 'logging.getLogger("x").addHandler(logging.NullHandler())',
    "logging.getLogger().getChild": 'X = logging.getLogger("x").getChild("y")',
    "os.fsdecode": 'X = os.fsdecode(b"a")',
    "os.fsencode": 'X = os.fsencode("a")',
    "os.fspath": 'X = os.fspath("a")',
    "os.path.abspath": "X = os.path.abspath(__file__)",
    "os.path.basename": "X = os.path.basename(__file__)",
    "os.path.commonpath": 'X = os.path.commonpath(["/a/b", "/a/c"])',
    "os.path.dirname": "X = os.path.dirname(__file__)",
    "os.path.isabs": "X = os.path.isabs(__file__)",
    "os.path.join": 'X = os.path.join(os.path.dirname(__file__), "data")',
    "os.path.normpath": 'X = os.path.normpath("a/../b")',
    "os.path.realpath": "X = os.path.realpath(__file__)",
    "os.path.relpath": 'X = os.path.relpath("/a/b", "/a")',
    "os.path.split": "X = os.path.split(__file__)",
    "os.path.splitext": "X = os.path.splitext(__file__)",
    "pathlib.Path": 'X = pathlib.Path(__file__).parent / "data"',
    "pathlib.Path().joinpath": 'X = pathlib.Path(__file__).parent.joinpath("a", "b")',
    "pathlib.Path().relative_to": 'X = pathlib.Path("/a/b").relative_to("/a")',
    "pathlib.Path().with_name": 'X = pathlib.Path(__file__).with_name("x.json")',
    "pathlib.Path().with_stem": 'X = pathlib.Path(__file__).with_stem("x")',
    "pathlib.Path().with_suffix": 'X = pathlib.Path(__file__).with_suffix(".json")',
    "pathlib.PosixPath": 'X = pathlib.PosixPath("a")',
    "pathlib.PurePath": 'X = pathlib.PurePath("a")',
    "pathlib.PurePosixPath": 'X = pathlib.PurePosixPath("a")',
    "pathlib.PureWindowsPath": 'X = pathlib.PureWindowsPath("a")',
    "abc.ABCMeta": 'X = abc.ABCMeta("X", (), {})',
    "abc.abstractmethod": "X = abc.abstractmethod(lambda self: 0)",
    "contextlib.asynccontextmanager": "X = contextlib.asynccontextmanager(len)",
    "contextlib.contextmanager": "X = contextlib.contextmanager(len)",
    "itertools.chain": "X = list(itertools.chain([1], [2]))",
    "itertools.combinations": "X = list(itertools.combinations([1, 2], 2))",
    "itertools.count": "X = itertools.count(1)",
    "itertools.permutations": "X = list(itertools.permutations([1, 2]))",
    "itertools.product": "X = list(itertools.product([1], [2]))",
    "itertools.repeat": "X = list(itertools.repeat(1, 2))",
    "json.JSONDecoder": "X = json.JSONDecoder()",
    "json.JSONEncoder": "X = json.JSONEncoder(sort_keys=True)",
    "json.dumps": 'X = json.dumps({"a": 1})',
    "json.loads": 'X = json.loads("[1]")',
    "operator.attrgetter": 'X = operator.attrgetter("real")',
    "operator.itemgetter": "X = operator.itemgetter(0)",
    "operator.methodcaller": 'X = operator.methodcaller("upper")',
    "types.MappingProxyType": "X = types.MappingProxyType({})",
    "types.SimpleNamespace": "X = types.SimpleNamespace(a=1)",
    "textwrap.TextWrapper": "X = textwrap.TextWrapper(width=10)",
    "textwrap.dedent": 'X = textwrap.dedent("  a")',
    "textwrap.fill": 'X = textwrap.fill("a b", 3)',
    "textwrap.indent": 'X = textwrap.indent("a", "  ")',
    "textwrap.wrap": 'X = textwrap.wrap("a b", 3)',
    "io.StringIO": 'X = io.StringIO("a")',
    "io.BytesIO": 'X = io.BytesIO(b"a")',
    "json.load": 'X = json.load(io.StringIO("[1]"))',
    "tomllib.load": 'X = tomllib.load(io.BytesIO(b"a = 1"))',
    "tomllib.loads": 'X = tomllib.loads("a = 1")',
    "pickle.dumps": "X = pickle.dumps([1])",
    "pickle.loads": "X = pickle.loads(pickle.dumps([1]))",
    "pickle.load": "X = pickle.load(io.BytesIO(pickle.dumps([1])))",
    "pydantic.Field": 'X = typing.Annotated[int, pydantic.Field(description="d", ge=1)]',
    "pydantic.fields.Field": 'X = pydantic.fields.Field(description="d")',
    "typing_extensions.Doc": 'X = typing.Annotated[int, typing_extensions.Doc("d")]',
    # the bundle's own cog (runtime/cog.py, on the path of the run below)
    "cog.Input": 'X = cog.Input(default=1, ge=0, description="d")',
}
for _name in list(PURE_CASES):
    if _name.startswith("typing."):
        _ext = "typing_extensions." + _name.split(".", 1)[1]
        PURE_CASES[_ext] = PURE_CASES[_name].replace("typing.", "typing_extensions.")

MODULES = (
    "abc", "cog", "collections", "contextlib", "dataclasses", "datetime", "decimal", "enum",
    "fractions", "functools", "io", "itertools", "json", "logging", "operator", "os", "pathlib",
    "pickle", "pydantic", "pydantic.fields", "re", "string", "struct", "textwrap", "tomllib",
    "types", "typing", "typing_extensions", "uuid",
)  # fmt: skip
PRELUDE = "".join(f"import {m}\n" for m in MODULES) + (
    'P = collections.namedtuple("P", "x y")\nT = typing.TypeVar("T")\n'
)


def _module(statement: str) -> str:
    return f"{PRELUDE}{statement}\n\n\ndef f() -> int:\n    return 1\n"


def test_every_pure_entry_has_a_case() -> None:
    assert set(PURE_NAMES) - {n for n in PURE_NAMES if n.endswith(("Error", "Exception"))} - set(
        PURE_CASES
    ) <= {n for n in PURE_NAMES if n.startswith("builtins.") and n[9:][0].isupper()}


@pytest.mark.parametrize("name", sorted(PURE_CASES))
def test_pure_entry_keeps_the_function_eligible(name: str) -> None:
    analysis = analyze_source(_module(PURE_CASES[name]), path="m.py", module="m")
    assert analysis.readiness is not None
    f = analysis.readiness.assessment("f")
    assert f is not None
    # typing_extensions is not standard library: its import is the only reason allowed
    blocking = [r for r in f.blocking() if r.code != "SVC-R008"]
    assert blocking == [], [r.message for r in blocking]


AUDITED = """
import io, json, sys
FORBIDDEN = ("open", "os.", "subprocess.", "socket.", "shutil.", "urllib.", "http.",
             "time.sleep", "sys.addaudithook", "ctypes.", "import")
events = []
def hook(event, args):
    if event.startswith(FORBIDDEN) and event not in ("os.fspath",):
        events.append(event)
cases = json.loads(sys.stdin.read())
namespace_base = {"__name__": "m", "__file__": "/srv/bundle/source/m.py"}
exec(compile(PRELUDE, "prelude", "exec"), namespace_base)
import _strptime  # strptime imports it on first use: a standard-library import, not I/O
sys.addaudithook(hook)
out, err = io.StringIO(), io.StringIO()
results = {}
for name, statement in cases.items():
    events.clear()
    sys.stdout, sys.stderr = out, err
    try:
        exec(compile(statement, name, "exec"), dict(namespace_base))
        failure = None
    except Exception as exc:
        failure = repr(exc)
    finally:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    results[name] = {"events": sorted(set(events)), "failure": failure,
                     "output": out.getvalue() + err.getvalue()}
    out.seek(0); out.truncate(); err.seek(0); err.truncate()
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, object]]:
    """Every pure case run once, in one subprocess under an audit hook; ``cog`` is the
    module a bundle ships (``source/cog.py``)."""
    script = f"PRELUDE = {PRELUDE!r}\n{AUDITED}"
    shim = tmp_path_factory.mktemp("shim")
    (shim / "cog.py").write_bytes((ROOT / "runtime" / "cog.py").read_bytes())
    proc = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(PURE_CASES),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(shim)},
    )
    results: dict[str, dict[str, object]] = json.loads(proc.stdout)
    return results


# Entries of the table for a newer target Python than the one running the tests: they cannot
# be called here, and the test below proves that is why (rather than skipping them).
NEWER_PYTHON: dict[str, tuple[int, int]] = {
    "typing.TypeAliasType": (3, 12),
    "typing.override": (3, 12),
}
RUNNABLE = sorted(n for n in PURE_CASES if NEWER_PYTHON.get(n, (0, 0)) <= sys.version_info[:2])


@pytest.mark.parametrize("name", RUNNABLE)
def test_pure_entry_does_no_io_and_prints_nothing(
    name: str, executed: dict[str, dict[str, object]]
) -> None:
    result = executed[name]
    assert result["failure"] is None, result
    assert result["events"] == [], result
    assert result["output"] == ""


def test_entries_left_out_are_missing_from_this_python() -> None:
    """An entry is left out above only because this interpreter lacks it, never to hide a
    failure: on the Python it names it runs with the others."""
    import typing

    for name, version in NEWER_PYTHON.items():
        assert name in PURE_CASES
        if sys.version_info[:2] < version:
            assert not hasattr(typing, name.rpartition(".")[2]), name


def _effect_statement(key: str) -> str:
    """A module-level statement using an effect entry (a prefix gets a name completed)."""
    name = key
    if name == "builtins.__import__":
        pass
    elif name.endswith("."):
        name += "run"
    elif name.endswith("_"):
        name += "csv"
    elif name in ("os.exec", "os.spawn"):
        name += "v"
    if name.startswith(EFFECT_READS) or name in ("sys.stdout", "sys.stderr", "sys.excepthook"):
        return f"X = {name}.x"
    head, _, rest = name.partition("()")
    call = f"{head}('a'){rest}()" if rest else f"{name}()"
    return f"X = {call.replace('builtins.', '')}"


@pytest.mark.parametrize("key", sorted(EFFECTS))
def test_effect_entry_keeps_its_own_code(key: str) -> None:
    code, _ = EFFECTS[key]
    root = key.split(".", 1)[0]
    imports = "" if root == "builtins" else f"import {root}\n"
    if key.startswith(("os.path.", "urllib.request.", "http.client.", "concurrent.futures.")):
        imports = (
            f"import {key.rsplit('.', 2)[0] if key.endswith('.') else key.rsplit('.', 1)[0]}\n"
        )
    source = f"{imports}{_effect_statement(key)}\n\n\ndef f() -> int:\n    return 1\n"
    analysis = analyze_source(source, path="m.py", module="m")
    assert analysis.readiness is not None
    f = analysis.readiness.assessment("f")
    assert f is not None
    assert code.code in {r.code for r in f.reasons}, (source, [r.message for r in f.reasons])


def test_unknown_calls_stay_conditional() -> None:
    source = "import somewhere_else\nX = somewhere_else.make()\n\n\ndef f() -> int:\n    return 1\n"
    analysis = analyze_source(source, path="m.py", module="m")
    assert analysis.readiness is not None
    codes = {r.code for r in analysis.readiness.assessments[0].reasons}
    assert "SVC-R007" in codes


@pytest.mark.parametrize(
    ("body", "eligible"),
    [
        ("def _h(n):\n    return n * 2\n\n\nX = _h(3)", True),
        ("def _h(n):\n    print(n)\n\n\nX = _h(3)", False),
        ("def _h(n):\n    return _g(n)\n\n\ndef _g(n):\n    return open(n)\n\n\nX = _h(3)", False),
        ("def _h():\n    global Y\n    Y = 1\n\n\n_h()", True),  # binds a module name
        ("def _h():\n    global Y\n    Y = 1\n    print(Y)\n\n\n_h()", False),
        ("class _C:\n    def __init__(self, a):\n        self.a = a\n\n\nX = _C(1)", True),
        ("class _C:\n    def __init__(self, a):\n        print(a)\n\n\nX = _C(1)", False),
        ("class _C:\n    @property\n    def p(self):\n        return 1\n\n\nX = _C().p", False),
        (
            "class _B:\n    def __init__(self):\n        print(1)\n\n\n"
            "class _C(_B):\n    pass\n\n\nX = _C()",
            False,
        ),
        ("def _h(n):\n    return _h(n)\n\n\nX = _h(3)", False),
    ],
)
def test_local_helpers_to_a_bounded_depth(body: str, eligible: bool) -> None:
    analysis = analyze_source(
        f"{body}\n\n\ndef f() -> int:\n    return 1\n", path="m.py", module="m"
    )
    assert analysis.readiness is not None
    f = analysis.readiness.assessment("f")
    assert f is not None
    assert (f.klass == "eligible") is eligible, [r.message for r in f.reasons]


# -- served for real ----------------------------------------------------------------------------
def _call(bundle: Path, name: str, body: dict[str, object]) -> tuple[int, object]:
    with serving(bundle) as server, server.client() as client:
        response = client.post(f"/capabilities/{name}", json=body)
        return response.status_code, response.json()


def test_pure_idioms_fixture_starts_and_answers(tmp_path: Path) -> None:
    source = ROOT / "tests" / "golden" / "effects_pure_idioms" / "input.py"
    generate(source, tmp_path / "b", "--module-name", "idioms")
    with serving(tmp_path / "b") as server, server.client() as client:
        shout = client.post("/capabilities/shout", json={"text": "hi"})
        assert shout.status_code == 200, server.log_text()
        assert shout.json() == "HI"
        wrapped = client.post("/capabilities/wrap", json={"text": "a b c d e f", "width": 5})
        assert wrapped.status_code == 200, server.log_text()
        assert wrapped.json() == ["a b c", "d e f"]


def test_lru_cache_capability_keeps_its_signature(tmp_path: Path) -> None:
    source = tmp_path / "fib.py"
    source.write_text(
        textwrap.dedent(
            """
            import functools


            @functools.lru_cache(maxsize=None)
            def fib(n: int) -> int:
                return n if n < 2 else fib(n - 1) + fib(n - 2)
            """
        )
    )
    generate(source, tmp_path / "b")
    readiness = json.loads((tmp_path / "b" / "readiness.json").read_text())
    assert [r["code"] for r in readiness["assessments"][0]["reasons"]] == ["SVC-R032"]
    assert _call(tmp_path / "b", "fib", {"n": 20}) == (200, 6765)


SECURITY = {
    "env": (
        "import os\n\n\ndef load_env(key: str) -> str:\n    return os.environ[key]\n",
        "load_env",
        {"key": "SVCC_TEST_SECRET"},
        "SVC-R033",
    ),
    "process": (
        "import subprocess\n\n\ndef echo(word: str) -> str:\n"
        "    return subprocess.run(['echo', word], capture_output=True, text=True).stdout\n",
        "echo",
        {"word": "hi"},
        "SVC-R034",
    ),
    "eval": (
        "def calc(expr: str) -> int:\n    return eval(expr, {'__builtins__': {}})\n",
        "calc",
        {"expr": "6*7"},
        "SVC-R035",
    ),
    "paths": (
        "def read_note(path: str) -> str:\n    with open(path) as fh:\n        return fh.read()\n",
        "read_note",
        None,
        "SVC-R036",
    ),
}


@pytest.mark.parametrize("kind", sorted(SECURITY))
def test_security_effect_refused_without_allow_and_served_with_it(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text, name, body, code = SECURITY[kind]
    source = tmp_path / "m.py"
    source.write_text(text)
    refused = run_svcc("generate", "rest", str(source), "--output-dir", str(tmp_path / "no"))
    assert refused.returncode != 0
    assert code in refused.stderr + refused.stdout
    inspected = run_svcc("inspect", str(source), "--format", "json")
    reasons = json.loads(inspected.stdout)["assessments"][0]["reasons"]
    assert [r["code"] for r in reasons] == [code]
    assert "--allow" in reasons[0]["hint"]
    generate(source, tmp_path / "b", "--allow", kind)
    readiness = json.loads((tmp_path / "b" / "readiness.json").read_text())
    assert readiness["allow"] == [kind]
    assert json.loads((tmp_path / "b" / "svc-rest.json").read_text())["allow"] == [kind]
    assert [r["code"] for r in readiness["assessments"][0]["reasons"]] == ["SVC-R039"]
    if body is None:  # paths: a file the server can read
        note = tmp_path / "note.txt"
        note.write_text("remember")
        body = {"path": str(note)}
    monkeypatch.setenv("SVCC_TEST_SECRET", "s3cret")
    expected = {"env": "s3cret", "process": "hi\n", "eval": 42, "paths": "remember"}[kind]
    assert _call(tmp_path / "b", name, body) == (200, expected)


def test_unknown_allow_kind_is_a_usage_error(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("def f() -> int:\n    return 1\n")
    proc = run_svcc("inspect", str(source), "--allow", "network")
    assert proc.returncode == 2
    assert "unknown kind 'network'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_annotated_parameter_is_served_where_the_untyped_one_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "def size(img):\n    return img.shape[0]\n\n\n"
        "def count(img: list[list[int]]) -> int:\n    return len(img)\n"
    )
    inspected = json.loads(run_svcc("inspect", str(source), "--format", "json").stdout)
    verdicts = {a["name"]: a["class"] for a in inspected["assessments"]}
    assert verdicts == {"size": "conditional", "count": "eligible"}
    size = inspected["assessments"][0]["reasons"]
    assert any(r["code"] == "SVC-R037" and "annotate" in r["hint"] for r in size)
    generate(source, tmp_path / "b", "--select", "count")
    assert _call(tmp_path / "b", "count", {"img": [[1], [2]]}) == (200, 2)


def test_the_manual_lists_exactly_the_harmless_decorators() -> None:
    from svcc.compiler.passes.import_time import HARMLESS_DECORATORS

    readme = (ROOT / "docs" / "reference" / "readiness.md").read_text()
    block = readme.split("<!-- harmless-decorators -->")[1].split("<!-- /harmless-decorators")[0]
    listed = set(block.split("`")[1::2]) - {"typing_extensions"}
    extension = {n for n in HARMLESS_DECORATORS if n.startswith("typing_extensions.")}
    assert "same five from `typing_extensions`" in block
    assert {
        f"typing_extensions.{n.split('.', 1)[1]}" for n in listed if n.startswith("typing.")
    } == (extension)
    assert listed | extension == set(HARMLESS_DECORATORS)


def test_project_allow_opts_a_repository_in(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "app").mkdir(parents=True)
    (project / "app" / "__init__.py").write_text("")
    (project / "app" / "config.py").write_text(
        "import os\n\n\ndef setting(key: str) -> str:\n    return os.getenv(key, '')\n"
    )
    (project / "pyproject.toml").write_text('[project]\nname = "app"\n')
    refused = json.loads(run_svcc("inspect", str(project), "--format", "json").stdout)
    reasons = refused["files"]["app/config.py"]["assessments"][0]["reasons"]
    assert [r["code"] for r in reasons] == ["SVC-R033"]
    (project / "pyproject.toml").write_text(
        '[project]\nname = "app"\n[tool.svcc]\nallow = ["env"]\n'
    )
    allowed = json.loads(run_svcc("inspect", str(project), "--format", "json").stdout)
    document = allowed["files"]["app/config.py"]
    assert document["allow"] == ["env"]
    assert document["assessments"][0]["class"] == "eligible"
    assert [r["code"] for r in document["assessments"][0]["reasons"]] == ["SVC-R039"]
    (project / "pyproject.toml").write_text('[tool.svcc]\nallow = ["network"]\n')
    proc = run_svcc("inspect", str(project), "--format", "json")
    assert proc.returncode == 2
    assert "[tool.svcc] allow: unknown kind 'network'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_inspect_dir_on_a_terminal_summarises_and_groups(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "a.py").write_text(
        'print("hi")\n\n\ndef one(x: int) -> int:\n    return x\n\n\n'
        "def two(x: int) -> int:\n    return x\n"
    )
    (project / "pkg" / "b.py").write_text("def three(x: int) -> int:\n    return x\n")
    text = run_svcc("inspect", str(project), "--format", "text").stdout
    # the shared reason is said once for the module, not under each function
    assert text.count("module-level call to print()") == 2  # the module section and summary
    assert "    every function:" in text
    assert "summary: 3 functions: 1 eligible, 2 conditional" in text
    assert "     2 functions  SVC-R028 module-level call to print()" in text


def test_parse_args_of_a_parameter_defaulting_to_none_and_stdin_read_the_command_line(
    tmp_path: Path,
) -> None:
    source = (
        "import argparse\nimport sys\n\n\n"
        "def main(argv: list[str] | None = None) -> int:\n"
        "    return len(vars(argparse.ArgumentParser().parse_args(argv)))\n\n\n"
        "def lines() -> int:\n    return len(sys.stdin.readlines())\n\n\n"
        "def given(argv: list[str]) -> int:\n"
        "    return len(vars(argparse.ArgumentParser().parse_args(argv)))\n"
    )
    analysis = analyze_source(source, path="m.py", module="m")
    assert analysis.readiness is not None
    verdicts = {
        a.name: (a.klass, [r.code for r in a.reasons]) for a in analysis.readiness.assessments
    }
    assert verdicts["main"] == ("unsupported", ["SVC-R038"])
    assert verdicts["lines"] == ("unsupported", ["SVC-R038"])
    assert verdicts["given"] == ("eligible", [])


def test_log_file_handlers_opened_on_a_parameter_path_are_paths_effects() -> None:
    text = textwrap.dedent(
        """\
        import logging
        from logging.handlers import RotatingFileHandler, TimedRotatingFileHandler


        def rotating(path: str) -> None:
            logging.getLogger("x").addHandler(RotatingFileHandler(path, maxBytes=20))


        def timed(path: str) -> None:
            logging.getLogger("x").addHandler(TimedRotatingFileHandler(path, when="m"))


        def configured(path: str) -> None:
            logging.basicConfig(filename=path)


        def named(name: str) -> str:
            logging.getLogger(name).info("hello")
            return name
        """
    )
    analysis = analyze_source(text.encode(), path="m.py", module="m", python_version="3.11")
    assert analysis.readiness is not None
    codes = {a.name: [r.code for r in a.reasons] for a in analysis.readiness.assessments}
    assert codes == {
        "rotating": ["SVC-R036"],
        "timed": ["SVC-R036"],
        "configured": ["SVC-R036"],
        "named": [],
    }
