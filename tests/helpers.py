"""Shared test helpers: the golden corpus, running the real ``svcc`` command."""

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from svcc.contracts.requirements import DeclaredRequirements

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
GOLDEN = TESTS / "golden"
BIN = Path(sys.executable).parent
SVCC = str(BIN / "svcc")

_EXPECT = re.compile(r"#\s*expect:\s*((?:SVC-[A-Z]\d{3}\s*)+)")


def cases() -> list[str]:
    return sorted(
        p.name
        for p in GOLDEN.iterdir()
        if p.is_dir() and any((p / f"input{s}").exists() for s in (".py", ".ipynb"))
    )


def case_input(case: str) -> Path:
    for suffix in (".py", ".ipynb"):
        path = GOLDEN / case / f"input{suffix}"
        if path.exists():
            return path
    raise FileNotFoundError(case)


def case_options(case: str) -> dict[str, Any]:
    path = GOLDEN / case / "options.toml"
    return tomllib.loads(path.read_text()) if path.exists() else {}


def case_arguments(case: str) -> list[str]:
    """The command-line options a case's ``options.toml`` stands for: ``--module-name``,
    ``--data`` per declared data file, ``--allow`` with the opted-in kinds."""
    options = case_options(case)
    out = ["--module-name", options.get("module_name", case)]
    for data in options.get("data", []):
        out += ["--data", str(case_input(case).parent / data)]
    if options.get("allow"):
        out += ["--allow", ",".join(options["allow"])]
    if "requirements" in options:
        out += ["--requirements", str(case_input(case).parent / options["requirements"])]
    return out


def case_requirements(case: str) -> "DeclaredRequirements | None":
    """The requirements a case declares (``requirements = "FILE"`` in its options, as
    ``--requirements FILE``), or ``None``."""
    from svcc.contracts.requirements import load_requirements

    name = case_options(case).get("requirements")
    return None if name is None else load_requirements(case_input(case).parent / name)


def expected_markers(path: Path) -> set[tuple[str, int | None, int]]:
    """``(code, cell, line)`` for every ``# expect: SVC-...`` marker in a fixture."""
    out: set[tuple[str, int | None, int]] = set()
    if path.suffix == ".ipynb":
        nb = json.loads(path.read_text())
        for index, cell in enumerate(nb["cells"], start=1):
            raw = cell.get("source", "")
            source = raw if isinstance(raw, str) else "".join(raw) if isinstance(raw, list) else ""
            for number, line in enumerate(source.split("\n"), start=1):
                for match in _EXPECT.finditer(line):
                    out.update((code, index, number) for code in match.group(1).split())
        return out
    text = path.read_bytes().decode("utf-8", "replace")
    for number, line in enumerate(text.split("\n"), start=1):
        for match in _EXPECT.finditer(line):
            out.update((code, None, number) for code in match.group(1).split())
    return out


def run_svcc(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [SVCC, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full_env,
        timeout=timeout,
        check=False,
    )


def modules_loaded_by(statement: str, candidates: tuple[str, ...]) -> list[str]:
    """Which of ``candidates`` a fresh interpreter has imported after ``statement``."""
    code = (
        f"import sys\n{statement}\n"
        f"print(','.join(m for m in {candidates!r} "
        "if any(k == m or k.startswith(m + '.') for k in sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    return out.split(",") if out else []


# What only a governed bundle may hold: words of its runtime, and its own folders.
GOVERNED_WORDS = ("governed", "policy", "container", "worker", "sandbox")
GOVERNED_PATHS = ("execution/", "svc_runtime/governed/", "svc_runtime/container/")


def governed_traces(files: dict[str, bytes], glue: str) -> list[str]:
    """Where a direct bundle's files carry code or folders of governed execution: paths
    under the governed folders, ``svc_runtime/*_governed.py``, and the governed words in
    the runtime or the glue (``path: word``)."""
    found = [p for p in files if p.startswith(GOVERNED_PATHS) or p.endswith("_governed.py")]
    for path, data in sorted(files.items()):
        if path.startswith("svc_runtime/") or path == glue:
            text = data.decode("utf-8").lower()
            found += [f"{path}: {word}" for word in GOVERNED_WORDS if word in text]
    return found
