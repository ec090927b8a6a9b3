"""Cost grows with the input, not faster (issue 17): deterministic size and work checks.

Timing is never asserted (``bench/bench_scaling.py`` prints time and memory). Instead:

- sizes: the IR of a TypedDict inheritance chain and the bundle of N positional-only
  defaults grow linearly in bytes;
- work: the number of Python lines svcc executes (``sys.settrace`` line events in svcc's
  own code: deterministic for a given input) to analyse a source and emit its REST and MCP
  bundles grows by at most ``LINEAR`` when the input grows 4x. A pass that rescans the
  module per function or per member grows 16x and fails here.
"""

import ast
import itertools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import jsonschema
import pytest
from svcc.compiler.bundles import build_bundle
from svcc.compiler.driver import Analysis, analyze_source
from svcc.compiler.registry import get_target
from svcc.frontends.repository import Held
from svcc.ir.index import module_index
from svcc.ir.serde import ir_from_json
from svcc.runtime.validation import RequestInvalid, RequestValidator

import svcc

LINEAR = 4.6  # a 4x larger input may cost at most this much more (4x plus fixed costs)
SVCC_ROOT = str(Path(svcc.__file__).resolve().parent.parent)


def literal_members(n: int) -> str:
    members = ", ".join(f'"m{i}"' for i in range(n))
    return f"from typing import Literal\n\ndef pick(x: Literal[{members}]) -> str:\n    return x\n"


def functions(n: int) -> str:
    return "".join(f"def f{i}(a: int, b: str = 'x') -> int:\n    return a\n\n" for i in range(n))


def typeddict_chain(n: int) -> str:
    out = ["from typing import TypedDict\n\nclass T0(TypedDict):\n    f0: int\n"]
    out += [f"class T{i}(T{i - 1}):\n    f{i}: int\n" for i in range(1, n)]
    out.append(f"def take(x: T{n - 1}) -> int:\n    return 1\n")
    return "\n".join(out)


def positional_defaults(n: int) -> str:
    params = ", ".join(f"p{i}: int = {i}" for i in range(n))
    return f"def take({params}, /) -> int:\n    return 1\n"


def alias_chain(n: int) -> str:
    """An unannotated parameter rebound, then aliased ``n`` times, the names sorted against
    the chain (the fixpoint over names moved one alias per round): no use is judged."""
    names = [f"n{n - i:06d}" for i in range(n)]
    bases = ["x", *names[:-1]]
    chain = "".join(f"    {name} = {base}\n" for name, base in zip(names, bases, strict=True))
    return f"def f(x):\n    x = len\n{chain}    return {names[-1]}.shape\n"


def module_lines(n: int) -> str:
    return "x = 1\n" * n + "def f(a: int) -> int:\n    return a\n"


def call_chain(n: int) -> str:
    """Functions each calling the next, the last reading its own source: the reads each
    capability reaches through calls are followed a bounded depth, each function's facts
    found once."""
    out = ["from pathlib import Path\n\n"]
    out += [f"def f{i}(a: int) -> int:\n    return f{i + 1}(a) + 1\n\n" for i in range(n)]
    out.append(f"def f{n}(a: int) -> int:\n    return len(Path(__file__).read_text())\n")
    return "".join(out)


def evaluated_chain(n: int) -> str:
    """Module-level names each computed from the one before (all folded by the evaluator)."""
    chain = "".join(f"x{i} = x{i - 1} + 1\n" for i in range(1, n))
    return f"x0 = 1\n{chain}def f(a: int) -> int:\n    return a\n"


def table_loop(n: int) -> str:
    """A module-level loop filling a table, evaluated iteration by iteration."""
    loop = f"T = {{}}\nfor i in range({n * 10}):\n    T[i] = i * i\n\n"
    return loop + "def f(a: int) -> int:\n    return a\n"


def doubling(n: int) -> str:
    """A string doubled ``n`` times: unknown once past the size bound, never a hang."""
    return "s = 'a'\n" + "s = s + s\n" * n + "def f(a: int) -> int:\n    return a\n"


def analyse(source: str) -> Analysis:
    analysis = analyze_source(source, path="big.py")
    assert analysis.error is None, analysis.diagnostics
    return analysis


def emit(analysis: Analysis, target: str) -> dict[str, bytes]:
    _, tree = build_bundle(analysis, get_target(target))
    return dict(tree)


def executed_lines(work: Callable[[], object]) -> int:
    """Line events in svcc's own Python code while ``work`` runs."""
    count = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def on_call(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename.startswith(SVCC_ROOT) else None

    previous = sys.gettrace()
    sys.settrace(on_call)
    try:
        work()
    finally:
        sys.settrace(previous)
    return count


@pytest.mark.parametrize(
    ("make", "size"),
    [
        (literal_members, 300),
        (functions, 40),
        (typeddict_chain, 60),
        (positional_defaults, 60),
        (module_lines, 400),
        (alias_chain, 100),
        (call_chain, 40),
        (evaluated_chain, 200),
        (table_loop, 100),
        (doubling, 40),
    ],
    ids=[
        "literal",
        "functions",
        "typeddict",
        "posonly",
        "module",
        "aliases",
        "call_chain",
        "evaluated",
        "table_loop",
        "doubling",
    ],
)
def test_work_grows_linearly(make: Callable[[int], str], size: int) -> None:
    def pipeline(n: int) -> Callable[[], object]:
        source = make(n)

        def run() -> object:
            analysis = analyse(source)
            return emit(analysis, "rest"), emit(analysis, "mcp")

        return run

    pipeline(size)()  # one-time costs (converter, templates, imports) are not the input's
    small = executed_lines(pipeline(size))
    large = executed_lines(pipeline(4 * size))
    assert large <= LINEAR * small, f"4x input cost {large / small:.2f}x the work"


def notebook(*cells: str) -> bytes:
    return json.dumps({
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
             "source": source, "id": f"c{i}"}
            for i, source in enumerate(cells)
        ],
    }).encode()  # fmt: skip


def rebound(n: int) -> bytes:
    """``x`` rebound ``n`` times from itself: each binding reads every earlier one."""
    return notebook("x = 0\n" + "x = x + 1\n" * n + "def f(a: int) -> int:\n    return a + x\n")


def change_chain(n: int) -> bytes:
    """``x0[0] = x1``, ``x1[0] = x2``, ...: each change kept makes the next one read."""
    bindings = "".join(f"x{i} = [0]\n" for i in range(n + 1))
    changes = "".join(f"x{i}[0] = x{i + 1}\n" for i in range(n))
    return notebook(f"{bindings}{changes}def f(a: int) -> int:\n    return a + len(x0)\n")


@pytest.mark.parametrize(
    ("make", "size"),
    [(rebound, 100), (change_chain, 150)],
    ids=["rebound", "change-chain"],
)
def test_notebook_slice_work_grows_linearly(make: Callable[[int], bytes], size: int) -> None:
    """The notebook slice (issue 27 item 7): each reader scheduled every earlier binder of
    its names again (``x = x + 1`` n times: n^2), and each round of the fixpoint rescanned
    every change for one more kept (a chain of n changes: n rounds). The slice's costs in C
    (set operations per line, per joined statement) are ``bench_thresholds.py``'s
    ``notebook`` cases: line counts do not see them."""

    def slice_of(n: int) -> Callable[[], object]:
        data = make(n)

        def run() -> object:
            analysis = analyze_source(data, path="big.ipynb", check_name=False)
            assert analysis.error is None, analysis.diagnostics
            return analysis

        return run

    slice_of(size)()
    small = executed_lines(slice_of(size))
    large = executed_lines(slice_of(4 * size))
    assert large <= LINEAR * small, f"4x input cost {large / small:.2f}x the work"


def test_typeddict_chain_ir_is_linear_and_exact() -> None:
    small, large = (analyse(typeddict_chain(n)) for n in (50, 200))
    assert small.ir_json is not None
    assert large.ir_json is not None
    assert len(large.ir_json) <= LINEAR * len(small.ir_json)
    ir = large.ir
    assert ir is not None
    # Each level stores only its own field and names its base ...
    assert all(len(decl.fields) == 1 for decl in ir.typed_dicts)
    assert ir.typed_dicts[5].bases == ("T4",)
    # ... and the published schema still lists every inherited field, in order.
    openapi = json.loads(emit(large, "rest")["openapi.json"])
    leaf = openapi["components"]["schemas"]["T199"]
    assert sorted(leaf["properties"]) == sorted(f"f{i}" for i in range(200))
    assert leaf["required"] == [f"f{i}" for i in range(200)]
    assert ir_from_json(large.ir_json) == ir


def test_typeddict_fields_follow_python_semantics() -> None:
    source = """
from typing import TypedDict, NotRequired
class A(TypedDict):
    a: int
    shared: int
class B(A, total=False):
    b: str
class C(A):
    c: bool
    shared: str
class D(B, C):
    d: NotRequired[int]
class A(TypedDict):
    replaced: int
class E(A):
    e: int
def take(x: D, y: E) -> int:
    return 1
"""
    ir = analyse(source).ir
    assert ir is not None
    index = module_index(ir)
    # Python: D.__annotations__ merges B's then C's (each already merged), then D's own.
    assert [(f.name, f.annotation, f.required) for f in index.typed_dict_fields("D")] == [
        ("a", "int", True),
        ("shared", "str", True),
        ("b", "str", False),
        ("c", "bool", True),
        ("d", "NotRequired[int]", False),
    ]
    # B and C were declared over the first A: redefining A does not change them.
    assert [f.name for f in index.typed_dict_fields("B")] == ["a", "shared", "b"]
    assert [f.name for f in index.typed_dict_fields("E")] == ["replaced", "e"]


def test_positional_only_bundle_is_linear() -> None:
    sizes = {}
    for n in (50, 200):
        files = emit(analyse(positional_defaults(n)), "rest")
        sizes[n] = sum(len(data) for data in files.values())
        request = json.loads(files["openapi.json"])["components"]["schemas"]["request.take"]
        assert request["dependentRequired"] == {f"p{i}": [f"p{i - 1}"] for i in range(1, n)}
    assert sizes[200] <= LINEAR * sizes[50]


def test_chained_gap_rule_agrees_with_json_schema() -> None:
    """Every subset of five positional-only parameters: the runtime validator and a JSON
    Schema reference implementation accept the same bodies, and a gap reports every
    missing earlier parameter once."""
    openapi = json.loads(emit(analyse(positional_defaults(5)), "rest")["openapi.json"])
    schema = openapi["components"]["schemas"]["request.take"]
    validator = RequestValidator(schema, {})
    reference = jsonschema.Draft202012Validator(schema)
    names = [f"p{i}" for i in range(5)]
    for r in range(len(names) + 1):
        for chosen in itertools.combinations(names, r):
            body = dict.fromkeys(chosen, 1)
            expected = reference.is_valid(body)
            assert expected == (list(chosen) == names[: len(chosen)])
            if expected:
                assert validator.validate_value(body) == body
                continue
            with pytest.raises(RequestInvalid) as caught:
                validator.validate_value(body)
            last = max(names.index(n) for n in chosen)
            gaps = [n for n in names[:last] if n not in chosen]
            assert [e["loc"][1] for e in caught.value.errors] == gaps
            assert {e["type"] for e in caught.value.errors} == {"positional_gap"}


def test_literal_members_deduplicated_by_json_type() -> None:
    source = (
        "from typing import Literal\n"
        "def f(x: Literal[1, True, 1, 'a', 'a', None, True, 0, False]) -> int:\n    return 1\n"
    )
    ir = analyse(source).ir
    assert ir is not None
    param_type = ir.capabilities[0].params[0].type
    assert param_type.values == (1, True, "a", None, 0, False)  # type: ignore[union-attr]


TRICKY = '''"""Module docstring."""
from __future__ import annotations
import os
from typing import TypedDict
x = (
1,
2)
s = """
def fake(a: int) -> int:
    return a
else:
"""
t = 1 + \\
2
if os.name:
    def cond(a: int) -> int:
        return a
else:
    pass
try:
    import json
except ImportError:
    pass
finally:
    pass
@staticmethod
def decorated(a: int) -> int:
    return a
class Base(TypedDict):
    a: int
class Child(Base):
    b: str
def take(c: Child, /, d: int = 1) -> int:
    return 1
def take(c: Child) -> int:
    return 2
'''


@pytest.mark.parametrize("slice_lines", [1, 2, 3, 7])
def test_sliced_parsing_gives_the_same_ir(
    monkeypatch: pytest.MonkeyPatch, slice_lines: int
) -> None:
    """Long modules are parsed a slice of lines at a time (``frontends/python/_chunks``):
    cuts inside strings, brackets, continuations and clauses must not change the IR."""
    import svcc.frontends.python as python_frontend

    source = TRICKY * 3 + "x = 1\n" * 5
    whole = analyse(source)
    monkeypatch.setattr(python_frontend, "SLICE_LINES", slice_lines)
    sliced = analyse(source)
    assert sliced.ir_json == whole.ir_json
    assert sliced.readiness == whole.readiness


@pytest.mark.parametrize("slice_lines", [1, 4])
def test_sliced_parsing_reports_the_same_syntax_error(
    monkeypatch: pytest.MonkeyPatch, slice_lines: int
) -> None:
    import svcc.frontends.python as python_frontend

    source = "x = 1\n" * 10 + "def broken(:\n    pass\n" + "y = 2\n" * 10
    whole = analyze_source(source, path="big.py")
    monkeypatch.setattr(python_frontend, "SLICE_LINES", slice_lines)
    sliced = analyze_source(source, path="big.py")
    assert whole.error is not None
    assert sliced.diagnostics == whole.diagnostics


@pytest.mark.parametrize(
    "duplicate",
    ["def twice(a, a):\n    pass\n", "f = lambda x, x: 0\n"],
    ids=["def", "lambda"],
)
@pytest.mark.parametrize("slice_lines", [1, 4])
def test_sliced_parsing_reports_the_same_duplicate_parameter(
    monkeypatch: pytest.MonkeyPatch, slice_lines: int, duplicate: str
) -> None:
    """The sliced path checks duplicate parameters during the lowerer's first pass (issue
    27: a pass of its own, reading the whole text per statement, was quadratic)."""
    import svcc.frontends.python as python_frontend

    source = "x = 1\n" * 10 + duplicate + "y = 2\n" * 10
    whole = analyze_source(source, path="big.py")
    monkeypatch.setattr(python_frontend, "SLICE_LINES", slice_lines)
    sliced = analyze_source(source, path="big.py")
    assert whole.error is not None
    assert sliced.diagnostics == whole.diagnostics


def test_sliced_parsing_reads_the_text_for_lambdas_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``SLICE_LINES`` the whole text was scanned for lambdas once per statement:
    quadratic (issue 27: 8,000 functions took 3.0 s, 6,000 took 0.66 s)."""
    import svcc.frontends.python as python_frontend

    scans: list[int] = []
    scan = python_frontend._lambda_may_repeat
    monkeypatch.setattr(
        python_frontend, "_lambda_may_repeat", lambda text: scans.append(1) or scan(text)
    )
    monkeypatch.setattr(python_frontend, "SLICE_LINES", 4)
    source = "g = lambda v: v\n" + "def f(a: int) -> int:\n    return a\n" * 50
    assert analyze_source(source, path="big.py").error is None
    assert len(scans) == 1


def test_sliced_parsing_parses_the_first_slice_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lowerer reads a sliced module twice (its first pass collects the names the
    second needs); every slice was parsed once per pass, so the step past ``SLICE_LINES``
    cost about 3x for 2x input (issue 27). The first slice's tree is kept for the second
    pass: a module of one slice and a bit is parsed little more than once."""
    import svcc.frontends.python as python_frontend

    parsed: list[str] = []
    real = python_frontend.parse

    def counting(text: str, version: tuple[int, int], filename: str) -> ast.Module:
        parsed.append(text)
        return real(text, version, filename)

    monkeypatch.setattr(python_frontend, "parse", counting)
    monkeypatch.setattr(python_frontend, "SLICE_LINES", 40)
    source = "def f(a: int) -> int:\n    return a\n" * 20 + "x = 1\n" * 40 + "y = 2\n" * 3
    whole = analyse(source)  # 83 lines: slices of 40, 40 and 3 lines
    assert len(parsed) == 5  # 3 slices, then the last 2 again
    assert parsed.count(parsed[0]) == 1
    parsed.clear()
    monkeypatch.setattr(python_frontend, "SLICE_LINES", 10**6)
    assert analyse(source).ir_json == whole.ir_json


GOLDEN_INPUTS = sorted((Path(__file__).parents[1] / "golden").glob("*/input.py"))


@pytest.mark.parametrize(
    "path", [*GOLDEN_INPUTS, None], ids=lambda p: p.parent.name if p else "tricky"
)
def test_streamed_ir_json_is_the_canonical_encoding(path: Path | None) -> None:
    """``ir_to_json`` encodes record by record; the bytes are exactly the canonical JSON of
    the whole unstructured IR."""
    from svcc.ir.canonical import canonical_json
    from svcc.ir.serde import ir_to_json, unstructure

    source = path.read_bytes() if path else (TRICKY * 2).encode()
    analysis = analyze_source(source, path=path.name if path else "tricky.py", check_name=False)
    if analysis.ir is None:  # a case whose input is refused (a syntax error): no IR to encode
        assert analysis.error is not None
        return
    assert ir_to_json(analysis.ir) == canonical_json(unstructure(analysis.ir))


def test_parallel_repository_reading_gives_the_same_modules(tmp_path: Path) -> None:
    """From ``PARALLEL_FROM`` files a tree is lowered in worker processes (what ``inspect
    DIR`` and ``compile DIR`` do, one per core), each IR sent back as its JSON and decoded
    on demand: the same IR bytes, diagnostics and module text as lowering them in one
    process."""
    from svcc.frontends.repository import PARALLEL_FROM, read_repository
    from svcc.ir.serde import ir_to_json

    for i in range(PARALLEL_FROM):
        body = functions(3) if i % 7 else "def broken(:\n"
        (tmp_path / f"m{i}.py").write_text(f"import m{(i + 1) % PARALLEL_FROM}\n{body}")
    one = read_repository(tmp_path, python_version=(3, 11), workers=1)
    parallel = read_repository(tmp_path, python_version=(3, 11), workers=2)
    assert list(parallel.modules) == list(one.modules)
    for name, module in one.modules.items():
        other = parallel.modules[name].result
        assert other.diagnostics == module.result.diagnostics
        assert other.module_text == module.result.module_text
        assert (other.ir and ir_to_json(other.ir)) == (module.ir and ir_to_json(module.ir))
    assert parallel.graph.to_json() == one.graph.to_json()


def test_repository_document_is_the_same_bytes_whatever_the_workers(tmp_path: Path) -> None:
    """``inspect DIR --format json`` from a tree lowered in worker processes (each IR encoded
    there) with the modules' documents rendered in those workers is byte for byte the
    canonical encoding of the document built in one process (issue 27 item 3)."""
    from svcc.compiler.driver import Analysis, analyze_repository
    from svcc.compiler.repository_document import encode_document
    from svcc.frontends.repository import PARALLEL_FROM
    from svcc.ir.canonical import canonical_json
    from svcc.ir.serde import ir_to_json

    for i in range(PARALLEL_FROM + 3):
        body = functions(2) if i % 7 else "def broken(:\n"
        runs = 'print("ü")\n' if i % 5 == 0 else ""  # code at import: inherited (SVC-R024)
        (tmp_path / f"m{i}.py").write_text(f"import m{(i + 1) % PARALLEL_FROM}\n{runs}{body}")
    one = analyze_repository(tmp_path, strict=False, workers=1, documents=True)
    parallel = analyze_repository(tmp_path, strict=False, workers=2, documents=True)
    assert not one.rendered  # lowered here: rendered by encode_document
    assert set(parallel.rendered) == set(parallel.reports)  # by the workers that judged them
    notebook = {"nb/x.ipynb": {"error": {"path": "nb/x.ipynb", "message": "é"}}}
    expected = one.document()
    expected["files"] |= notebook

    def ir_texts(analysis: Analysis) -> dict[str, bytes]:  # a worker's own encoding, if any
        assert analysis.repository is not None
        modules = analysis.repository.modules.items()
        return {m: s.result.ir_json or ir_to_json(s.ir) for m, s in modules if s.ir is not None}

    assert ir_texts(parallel) == ir_texts(one)
    assert encode_document(parallel, notebook) == canonical_json(expected)
    assert encode_document(one, notebook) == canonical_json(expected)
    assert b"SVC-R024" in canonical_json(expected)


def test_document_writer_writes_the_canonical_module_documents(tmp_path: Path) -> None:
    """``DocumentWriter`` (each diagnostic encoded once, the texts joined) writes exactly
    ``canonical_json`` of every module document: with ``allow`` recorded, front-end
    warnings, reasons shared by many capabilities and modules, a module that did not
    lower, text outside ASCII."""
    from svcc.compiler.driver import analyze_repository
    from svcc.compiler.repository_document import DocumentWriter
    from svcc.ir.canonical import ENCODER

    (tmp_path / "shared.py").write_text('import socket\nprint("é")\nopen("x")\n')
    for i in range(4):
        (tmp_path / f"m{i}.py").write_text(
            f"import shared\nx = 1\nx = 2\n{functions(3)}\n\ndef r{i}() -> str:\n"
            '    return open("données.txt").read()\n'
        )
    (tmp_path / "broken.py").write_text("def f(:\n")
    analysis = analyze_repository(tmp_path, strict=False, allow=frozenset({"env"}))
    assert analysis.repository is not None
    writer = DocumentWriter()
    for module, report in analysis.reports.items():
        source = analysis.repository.modules[module]
        text = writer.document(source.file.path, source.result.diagnostics, report)
        assert text == ENCODER.encode(analysis.module_document(module)).encode("utf-8")
    texts = ENCODER.encode(analysis.document())
    assert '"allow":["env"]' in texts
    assert "SVC-R024" in texts
    assert '"error"' in texts


def test_inspect_json_of_a_large_tree_decodes_no_report_in_the_parent(tmp_path: Path) -> None:
    """The workers judge and render; the parent holds each report pickled and decodes it
    only when asked (unpickling all was 0.4 s of the standard library's serial part), and
    when the workers render the documents (``documents=True``) no report is sent at all:
    reading one is an error, not a wrong answer."""
    import pytest
    from svcc.compiler.driver import analyze_repository
    from svcc.compiler.passes.repository_readiness import EncodedReports
    from svcc.compiler.repository_document import encode_document

    _judged_tree(tmp_path)
    one = analyze_repository(tmp_path, strict=False, workers=1)
    judged = analyze_repository(tmp_path, strict=False, workers=2)
    reports = judged.reports
    assert isinstance(reports, EncodedReports)
    assert not reports._decoded
    assert reports == one.reports  # every report, decoded on demand
    assert len(reports._decoded) == len(one.reports) - len(one.failed_modules())
    rendered = analyze_repository(tmp_path, strict=False, workers=2, documents=True)
    assert encode_document(rendered) == encode_document(one)
    assert rendered.failed_modules() == one.failed_modules() != []
    assert set(rendered.reports) == set(one.reports)
    judged_module = next(m for m, r in one.reports.items() if r is not None)
    with pytest.raises(RuntimeError, match="rendered in its worker"):
        rendered.reports[judged_module]


def test_a_pickled_module_graph_is_the_same_graph(tmp_path: Path) -> None:
    """The graph reaches the directory workers pickled as plain tuples
    (``ModuleGraph.__reduce__``): every resolution, edge (with its span and scope) and
    external import comes back equal, problems and namespace packages included."""
    import pickle

    from svcc.frontends.repository import read_repository

    _judged_tree(tmp_path)
    (tmp_path / "ns" / "inner").mkdir(parents=True)
    (tmp_path / "ns" / "inner" / "leaf.py").write_text(
        "import json\nfrom ... import nothing\nfrom ns import inner\n\n\n"
        "def f() -> int:\n    import pkg.leaf\n    return 1\n"
    )
    graph = read_repository(tmp_path, python_version=(3, 11)).graph
    copy = pickle.loads(pickle.dumps(graph, pickle.HIGHEST_PROTOCOL))
    for name in ("modules", "namespaces", "tops", "resolutions", "edges", "external"):
        assert getattr(copy, name) == getattr(graph, name), name
    assert copy.to_json() == graph.to_json()
    assert any(r.problem for r in copy.resolutions.values())
    assert any(e.scope == "f" for e in copy.edges["ns.inner.leaf"])


def _judged_tree(root: Path) -> None:
    """A tree past ``PARALLEL_FROM``: import chains and cycles, packages, code at import
    (inherited as SVC-R024 across the workers' shares), modules that do not lower."""
    from svcc.frontends.repository import PARALLEL_FROM

    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text('print("at import")\n')
    (root / "pkg" / "leaf.py").write_text(f"import m0\n{functions(2)}")
    for i in range(PARALLEL_FROM + 5):
        body = functions(2) if i % 7 else "def broken(:\n"
        runs = "open('x')\n" if i % 5 == 0 else ""
        local = "    import pkg.leaf\n" if i % 3 == 0 else ""
        (root / f"m{i}.py").write_text(
            f"import m{(i * 7 + 3) % PARALLEL_FROM}\n{runs}{body}"
            f"\n\ndef g{i}() -> int:\n{local}    return 1\n"
        )


def test_modules_are_judged_in_the_workers_that_lowered_them(tmp_path: Path) -> None:
    """Past ``PARALLEL_FROM`` files each worker judges the modules it lowered; the parent
    receives no IR (unpickling them cost it about as much as lowering them, issue 27):
    each module's IR stays encoded in the parent until something asks for it. The reports,
    the document and the IRs are those of one process, whatever the worker count."""
    from svcc.compiler.driver import analyze_repository
    from svcc.compiler.repository_document import encode_document
    from svcc.frontends.repository import EncodedResult

    _judged_tree(tmp_path)
    one = analyze_repository(tmp_path, strict=False, workers=1)
    assert one.repository is not None
    expected = encode_document(one)
    assert b"SVC-R024" in expected
    for count in (2, 3):
        rendered = analyze_repository(tmp_path, strict=False, workers=count, documents=True)
        assert len(rendered.rendered) == len(one.reports)
        assert encode_document(rendered) == expected
        parallel = analyze_repository(tmp_path, strict=False, workers=count)
        assert parallel.repository is not None
        assert parallel.reports == one.reports
        assert encode_document(parallel) == expected
        held = [m.result for m in parallel.repository.modules.values()]
        assert all(isinstance(r, EncodedResult) for r in held)
        assert not any(r._ir is not None for r in held if isinstance(r, EncodedResult))
        assert parallel.capabilities() == one.capabilities()  # each IR decoded on demand
        for name, module in one.repository.modules.items():
            assert parallel.repository.modules[name].ir == module.ir


def _held_count(held: Held, _: None) -> int:  # sent to the workers by name
    return len(held.results)


def test_lowering_workers_exit_after_their_last_call(tmp_path: Path) -> None:
    """``each(..., last=True)``: every worker answers, then exits by itself (exit code 0)
    without waiting for its pipe to close; the pool takes no more calls."""
    import time

    from svcc.frontends.repository import PARALLEL_FROM, LoweringPool, read_tree

    for i in range(PARALLEL_FROM):
        (tmp_path / f"m{i}.py").write_text(functions(1))
    with LoweringPool(read_tree(tmp_path), 2, (3, 11)) as pool:
        assert sum(pool.each(_held_count, None, last=True)) == PARALLEL_FROM
        deadline = time.monotonic() + 10
        while None in pool.exitcodes and time.monotonic() < deadline:
            time.sleep(0.01)
        assert pool.exitcodes == [0, 0]  # ended before the pipes closed
        with pytest.raises(RuntimeError, match="last call"):
            pool.each(_held_count, None)


def _collector_enabled(held: Held, _: None) -> bool:  # sent to the workers by name
    import gc

    return gc.isenabled()


def test_lowering_workers_never_resume_the_collector(tmp_path: Path) -> None:
    """A worker ends with ``os._exit``: the collector, paused while it lowers, stays paused
    for its life (resumed, its first collection walked everything the worker had made, 0.1
    s of the standard library's while the parent waited for the exit). The parent's own
    collector is left as it was."""
    import gc

    from svcc.frontends.repository import PARALLEL_FROM, LoweringPool, read_tree

    for i in range(PARALLEL_FROM):
        (tmp_path / f"m{i}.py").write_text(functions(1))
    assert gc.isenabled()
    with LoweringPool(read_tree(tmp_path), 2, (3, 11)) as pool:
        assert pool.each(_collector_enabled, None) == [False, False]
    assert gc.isenabled()


def test_lowering_workers_end_when_their_pipe_closes(tmp_path: Path) -> None:
    """A worker sees its pipe close only if no process holds the parent's end: each closes
    the copies it inherited, so every worker ends by itself (exit code 0), not killed."""
    from svcc.frontends.repository import PARALLEL_FROM, LoweringPool, read_tree

    for i in range(PARALLEL_FROM):
        (tmp_path / f"m{i}.py").write_text(functions(1))
    with LoweringPool(read_tree(tmp_path), 3, (3, 11)) as pool:
        assert len(pool.encoded) == PARALLEL_FROM
    assert pool.exitcodes == [0, 0, 0]


def _held_modules(held: Held, _: None) -> list[str]:
    return sorted(held.results)


def test_lowering_workers_take_each_file_once(tmp_path: Path) -> None:
    """The workers take files from one shared counter: every module lowered by exactly one
    worker, and (files of very different sizes, largest first) no worker left without any."""
    from svcc.frontends.repository import PARALLEL_FROM, LoweringPool, read_tree

    for i in range(PARALLEL_FROM * 2):
        (tmp_path / f"m{i}.py").write_text(functions(1 + (i * 37) % 50))
    with LoweringPool(read_tree(tmp_path), 3, (3, 11)) as pool:
        held = pool.each(_held_modules, None)
    assert all(held)
    assert sorted(m for part in held for m in part) == sorted(f"m{i}" for i in range(128))


def _children(pid: int) -> set[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return set()
    return {int(c) for c in text.split()}


def _running(pid: int) -> bool:
    """Alive and not a zombie (one killed but not yet reaped by PID 1 counts as ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_directory_workers_end_with_a_killed_svcc(tmp_path: Path) -> None:
    """``svcc inspect DIR`` lowers a large tree in forked workers: a SIGKILL of ``svcc``
    mid-analysis left them alive under PID 1, waiting on their queue forever (issue 27
    item 7); each worker now asks the kernel to end it with its parent."""
    import os
    import signal
    import subprocess
    import time

    from helpers import SVCC
    from svcc.frontends.repository import PARALLEL_FROM

    for i in range(PARALLEL_FROM * 2):
        (tmp_path / f"m{i}.py").write_text(functions(300))
    workers: set[int] = set()
    proc = subprocess.Popen(
        [SVCC, "inspect", str(tmp_path), "--format", "json"], stdout=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while len(workers := _children(proc.pid)) < 2 and proc.poll() is None:
            assert time.monotonic() < deadline, "no workers started"
            time.sleep(0.02)
        assert proc.poll() is None, "the analysis finished before the workers were seen"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 10
        while alive := {w for w in workers if _running(w)}:
            assert time.monotonic() < deadline, f"workers {alive} outlived svcc"
            time.sleep(0.02)
    finally:
        proc.kill()
        for worker in [w for w in workers if _running(w)]:
            os.kill(worker, signal.SIGKILL)


def test_a_killed_worker_is_one_line_not_an_empty_success(tmp_path: Path) -> None:
    """A worker gone (the out-of-memory killer) when the parent asks it something: the
    parent's write raised ``BrokenPipeError``, which the CLI reads as a closed stdout, so
    ``inspect``/``compile`` exited 0 having written nothing. Now one error naming how it
    ended, and the other workers are stopped."""
    import os
    import signal

    from svcc.contracts.errors import SvccError
    from svcc.frontends.repository import PARALLEL_FROM, LoweringPool, read_tree

    for i in range(PARALLEL_FROM):
        (tmp_path / f"m{i}.py").write_text(functions(1))
    with LoweringPool(read_tree(tmp_path), 2, (3, 11)) as pool:
        victim = pool._processes[1]
        assert victim.pid is not None
        os.kill(victim.pid, signal.SIGKILL)
        victim.join()
        with pytest.raises(SvccError, match=r"killed by signal 9: out of memory\?"):
            pool.each(_held_modules, None)
    assert pool.exitcodes == [0, -9]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_during_a_directory_says_interrupted_once(tmp_path: Path) -> None:
    """Ctrl-C reaches svcc and its workers (one process group): each worker printed
    multiprocessing's traceback of its ``KeyboardInterrupt``; now only svcc's line."""
    import os
    import signal
    import subprocess
    import time

    from helpers import SVCC
    from svcc.frontends.repository import PARALLEL_FROM

    for i in range(PARALLEL_FROM * 2):
        (tmp_path / f"m{i}.py").write_text(functions(300))
    proc = subprocess.Popen(
        [SVCC, "inspect", str(tmp_path), "--format", "json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while len(_children(proc.pid)) < 2 and proc.poll() is None:
            assert time.monotonic() < deadline, "no workers started"
            time.sleep(0.02)
        assert proc.poll() is None, "the analysis finished before the workers were seen"
        os.killpg(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert stderr.decode() == "svcc: interrupted\n"
    assert proc.returncode == 130


def test_ctrl_c_while_a_worker_is_forked_is_not_lost() -> None:
    """The parent kept SIGINT ignored while it forked each worker: a Ctrl-C then was lost
    and the analysis ran to its end (the test above failed under load, when its signal
    came during the second fork). Blocked instead, it is delivered when the fork is done."""
    import os
    import signal

    from svcc.frontends.repository._workers import _ctrl_c_left_to_the_parent

    def fork_with_a_ctrl_c() -> None:
        with _ctrl_c_left_to_the_parent():
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        fork_with_a_ctrl_c()


def test_declared_data_files_work_grows_linearly(tmp_path: Path) -> None:
    """``[tool.svcc] data-files`` naming each file of a folder: every pattern listed the
    folder again (4,000 files declared one by one took 17 s; issue 27 item 7)."""
    from svcc.frontends.repository._data import collect

    def declared(n: int) -> Callable[[], object]:
        root = tmp_path / str(n)
        (root / "data").mkdir(parents=True)
        for i in range(n):
            (root / "data" / f"d{i}.json").write_text("{}")
        patterns = [f"data/d{i}.json" for i in range(n)]

        def run() -> object:
            return collect(
                root,
                patterns,
                roots=["."],
                package=None,
                modules=frozenset(),
                counted=(0, 0),
                limits=(10 * n, 1 << 30),
            )

        return run

    small = executed_lines(declared(100))
    large = executed_lines(declared(400))
    assert large <= LINEAR * small, f"4x input cost {large / small:.2f}x the work"


@pytest.mark.parametrize("risky", ["none", "last"])
def test_repository_readiness_of_an_import_chain_grows_linearly(tmp_path: Path, risky: str) -> None:
    """A chain of modules, each importing the next: every module's inherited risks came from
    a walk of its whole import closure (N² for N modules: 4.3 s at 2,000; issue 27 item 7).
    Counted over readiness alone (reading and lowering the tree is linear and would hide
    it), with no risky module and with the last one risky (then every module says it)."""
    from svcc.compiler.passes.repository_readiness import RepositoryReadiness
    from svcc.frontends.repository import read_repository

    def chain(n: int) -> Callable[[], object]:
        root = tmp_path / str(n)
        (root / "pkg").mkdir(parents=True)
        (root / "pkg" / "__init__.py").write_text("")
        for i in range(n):
            head = f"from pkg import m{i + 1}\n" if i + 1 < n else ""
            if i + 1 == n and risky == "last":
                head = "import socket\n\nsocket.create_connection(('127.0.0.1', 1))\n"
            body = f"\n\ndef f{i}(a: int) -> int:\n    return a\n"
            (root / "pkg" / f"m{i}.py").write_text(head + body)
        repo = read_repository(root, python_version=(3, 11))

        def run() -> object:
            return RepositoryReadiness(repo, frozenset(), ()).run()

        return run

    small = executed_lines(chain(100))
    large = executed_lines(chain(400))
    assert large <= LINEAR * small, f"4x input cost {large / small:.2f}x the work"


def nested_typeddicts(n: int) -> str:
    """``n`` TypedDicts, each holding the one before it, and ``n`` functions, the i-th taking
    and returning the i-th TypedDict (so reaching ``i + 1`` definitions)."""
    out = ["from typing import TypedDict\n\nclass T0(TypedDict):\n    v: int\n"]
    out += [f"class T{i}(TypedDict):\n    inner: T{i - 1}\n" for i in range(1, n)]
    out += [f"def f{i}(x: T{i}) -> T{i}:\n    return x\n" for i in range(n)]
    return "\n".join(out)


def test_rest_document_work_grows_linearly_in_shared_definitions() -> None:
    """The OpenAPI document defines each TypedDict once in ``components/schemas``, shared by
    every operation; it collected each capability's own closure of definitions first (n
    capabilities over a chain of n nested TypedDicts: n^2/2 visits; 0.69 s at 800; issue 27
    item 7). MCP's ``$defs`` are per tool (self-contained), so its output itself is n^2."""
    emit(analyse(nested_typeddicts(24)), "rest")  # one-time costs (templates, imports)
    small_analysis = analyse(nested_typeddicts(24))
    large_analysis = analyse(nested_typeddicts(96))  # 100 levels are the most served
    small = executed_lines(lambda: emit(small_analysis, "rest"))
    large = executed_lines(lambda: emit(large_analysis, "rest"))
    assert large <= LINEAR * small, f"4x input cost {large / small:.2f}x the work"


def dataclass_params(n: int) -> str:
    """``n`` dataclasses, each the parameter of one function."""
    out = ["from dataclasses import dataclass\n"]
    for i in range(n):
        out.append(f"@dataclass\nclass D{i}:\n    a: int\n")
        out.append(f"def f{i}(x: D{i}) -> int:\n    return 1\n")
    return "\n".join(out)


def test_model_lookups_work_grows_linearly() -> None:
    """Readiness and the schemas look each function's models up by name: a scan of the
    module's models per lookup (n functions over n dataclasses: n^2, 9.7 s of the 6,000's
    analysis; issue 27 item 7)."""

    def pipeline(n: int) -> Callable[[], object]:
        source = dataclass_params(n)
        return lambda: emit(analyse(source), "rest")

    pipeline(200)()  # one-time costs (templates, imports)
    small = executed_lines(pipeline(200))
    large = executed_lines(pipeline(800))
    assert large <= LINEAR * small, f"4x input cost {large / small:.2f}x the work"


def test_readiness_work_grows_linearly_over_shared_typeddicts() -> None:
    """Readiness walks each function's types for leaves a reason names: it walked every
    TypedDict each function reaches (n functions over a chain of n nested TypedDicts: n^2,
    3.2 s of the 800's analysis; issue 27 item 7); a TypedDict that reaches no such leaf is
    now known once per module and not entered."""
    analyse(nested_typeddicts(30))  # one-time costs
    small = executed_lines(lambda: analyse(nested_typeddicts(30)))
    large = executed_lines(lambda: analyse(nested_typeddicts(120)))
    assert large <= LINEAR * small, f"4x input cost {large / small:.2f}x the work"


NOTED_CHAINS = """\
from dataclasses import dataclass
from typing import TypedDict

@dataclass
class D:
    a: int

class T0(TypedDict):
    bad: set[int]

class T1(TypedDict):
    inner: T0

class T2(T1):
    other: int

class C0(TypedDict):
    v: int

class C1(TypedDict):
    inner: C0

class M1(TypedDict):
    inner: C1
    d: D

def f(x: T2) -> int:
    return 1

def g(x: C1) -> int:
    return 1

def h(x: M1) -> int:
    return 1
"""


@pytest.mark.parametrize("governed", [False, True])
def test_readiness_still_enters_the_typeddicts_that_reach_a_reason(governed: bool) -> None:
    """Not entering the TypedDicts that reach nothing to report keeps every reason: one
    under an inherited field, a model (SVC-R054 when governed) beside a clean TypedDict."""
    report = analyze_source(NOTED_CHAINS, path="m.py", governed=governed).readiness
    assert report is not None
    reasons = {a.name: [(r.code, r.message) for r in a.reasons] for a in report.assessments}
    unsupported = "parameter 'x' field T2.inner field T0.bad: 'set[int]': sets are not JSON"
    assert [code for code, _ in reasons["f"]] == ["SVC-R011"]
    assert reasons["f"][0][1].startswith(unsupported)
    assert reasons["g"] == []
    assert [code for code, _ in reasons["h"]] == (["SVC-R054"] if governed else [])


def test_a_snapshots_declared_files_are_found_in_linear_work() -> None:
    """A git snapshot's export tested every listed path against every data-files pattern
    (``compiler.git_fetch``: n patterns over 2n entries, 18.6 s at the last step measured;
    issue 27 item 7): a pattern without a wildcard is now looked up."""
    from svcc.frontends.repository import declared_by

    def export(n: int) -> Callable[[], object]:
        patterns = [f"data/d{i}.json" for i in range(n)] + ["extra/**/*.csv"]
        paths = [f"data/d{i}.json" for i in range(2 * n)]

        def run() -> object:
            declared = declared_by(patterns)
            return [p for p in paths if declared(p)]

        return run

    small = executed_lines(export(100))
    large = executed_lines(export(400))
    assert large <= LINEAR * small, f"4x input cost {large / small:.2f}x the work"


def test_a_table_loop_calling_a_sibling_module_grows_linearly(tmp_path: Path) -> None:
    """A module-level loop filling a table through a function of another module of the
    repository (evaluated by the sibling reader, call by call): linear in the loop's
    length, up to the evaluator's bound (then unknown, never a hang)."""
    from svcc.compiler.driver import analyze_repository

    def tree(steps: int) -> Callable[[], object]:
        root = tmp_path / f"t{steps}" / "pkg"
        root.mkdir(parents=True)
        (root / "__init__.py").write_text("")
        (root / "helpers.py").write_text("def square(x):\n    return x * x\n")
        (root / "table.py").write_text(
            "from .helpers import square\n\nT = {}\n"
            f"for i in range({steps}):\n    T[i] = square(i)\n\n\n"
            "def look(a: int) -> int:\n    return T.get(a, 0)\n"
        )
        return lambda: analyze_repository(root.parent, python_version="3.11", strict=False)

    done = tree(9_999)()  # the table known (the bound is 10,000): the function is served
    assert {a.name: a.klass for a in done.reports["pkg.table"].assessments} == {  # type: ignore[attr-defined, union-attr]
        "look": "eligible"
    }
    small = executed_lines(tree(2_500))
    large = executed_lines(tree(10_000))
    assert large <= LINEAR * small, f"4x the loop cost {large / small:.2f}x the work"
