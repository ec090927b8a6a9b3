"""The import-time evaluator reads the values of the repository's other modules (issue 37):
constants and patterns built in a sibling module, a namedtuple base of a sibling's field
list, a plain class of a sibling as a base; on a directory and on a file with its closure
alike. What it cannot know stays refused: a sibling that imports its reader, a sibling's
container changed by its reader, a decorated sibling class."""

import ast
import os
from pathlib import Path

import pytest
from svcc.compiler.driver import analyze_file, analyze_repository
from svcc.frontends.python.sibling_values import Siblings, _unnamed_file

MODULES = {
    "__init__.py": "from .api import parse\n",
    "abnf.py": 'WORD = "[a-z]+"\nPAIR = WORD + "=" + WORD\nFIELDS = ["scheme", "path"]\n',
    "misc.py": (
        "import re\n\nfrom . import abnf\n\n"
        'PAIR_MATCHER = re.compile("^{}$".format(abnf.PAIR))\nCOMPONENTS = abnf.FIELDS\n'
    ),
    "_mixin.py": 'class Mixin:\n    def show(self) -> str:\n        return "x"\n',
    "api.py": (
        "from collections import namedtuple\n\nfrom . import misc\nfrom ._mixin import Mixin\n\n\n"
        'class Reference(namedtuple("Reference", misc.COMPONENTS), Mixin):\n    pass\n\n\n'
        "def parse(text: str) -> bool:\n    return misc.PAIR_MATCHER.match(text) is not None\n"
    ),
}


def _tree(root: Path, changes: dict[str, str]) -> Path:
    package = root / "src" / "pkg"
    package.mkdir(parents=True)
    for name, text in {**MODULES, **changes}.items():
        (package / name).write_text(text)
    return package


def _verdicts(package: Path) -> tuple[str, str]:
    """``parse``'s class on the directory, and on the file with its closure."""
    reports = analyze_repository(package.parent, python_version="3.11", strict=False).reports
    directory = {a.name: a for a in reports["pkg.api"].assessments}["parse"]
    analysis = analyze_file(package / "api.py")
    assert analysis.readiness is not None
    file = {a.name: a for a in analysis.readiness.assessments}["parse"]
    assert file.klass == directory.klass
    assert {r.code for r in file.reasons} == {r.code for r in directory.reasons}
    return directory.klass, ",".join(sorted({r.code for r in directory.reasons}))


def test_values_bases_and_patterns_of_sibling_modules_are_evaluated(tmp_path: Path) -> None:
    assert _verdicts(_tree(tmp_path, {}))[0] == "eligible"


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        # the pattern built from the sibling's constants does not compile
        ({"abnf.py": MODULES["abnf.py"].replace('WORD = "[a-z]+"', 'WORD = "([a-z]+"')}, "R024"),
        # a field the sibling's reader adds makes namedtuple raise: a change to another
        # module's list is not followed, directly or through a name
        ({"misc.py": MODULES["misc.py"] + 'abnf.FIELDS.append("class")\n'}, "R024"),
        ({"misc.py": MODULES["misc.py"] + 'F = abnf.FIELDS\nF += ["class"]\n'}, "R024"),
        # the sibling imports its reader: it may not have finished running when read
        ({"abnf.py": "from . import misc\n" + MODULES["abnf.py"]}, "R024"),
        # a decorated class, or one with a subclass hook, may run code for a subclass
        (
            {
                "_mixin.py": "import functools\n\n\n@functools.total_ordering\n"
                + MODULES["_mixin.py"]
            },
            "R010",
        ),
        (
            {
                "_mixin.py": MODULES["_mixin.py"] + "\n    def __init_subclass__(cls) -> None:\n"
                "        print(cls)\n"
            },
            "R010",
        ),
    ],
)
def test_what_a_sibling_value_cannot_be_known_as_stays_refused(
    tmp_path: Path, changes: dict[str, str], why: str
) -> None:
    verdict, codes = _verdicts(_tree(tmp_path, changes))
    assert verdict != "eligible"
    assert f"SVC-{why}" in codes, codes


def test_an_identity_decorator_from_a_sibling_module_runs_nothing(tmp_path: Path) -> None:
    """jmespath's ``@with_str_method`` from its ``compat`` module (``return cls``); one
    that changes the class is still code."""
    compat = (
        "def with_str_method(cls):\n    return cls\n\n\n"
        "def with_name(cls):\n    cls.n = 1\n    return cls\n"
    )
    api = MODULES["api.py"].replace(
        "from ._mixin import Mixin\n",
        "from ._mixin import Mixin\nfrom .compat import with_str_method, with_name\n",
    )
    decorated = api.replace("class Reference(", "@with_str_method\nclass Reference(")
    assert _verdicts(_tree(tmp_path / "a", {"compat.py": compat, "api.py": decorated}))[0] == (
        "eligible"
    )
    changing = api.replace("class Reference(", "@with_name\nclass Reference(")
    verdict, codes = _verdicts(_tree(tmp_path / "b", {"compat.py": compat, "api.py": changing}))
    assert verdict != "eligible"
    assert "SVC-R010" in codes


def test_lowering_workers_read_each_module_once_among_them_and_judge_alike(
    tmp_path: Path,
) -> None:
    """The processes lowering a large tree share the facts they read of each module (which
    modules its import runs): the verdicts are those of one process, and a module read by
    one is not parsed again by another."""
    fillers = {f"m{n:02}.py": f"from . import abnf\n\nX{n} = abnf.WORD * {n}\n" for n in range(70)}
    package = _tree(tmp_path, fillers)
    one = analyze_repository(package.parent, python_version="3.11", strict=False, workers=1)
    two = analyze_repository(package.parent, python_version="3.11", strict=False, workers=2)
    assert len(one.reports) >= 64  # forks workers (``PARALLEL_FROM``)
    assert set(two.reports) == set(one.reports)
    for module, report in one.reports.items():
        other = two.reports[module]
        assert (other and other.to_json()) == (report and report.to_json()), module


class _Counting(Siblings):
    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.parsed: list[str] = []

    def _parse_new(self, module: str) -> tuple[ast.Module, bool] | None:
        self.parsed.append(module)
        return super()._parse_new(module)


def test_what_one_reader_answered_the_others_read() -> None:
    sources = {
        f"pkg.{name[:-3]}": (text.encode(), False)
        for name, text in MODULES.items()
        if name != "__init__.py"
    } | {"pkg": (MODULES["__init__.py"].encode(), True)}
    mixins = (
        MODULES["_mixin.py"]
        + "\n\nclass Other:\n    pass\n\n\n@dataclass\nclass Made:\n    x: int\n"
    )
    sources["pkg._mixin"] = ("from dataclasses import dataclass\n" + mixins).encode(), False
    fd = _unnamed_file()
    assert fd is not None
    try:
        first, second = (_Counting(sources.get, (3, 11), fd) for _ in range(2))
        assert first.plain_class("pkg.api", "pkg._mixin.Mixin")
        assert first.parsed == ["pkg", "pkg._mixin"]  # the package's facts, then the class's
        assert second.plain_class("pkg.api", "pkg._mixin.Mixin")
        # the module's other classes were answered with it: the second parses nothing
        assert second.plain_class("pkg.api", "pkg._mixin.Other")
        assert not second.plain_class("pkg.api", "pkg._mixin.Made")  # decorated
        assert second.parsed == []
        # a question the first did not answer is answered here
        assert not second.plain_class("pkg.api", "pkg.abnf.WORD")
        assert second.parsed == ["pkg.abnf"]
    finally:
        os.close(fd)


def test_a_name_another_reader_evaluated_is_followed_without_evaluating_its_module() -> None:
    """A class or an identity function a module imports by name (``from pkg._mixin import
    Mixin`` there) is followed from what the process that evaluated the module shared:
    the second reader parses neither that module nor the one it names."""
    sources = {
        f"pkg.{name[:-3]}": (text.encode(), False)
        for name, text in MODULES.items()
        if name != "__init__.py"
    } | {"pkg": (MODULES["__init__.py"].encode(), True)}
    sources["pkg.compat"] = b"def same(f):\n    return f\n", False
    sources["pkg.reexport"] = (
        b"from pkg._mixin import Mixin\nfrom pkg.compat import same\n\n\n"
        b"def own(f):\n    return f\n",
        False,
    )
    fd = _unnamed_file()
    assert fd is not None
    try:
        first, second = (_Counting(sources.get, (3, 11), fd) for _ in range(2))
        assert first.plain_class("pkg.api", "pkg.reexport.Mixin")
        assert first.identity("pkg.api", "pkg.reexport.same")
        assert first.identity("pkg.api", "pkg.reexport.own")
        assert {"pkg.reexport", "pkg._mixin", "pkg.compat"} <= set(first.parsed)
        assert second.plain_class("pkg.api", "pkg.reexport.Mixin")
        assert second.identity("pkg.api", "pkg.reexport.same")
        assert second.identity("pkg.api", "pkg.reexport.own")
        assert not second.plain_class("pkg.api", "pkg.reexport.own")  # not a class
        assert second.parsed == []
    finally:
        os.close(fd)


def test_a_lowered_module_is_evaluated_from_the_tree_it_was_lowered_from() -> None:
    """The tree the lowerer parsed is the one a later question of the module's values reads
    (no second parse), within a budget of the trees' texts, least recently used out first."""
    sources = {f"pkg.{name[:-3]}": (text.encode(), False) for name, text in MODULES.items()}
    sources["pkg"] = (MODULES["__init__.py"].encode(), True)
    siblings = _Counting(sources.get, (3, 11))
    text = MODULES["_mixin.py"]
    siblings.lowered("pkg._mixin", text, (3, 11), ast.parse(text))
    assert siblings.plain_class("pkg.api", "pkg._mixin.Mixin")
    assert "pkg._mixin" not in siblings.parsed
    # another grammar's tree is not the one the evaluator's parse makes: not read
    other = _Counting(sources.get, (3, 11))
    other.lowered("pkg._mixin", text, (3, 8), ast.parse(text))
    assert other.plain_class("pkg.api", "pkg._mixin.Mixin")
    assert "pkg._mixin" in other.parsed


def test_the_trees_kept_stay_within_their_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    from svcc.frontends.python import sibling_values

    sources = {f"m{n}": (f"X = {n}\n".encode(), False) for n in range(4)}
    siblings = _Counting(sources.get, (3, 11))
    monkeypatch.setattr(sibling_values, "_TREE_BYTES", 2 * len(b"X = 0\n"))
    for n in range(4):
        assert siblings._parse(f"m{n}") is not None
    assert list(siblings._trees) == ["m2", "m3"]
    assert siblings._tree_bytes == 2 * len(b"X = 0\n")
    assert siblings._parse("m3") is not None
    assert siblings._parse("m0") is not None
    assert siblings.parsed == ["m0", "m1", "m2", "m3", "m0"]  # m3 kept, m0 read again
    assert list(siblings._trees) == ["m3", "m0"]


def test_a_record_still_being_written_is_not_read() -> None:
    """A reader sees a record only once it is whole (another process may be writing it)."""
    import marshal

    from svcc.frontends.python.sibling_values import _Shared

    fd = _unnamed_file()
    assert fd is not None
    try:
        reader = _Shared(fd)
        payload = marshal.dumps(("plain:pkg.m:C:0", True))
        record = len(payload).to_bytes(4, "little") + payload
        os.write(fd, record[:7])
        assert reader.get("plain:pkg.m:C:0") == (False, None)
        os.write(fd, record[7:])
        assert reader.get("plain:pkg.m:C:0") == (True, True)
        _Shared(fd).put_many([("facts:pkg.m", (("os",), ("C",))), ("novalues:pkg.n", True)])
        assert reader.get("facts:pkg.m") == (True, (("os",), ("C",)))
        assert reader.get("novalues:pkg.n") == (True, True)
    finally:
        os.close(fd)
