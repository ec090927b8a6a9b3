"""A directory's declared dependencies come from the packaging the library has: ``pyproject.toml``,
else ``setup.py``'s literal ``install_requires`` or ``setup.cfg``'s; never by running setup.py.
Markers are evaluated for the target Python, extras are not requirements."""

from pathlib import Path

import pytest
from svcc.compiler.driver import analyze_repository
from svcc.compiler.options import CompileOptions
from svcc.compiler.pipeline import compile_path
from svcc.contracts.requirements import parse_requirements
from svcc.frontends.repository import read_tree

# A module importing a third-party package: eligible only when that package is declared.
MODULE = "import six\n\n\ndef shout(text: str) -> str:\n    return six.text_type(text).upper()\n"


def _project(root: Path, **files: str) -> Path:
    (root / "lib").mkdir()
    (root / "lib" / "__init__.py").write_text("")
    (root / "lib" / "words.py").write_text(MODULE)
    for name, text in files.items():
        (root / name.replace("__", ".")).write_text(text)
    return root


def _verdict(root: Path, version: tuple[int, int] = (3, 12)) -> str:
    analysis = analyze_repository(root, python_version=version, strict=False)
    (klass,) = {a.klass for _, cap, a in analysis.capabilities() if cap.name == "shout"}
    return klass


def _notes(root: Path) -> list[tuple[str, str]]:
    tree = read_tree(root)
    return [(path, d.message) for path, d in tree.problems if d.code == "SVC-F039"]


SETUP_CFG = """\
[metadata]
name = lib

[options]
setup_requires = setuptools_scm
install_requires =
    # the one runtime dependency
    six >= 1.5
packages = find:

[options.extras_require]
docs = sphinx
"""


def test_setup_cfg_install_requires_is_declared(tmp_path: Path) -> None:
    root = _project(tmp_path, setup__cfg=SETUP_CFG)
    assert _verdict(root) == "eligible"
    tree = read_tree(root)
    assert tree.config.dependencies == ("six >= 1.5",)
    assert _notes(root) == [
        ("setup.cfg", "declared dependencies read from setup.cfg [options] install_requires: "
         "six >= 1.5")
    ]  # fmt: skip


SETUP_PY_LITERAL = """\
import os
from setuptools import setup

def read(name):
    return open(os.path.join(os.path.dirname(__file__), name)).read()

setup(
    name="lib",
    install_requires=[
        "six",
    ],
    extras_require={"cli": ["click"]},
    long_description=read("README.rst"),
)
"""

SETUP_PY_NAME = """\
import setuptools

REQUIRES = ["six>=1.5", 'importlib-metadata; python_version < "3.8"']

if __name__ == "__main__":
    setuptools.setup(name="lib", install_requires=REQUIRES)
"""


# setuptools reads a string as lines (here one line, concatenated by the parser)
SETUP_PY_STRING = """\
from setuptools import setup
setup(install_requires=('six>=1.5; '
                        'python_version >= "3"'))
"""


@pytest.mark.parametrize(
    "source", [SETUP_PY_LITERAL, SETUP_PY_NAME, SETUP_PY_STRING], ids=["literal", "name", "string"]
)
def test_setup_py_literal_install_requires_is_declared(tmp_path: Path, source: str) -> None:
    root = _project(tmp_path, setup__py=source)
    assert _verdict(root) == "eligible"
    assert not (tmp_path / "README.rst").exists()  # setup.py was never run
    ((path, message),) = _notes(root)
    assert path == "setup.py"
    assert message.startswith("declared dependencies read from setup.py setup(install_requires=")


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("from setuptools import setup\nsetup(install_requires=open('r.txt').read().split())\n",
         "is not a literal list of strings"),
        ("from setuptools import setup\nR = ['six']\nR.append('x')\nsetup(install_requires=R)\n",
         "R is not a name bound once to a literal list"),
        ("from setuptools import setup\nsetup(**{'install_requires': ['six']})\n",
         "setup() takes **keywords"),
        ("from setuptools import setup\nsetup(install_requires=['not a requirement!'])\n",
         "invalid requirement"),
    ],
)  # fmt: skip
def test_setup_py_not_literal_is_not_read_with_a_note(
    tmp_path: Path, source: str, why: str
) -> None:
    root = _project(tmp_path, setup__py=source, setup__cfg=SETUP_CFG)
    assert _verdict(root) == "conditional"  # setup.py's keyword wins over setup.cfg's
    ((path, message),) = _notes(root)
    assert path == "setup.py"
    assert why in message
    assert "declare the dependencies in pyproject.toml" in message


def test_pyproject_dependencies_win_over_setup_files(tmp_path: Path) -> None:
    pyproject = '[project]\nname = "lib"\ndependencies = []\n'
    root = _project(tmp_path, pyproject__toml=pyproject, setup__cfg=SETUP_CFG)
    assert _verdict(root) == "conditional"
    assert _notes(root) == []
    dynamic = '[project]\nname = "lib"\ndynamic = ["dependencies"]\n'
    (tmp_path / "pyproject.toml").write_text(dynamic)
    assert _verdict(root) == "eligible"


def test_markers_are_evaluated_for_the_target_python(tmp_path: Path) -> None:
    old_only = '[project]\nname = "lib"\ndependencies = [\'six; python_version < "3.8"\']\n'
    root = _project(tmp_path, pyproject__toml=old_only)
    assert _verdict(root, (3, 12)) == "conditional"
    new_only = '[project]\nname = "lib"\ndependencies = [\'six; python_version >= "3.12"\']\n'
    (tmp_path / "pyproject.toml").write_text(new_only)
    assert _verdict(root, (3, 12)) == "eligible"
    assert _verdict(root, (3, 11)) == "conditional"


def test_markers_extras_and_platforms() -> None:
    def names(line: str) -> frozenset[str]:
        return parse_requirements(line, "r.txt", python_version=(3, 11)).import_names

    assert names('six; extra == "cli"') == frozenset()  # an extra is not required
    assert names('six; sys_platform == "linux"') == {"six"}
    assert names('six; sys_platform == "win32"') == frozenset()
    assert names('six; platform_machine == "x86_64"') == frozenset()  # not on every machine
    assert names('six; python_full_version >= "3.11.4"') == frozenset()  # not every micro
    # the line is kept as declared: pip decides again where the bundle is installed
    assert parse_requirements('six; extra == "cli"', "r.txt").lines == ('six; extra == "cli"',)


def test_the_bundle_declares_what_setup_cfg_declares(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    root = _project(tmp_path / "project", setup__cfg=SETUP_CFG)
    out = tmp_path / "out"
    options = CompileOptions(select="lib.words.shout", python_version=(3, 12))
    compile_path(root, target="rest", output_dir=out, options=options)
    assert (out / "application-requirements.txt").read_text() == "six >= 1.5\n"


POETRY = """\
[tool.poetry]
name = "lib"

[tool.poetry.dependencies]
python = "^3.9"
six = "^1.16"
attrs = {version = "~23.1", extras = ["tests"], markers = "sys_platform == 'linux'"}
click = {version = "*", optional = true}
tomli = [{version = "^2", python = "<3.11"}, {version = "^2.1", python = ">=3.11"}]
mine = {path = "../mine"}

[tool.poetry.extras]
cli = ["click"]
"""


def test_poetry_dependencies_are_translated(tmp_path: Path) -> None:
    root = _project(tmp_path, pyproject__toml=POETRY)
    assert _verdict(root) == "eligible"
    tree = read_tree(root)
    assert tree.config.dependencies == (
        "six>=1.16,<2",
        "attrs[tests]>=23.1,<23.2; sys_platform == 'linux'",
    )
    ((path, message),) = _notes(root)
    assert path == "pyproject.toml"
    assert message.endswith(
        "; not read: tomli, mine (declare them in [project] dependencies or with "
        "--requirements FILE)"
    )


@pytest.mark.parametrize(
    ("constraint", "specifier"),
    [
        ("^1.2.3", ">=1.2.3,<2"),
        ("^0.2.3", ">=0.2.3,<0.3"),
        ("^0.0.3", ">=0.0.3,<0.0.4"),
        ("~1.2.3", ">=1.2.3,<1.3"),
        ("~1", ">=1,<2"),
        ("1.4", "==1.4"),
        (">=1.2, <2", ">=1.2,<2"),
        ("*", ""),
        ("^1 || ^2", None),
    ],
)
def test_poetry_constraints(constraint: str, specifier: str | None) -> None:
    from svcc.frontends.repository._poetry import poetry_dependencies

    lines, skipped = poetry_dependencies({"six": constraint})
    assert lines == (() if specifier is None else (f"six{specifier}",))
    assert skipped == (("six",) if specifier is None else ())
