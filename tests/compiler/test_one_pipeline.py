"""One program: ``svcc generate``, ``svcc compile FILE|DIR`` and the analysis service give the
same verdicts and the same bundles for the same code, on every fixture.

- Verdicts: every golden case (``tests/golden``) judged as a file (``svcc inspect FILE``), as
  the analysis service judges an upload, and as a one-module repository (``svcc inspect
  DIR``): the same class and the same reason codes for every function, or no verdict on all
  paths. A notebook is not a module of a repository (the repository front end reads ``.py``
  files), so it is compared between the file and the service only.
- Bundles: every golden case whose functions are all eligible, generated (``svcc generate
  rest``), compiled (``svcc compile --target rest``) and built by the analysis service for
  its container: the same bytes. Every repository fixture (``tests/fixtures/repos``) through
  ``svcc generate INTERFACE DIR`` and ``svcc compile DIR --target INTERFACE``: the same bytes,
  or the same refusal.
"""

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT, case_input, case_options, cases, run_svcc
from svcc.compiler.bundles import build_bundle
from svcc.compiler.driver import analyze, analyze_file, analyze_repository, select
from svcc.compiler.options import AnalyzeOptions, CompileOptions
from svcc.compiler.pipeline import compile_path
from svcc.compiler.registry import get_target
from svcc.contracts.errors import IneligibleError, SvccError, UsageError
from svcc.service.analysis import Unanalysable, analyse_upload, bundle_files

CASES = cases()
REPOS = sorted(p for p in (ROOT / "tests" / "fixtures" / "repos").iterdir() if p.is_dir())

Verdicts = dict[str, tuple[str, tuple[str, ...]]] | None


def _verdicts(assessments: Any) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {a.name: (a.klass, tuple(sorted({r.code for r in a.reasons}))) for a in assessments}


def _module(case: str) -> str:
    return f"m_{case}"  # what the service names an upload ``m_<case>.py``, and a repository


def file_verdicts(case: str) -> Verdicts:
    options = case_options(case)
    analysis = analyze_file(
        case_input(case),
        module_name=_module(case),
        python_version=options.get("python_version", "3.11"),
    )
    return None if analysis.readiness is None else _verdicts(analysis.readiness.assessments)


def service_verdicts(case: str) -> Verdicts:
    source = case_input(case)
    try:
        answer = analyse_upload(
            source.read_bytes(),
            _module(case) + source.suffix,
            python_version=case_options(case).get("python_version", "3.11"),
            encoding=None,
            only=None,
            ignore=[],
        )
    except Unanalysable:
        return None
    return {
        a["name"]: (a["class"], tuple(sorted({r["code"] for r in a["reasons"]})))
        for a in json.loads(answer)["readiness"]["assessments"]
    }


def repository_verdicts(case: str, tmp: Path) -> Verdicts:
    shutil.copy(case_input(case), tmp / f"{_module(case)}.py")
    analysis = analyze_repository(
        tmp, python_version=case_options(case).get("python_version", "3.11"), strict=False
    )
    report = analysis.reports.get(_module(case))
    return None if report is None else _verdicts(report.assessments)


@pytest.mark.parametrize("case", CASES)
def test_one_verdict_on_every_path(case: str, tmp_path: Path) -> None:
    verdicts = file_verdicts(case)
    assert service_verdicts(case) == verdicts
    if case_input(case).suffix == ".py":
        assert repository_verdicts(case, tmp_path) == verdicts


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _eligible(case: str) -> bool:
    verdicts = file_verdicts(case)
    return bool(verdicts) and all(klass == "eligible" for klass, _ in verdicts.values())


@pytest.mark.parametrize("case", [c for c in CASES if _eligible(c)])
def test_one_bundle_on_every_path(case: str, tmp_path: Path) -> None:
    source = tmp_path / f"{_module(case)}{case_input(case).suffix}"
    shutil.copy(case_input(case), source)
    compile_path(source, target="rest", output_dir=tmp_path / "compiled")
    compile_path(
        source,
        target="rest",
        output_dir=tmp_path / "generated",
        options=CompileOptions(servable_only=True),
    )
    compiled = _tree(tmp_path / "compiled")
    assert compiled
    assert _tree(tmp_path / "generated") == compiled
    assert bundle_files(source, source.name) == compiled


@pytest.mark.parametrize("interface", ["rest", "mcp"])
@pytest.mark.parametrize("repo", REPOS, ids=lambda p: p.name)
def test_generate_and_compile_agree_on_a_directory(
    repo: Path, interface: str, tmp_path: Path
) -> None:
    generated = run_svcc(
        "generate", interface, str(repo), "--output-dir", str(tmp_path / "g"), "--format", "json"
    )
    compiled = run_svcc(
        "compile", str(repo), "--target", interface, "--output-dir", str(tmp_path / "c"),
        "--format", "json",
    )  # fmt: skip
    assert generated.returncode == compiled.returncode
    assert generated.stderr == compiled.stderr
    if compiled.returncode == 0:
        assert json.loads(compiled.stdout)["bundle_kind"] == "repository"
        assert _tree(tmp_path / "g") == _tree(tmp_path / "c")
    else:
        assert compiled.stderr.count("\n") == 1  # one clear line
        assert not (tmp_path / "g").exists()
        assert not (tmp_path / "c").exists()


def test_generate_refuses_a_directory_for_a_target_without_a_bundle(tmp_path: Path) -> None:
    done = run_svcc("generate", "ir", str(REPOS[0]), "--output-dir", str(tmp_path / "o"))
    assert done.returncode == 2
    assert "target 'ir' writes no service bundle" in done.stderr
    with pytest.raises(SvccError, match="cannot build a repository bundle"):
        compile_path(REPOS[0], target="ir", output_dir=tmp_path / "p")


def test_a_closure_module_carries_what_its_classes_import(tmp_path: Path) -> None:
    """A local module lowered once for readiness still has every import statement that can
    run read for the bundle: one in a class body runs at import, one in a method when
    called; both modules are carried (the IR records module-level imports only)."""
    (tmp_path / "main.py").write_text("import sub\n\n\ndef f(x: int) -> int:\n    return x\n")
    (tmp_path / "sub.py").write_text(
        "class C:\n    import helper\n\n    def m(self) -> int:\n        import other\n"
        "        return other.VALUE\n"
    )
    (tmp_path / "helper.py").write_text("VALUE = 1\n")
    (tmp_path / "other.py").write_text("VALUE = 2\n")
    analysis = analyze_file(tmp_path / "main.py")
    assert [p for p, _ in analysis.local_files] == [
        "source/helper.py",
        "source/other.py",
        "source/sub.py",
    ]


def test_a_file_and_its_directory_carry_the_same_modules(tmp_path: Path) -> None:
    """What can run is carried, on both paths: a method's import and a private helper's
    (when called). A directory bundle used to hold only what the selected module and
    capabilities import at module level and in their own bodies."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "main.py").write_text(
        "import sub\n\n\ndef _load() -> int:\n    import lazy\n\n    return lazy.VALUE\n\n\n"
        "def f(x: int) -> int:\n    return x + _load() + sub.C().m()\n"
    )
    (tree / "sub.py").write_text(
        "import helper\n\n\nclass C:\n    def m(self) -> int:\n        import other\n\n"
        "        return other.VALUE + helper.VALUE\n"
    )
    for name in ("helper", "other", "lazy", "unused"):
        (tree / f"{name}.py").write_text("VALUE = 1\n")
    carried = ["helper.py", "lazy.py", "main.py", "other.py", "sub.py"]
    for path, out in ((tree / "main.py", "file"), (tree, "dir")):
        result = compile_path(path, target="rest", output_dir=tmp_path / out)
        files = [p.removeprefix("source/") for p in result.files if p.startswith("source/")]
        assert sorted(files) == carried


def test_each_module_of_a_file_closure_is_parsed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One import reader: the closure follows the IR's imports (class bodies and methods
    included), so no local module is parsed a second time to find what it imports."""
    import ast
    from collections import Counter

    (tmp_path / "main.py").write_text("import sub\n\n\ndef f(x: int) -> int:\n    return x\n")
    (tmp_path / "sub.py").write_text(
        "import helper\n\n\nclass C:\n    def m(self) -> int:\n        import other\n\n"
        "        return other.VALUE\n"
    )
    (tmp_path / "helper.py").write_text("VALUE = 1\n")
    (tmp_path / "other.py").write_text("VALUE = 2\n")
    parsed: Counter[str] = Counter()
    real = ast.parse

    def counting(source: Any, filename: Any = "<unknown>", *args: Any, **kwargs: Any) -> Any:
        parsed[str(filename)] += 1
        return real(source, filename, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    analysis = analyze_file(tmp_path / "main.py")
    assert [p for p, _ in analysis.local_files] == [
        "source/helper.py",
        "source/other.py",
        "source/sub.py",
    ]
    assert parsed == {"main.py": 1, "sub.py": 1, "helper.py": 1, "other.py": 1}


def test_one_analysis_for_source_file_and_directory(tmp_path: Path) -> None:
    """One entry, one type, one selection, one assembler: source in memory, the file on
    disk and its folder as a repository answer the same calls, with the same verdicts."""
    text = "import os\n\n\ndef f(x: int) -> int:\n    return x\n\n\ndef g(*a: int) -> int:\n"
    (tmp_path / "mod.py").write_text(text + "    return 0\n")
    memory = analyze("mod.py", AnalyzeOptions(source=(tmp_path / "mod.py").read_bytes()))
    on_disk = analyze(tmp_path / "mod.py")
    tree = analyze(tmp_path)
    assert (memory.bundle_kind, on_disk.bundle_kind, tree.bundle_kind) == (
        "file",
        "file",
        "repository",
    )
    verdicts = [
        {f"{ir.module}.{cap.name}": a.klass for ir, cap, a in each.capabilities()}
        for each in (memory, on_disk, tree)
    ]
    assert (
        verdicts[0] == verdicts[1] == verdicts[2] == {"mod.f": "eligible", "mod.g": "unsupported"}
    )
    for each in (memory, on_disk, tree):
        assert [cap.id for _, cap in select(each, "mod.f")] == ["python:mod:f"]
        with pytest.raises(IneligibleError, match=r"g is unsupported"):
            select(each, ["python:mod:g"])
        selected, bundle = build_bundle(each, get_target("rest"), select="mod.f")
        assert [cap.id for _, cap in selected] == ["python:mod:f"]
        assert "openapi.json" in bundle.paths()


def test_file_options_are_refused_for_a_directory(tmp_path: Path) -> None:
    """``--module-name`` and ``--data`` describe one file: a directory names its modules
    and declares its data files itself, so each is one clear refusal, never ignored."""
    (tmp_path / "mod.py").write_text("def f(x: int) -> int:\n    return x\n")
    with pytest.raises(UsageError, match="cannot apply to a directory"):
        analyze(tmp_path, AnalyzeOptions(module_name="x"))
    with pytest.raises(UsageError, match=r"\[tool.svcc\] data-files"):
        compile_path(
            tmp_path,
            target="rest",
            output_dir=tmp_path / "o",
            options=CompileOptions(data=["x.json"]),
        )
    assert not (tmp_path / "o").exists()


def _codes(report: Any) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {
        a.capability_id: (a.klass, tuple(sorted({r.code for r in a.reasons})))
        for a in report.assessments
    }


@pytest.mark.parametrize("repo", REPOS, ids=lambda p: p.name)
def test_inspect_file_and_inspect_dir_give_the_same_codes(repo: Path) -> None:
    """A file is a one-module repository for readiness: each module of a repository
    fixture judged alone (``svcc inspect FILE``, its local import closure as its
    repository) and inside its directory (``svcc inspect DIR``) gets the same class and
    the same reason codes for every function (the dependencies the directory declares are
    given to the file, as ``--requirements`` would)."""
    tree = analyze(repo, AnalyzeOptions(strict=False))
    assert tree.repository is not None
    compared = 0
    for module, report in sorted(tree.reports.items()):
        if report is None:
            continue
        path = tree.repository.modules[module].file.path
        folder = path.rpartition("/")[0]
        data = [
            str(repo / f.path)
            for f in tree.repository.tree.data
            if f.path.startswith(f"{folder}/" if folder else "")
        ]
        alone = analyze(repo / path, AnalyzeOptions(requirements=tree.requirements, data=data))
        if alone.module != module:  # a namespace package has no marker to name a file by
            alone = analyze(
                repo / path,
                AnalyzeOptions(module_name=module, requirements=tree.requirements, data=data),
            )
        assert alone.readiness is not None
        assert _codes(alone.readiness) == _codes(report), path
        compared += len(report.assessments)
    assert compared > 0 or repo.name == "collision"


def test_a_files_local_import_problems_are_said_as_a_directorys(tmp_path: Path) -> None:
    """The problems of the modules a file imports (an undeclared import, a syntax error, a
    relative import above the top package, a missing module) get the same code and the same
    words whether the file is inspected alone or inside its folder: one readiness walk.
    (They were SVC-R021 with a file's own wording, SVC-R024 in a directory.)"""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "needs.py").write_text("import numpy\n")
    (tmp_path / "pkg" / "broken.py").write_text("def (:\n")
    (tmp_path / "pkg" / "above.py").write_text("from ... import nothing\n")
    (tmp_path / "pkg" / "main.py").write_text(
        "from . import needs, above\nfrom .gone import x\nimport pkg.missing\n\n\n"
        "def f(v: int) -> int:\n    from . import broken\n\n    return v\n"
    )
    alone = analyze(tmp_path / "pkg" / "main.py")
    tree = analyze(tmp_path, AnalyzeOptions(strict=False))
    assert alone.readiness is not None
    in_tree = tree.reports["pkg.main"]
    assert in_tree is not None

    def reasons(report: Any) -> list[tuple[str, int | None, str]]:
        # an undeclared import is said as each input declares one (--requirements FILE, or
        # pyproject.toml's dependencies); the rest of every message is the same
        return [
            (r.code, r.span.line if r.span else None, r.message.split(" is not standard")[0])
            for a in report.assessments
            for r in a.reasons
        ]

    found = reasons(alone.readiness)
    assert found == reasons(in_tree)
    assert {code for code, _, _ in found} == {"SVC-R008", "SVC-R021", "SVC-R024"}
