"""``svcc lock`` under hostile inputs (issue 38 items 1, 2 and the pin-file part of 9).

A repository's declared dependencies, a bundle's requirement files and a project's pin files
are the attacker's: ``svcc lock`` must never run a project's build code (every reference pip
would build is refused before pip starts, and pip itself runs unable to start a build), never
let pip expand ``${...}`` in a requirement, and refuse a malformed or oversized pin file in
one line (exit 2) naming it.

The build code is a project with an in-tree build backend that writes a marker file when it
is imported: the marker is how each test knows the backend never ran. ``PIP_LOG`` names a file
pip writes as soon as it starts: its absence is how a test knows pip never started.
"""

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from helpers import run_svcc
from packaging.requirements import Requirement
from svcc.images.errors import ImageInputError
from test_image_lock import make_wheel

pytestmark = pytest.mark.slow

PLAIN = "def g(x: int) -> int:\n    return x\n"
SECRET = "s3cr3t-do-not-send"


def backend_project(root: Path, marker: Path) -> Path:
    """A project whose in-tree build backend records that it ran (and builds nothing)."""
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
        '[project]\nname = "evil"\nversion = "1.0"\n'
    )
    (root / "backend.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('the backend ran')\n"
        "raise SystemExit('the backend ran')\n"
    )
    return root


def sdist(out: Path, marker: Path) -> Path:
    """``evil-1.0.tar.gz``: the same project as a source archive."""
    tree = backend_project(out / "sdist-tree" / "evil-1.0", marker)
    (tree / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n")
    out.mkdir(parents=True, exist_ok=True)
    archive = out / "evil-1.0.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tree, arcname="evil-1.0")
    shutil.rmtree(out / "sdist-tree")
    return archive


def git_repository(root: Path, marker: Path) -> Path:
    backend_project(root, marker)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for argv in (
        ["init", "-q"],
        ["add", "."],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "evil"],
    ):
        subprocess.run(["git", *argv], cwd=root, env=env, check=True, capture_output=True)
    return root


@pytest.fixture
def pip_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """pip's configuration on this machine switched off, its log where a test looks for it,
    and a secret in the environment; set in this process too (for in-process locks)."""
    for name in list(os.environ):
        if name.startswith("PIP_"):
            monkeypatch.delenv(name)
    env = {
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_LOG": str(tmp_path / "pip.log"),
        "PIP_RETRIES": "0",
        "PIP_TIMEOUT": "2",
        "SVCC_TEST_SECRET": SECRET,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def repository(root: Path, dependencies: list[str]) -> Path:
    root.mkdir(parents=True)
    (root / "m.py").write_text(PLAIN)
    listed = ", ".join(f'"{d}"' for d in dependencies)
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "r"\nversion = "0"\ndependencies = [{listed}]\n'
    )
    return root


def bundle(root: Path, dependency: str) -> Path:
    """A compiled bundle whose ``application-requirements.txt`` declares ``dependency``."""
    repo = repository(root.parent / f"{root.name}-repo", [])
    done = run_svcc("compile", str(repo), "--target", "rest", "--output-dir", str(root))
    assert done.returncode == 0, done.stderr
    (root / "application-requirements.txt").write_text(f"{dependency}\n")
    return root


def lock(
    path: Path, tmp_path: Path, env: dict[str, str], *extra: str
) -> "subprocess.CompletedProcess[str]":
    empty = tmp_path / "empty-index"
    empty.mkdir(exist_ok=True)
    return run_svcc(
        "lock", str(path), "--platform", "linux/amd64", "--python", "3.11",
        "--no-index", "--find-links", str(empty),
        "--wheelhouse", str(tmp_path / "wh"), "--output", str(tmp_path / "out.lock"), *extra,
        env=env, timeout=120,
    )  # fmt: skip


def assert_refused_before_pip(
    done: "subprocess.CompletedProcess[str]", tmp_path: Path, *named: str
) -> None:
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("svcc: error: request_invalid: "), done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    for text in named:
        assert text in done.stderr, done.stderr
    assert not (tmp_path / "pip.log").exists(), "pip started"
    assert not (tmp_path / "wh").exists()
    assert not (tmp_path / "out.lock").exists()


# -- 1. svcc lock never builds -------------------------------------------------------------


def source_reference(kind: str, tmp_path: Path, marker: Path) -> str:
    """``evil @ URL`` where the URL is something pip would build."""
    if kind == "folder named .whl":
        return f"evil @ {backend_project(tmp_path / 'proj' / '.whl', marker).as_uri()}"
    if kind == "folder named like a wheel":
        target = tmp_path / "evil-1.0-py3-none-any.whl"
        return f"evil @ {backend_project(target, marker).as_uri()}"
    if kind == "folder":
        return f"evil @ {backend_project(tmp_path / 'proj', marker).as_uri()}"
    if kind == "sdist":
        return f"evil @ {sdist(tmp_path / 'archives', marker).as_uri()}"
    if kind == "vcs":
        return f"evil @ git+{git_repository(tmp_path / 'evil-repo', marker).as_uri()}"
    raise AssertionError(kind)


KINDS = ("folder named .whl", "folder named like a wheel", "folder", "sdist", "vcs")


@pytest.mark.parametrize("kind", KINDS)
def test_a_declared_source_is_refused_before_pip_starts(
    kind: str, tmp_path: Path, pip_env: dict[str, str]
) -> None:
    marker = tmp_path / "backend-ran"
    reference = source_reference(kind, tmp_path, marker)
    done = lock(repository(tmp_path / "repo", [reference]), tmp_path, pip_env)
    assert_refused_before_pip(done, tmp_path, reference)
    assert not marker.exists()


@pytest.mark.parametrize("via", ["bundle", "--requirements"])
def test_a_source_in_a_bundle_or_a_requirements_file_is_refused_before_pip(
    via: str, tmp_path: Path, pip_env: dict[str, str]
) -> None:
    marker = tmp_path / "backend-ran"
    reference = source_reference("folder named .whl", tmp_path, marker)
    if via == "bundle":
        done = lock(bundle(tmp_path / "bundle", reference), tmp_path, pip_env)
    else:
        (tmp_path / "deps.txt").write_text(f"{reference}\n")
        repo = repository(tmp_path / "repo", [])
        done = lock(repo, tmp_path, pip_env, "--requirements", str(tmp_path / "deps.txt"))
    assert_refused_before_pip(done, tmp_path, reference)
    assert not marker.exists()


def test_pip_cannot_build_a_source_a_wheel_requires(
    tmp_path: Path, pip_env: dict[str, str]
) -> None:
    """A wheel (from an index, or a direct wheel URL) whose ``Requires-Dist`` is a direct
    reference to a source: nothing svcc reads names it before pip, and ``--only-binary``
    does not cover it; pip runs unable to start the build, and the lock is refused."""
    from svcc.images.locking import lock_wheels
    from svcc.images.pip_download import Roots

    marker = tmp_path / "backend-ran"
    project = backend_project(tmp_path / "proj" / ".whl", marker)
    links = tmp_path / "links"
    links.mkdir()
    alpha = make_wheel(links, "alpha", "1.0", (f"evil @ {project.as_uri()}",))
    for root in ("alpha", f"alpha @ {alpha.as_uri()}"):
        with pytest.raises(ImageInputError) as refused:
            lock_wheels(
                Roots((root,), "test", None),
                platform="linux/amd64",
                python="3.11",
                glibc="2.36",
                wheelhouse=tmp_path / "wh",
                index=("--no-index", "--find-links", str(links)),
            )
        assert refused.value.code == "lock_mismatch"
        assert "pip would build" in refused.value.message, refused.value.message
        assert "proj/.whl" in refused.value.message, refused.value.message
        assert not marker.exists()
    assert not (tmp_path / "wh").exists()


def test_wheels_are_still_locked_by_a_pip_that_cannot_start_a_process(
    tmp_path: Path, pip_env: dict[str, str]
) -> None:
    from svcc.images.locking import lock_wheels
    from svcc.images.pip_download import Roots

    links = tmp_path / "links"
    links.mkdir()
    make_wheel(links, "alpha", "1.0", ("beta>=1",))
    beta = make_wheel(links, "beta", "1.0")
    locked = lock_wheels(
        Roots(("alpha", f"beta @ {beta.as_uri()}"), "test", None),
        platform="linux/amd64",
        python="3.11",
        glibc="2.36",
        wheelhouse=tmp_path / "wh",
        index=("--no-index", "--find-links", str(links)),
    )
    assert [(w.name, w.version) for w in locked.wheels] == [("alpha", "1.0"), ("beta", "1.0")]
    assert (tmp_path / "pip.log").exists()  # pip did run


def test_a_name_offered_only_as_an_sdist_is_not_built(
    tmp_path: Path, pip_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--only-binary=:all:`` on pip's command line wins over a ``no-binary`` setting."""
    from svcc.images.locking import lock_wheels
    from svcc.images.pip_download import Roots

    marker = tmp_path / "backend-ran"
    links = sdist(tmp_path / "links", marker).parent
    monkeypatch.setenv("PIP_NO_BINARY", ":all:")
    with pytest.raises(ImageInputError, match="lock_mismatch: evil: no wheel set meets it"):
        lock_wheels(
            Roots(("evil",), "test", None),
            platform="linux/amd64",
            python="3.11",
            glibc="2.36",
            wheelhouse=tmp_path / "wh",
            index=("--no-index", "--find-links", str(links)),
        )
    assert not marker.exists()


@pytest.mark.parametrize(
    "url",
    [
        "https://example.org/w-1.0-py3-none-any.whl",
        "https://example.org/simple/w/w-1.0%2Bcpu-cp311-cp311-manylinux_2_17_x86_64.whl",
        "http://127.0.0.1:8080/w-1.0-py3-none-any.whl#sha256=" + "0" * 64,
    ],
)
def test_a_wheel_url_is_left_to_pip(url: str) -> None:
    from svcc.images.references import judge_references

    judge_references([Requirement(f"w @ {url}")], "x")


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("https://example.org/w-1.0.tar.gz", "a source archive"),
        ("https://example.org/w-1.0.zip", "a source archive"),
        ("https://example.org/w.whl", "not a wheel's file name"),
        ("https://example.org/", "not a wheel's file name"),
        ("https://example.org/w-1.0.tar.gz?x=.whl", "a source archive"),
        ("git+https://example.org/w.git", "a version control"),
        ("git+https://example.org/w-1.0-py3-none-any.whl", "a version control"),
        ("hg+https://example.org/w", "a version control"),
        ("ftp://example.org/w-1.0-py3-none-any.whl", "scheme"),
        ("file://elsewhere/w-1.0-py3-none-any.whl", "another host"),
        ("file:///nonexistent/w-1.0-py3-none-any.whl", "not a file"),
    ],
)
def test_what_pip_would_build_or_cannot_judge_is_refused(url: str, why: str) -> None:
    from svcc.images.references import judge_references

    with pytest.raises(ImageInputError, match=why) as refused:
        judge_references([Requirement(f"w @ {url}")], "deps")
    assert refused.value.code == "request_invalid"
    assert refused.value.message.startswith(f"deps: w @ {url}: ")


# -- 2. requirement lines never pass through pip's environment expansion ---------------------


EVIL = "evil @ https://127.0.0.1:9/${SVCC_TEST_SECRET}/evil-1.0-py3-none-any.whl"


@pytest.mark.parametrize("via", ["repository", "bundle"])
def test_a_requirement_naming_an_environment_variable_is_refused_before_pip(
    via: str, tmp_path: Path, pip_env: dict[str, str]
) -> None:
    path = (
        repository(tmp_path / "repo", [EVIL])
        if via == "repository"
        else bundle(tmp_path / "bundle", EVIL)
    )
    done = lock(path, tmp_path, pip_env)
    assert_refused_before_pip(done, tmp_path, EVIL, "${")
    assert SECRET not in done.stderr + done.stdout


def test_pip_is_given_the_parsed_requirements_as_arguments(tmp_path: Path) -> None:
    """No requirements file pip would read (and expand, and take options from): each
    requirement svcc parsed and judged, as one argument."""
    from svcc.images.pip_download import Roots, pip_argv

    roots = Roots(("alpha >= 1  # a comment", "beta[x]==2 ; python_version >= '3'"), "t", None)
    argv = pip_argv(roots, tmp_path, [], [])
    assert "-r" not in argv
    assert "--requirement" not in argv
    assert argv[-2:] == ["alpha>=1", 'beta[x]==2; python_version >= "3"']
    assert not list(tmp_path.iterdir())


def test_a_requirement_with_a_dollar_brace_is_refused_wherever_it_is() -> None:
    from svcc.images.references import judge_references

    for text in ('w; python_version == "${X}"', "w @ https://h/${X}-1.0-py3-none-any.whl"):
        with pytest.raises(ImageInputError, match=r"\$\{") as refused:
            judge_references([Requirement(text)], "deps")
        assert refused.value.code == "request_invalid"


# -- 9. pin files: malformed or oversized is exit 2 naming the file ---------------------------


DEEP = "a = " + "[" * 20000 + "]" * 20000 + "\n"
MALFORMED = {
    "uv.lock": [
        "package = 'x'\n",
        "package = [1]\n",
        "package = ['x']\n",
        "package = {name = 'a'}\n",
        "[[package]]\nname = 1\nversion = '1'\n",
        "[[package]]\nname = 'a'\nversion = [1]\n",
        "[[package]]\nname = 'a'\nversion = '1'\nwheels = 'x'\n",
        "[[package]]\nname = 'a'\nversion = '1'\nwheels = [{hash = 1}]\n",
        "[[package]]\nname = 'a'\nversion = '1'\nsdist = 'x'\n",
        "[[package]]\nname = 'a'\nversion = '1'\nsource = 'x'\n",
        "[[package]]\nname = '${SECRET}'\nversion = '1'\n",
        "[[package]]\nname = 'a'\n",
        DEEP,
        "package = [\n",
    ],
    "pylock.toml": [
        "packages = 1\n",
        "packages = ['x']\n",
        "packages = [[1]]\n",
        "[[packages]]\nname = 'a'\nversion = 1\n",
        "[[packages]]\nname = 1\nversion = '1'\n",
        "[[packages]]\nname = 'a'\nversion = '1'\nwheels = 1\n",
        "[[packages]]\nname = 'a'\nversion = '1'\nwheels = [{hashes = 1}]\n",
        "[[packages]]\nname = 'a'\nversion = '1'\nwheels = [{hashes = {sha256 = 1}}]\n",
        "[[packages]]\nname = 'a b'\nversion = '1'\n",
        DEEP,
        "[[packages]\n",
    ],
    "requirements.txt": [
        "a==1 --hash=sha256:" + "0" * 64 + "\n${SECRET}==1 --hash=sha256:" + "0" * 64 + "\n",
        "a @ https://h/a-1-py3-none-any.whl --hash=sha256:" + "0" * 64 + "\n",
        "a==1 --hash=sha256:" + "0" * 64 + " --hash=sha256:" + "\n",
        "a==notaversion --hash=sha256:" + "0" * 64 + "\n",
        "a>=1 --hash=sha256:" + "0" * 64 + "\n",
    ],
}


@pytest.mark.parametrize(
    ("name", "text"),
    [(name, text) for name, texts in MALFORMED.items() for text in texts],
    ids=lambda v: v if isinstance(v, str) and len(v) < 16 else None,
)
def test_a_malformed_pin_file_is_an_input_error_naming_it(
    name: str, text: str, tmp_path: Path
) -> None:
    from svcc.images.pins import read_pin_file

    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ImageInputError) as refused:
        read_pin_file(path)
    assert refused.value.message.startswith(f"{path}"), refused.value.message
    assert "\n" not in refused.value.message


def test_a_well_formed_pin_file_still_pins() -> None:
    """What the malformed cases must not take away: uv's and PEP 751's shapes as written."""
    from svcc.images.pins import pins_of

    uv = pins_of(
        "uv.lock",
        b"version = 1\n[[package]]\nname = 'Beta_X'\nversion = '1.0'\n"
        b"source = { registry = 'https://pypi.org/simple' }\n"
        b"wheels = [{ url = 'https://x.test/b.whl', hash = 'sha256:" + b"A" * 64 + b"' }]\n"
        b"[[package]]\nname = 'me'\nversion = '0'\nsource = { editable = '.' }\n",
    )
    assert [(p.name, p.version, sorted(p.hashes)) for p in uv] == [("beta-x", "1.0", ["a" * 64])]
    pylock = pins_of(
        "pylock.toml",
        b"lock-version = '1.0'\n[[packages]]\nname = 'beta'\nversion = '01.0'\n"
        b"wheels = [{ name = 'b.whl', hashes = { sha256 = '" + b"b" * 64 + b"' } }]\n"
        b"[[packages]]\nname = 'local'\ndirectory = { path = '.' }\n",
    )
    assert [(p.name, p.version, sorted(p.hashes)) for p in pylock] == [("beta", "1.0", ["b" * 64])]
    hashed = pins_of(
        "requirements.txt",
        b"# a comment\n-r other.txt\nbeta==1.0 ; python_version >= '3' \\\n"
        b"    --hash=sha256:" + b"c" * 64 + b" \\\n    --hash sha256:" + b"d" * 64 + b"\n"
        b"    # via alpha\n",
    )
    assert [(p.name, p.version, sorted(p.hashes)) for p in hashed or []] == [
        ("beta", "1.0", ["c" * 64, "d" * 64])
    ]


def test_malformed_pins_are_exit_2_from_the_command(
    tmp_path: Path, pip_env: dict[str, str]
) -> None:
    for name, text in (("uv.lock", DEEP), ("pylock.toml", "packages = ['x']\n")):
        work = tmp_path / name
        repo = repository(work / "repo", [])
        (repo / name).write_text(text)
        done = lock(repo, work, pip_env)
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1, done.stderr
        assert str(repo / name) in done.stderr
        assert not (tmp_path / "pip.log").exists()


def test_a_pin_file_over_the_bound_is_refused_not_read_truncated(tmp_path: Path) -> None:
    from svcc.images.pins import MAX_PIN_FILE, read_pin_file

    path = tmp_path / "requirements.txt"
    # the first MAX_PIN_FILE bytes alone are a valid hashed requirements file
    path.write_text("a==1 --hash=sha256:" + "0" * 64 + "\n#" + "x" * MAX_PIN_FILE + "\n")
    with pytest.raises(ImageInputError, match="over the") as refused:
        read_pin_file(path)
    assert refused.value.message.startswith(str(path))


def test_a_pin_file_that_is_not_a_regular_file_is_refused(
    tmp_path: Path, pip_env: dict[str, str]
) -> None:
    """``--pins`` naming a pipe was read until its writer closed it (never)."""
    fifo = tmp_path / "uv.lock"
    os.mkfifo(fifo)
    repo = repository(tmp_path / "repo", [])
    done = lock(repo, tmp_path, pip_env, "--pins", str(fifo))
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert str(fifo) in done.stderr


def test_a_bundle_requirement_file_that_is_not_text_is_exit_2(
    tmp_path: Path, pip_env: dict[str, str]
) -> None:
    """The requirement files ``svcc lock`` reads from a bundle are read as the pin files are:
    bounded, and anything but UTF-8 text is one line naming the file (it was exit 3)."""
    path = bundle(tmp_path / "bundle", "alpha")
    (path / "application-requirements.txt").write_bytes(b"alpha\xff\n")
    done = lock(path, tmp_path, pip_env)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert str(path / "application-requirements.txt") in done.stderr
    assert not (tmp_path / "pip.log").exists()


def test_a_requirements_option_naming_a_pipe_is_refused_not_waited_on(
    tmp_path: Path, pip_env: dict[str, str]
) -> None:
    fifo = tmp_path / "deps.txt"
    os.mkfifo(fifo)
    done = lock(repository(tmp_path / "repo", []), tmp_path, pip_env, "--requirements", str(fifo))
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert f"{fifo}: is a named pipe" in done.stderr
