"""Import-time code decided for the target (Linux) and the reviewed standard-library tables
behind it (issue 37): instances of classes of plain standard-library bases, ``try`` bodies
reading a Windows-only name, guarded distribution metadata. Each fixture was refused before."""

import importlib
import importlib.util
import textwrap
import types
from pathlib import Path

import pytest
from svcc.compiler.driver import analyze_repository
from svcc.frontends.python import _fold_table as table

from tests.frontends.test_evaluator import FUNCTION, reasons, values


@pytest.mark.parametrize("name", sorted(table.PLAIN_BASES))
def test_plain_bases_run_no_python_code_when_made(name: str) -> None:
    module, _, attr = name.rpartition(".")
    cls = getattr(importlib.import_module(module), attr)
    for klass in cls.__mro__:  # no constructor written in Python anywhere on the way
        for dunder in ("__init__", "__new__", "__init_subclass__"):
            assert not isinstance(vars(klass).get(dunder), types.FunctionType)
    assert type(cls) is type
    cls()


@pytest.mark.parametrize("name", sorted(table.WINDOWS_MODULES))
def test_windows_modules_are_absent_here(name: str) -> None:
    assert importlib.util.find_spec(name) is None


@pytest.mark.parametrize("name", sorted(table.WINDOWS_ATTRIBUTES))
def test_windows_attributes_are_absent_here(name: str) -> None:
    module, _, attr = name.rpartition(".")
    assert not hasattr(importlib.import_module(module), attr)


def test_an_instance_of_a_tzinfo_subclass_without_init_is_harmless() -> None:
    source = """
    from datetime import timedelta, tzinfo

    ZERO = timedelta(0)


    class Utc(tzinfo):
        def utcoffset(self, dt):
            return ZERO


    UTC = Utc()
    """
    assert reasons(textwrap.dedent(source) + FUNCTION) == []


def test_a_tzinfo_subclass_with_its_own_init_stays_import_time_code() -> None:
    source = """
    from datetime import tzinfo


    class Local(tzinfo):
        def __init__(self):
            print("made")


    LOCAL = Local()
    """
    assert ("SVC-R007", 10) in reasons(textwrap.dedent(source) + FUNCTION)


WIN32 = """
try:
    import ctypes
    from ctypes import LibraryLoader
    windll = LibraryLoader(ctypes.WinDLL)
    from ctypes import wintypes
except (AttributeError, ImportError):
    windll = None
    SetConsoleTextAttribute = lambda *_: None
else:
    _GetStdHandle = windll.kernel32.GetStdHandle

if windll is None:
    MODE = "ansi"
else:
    MODE = windll.kernel32.GetConsoleMode()
"""


def test_a_try_reading_a_windows_only_name_runs_its_handler_on_linux() -> None:
    module = values(WIN32)
    assert module.values["windll"] is None
    assert module.values["MODE"] == "ansi"
    assert reasons(WIN32 + FUNCTION) == []


@pytest.mark.parametrize(
    ("body", "handler", "value"),
    [
        ("import msvcrt", "ImportError", False),
        ("import msvcrt", "ModuleNotFoundError", False),
        ("import winreg as reg", "Exception", False),
        ("from ctypes import windll", "ImportError", False),
        ("import ctypes\n    X = ctypes.windll.kernel32", "(AttributeError, ImportError)", False),
    ],
)
def test_windows_only_reads_decide_the_handler(body: str, handler: str, value: bool) -> None:
    source = f"try:\n    {body}\n    HAS = True\nexcept {handler}:\n    HAS = False\n"
    assert values(source).values["HAS"] is value


@pytest.mark.parametrize(
    ("body", "handler"),
    [
        # A call runs before the Windows-only read: not followed.
        ("import ctypes\n    X = ctypes.CDLL(None)(ctypes.WinDLL)", "Exception"),
        # The handler does not catch ImportError: a failing import before would escape.
        ("import ctypes\n    X = ctypes.WinDLL", "AttributeError"),
        # A handler whose types the rule does not know comes first.
        ("import msvcrt", "MyError"),
        ("from ctypes import windll", "ModuleNotFoundError"),
    ],
)
def test_windows_only_reads_stay_undecided_otherwise(body: str, handler: str) -> None:
    source = f"try:\n    {body}\n    HAS = True\nexcept {handler}:\n    HAS = False\n"
    assert "HAS" not in values(source).values


WIPE = """
import atexit


def _wipe_internal_state():
    global orig_stdout, done
    orig_stdout = None
    done = False
    try:
        atexit.unregister(reset_all)
    except AttributeError:
        pass


def reset_all():
    return orig_stdout


_wipe_internal_state()
"""


def test_a_helper_binding_module_names_through_global_is_evaluated() -> None:
    module = values(WIPE)
    assert module.values["orig_stdout"] is None
    assert module.values["done"] is False
    assert reasons(WIPE + FUNCTION) == []


@pytest.mark.parametrize(
    "body",
    [
        "global X\n    X = 1\n    print(X)",  # stops after binding: X forgotten
        "global X\n    X = 1\n    atexit.register(_f)",
        "global X\n    X = 1\n    atexit.unregister(print)",  # not the module's function
    ],
)
def test_a_helper_binding_globals_that_stops_forgets_them(body: str) -> None:
    source = f"import atexit\nX = 0\n\ndef _f():\n    {body}\n\n_f()\n"
    module = values(source)
    assert "X" not in module.values
    assert reasons(source + FUNCTION) == [("SVC-R007", 9)]


def test_global_bindings_are_not_made_from_a_value_being_computed() -> None:
    source = "def _f():\n    global X\n    X = 1\n    return 2\n\nY = [_f()][0]\n"
    # Allowed in a statement (the statement evaluates or everything it bound is forgotten).
    module = values(source)
    assert module.values["Y"] == 2
    assert module.values["X"] == 1
    class_body = "def _f():\n    global X\n    X = 1\n    return 2\n\nclass C:\n    Y = _f()\n"
    assert "X" not in values(class_body).values


ANSI = """
CSI = "\\033["


def code_to_chars(code):
    return CSI + str(code) + "m"


class AnsiCodes(object):
    def __init__(self):
        for name in dir(self):
            if not name.startswith("_"):
                value = getattr(self, name)
                setattr(self, name, code_to_chars(value))


class AnsiFore(AnsiCodes):
    RED = 31
    GREEN = 32

    def _shade(self, n=1):
        return CSI + str(n)


Fore = AnsiFore()
LISTED = dir(Fore)
RED = Fore.RED
"""


def test_an_instance_of_a_subclass_of_the_modules_class_is_made_as_python_makes_it() -> None:
    module = values(ANSI)
    namespace: dict[str, object] = {}
    exec(compile(textwrap.dedent(ANSI), "ansi.py", "exec"), namespace)  # the fixture, here
    assert module.values["RED"] == namespace["RED"] == "\033[31m"
    assert module.values["LISTED"] == namespace["LISTED"]
    assert reasons(ANSI + FUNCTION) == []


@pytest.mark.parametrize(
    "extra",
    [
        "    def __getattr__(self, name):\n        return 1\n",  # Python calls it behind
        "    @property\n    def BLUE(self):\n        return 34\n",  # setattr would raise
        "    def shade(self):\n        return 1\n",  # str() of a bound method: an address
    ],
)
def test_a_subclass_python_would_treat_otherwise_stays_unknown(extra: str) -> None:
    source = ANSI.replace("    GREEN = 32\n", "    GREEN = 32\n" + extra)
    assert "RED" not in values(source).values


GUARDED_VERSION = """
import importlib.metadata
from importlib.metadata import PackageNotFoundError

try:
    __version__ = importlib.metadata.version(__name__)
except {handler}:
    __version__ = "0.0.0"
"""


@pytest.mark.parametrize(
    "handler", ["PackageNotFoundError", "Exception", "(ImportError, KeyError)"]
)
def test_distribution_metadata_read_under_a_guard_is_harmless(handler: str) -> None:
    source = GUARDED_VERSION.format(handler=handler)
    assert reasons(source + FUNCTION) == []
    assert "__version__" not in values(source).values  # either branch's value: bound


@pytest.mark.parametrize(
    "source",
    [
        # Unguarded: the bundle does not install the library as a distribution.
        "import importlib.metadata\n__version__ = importlib.metadata.version(__name__)\n",
        GUARDED_VERSION.format(handler="ValueError"),
        GUARDED_VERSION.format(handler="PackageNotFoundError").replace('"0.0.0"', "input()"),
    ],
)
def test_distribution_metadata_read_otherwise_stays_import_time_code(source: str) -> None:
    assert reasons(source + FUNCTION) != []


def test_dir_of_an_instance_is_the_target_versions() -> None:
    listed = values(ANSI, (3, 13)).values["LISTED"]
    assert isinstance(listed, list)
    assert {"__firstlineno__", "__static_attributes__"} <= set(listed)
    assert "LISTED" not in values(ANSI, (3, 14)).values


def test_an_instance_whose_class_defines_del_is_not_harmless() -> None:
    source = "class _S(object):\n    def __del__(self):\n        print('gone')\n\n_S()\n"
    assert reasons(source + FUNCTION) != []


def test_a_sibling_testing_the_windows_handlers_value_is_decided(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "win32.py").write_text(textwrap.dedent(WIN32))
    (package / "term.py").write_text(
        "from .win32 import windll\n\n\nclass WinTerm:\n    def __init__(self):\n"
        "        windll.kernel32.GetStdHandle(-11)\n\n\nwinterm = None\n"
        "if windll is not None:\n    winterm = WinTerm()\n" + FUNCTION
    )
    reports = analyze_repository(tmp_path, python_version="3.11", strict=False).reports
    area = {a.name: a for a in reports["pkg.term"].assessments}["area"]
    assert area.klass == "eligible", [r.message for r in area.reasons]
