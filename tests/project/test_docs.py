"""The manual (``docs/``, ``mkdocs.yml``): built strictly, its generated pages equal to what
they are generated from, and what it says about the runtime equal to what the runtime reads."""

import argparse
import importlib.util
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from doc_blocks import RUNNABLE, Block, blocks, console_commands
from helpers import BIN, ROOT, run_svcc
from servers import free_port

DOCS = ROOT / "docs"


def _mkdocs() -> str | None:
    """The ``mkdocs`` of this venv (the ``docs`` extra), else one on PATH."""
    local = BIN / "mkdocs"
    return str(local) if local.exists() else shutil.which("mkdocs")


def test_the_manual_builds_strictly(tmp_path: Path) -> None:
    """No broken link or anchor, no page left out of the nav (mkdocs.yml's validation)."""
    mkdocs = _mkdocs()
    if mkdocs is None or importlib.util.find_spec("material") is None:
        pytest.skip("mkdocs and mkdocs-material are not installed: pip install -e '.[docs]'")
    proc = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": str(BIN), "NO_MKDOCS_2_WARNING": "1", "HOME": str(tmp_path)},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


def _generated_cli_reference() -> str:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_cli_reference.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout


def test_the_cli_reference_is_the_parser() -> None:
    """A flag added or a help text changed without the page: regenerate it."""
    assert (DOCS / "reference" / "cli.md").read_text() == _generated_cli_reference(), (
        "regenerate: python tools/gen_cli_reference.py > docs/reference/cli.md"
    )


# Read by the runtime but internal to it (the server tells its own helper its pid).
INTERNAL_VARIABLES = {"SVC_PREVALIDATE_PARENT"}


def test_every_server_variable_is_documented() -> None:
    read = set()
    for path in (ROOT / "runtime").rglob("*.py"):
        read |= set(re.findall(r"[\"']((?:SVC|PROMETHEUS)_[A-Z_]+)[\"']", path.read_text()))
    pages = ("reference/environment.md", "serving.md", "oauth.md")
    text = "".join((DOCS / page).read_text() for page in pages)
    documented = set(re.findall(r"^\| `([A-Z_]+)`", text, flags=re.M))
    assert read - INTERNAL_VARIABLES <= documented


# -- every command block of the manual runs ---------------------------------------------------
PAGES = [*sorted(DOCS.rglob("*.md")), ROOT / "README.md"]
# What a page's commands may read from the checkout, linked into its working folder.
CHECKOUT = ("examples", "docs")
# Ports the pages use (8000-8099), each given a free port when a page runs.
_PORT = re.compile(r"\b80\d\d\b")


def _all_blocks() -> list[Block]:
    return [block for page in PAGES for block in blocks(page)]


def test_every_block_says_what_it_is() -> None:
    """A block without a language could hide a command no test runs."""
    unnamed = [b.where for b in _all_blocks() if not b.language]
    assert unnamed == []


def test_blocks_not_run_say_why() -> None:
    """The exceptions, each with its reason (``pytest -rA`` prints them)."""
    marked = [b for b in _all_blocks() if b.not_run is not None]
    assert all(len(b.not_run or "") > 10 for b in marked), [b.where for b in marked]
    for block in marked:
        print(f"not run: {block.page.relative_to(ROOT)}:{block.line}: {block.not_run}")


def _runnable(page: Path) -> list[Block]:
    return [b for b in blocks(page) if b.language in RUNNABLE and b.not_run is None]


@pytest.fixture(scope="module")
def serve_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One environment cache for every page's ``svcc serve``: each requirement set (the REST
    server's, the MCP server's) is installed once for the whole manual."""
    return tmp_path_factory.mktemp("docs-serve-cache")


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    """End what the page started in the background (servers), by its process group."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            continue
        time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.parametrize(
    "page", [p for p in PAGES if _runnable(p)], ids=lambda p: str(p.relative_to(ROOT))
)
def test_the_commands_of_the_page_run_as_written(
    page: Path, tmp_path: Path, serve_cache: Path
) -> None:
    """The page's ``sh`` blocks run in order as one script (``set -e``: a command that fails
    fails the test), in a fresh folder holding the examples, with this venv's ``svcc`` first
    on PATH; then each ``console`` command prints exactly what the page shows."""
    for name in CHECKOUT:
        (tmp_path / name).symlink_to(ROOT / name)
    for block in blocks(page):
        if block.title is not None and block.not_run is None:
            (tmp_path / block.title).write_text(block.text)
    runnable = _runnable(page)
    in_background = [
        line for b in runnable for line in b.text.splitlines() if re.search(r"\bserve\b.*&", line)
    ]
    assert all("--port" in line for line in in_background), "name the port: it is replaced"
    ports = {p: str(free_port()) for b in runnable for p in _PORT.findall(b.text)}
    script = "\n".join(
        f"# {b.where}\n" + _PORT.sub(lambda m: ports[m[0]], b.text)
        for b in runnable
        if b.language == "sh"
    )
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "SVCC_CACHE_DIR": str(serve_cache),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    log = tmp_path / "output.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=tmp_path,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            status = proc.wait(timeout=300)
        except subprocess.TimeoutExpired:
            status = None
        finally:
            _stop_group(proc)
    assert status == 0, f"{page.name}: exit {status}\n{log.read_text()[-4000:]}"
    for block in runnable:
        if block.language != "console":
            continue
        for command, expected in console_commands(block):
            shown = subprocess.run(
                ["bash", "-c", command],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            assert (shown.returncode, shown.stdout) == (0, expected), block.where


# -- the changelog -----------------------------------------------------------------------------
FRAGMENT = re.compile(r"\d+-[a-z0-9-]+\.(added|changed|fixed|security)\.md")


def test_news_fragments_are_named_for_their_issue() -> None:
    """``changelog.d/<issue>-<slug>.<type>.md``: the entry names the issue (``#43``)."""
    names = [p.name for p in (ROOT / "changelog.d").iterdir() if p.name != ".gitkeep"]
    assert [n for n in names if not FRAGMENT.fullmatch(n)] == []


def test_the_changelog_is_by_release() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    marker = "<!-- towncrier release notes start -->\n"
    assert marker in text
    releases = re.findall(r"^## (\S+)", text.split(marker, 1)[1], flags=re.M)
    assert releases[-1] == "0.1.0"  # the first release, last on the page
    first = text.split("## 0.1.0", 1)[1]
    sections = re.findall(r"^### (\w+)", first, flags=re.M)
    assert sections == ["Added", "Changed", "Fixed", "Security"]


def test_towncrier_folds_the_fragments_in(tmp_path: Path) -> None:
    """What the next release's entry will be, written by towncrier as CONTRIBUTING says."""
    towncrier = BIN / "towncrier"
    if not towncrier.exists():
        pytest.skip("towncrier is not installed: pip install -e '.[docs]'")
    proc = subprocess.run(
        [str(towncrier), "build", "--draft", "--version", "9.9.9"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    entry = proc.stdout.split("## 9.9.9", 1)[1]
    for path in (ROOT / "changelog.d").glob("*.md"):
        issue, kind = path.name.split("-", 1)[0], path.name.split(".")[-2]
        assert f"### {kind.capitalize()}" in entry
        assert f"(#{issue})" in entry


# -- svcc --help as a reference ------------------------------------------------------------------
def _leaf_commands() -> list[str]:
    from svcc.cli.help import COMMANDS

    return [path for path, (_, examples, _) in COMMANDS.items() if examples]


def test_every_subcommand_has_a_description_an_example_and_exit_codes() -> None:
    """Each command of the parser is in the help table, and each leaf shows how to use it."""
    from svcc.cli.help import COMMANDS
    from svcc.cli.parser import build_parser

    def paths(parser: argparse.ArgumentParser, prefix: str = "") -> list[str]:
        found = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    path = f"{prefix} {name}".strip()
                    found += [path, *paths(child, path)]
        return found

    assert sorted(paths(build_parser())) == sorted(COMMANDS)
    for path in _leaf_commands():
        words = path.split()
        parser = build_parser()
        for word in words:
            parser = next(
                a.choices[word]
                for a in parser._actions
                if isinstance(a, argparse._SubParsersAction)
            )
        text = parser.format_help()
        assert "example:" in text, path
        assert "exit codes:" in text, path


@pytest.mark.parametrize("path", _leaf_commands())
def test_the_help_examples_parse(path: str) -> None:
    """Every example in ``--help`` is a command line the parser accepts as written."""
    from svcc.cli.help import COMMANDS
    from svcc.cli.parser import build_parser

    for example in COMMANDS[path][1]:
        argv = shlex.split(example.split(" > ", 1)[0])[1:]
        try:
            build_parser().parse_args(argv)
        except SystemExit as exc:  # argparse's refusal
            pytest.fail(f"{example}: refused ({exc})")


def test_every_benchmark_is_on_the_performance_page() -> None:
    """Each script of ``bench/`` is named where the manual says how to reproduce figures, and
    every script the manual names exists."""
    page = (DOCS / "explanation" / "performance.md").read_text()
    scripts = {p.name for p in (ROOT / "bench").glob("bench_*.py")}
    assert {s for s in scripts if s not in page} == set()
    named = {m for p in PAGES for m in re.findall(r"bench/(bench_\w+\.py)", p.read_text())}
    assert named <= scripts


def test_fix_examples_name_codes_and_sections_that_exist() -> None:
    """A code's "before and after" link points at a section of the how-to (the strict build
    checks the anchor too, when mkdocs is installed)."""
    from svcc.contracts.diagnostics.codes import FIX_EXAMPLES, REGISTRY

    page = (DOCS / "how-to" / "make-eligible.md").read_text()
    assert set(FIX_EXAMPLES) <= set(REGISTRY)
    assert all(f"{{ #{anchor} }}" in page for anchor in FIX_EXAMPLES.values())
    # and the section's "Codes:" line names each code linked to it (a range `A`..`B` counts)
    for code, anchor in FIX_EXAMPLES.items():
        section = page.split(f"{{ #{anchor} }}", 1)[1].split("\n## ", 1)[0]
        named = re.search(r"^Codes: (.*)$", section, flags=re.M)
        assert named is not None, anchor
        listed = set(re.findall(r"SVC-R\d{3}", named.group(1)))
        for first, last in re.findall(r"`SVC-R(\d{3})`\.\.`SVC-R(\d{3})`", named.group(1)):
            listed |= {f"SVC-R{n:03d}" for n in range(int(first), int(last) + 1)}
        assert code in listed, (code, anchor)


def test_contributing_links_resolve() -> None:
    text = (ROOT / "CONTRIBUTING.md").read_text()
    links = re.findall(r"\]\(([^)#\s]+)", text)
    assert links
    assert [link for link in links if not (ROOT / link).exists()] == []


def test_explain_prints_a_codes_page() -> None:
    from svcc.contracts.diagnostics.codes import REGISTRY, markdown_section

    shown = run_svcc("explain", "svc-r007")
    assert shown.returncode == 0
    assert shown.stdout == markdown_section(REGISTRY["SVC-R007"], anchor=False)
    assert shown.stdout.startswith("## SVC-R007: module-level statement with import-time effects")
    assert "Before and after: [Make a function eligible]" in shown.stdout
    listing = run_svcc("explain").stdout.splitlines()
    assert len(listing) == len(REGISTRY)
    unknown = run_svcc("explain", "SVC-X999")
    assert (unknown.returncode, unknown.stdout) == (2, "")
    assert unknown.stderr.count("\n") == 1
