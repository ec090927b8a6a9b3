"""Lowering leaves no reference cycles behind.

A directory's lowering pauses the cyclic garbage collector (``collection_paused``: its
collections of everything kept so far cost 40% of the standard library's time), which is
right only while lowering makes no cycles: each one holding a syntax tree kept that whole
tree until the collector resumed (900 MB held for the standard library, and a quarter of
its CPU time spent in the page faults of it). So every module lowered here must be freed by
reference counting alone.
"""

import gc
import sysconfig
from pathlib import Path

import pytest
from svcc.frontends.python import read_python

STDLIB = Path(sysconfig.get_paths()["stdlib"])

# What a capability does that the lowerer follows: reads of data files (through a name
# bound more than once, in branches and loops), helpers it calls, a nested scope, imports
# and globals in the body, a class with methods.
SOURCE = '''
import json
from pathlib import Path

HERE = Path(__file__).parent
CACHE = {}


def _load(path):
    with open(path) as handle:
        return json.load(handle)


class Box:
    def size(self) -> int:
        import math
        return math.floor(1.5)


def settings(name: str, fallback: bool = False) -> dict:
    """Reads a file beside the module."""
    global CACHE
    path = HERE / "a.json"
    if fallback:
        path = HERE / "b.json"
    for candidate in ("c.json", "d.json"):
        if name == candidate:
            path = HERE / candidate
    try:
        data = _load(path)
    except FileNotFoundError:
        data = {}

    def pick(key):
        return data.get(key)

    CACHE[name] = pick(name)
    return data
'''


def _unreachable_after_lowering(data: bytes, path: str, module: str) -> int:
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        result = read_python(data, path=path, module=module, python_version=(3, 11))
        assert result.ir is not None
        del result
        return gc.collect()
    finally:
        if enabled:
            gc.enable()


def test_a_capability_that_reads_files_leaves_no_cycles() -> None:
    assert _unreachable_after_lowering(SOURCE.encode(), "m.py", "m") == 0


@pytest.mark.parametrize("relpath", ["_pydecimal.py", "compileall.py", "tempfile.py"])
def test_standard_library_modules_leave_no_cycles(relpath: str) -> None:
    path = STDLIB / relpath
    if not path.is_file():
        pytest.skip(f"{path} is not on this Python")
    module = relpath.removesuffix(".py").replace("/", ".")
    assert _unreachable_after_lowering(path.read_bytes(), relpath, module) == 0


# What the import-time evaluator runs: a helper with a nested function filling a table, a
# loop, a comprehension, a folded pattern, a decided branch.
EVALUATED = """
import re
import sys

PLURALS = []


def _irregular(singular, plural):
    def caseless(text):
        return "".join("[" + c + c.upper() + "]" for c in text)

    PLURALS.insert(0, (caseless(singular), plural))


_irregular("person", "people")
TABLE = {}
for i in range(10):
    TABLE[i] = [j for j in range(i)]
_RE = re.compile("|".join(p for p, _ in PLURALS))
BAD = [print(x) for x in range(2)]
_irregular(input(), "x")
if sys.version_info >= (3, 8):
    def area(x: int) -> int:
        return x
"""


def test_the_evaluator_leaves_no_cycles() -> None:
    assert _unreachable_after_lowering(EVALUATED.encode(), "m.py", "m") == 0
