"""The newcomer's path: a module with one function that cannot be served is refused (exit 1, as
the specification says), and the refusal names the ``--select`` that serves the others; a
bundle's environment is built ahead of its first client, and the cache is listed and pruned."""

import json
from pathlib import Path

from helpers import ROOT, run_svcc

MODULE = """\
def area(w: float, h: float) -> float:
    return w * h


def total(*xs):
    return sum(xs)


def half(x: float) -> float:
    return x / 2
"""


def test_a_refusal_names_the_select_that_serves_the_eligible(tmp_path: Path) -> None:
    source = tmp_path / "calc.py"
    source.write_text(MODULE)
    refused = run_svcc("generate", "rest", str(source), "--output-dir", str(tmp_path / "a"))
    assert refused.returncode == 1
    assert "total is unsupported (SVC-R014" in refused.stderr
    assert refused.stderr.rstrip().endswith("--select area,half serves the eligible 2 functions")
    served = run_svcc(
        "generate",
        "rest",
        str(source),
        "--select",
        "area,half",
        "--output-dir",
        str(tmp_path / "b"),
    )
    assert served.returncode == 0, served.stderr


def test_a_repository_refusal_names_dotted_names(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "calc.py").write_text(MODULE)
    refused = run_svcc(
        "compile", str(tmp_path / "proj"), "--target", "rest", "--output-dir", str(tmp_path / "a")
    )
    assert refused.returncode == 1
    assert "--select calc.area,calc.half serves the eligible 2 functions" in refused.stderr


def test_serve_prepare_then_cache_list_and_prune(tmp_path: Path) -> None:
    """``svcc serve --prepare`` builds the environment an MCP client would otherwise wait for
    on ``initialize``; ``svcc cache list`` shows it and ``prune`` removes it. (The sample
    target's bundle installs nothing, so the environment is only a venv.)"""
    bundle, cache = tmp_path / "bundle", tmp_path / "cache"
    made = run_svcc(
        "compile", str(ROOT / "examples" / "shapes.py"), "--target", "sample",
        "--output-dir", str(bundle),
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    first = run_svcc("serve", str(bundle), "--prepare", "--cache-dir", str(cache))
    assert first.returncode == 0, first.stderr
    env = Path(first.stdout.strip())
    assert env.parent == cache / "envs"
    assert (env / "bin" / "python").exists()
    again = run_svcc("serve", str(bundle), "--prepare", "--cache-dir", str(cache))
    assert (again.stdout, "installing" in again.stderr) == (first.stdout, False)
    listed = json.loads(
        run_svcc("cache", "list", "--cache-dir", str(cache), "--format", "json").stdout
    )
    assert [(e["key"], e["complete"]) for e in listed["list"]] == [(env.name, True)]
    kept = run_svcc("cache", "prune", "--older-than", "1", "--cache-dir", str(cache))
    assert kept.stdout.startswith("0 environments removed")
    assert env.exists()
    removed = run_svcc("cache", "prune", "--cache-dir", str(cache))
    assert removed.returncode == 0
    assert removed.stdout.startswith(env.name)
    assert not env.exists()
