"""What a person at a terminal sees: text by default on a terminal, JSON through a pipe,
help on every option, every unknown selection named, reasons with their source lines."""

import argparse
import json
import os
import pty
import subprocess
from pathlib import Path

import pytest
from helpers import GOLDEN, ROOT, SVCC, run_svcc
from svcc.cli.parser import build_parser
from svcc.compiler.registry import load_target_class

EXAMPLE = ROOT / "examples" / "shapes.py"
NOTEBOOK = GOLDEN / "notebook_cells" / "input.ipynb"


def on_a_terminal(*args: str) -> tuple[int, str]:
    """Run ``svcc`` with stdout and stderr on a pseudo-terminal; ``(exit code, output)``."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [SVCC, *args], stdout=follower, stderr=follower, env={**os.environ, "NO_COLOR": "1"}
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the terminal's other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return proc.wait(timeout=60), b"".join(chunks).decode().replace("\r\n", "\n")


def test_text_on_a_terminal_json_through_a_pipe(tmp_path: Path) -> None:
    code, shown = on_a_terminal("inspect", str(EXAMPLE))
    assert code == 0
    assert shown.startswith("shapes.py (module shapes): 4 capabilities")
    piped = run_svcc("inspect", str(EXAMPLE))
    assert json.loads(piped.stdout)["schema"] == "svc.readiness/v1"
    code, shown = on_a_terminal(
        "generate", "rest", str(EXAMPLE), "--output-dir", str(tmp_path / "a")
    )
    assert code == 0
    assert shown.startswith("wrote ")
    assert f" files to {tmp_path / 'a'} (target rest)\n  python:shapes:circle_area\n" in shown
    piped = run_svcc("generate", "rest", str(EXAMPLE), "--output-dir", str(tmp_path / "b"))
    assert json.loads(piped.stdout)["target"] == "rest"
    code, shown = on_a_terminal("inspect", str(EXAMPLE), "--format", "json")
    assert json.loads(shown)["module"] == "shapes"


def _actions(parser: argparse.ArgumentParser, prefix: str) -> list[tuple[str, argparse.Action]]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _actions(sub, f"{prefix} {name}")
        elif not isinstance(action, argparse._HelpAction):
            out.append((prefix, action))
    return out


@pytest.mark.parametrize("target", [None, "sample"])
def test_every_option_has_help(target: str | None) -> None:
    parser = build_parser(load_target_class(target) if target else None)
    actions = _actions(parser, "svcc")
    assert len(actions) > 30
    missing = [f"{where} {a.dest}" for where, a in actions if not a.help]
    assert missing == []


def test_every_unknown_selection_is_named(tmp_path: Path) -> None:
    proc = run_svcc(
        "generate", "rest", str(GOLDEN / "varargs" / "input.py"),
        "--output-dir", str(tmp_path / "o"), "--select", "nope,gathr,both,zilch",
    )  # fmt: skip
    assert proc.returncode == 2
    assert "unknown selection 'nope', 'gathr' (did you mean 'gather'?), 'zilch';" in proc.stderr
    assert "the module's functions are: gather, options, both" in proc.stderr


def test_generate_takes_a_directory_as_compile_does(tmp_path: Path) -> None:
    """A directory is a repository for `svcc generate` as for `svcc compile`; one with no
    function to serve says so on one line and writes nothing."""
    (tmp_path / "tree").mkdir()
    proc = run_svcc("generate", "rest", str(tmp_path / "tree"), "--output-dir", str(tmp_path / "o"))
    assert proc.returncode == 1
    assert "the repository: no public module-level functions to expose" in proc.stderr
    assert proc.stderr.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_refusals_give_each_reason_with_its_line(tmp_path: Path) -> None:
    args = ("generate", "rest", str(GOLDEN / "varargs" / "input.py"), "--output-dir")
    piped = run_svcc(*args, str(tmp_path / "a"))
    assert piped.returncode == 1
    assert "(SVC-R014 line 1: *values has no named field)" in piped.stderr
    assert piped.stderr.count("\n") == 1  # one line for a machine
    text = run_svcc(*args, str(tmp_path / "b"), "--format", "text")
    assert text.returncode == 1
    assert (
        "  input.py:1:13: error: SVC-R014 *values has no named field\n"
        "      def gather(*values: int) -> int:  # expect: SVC-R014\n"
        "                  ^^^^^^^^^^^\n"
    ) in text.stderr


def test_inspect_text_shows_the_offending_line_under_each_error() -> None:
    proc = run_svcc("inspect", str(GOLDEN / "varargs" / "input.py"), "--format", "text")
    lines = proc.stdout.splitlines()
    at = next(i for i, ln in enumerate(lines) if "SVC-R015 error line 5" in ln)
    assert (
        lines[at + 1].strip() == "def options(name: str, **extra: str) -> str:  # expect: SVC-R015"
    )
    source, carets = lines[at + 1], lines[at + 2]
    assert source[len(carets) - len(carets.lstrip()) :].startswith("extra: str")  # under the span
    assert set(carets.strip()) == {"^"}


def test_a_module_wide_reason_is_shown_once() -> None:
    proc = run_svcc("inspect", str(NOTEBOOK), "--format", "text")
    assert proc.stdout.count("SVC-R029 error") == 1
    assert "  every function:\n    SVC-R029 error cell 3, line 3: " in proc.stdout
    assert "        random.seed(0)  # expect: SVC-R029\n" in proc.stdout  # its cell's line
    assert "summarize  conditional  (only the reasons every function has)" in proc.stdout


@pytest.mark.parametrize("columns", ["60", "120"])
def test_help_wraps_to_the_terminal_width(columns: str) -> None:
    shown = run_svcc("compile", "--help", env={"COLUMNS": columns}).stdout
    widest = max(len(line) for line in shown.splitlines())
    assert int(columns) - 20 < widest <= int(columns)


@pytest.mark.parametrize(
    "argv",
    [
        ["inspect", "x.py", "--format", "json", "--ir"],
        ["generate", "rest", "x.py", "--output-dir", "o", "--select", "a,b"],
        ["serve", "b", "--port", "9"],
        ["plugins", "list"],
        ["expose", "build", "rest", "d", "--operator-policy", "o", "--policy", "p",
         "--readiness-policy", "r", "--output-dir", "out"],
        ["clients", "export", "--format", "http", "--bundle", "b", "--output-dir", "o"],
    ],
)  # fmt: skip
def test_one_subcommand_parses_as_the_whole_command_line(argv: list[str]) -> None:
    """``main`` builds only the subcommand the command line starts with: same result."""
    whole, one = build_parser(), build_parser(command=argv[0])
    assert vars(one.parse_args(argv)) == vars(whole.parse_args(argv))
    subparsers = [a for a in one._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(subparsers[0].choices) == [argv[0]]
