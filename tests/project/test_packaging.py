"""Installed, everything lives under ``svcc``: nothing named compiler/ir/runtime leaks
into site-packages, and the package list matches the folders that hold ``__init__.py``."""

import subprocess
import tomllib
from pathlib import Path

import pytest
from helpers import ROOT

TOP_LEVEL = [
    "backends",
    "cli",
    "clients",
    "compiler",
    "contracts",
    "frontends",
    "images",
    "ir",
    "lsp",
    "plugins",
    "runtime",
    "service",
    "svcc",
]


def _config() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]  # type: ignore[no-any-return]


def test_package_list_matches_folders() -> None:
    config = _config()
    mapping: dict[str, str] = config["package-dir"]  # type: ignore[index, assignment]
    declared = set(config["packages"])  # type: ignore[index, arg-type]
    found = set()
    for package, folder in mapping.items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base).parts
            if package == "svcc" and rel:
                continue  # the root package maps only its own folder
            found.add(".".join([package, *rel]))
    assert declared == found
    assert set(mapping.values()) == set(TOP_LEVEL)


@pytest.mark.slow
def test_wheel_installs_under_one_namespace(tmp_path: Path, wheel_venv: Path) -> None:
    env_dir = wheel_venv
    python = env_dir / "bin" / "python"
    probe = (
        "import importlib.util, json, site, sys, os\n"
        "import svcc.ir, svcc.cli.main\n"
        "sp = site.getsitepackages()[0]\n"
        "print(json.dumps({'ir': svcc.ir.__file__, 'top': sorted(os.listdir(sp)),\n"
        "  'bare': [m for m in ('compiler', 'ir', 'runtime', 'frontends', 'backends', 'service',\n"
        "                       'contracts', 'images', 'plugins', 'cli')\n"
        "           if importlib.util.find_spec(m) is not None]}))\n"
    )
    import json

    out = json.loads(
        subprocess.run(
            [str(python), "-c", probe], check=True, capture_output=True, text=True, cwd=tmp_path
        ).stdout
    )
    assert "/site-packages/svcc/ir/__init__.py" in out["ir"]
    assert out["bare"] == []
    assert not {
        "compiler",
        "ir",
        "runtime",
        "frontends",
        "backends",
        "service",
        "contracts",
        "images",
        "plugins",
        "cli",
    } & set(out["top"])
    version = subprocess.run(
        [str(env_dir / "bin" / "svc"), "--version"], check=True, capture_output=True, text=True
    ).stdout
    assert version.startswith("svcc ")
    # client export from the installed wheel: templates and the validator's dependency ship
    bundle, collection = tmp_path / "shapes-rest", tmp_path / "shapes-bruno"
    svc = str(env_dir / "bin" / "svc")
    example = str(ROOT / "examples" / "shapes.py")
    subprocess.run([svc, "generate", "rest", example, "--output-dir", str(bundle)], check=True)
    subprocess.run(
        [svc, "clients", "export", "--bundle", str(bundle), "--format", "bruno",
         "--output-dir", str(collection)],
        check=True, capture_output=True,
    )  # fmt: skip
    assert (collection / "circle_area.bru").read_text().startswith("meta {")
