"""Run mypy over svcc as it is installed (``svcc.compiler``, ``svcc.ir``, ...).

The source folders are mapped into the ``svcc`` namespace by setuptools' ``package-dir``,
which mypy cannot read; this builds the same layout from symlinks in a temporary
directory (read from ``pyproject.toml``, so the two cannot drift) and checks it with the
strict settings of ``[tool.mypy]``. Usage: ``python tools/typecheck.py [extra mypy args]``.
"""

import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build_view(target: Path) -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    for package, folder in sorted(mapping.items()):
        link = target.joinpath(*package.split("."))
        link.parent.mkdir(parents=True, exist_ok=True)
        if package == "svcc":
            link.mkdir(exist_ok=True)
            for item in (ROOT / folder).iterdir():
                if item.suffix in (".py", ".typed"):
                    (link / item.name).symlink_to(item)
        else:
            link.symlink_to(ROOT / folder, target_is_directory=True)
    # extensions shipped from this repository are checked with the core they build on
    for package in sorted(ROOT.glob("extensions/*/*/__init__.py")):
        (target / package.parent.name).symlink_to(package.parent, target_is_directory=True)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="svcc-mypy-") as tmp:
        view = Path(tmp)
        build_view(view)
        env = {**os.environ, "MYPYPATH": str(view)}
        command = [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "-p",
            "svcc",
            *[
                a
                for p in sorted(ROOT.glob("extensions/*/*/__init__.py"))
                for a in ("-p", p.parent.name)
            ],
            *sys.argv[1:],
        ]
        return subprocess.call(command, cwd=view, env=env)


if __name__ == "__main__":
    raise SystemExit(main())
