"""The repository front end, readiness over the module graph, and repository bundles served."""

import json
import os
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import governed_traces, run_svcc
from mcp_client import McpBundle
from servers import serving
from svcc.compiler.driver import analyze_repository
from svcc.compiler.options import CompileOptions
from svcc.compiler.pipeline import compile_path
from svcc.contracts.errors import IneligibleError, InputError, UsageError
from svcc.frontends.repository import TreeLimits, read_repository
from syrupy.extensions.json import JSONSnapshotExtension

REPOS = Path(__file__).resolve().parents[1] / "fixtures" / "repos"
VERSION = (3, 12)
GOLDEN_CASES = ["src_layout", "flat", "namespace", "import_io", "cycle"]


def classes(root: Path, **kwargs: Any) -> dict[str, str]:
    analysis = analyze_repository(root, **kwargs)
    return {f"{ir.module}.{cap.name}": a.klass for ir, cap, a in analysis.capabilities()}


# -- the tree ---------------------------------------------------------------------------------


def test_src_layout_roots_modules_and_graph() -> None:
    repo = read_repository(REPOS / "src_layout", python_version=VERSION)
    assert repo.tree.roots == ("src",)
    assert sorted(repo.modules) == ["shop", "shop.pricing", "shop.remote", "shop.tax", "shop.util"]
    assert repo.modules["shop"].file.is_package
    assert repo.modules["shop.pricing"].file.path == "src/shop/pricing.py"
    graph = repo.graph.to_json()
    assert graph["edges"]["shop.pricing"] == ["shop", "shop.tax", "shop.util"]  # type: ignore[index]
    assert graph["external"] == {"shop.remote": ["requests"], "shop.util": ["attrs"]}
    assert repo.tree.config.dependencies == ("attrs>=23",)


def test_flat_layout_is_the_tree_root() -> None:
    repo = read_repository(REPOS / "flat", python_version=VERSION)
    assert repo.tree.roots == (".",)
    assert repo.graph.to_json()["edges"] == {"calc": ["helpers"], "helpers": []}


def test_a_package_folder_is_that_package(tmp_path: Path) -> None:
    """``svcc inspect site-packages/pkg``: the folder holds ``__init__.py``, so it is the
    package ``pkg`` (its relative imports work), not a folder of top-level modules whose
    ``from .tax import rate`` would be a bundle that cannot start."""
    package = REPOS / "src_layout" / "src" / "shop"
    repo = read_repository(package, python_version=VERSION)
    assert repo.tree.package == "shop"
    assert sorted(repo.modules) == ["shop", "shop.pricing", "shop.remote", "shop.tax", "shop.util"]
    assert repo.modules["shop.pricing"].file.path == "pricing.py"
    # the project's pyproject.toml is outside the folder: its dependency is declared here
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("attrs>=23\n")
    text = run_svcc(
        "inspect", str(package), "--format", "text", "--requirements", str(requirements)
    )
    assert f"{package}: package shop" in text.stdout
    assert "shop.pricing.total  eligible" in text.stdout
    out = tmp_path / "bundle"
    proc = run_svcc(
        "compile",
        str(package),
        "--target",
        "rest",
        "--output-dir",
        str(out),
        "--requirements",
        str(requirements),
        "--select",
        "shop.pricing.total",
    )
    assert proc.returncode == 0, proc.stderr
    assert (out / "source" / "shop" / "pricing.py").is_file()
    with serving(out) as server, server.client() as client:
        response = client.post("/capabilities/shop.pricing.total", json={"amount": 5})
        assert response.json() == 6.0
    # a folder whose name is not a module name stays a folder of modules; so does one
    # given a layout by its pyproject.toml
    odd = tmp_path / "not-a-name"
    shutil.copytree(package, odd)
    assert read_repository(odd, python_version=VERSION).tree.package is None


def test_namespace_packages_have_no_marker() -> None:
    repo = read_repository(REPOS / "namespace", python_version=VERSION)
    assert sorted(repo.modules) == ["acme.tools.greet", "acme.tools.strings"]
    assert repo.tree.namespaces == frozenset({"acme", "acme.tools"})
    assert repo.graph.to_json()["edges"]["acme.tools.greet"] == ["acme.tools.strings"]  # type: ignore[index]


def test_configured_source_roots_hidden_and_build_folders(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.svcc]\nsource-roots = ["lib", "."]\n')
    for rel in ["lib/core.py", "app2.py", ".venv/x.py", "build/y.py", "pkg.egg-info/z.py"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("def f() -> int:\n    return 1\n")
    (tmp_path / "my-script.py").write_text("")
    repo = read_repository(tmp_path, python_version=VERSION)
    assert repo.tree.roots == ("lib", ".")
    assert sorted(repo.modules) == ["app2", "core"]  # lib/ is a root, not package lib
    assert [d.code for d in repo.tree.diagnostics] == ["SVC-F011"]


@pytest.mark.parametrize("root", ["../outside", "/etc", "a/../../b"])
def test_source_root_escaping_the_tree_is_refused(tmp_path: Path, root: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f'[tool.svcc]\nsource-roots = ["{root}"]\n')
    with pytest.raises(InputError, match=r"SVC-F008 .*escapes the tree"):
        analyze_repository(tmp_path)


def test_symlink_and_fifo_are_refused(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("x = 1\n")
    (tmp_path / "link.py").symlink_to(tmp_path / "ok.py")
    os.mkfifo(tmp_path / "pipe.py")
    with pytest.raises(InputError) as info:
        analyze_repository(tmp_path)
    message = str(info.value)
    assert "SVC-F008 link.py: symlinks are refused" in message
    assert "(and 1 more)" in message
    repo = read_repository(tmp_path, python_version=VERSION)
    assert {d.message.split(":")[0] for d in repo.tree.errors} == {"link.py", "pipe.py"}


def test_duplicate_module_names_are_refused() -> None:
    with pytest.raises(InputError, match=r"SVC-F009 pkg/mod.py and pkg/mod/__init__.py both"):
        analyze_repository(REPOS / "collision")


def test_oversize_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "small.py").write_text("x = 1\n")
    (tmp_path / "big.py").write_bytes(b"#" * (4 * 1024 * 1024 + 1))
    with pytest.raises(InputError, match=r"SVC-F010 big.py: 4194305 bytes is over"):
        analyze_repository(tmp_path)


def test_file_count_and_total_limits(tmp_path: Path) -> None:
    pkg = tmp_path / "many"
    pkg.mkdir()
    for i in range(4097):
        (pkg / f"m{i}.py").write_bytes(b"")
    with pytest.raises(InputError, match="SVC-F010 more than 4096 declared files"):
        analyze_repository(tmp_path)
    shutil.rmtree(pkg)
    for i in range(3):
        (tmp_path / f"m{i}.py").write_bytes(b"#" * 100)
    with pytest.raises(InputError, match="exceed 250 bytes in all"):
        analyze_repository(tmp_path, limits=TreeLimits(max_total_bytes=250))


# -- readiness over the graph -----------------------------------------------------------------


def test_import_time_io_makes_importers_conditional_naming_file_and_line() -> None:
    analysis = analyze_repository(REPOS / "import_io")
    found = {f"{ir.module}.{c.name}": a for ir, c, a in analysis.capabilities()}
    assert found["shop.clean.square"].klass == "eligible"
    line = found["shop.report.line"]
    assert line.klass == "conditional"
    (reason,) = line.reasons
    assert reason.code == "SVC-R024"
    assert "shop/store.py:4:" in reason.message
    assert reason.span is not None
    assert reason.span.line == 1  # the import that leads there


def test_parent_package_effects_are_inherited(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("import os\n\nHOME = os.getcwd()\n")
    (tmp_path / "pkg" / "m.py").write_text("def f() -> int:\n    return 1\n")
    (tmp_path / "pkg" / "n.py").write_text("def g() -> int:\n    from . import m\n    return 1\n")
    result = classes(tmp_path)
    assert result == {"pkg.m.f": "conditional", "pkg.n.g": "conditional"}


def test_function_scope_imports_count_for_that_function_only(tmp_path: Path) -> None:
    (tmp_path / "risky.py").write_text("print('hi')\n")
    (tmp_path / "user.py").write_text(
        "def a() -> int:\n    import risky\n    return 1\n\n\ndef b() -> int:\n    return 2\n"
    )
    result = classes(tmp_path)
    assert result["user.a"] == "conditional"
    assert result["user.b"] == "eligible"


def test_cycles_terminate_and_stay_eligible() -> None:
    assert classes(REPOS / "cycle") == {"pkg.a.ping": "eligible", "pkg.b.pong": "eligible"}


def test_external_imports_against_declared_dependencies(tmp_path: Path) -> None:
    base = classes(REPOS / "src_layout")
    assert base["shop.remote.fetch"] == "conditional"  # requests is not declared
    assert base["shop.util.clamp"] == "eligible"  # attrs is, in [project] dependencies
    req = tmp_path / "req.txt"
    req.write_text("requests>=2\n")
    from svcc.contracts.requirements import load_requirements

    declared = classes(REPOS / "src_layout", requirements=load_requirements(req))
    assert declared["shop.remote.fetch"] == "eligible"
    assert declared["shop.util.clamp"] == "conditional"  # --requirements replaces pyproject


def test_unresolved_local_imports_are_reasons(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text(
        "from .missing import x\n\n\ndef f() -> int:\n    return 1\n"
    )
    (tmp_path / "pkg" / "b.py").write_text(
        "from ..other import x\n\n\ndef h() -> int:\n    return 1\n"
    )
    (tmp_path / "top.py").write_text("from . import sibling\n\n\ndef g() -> int:\n    return 1\n")
    # ``sibling`` exists, but a top-level module has no package to be relative to: Python
    # refuses the import ("no known parent package"), so the graph must too
    (tmp_path / "sibling.py").write_text("x = 1\n")
    (tmp_path / "rel.py").write_text("from .sibling import x\n\n\ndef k() -> int:\n    return x\n")
    analysis = analyze_repository(tmp_path)
    reasons = {
        f"{ir.module}.{c.name}": [r.message for r in a.reasons]
        for ir, c, a in analysis.capabilities()
    }
    assert "no module 'pkg.missing'" in reasons["pkg.a.f"][0]
    assert "beyond the top-level package" in reasons["pkg.b.h"][0]
    assert "in a top-level module (no parent package)" in reasons["top.g"][0]
    assert "in a top-level module (no parent package)" in reasons["rel.k"][0]
    assert not any(a.can_generate_interface for _, _, a in analysis.capabilities())


@pytest.mark.parametrize("case", sorted(p.name for p in REPOS.iterdir()))
def test_inspect_file_and_inspect_dir_agree(case: str, tmp_path: Path) -> None:
    """Every function gets the same verdict from ``inspect FILE`` as from ``inspect DIR``
    (given the same declared dependencies): ``shop/report.py`` was eligible alone and
    conditional in its repository, as importing it runs ``shop/store.py``'s file I/O."""
    root = REPOS / case
    proc = run_svcc("inspect", str(root), "--format", "json")
    document = json.loads(proc.stdout)
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("".join(f"{d}\n" for d in document["dependencies"]))
    compared = 0
    for rel, module_doc in document["files"].items():
        if "assessments" not in module_doc:
            continue
        args = ["inspect", str(root / rel), "--format", "json", "--requirements", str(requirements)]
        folder = rel.rpartition("/")[0]
        for data in document.get("data_files", ()):  # [tool.svcc] data-files, as --data gives
            if data.startswith(f"{folder}/" if folder else ""):
                args += ["--data", str(root / data)]
        alone = json.loads(run_svcc(*args).stdout)
        if alone["module"] != module_doc["module"]:
            # a namespace package has no marker a single file could be named by
            assert root.name == "namespace"
            alone = json.loads(run_svcc(*args, "--module-name", module_doc["module"]).stdout)
        verdicts = {a["capability_id"]: a["class"] for a in alone["assessments"]}
        assert verdicts == {a["capability_id"]: a["class"] for a in module_doc["assessments"]}
        compared += len(verdicts)
    assert compared > 0 or case == "collision"


@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_repository_readiness_golden(case: str, snapshot: Any) -> None:
    proc = run_svcc("inspect", str(REPOS / case), "--format", "json", "--python-version", "3.12")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == snapshot.use_extension(JSONSnapshotExtension)


def test_inspect_text_uses_dotted_ids() -> None:
    proc = run_svcc("inspect", str(REPOS / "import_io"), "--format", "text")
    assert proc.returncode == 0, proc.stderr
    assert "shop.report.line  conditional" in proc.stdout
    assert "SVC-R024" in proc.stdout


def tree_of(root: Path) -> dict[Path, bytes]:
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}


# -- bundles ----------------------------------------------------------------------------------


def test_selection_names_ids_and_refusals(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"unknown selection 'shop\.pricing\.totl'"):
        compile_path(
            REPOS / "src_layout",
            target="rest",
            output_dir=tmp_path / "a",
            options=CompileOptions(select="shop.pricing.totl"),
        )
    with pytest.raises(IneligibleError, match=r"shop.remote.fetch is conditional \(SVC-R008"):
        compile_path(REPOS / "src_layout", target="rest", output_dir=tmp_path / "b")
    with pytest.raises(UsageError, match="cannot build a repository bundle"):
        compile_path(REPOS / "flat", target="ir", output_dir=tmp_path / "c")
    assert not (tmp_path / "a").exists()
    assert not (tmp_path / "b").exists()


def test_bundle_holds_the_import_closure_and_is_deterministic(tmp_path: Path) -> None:
    for out in ("one", "two"):
        compile_path(
            REPOS / "src_layout",
            target="rest",
            output_dir=tmp_path / out,
            options=CompileOptions(select="shop.pricing.total"),
        )
    one, two = (tree_of(tmp_path / name) for name in ("one", "two"))
    assert one == two
    sources = sorted(str(p) for p in one if str(p).startswith("source/") and p.suffix == ".py")
    assert sources == [
        "source/shop/__init__.py",
        "source/shop/pricing.py",
        "source/shop/tax.py",
        "source/shop/util.py",
    ]  # not shop/remote.py: outside the closure
    manifest = json.loads((tmp_path / "one" / "svc-rest.json").read_bytes())
    assert manifest["bundle_kind"] == "repository"
    assert manifest["capabilities"] == [
        {"id": "python:shop.pricing:total", "name": "shop.pricing.total"}
    ]
    assert manifest["execution"] == {"mode": "direct"}
    assert (tmp_path / "one" / "application-requirements.txt").read_text() == "attrs>=23\n"
    assert set(manifest["files"]) == {str(p) for p in one} - {"svc-rest.json"}


@pytest.fixture(scope="module")
def shop_rest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("shop") / "rest"
    compile_path(
        REPOS / "src_layout",
        target="rest",
        output_dir=out,
        options=CompileOptions(
            select="shop.pricing.total,python:shop.pricing:discount,shop.tax.rate"
        ),
    )
    return out


def test_direct_repository_bundle_carries_no_governed_code(shop_rest: Path) -> None:
    assert governed_traces(tree_of_names(shop_rest), "app.py") == []


def tree_of_names(root: Path) -> dict[str, bytes]:
    return {p.as_posix(): data for p, data in tree_of(root).items()}


def test_rest_repository_bundle_served(shop_rest: Path) -> None:
    with serving(shop_rest) as server, server.client() as client:
        response = client.post("/capabilities/shop.pricing.total", json={"amount": 10, "qty": 2})
        assert response.status_code == 200, server.log_text()
        assert response.json() == 24.0
        assert client.post("/capabilities/shop.tax.rate", json={"region": "us"}).json() == 0.07
        assert (
            client.post(
                "/capabilities/shop.pricing.discount", json={"amount": 100, "percent": 50}
            ).json()
            == 60.0
        )
        bad = client.post("/capabilities/shop.pricing.total", json={"amount": "x"})
        assert bad.status_code == 422
        served = client.get("/openapi.json").content
        assert served == (shop_rest / "openapi.json").read_bytes()


def test_undeclared_source_file_is_never_imported(tmp_path: Path) -> None:
    out = tmp_path / "b"
    shutil.copytree(REPOS / "src_layout", tmp_path / "repo")
    (tmp_path / "repo" / "src" / "shop" / "pricing.py").write_text(
        "def total(amount: float) -> float:\n"
        "    import importlib\n"
        "    return importlib.import_module('shop.extra').VALUE\n"
    )
    compile_path(
        tmp_path / "repo",
        target="rest",
        output_dir=out,
        options=CompileOptions(select="shop.pricing.total"),
    )
    (out / "source" / "shop" / "extra.py").write_text("VALUE = 1.0\n")  # dropped in afterwards
    with serving(out) as server, server.client() as client:
        response = client.post("/capabilities/shop.pricing.total", json={"amount": 1})
        assert response.status_code == 500
        assert "not declared in this repository bundle" in server.log_text()


def test_changed_source_file_stops_startup(shop_rest: Path, tmp_path: Path) -> None:
    from servers import failed_start

    copy = tmp_path / "copy"
    shutil.copytree(shop_rest, copy)
    (copy / "source" / "shop" / "tax.py").write_text("RATES = {}\n")
    code, output = failed_start(copy)
    assert code != 0
    assert "source/shop/tax.py does not match its digest" in output


@pytest.mark.parametrize("damage", ["no-section", "not-an-object", "no-modules"])
def test_damaged_repository_section_stops_startup_in_one_line(
    shop_rest: Path, tmp_path: Path, damage: str
) -> None:
    from servers import failed_start

    copy = tmp_path / "copy"
    shutil.copytree(shop_rest, copy)
    manifest = json.loads((copy / "svc-rest.json").read_text())
    if damage == "no-section":
        del manifest["repository"]
    elif damage == "not-an-object":
        manifest["repository"] = ["shop"]
    else:
        del manifest["repository"]["modules"]
    (copy / "svc-rest.json").write_text(json.dumps(manifest))
    code, output = failed_start(copy)
    assert code == 4, output  # startup refused
    assert "Traceback" not in output
    assert "repository section" in output


def test_mcp_repository_bundle_served(tmp_path: Path) -> None:
    out = tmp_path / "mcp"
    proc = run_svcc(
        "compile", str(REPOS / "namespace"), "--target", "mcp", "--output-dir", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    assert not (out / "source" / "acme" / "__init__.py").exists()  # namespace stays one
    bundle = McpBundle(out)
    try:
        names = sorted(t.name for t in bundle.list_tools().tools)
        assert names == ["acme.tools.greet.hello", "acme.tools.strings.shout"]
        result = bundle.call("acme.tools.greet.hello", {"name": "ada"})
        assert not result.is_error, result
        assert result.structured_content == {"result": "HELLO ADA!!"}
    finally:
        bundle.close()


def test_flat_and_cycle_bundles_served(tmp_path: Path) -> None:
    compile_path(REPOS / "flat", target="rest", output_dir=tmp_path / "flat")
    compile_path(REPOS / "cycle", target="rest", output_dir=tmp_path / "cycle")
    with serving(tmp_path / "flat") as server, server.client() as client:
        assert client.post("/capabilities/calc.quadruple", json={"x": 3}).json() == 12
    with serving(tmp_path / "cycle") as server, server.client() as client:
        assert client.post("/capabilities/pkg.a.ping", json={"n": 5}).json() == 5
        assert httpx.get(server.url + "/health").json() == {"status": "ok"}


def test_governed_repository_bundles(tmp_path: Path) -> None:
    """``--execution-policy`` on a repository: each call in a fresh worker that imports
    through the same closed set; REST under uvicorn and MCP through the official client."""
    policy = tmp_path / "policy.json"
    policy.write_text("{}")
    rest, mcp = tmp_path / "rest", tmp_path / "mcp"
    for target, out in (("rest", rest), ("mcp", mcp)):
        result = compile_path(
            REPOS / "src_layout",
            target=target,
            output_dir=out,
            options=CompileOptions(
                select="shop.pricing.total,shop.tax.rate", execution_policy=policy
            ),
        )
        assert result.execution == {"mode": "governed", "backend": "local-process"}
    plan = json.loads((rest / "execution" / "plans" / "shop.pricing.total.json").read_bytes())
    assert (plan["module"], plan["function"]) == ("shop.pricing", "total")
    direct = tmp_path / "direct"
    compile_path(
        REPOS / "src_layout",
        target="rest",
        output_dir=direct,
        options=CompileOptions(select="shop.pricing.total,shop.tax.rate"),
    )
    assert (rest / "openapi.json").read_bytes() == (direct / "openapi.json").read_bytes()
    assert governed_traces(tree_of_names(direct), "app.py") == []
    assert (rest / "svc_runtime" / "rest_governed.py").is_file()
    assert (mcp / "svc_runtime" / "mcp_governed.py").is_file()
    with serving(rest) as server, server.client() as client:
        response = client.post("/capabilities/shop.pricing.total", json={"amount": 10})
        assert response.status_code == 200, server.log_text()
        assert response.json() == 12.0
        assert client.post("/capabilities/shop.tax.rate", json={"region": "eu"}).json() == 0.2
    bundle = McpBundle(mcp)
    try:
        result = bundle.call("shop.pricing.total", {"amount": 1, "qty": 3})
        assert not result.is_error, result
        assert result.structured_content == {"result": 3.6}
    finally:
        bundle.close()


def test_container_policy_options_on_a_directory_are_one_line_errors(tmp_path: Path) -> None:
    """A v2 policy (a container per call) or its image options on a directory: one line,
    exit 2, nothing written (the v2 policy was "unknown error (... not in literal ...)";
    ``--runtime-image`` was silently ignored)."""
    policy = tmp_path / "v2.json"
    policy.write_text('{"schema": "svc.execution/v2"}')
    out = tmp_path / "out"
    cases = (
        ["--execution-policy", str(policy)],
        ["--runtime-image", "sha256:" + "a" * 64, "--runtime-platform", "linux/amd64"],
    )
    for extra in cases:
        proc = run_svcc(
            "compile", str(REPOS / "flat"), "--target", "rest", "--output-dir", str(out), *extra
        )
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1
        assert "single-file bundles" in proc.stderr
        assert not out.exists()


def test_schema_name_collisions_are_refused_at_generation(tmp_path: Path) -> None:
    for name, field in (("a", "x: int"), ("b", "y: str")):
        (tmp_path / f"{name}.py").write_text(
            "from typing import TypedDict\n\n\n"
            f"class Item(TypedDict):\n    {field}\n\n\n"
            f"def {name}_size(item: Item) -> int:\n    return 1\n"
        )
    with pytest.raises(IneligibleError, match="schema 'Item' is defined differently"):
        compile_path(tmp_path, target="rest", output_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()
    compile_path(
        tmp_path,
        target="rest",
        output_dir=tmp_path / "one",
        options=CompileOptions(select="a.a_size"),
    )


def test_bundle_bytes_do_not_depend_on_hash_seed(tmp_path: Path) -> None:
    trees = []
    for seed in ("1", "2"):
        out = tmp_path / seed
        proc = run_svcc(
            "compile",
            str(REPOS / "namespace"),
            "--target",
            "rest",
            "--output-dir",
            str(out),
            env={"PYTHONHASHSEED": seed},
        )
        assert proc.returncode == 0, proc.stderr
        trees.append({str(p): d for p, d in tree_of(out).items()})
    assert trees[0] == trees[1]


def test_modules_shadowing_the_standard_library_are_refused_in_bundles(tmp_path: Path) -> None:
    (tmp_path / "logging.py").write_text("def log(text: str) -> str:\n    return text\n")
    (tmp_path / "app2.py").write_text(
        "import logging\n\n\ndef run(text: str) -> str:\n    return logging.log(text)\n"
    )
    (tmp_path / "alone.py").write_text("def one() -> int:\n    return 1\n")
    with pytest.raises(IneligibleError, match="SVC-F015 module name 'logging' clashes with the st"):
        compile_path(
            tmp_path,
            target="rest",
            output_dir=tmp_path / "out",
            options=CompileOptions(select="app2.run"),
        )
    compile_path(
        tmp_path,
        target="rest",
        output_dir=tmp_path / "ok",
        options=CompileOptions(select="alone.one"),
    )
    manifest = json.loads((tmp_path / "ok" / "svc-rest.json").read_bytes())
    assert manifest["repository"]["packages"] == ["alone", "app2"]  # never hijacks `logging`


def test_compile_dir_refuses_a_module_that_does_not_parse(tmp_path: Path) -> None:
    """``compile DIR`` with no selection serves every eligible function: a module that does
    not parse dropped out of the bundle unsaid (exit 0) where ``inspect DIR`` exits 2. It is
    refused in one line naming the file; a selection elsewhere still compiles."""
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "good.py").write_text("def f(a: int) -> int:\n    return a\n")
    (root / "bad.py").write_text("def g(:\n")
    out = tmp_path / "all"
    proc = run_svcc("compile", str(root), "--target", "rest", "--output-dir", str(out))
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert f"{root}/bad.py:1:" in proc.stderr
    assert "--select" in proc.stderr
    assert not out.exists()
    picked = tmp_path / "picked"
    args = ("--target", "rest", "--output-dir", str(picked), "--select", "good.f")
    proc = run_svcc("compile", str(root), *args)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["capabilities"] == ["python:good:f"]
