"""``svcc lock``: pip resolves a bundle's or repository's wheels for the base's platform and
Python; the lock is what the build accepts, project pins are kept and said, and a pin that
cannot be met is refused naming the package.

Offline and deterministic: the server's wheels come from the OCI stack's wheelhouse (skipped,
with the command, without it) and the application's from small wheels made here; pip's own
configuration on this machine is switched off.
"""

import base64
import hashlib
import json
import os
import subprocess
import zipfile
from pathlib import Path

import pytest
from helpers import SVCC
from oci_support import state_dir
from svcc.images.lockfile import parse_lock

pytestmark = pytest.mark.slow


def make_wheel(out: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
    """A minimal pure-Python wheel (METADATA, WHEEL, RECORD and one module)."""
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": b"",
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
            + "".join(f"Requires-Dist: {r}\n" for r in requires)
        ).encode(),
        f"{info}/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    wheel = out / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in files.items():
            archive.writestr(zipfile.ZipInfo(path, (1980, 1, 1, 0, 0, 0)), data)
    return wheel


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    server = state_dir() / "wheelhouse"
    if not (server / "amd64").is_dir():
        pytest.skip(f"no server wheelhouse in {server}: run `.ci/oci/wheelhouse.sh {state_dir()}`")
    app = tmp_path_factory.mktemp("app-index")
    make_wheel(app, "alpha", "1.0", ("beta>=1",))
    make_wheel(app, "beta", "1.0")
    make_wheel(app, "beta", "2.0")
    return {"amd64": server / "amd64", "arm64": server / "arm64", "app": app}


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def repository(root: Path, *, extra: dict[str, str] | None = None) -> Path:
    (root / "shopapp").mkdir(parents=True)
    (root / "shopapp" / "__init__.py").write_text("")
    (root / "shopapp" / "prices.py").write_text(
        "def total(prices: list[float]) -> float:\n    return sum(prices)\n"
    )
    (root / "pyproject.toml").write_text(
        '[project]\nname = "shopapp"\nversion = "1"\ndependencies = ["alpha>=1"]\n'
    )
    for name, text in (extra or {}).items():
        (root / name).write_text(text)
    return root


def lock(
    path: Path, out: Path, index: dict[str, Path], *extra: str, platform: str = "linux/amd64"
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    arch = platform.rpartition("/")[2]
    return subprocess.run(
        [
            SVCC,
            "lock",
            str(path),
            "--platform",
            platform,
            "--python",
            "3.11",
            "--wheelhouse",
            str(out / "wheels"),
            "--output",
            str(out / "server.lock"),
            "--no-index",
            "--find-links",
            str(index[arch]),
            "--find-links",
            str(index["app"]),
            *extra,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )


def locked(out: Path) -> dict[str, str]:
    return {w.name: w.version for w in parse_lock((out / "server.lock").read_bytes()).wheels}


def test_a_repository_and_its_bundle_lock_to_the_same_bytes(
    index: dict[str, Path], tmp_path: Path
) -> None:
    repo = repository(tmp_path / "repo")
    done = lock(repo, tmp_path / "from-repo", index)
    assert done.returncode == 0, done.stderr
    versions = locked(tmp_path / "from-repo")
    assert (versions["alpha"], versions["beta"]) == ("1.0", "2.0")  # the newest beta
    assert {"fastapi", "uvicorn", "pydantic-core"} <= set(versions)
    assert "mcp" not in versions  # only the closure (the wheelhouse holds the MCP server too)
    # every locked wheel is in the wheelhouse with its hash
    for wheel in parse_lock((tmp_path / "from-repo" / "server.lock").read_bytes()).wheels:
        (found,) = [
            p
            for p in (tmp_path / "from-repo" / "wheels").iterdir()
            if p.name.lower().startswith(wheel.name.replace("-", "_") + "-")
        ]
        assert sha(found) == wheel.sha256
    assert done.stdout.startswith(f"locked {len(versions)} wheels of repository {repo} (rest)")
    bundle = tmp_path / "bundle"
    compiled = subprocess.run(
        [SVCC, "compile", str(repo), "--target", "rest", "--output-dir", str(bundle)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert compiled.returncode == 0, compiled.stderr
    again = lock(bundle, tmp_path / "from-bundle", index)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "from-bundle" / "server.lock").read_bytes() == (
        tmp_path / "from-repo" / "server.lock"
    ).read_bytes()


def test_arm64_gets_its_own_compiled_wheels(index: dict[str, Path], tmp_path: Path) -> None:
    done = lock(repository(tmp_path / "repo"), tmp_path / "out", index, platform="linux/arm64")
    assert done.returncode == 0, done.stderr
    (core,) = (tmp_path / "out" / "wheels").glob("pydantic_core-*.whl")
    assert "aarch64" in core.name


def uv_lock(beta: str, beta_hash: str) -> str:
    return (
        "version = 1\n"
        '[[package]]\nname = "shopapp"\nversion = "1"\nsource = { editable = "." }\n'
        f'[[package]]\nname = "beta"\nversion = "{beta}"\n'
        'source = { registry = "https://pypi.org/simple" }\n'
        f'wheels = [{{ url = "https://x.test/beta.whl", hash = "sha256:{beta_hash}" }}]\n'
    )


def test_project_pins_are_kept_and_said(index: dict[str, Path], tmp_path: Path) -> None:
    beta1 = sha(index["app"] / "beta-1.0-py3-none-any.whl")
    pin_files = {
        "uv.lock": uv_lock("1.0", beta1),
        "pylock.toml": (
            'lock-version = "1.0"\ncreated-by = "test"\n'
            '[[packages]]\nname = "beta"\nversion = "1.0"\n'
            'wheels = [{ name = "beta-1.0-py3-none-any.whl", '
            f'hashes = {{ sha256 = "{beta1}" }} }}]\n'
        ),
        "requirements.txt": f"beta==1.0 \\\n    --hash=sha256:{beta1}\n",
    }
    for name, text in pin_files.items():
        work = tmp_path / name
        done = lock(repository(work / "repo", extra={name: text}), work, index)
        assert done.returncode == 0, done.stderr
        assert locked(work)["beta"] == "1.0", name
        assert done.stdout.rstrip().endswith(f"kept 1 pin(s) from {name}: beta==1.0"), done.stdout


def test_a_bundle_keeps_the_pins_it_is_given(index: dict[str, Path], tmp_path: Path) -> None:
    """A bundle carries no uv.lock: ``--pins`` names the repository's."""
    beta1 = sha(index["app"] / "beta-1.0-py3-none-any.whl")
    repo = repository(tmp_path / "repo", extra={"uv.lock": uv_lock("1.0", beta1)})
    bundle = tmp_path / "bundle"
    subprocess.run(
        [SVCC, "compile", str(repo), "--target", "rest", "--output-dir", str(bundle)],
        capture_output=True,
        check=True,
    )
    done = lock(bundle, tmp_path / "pinned", index, "--pins", str(repo / "uv.lock"))
    assert done.returncode == 0, done.stderr
    assert locked(tmp_path / "pinned")["beta"] == "1.0"
    assert done.stdout.rstrip().endswith("kept 1 pin(s) from uv.lock: beta==1.0")
    unpinned = lock(bundle, tmp_path / "unpinned", index)
    assert unpinned.returncode == 0, unpinned.stderr
    assert locked(tmp_path / "unpinned")["beta"] == "2.0"


def test_a_lock_forked_per_environment_pins_a_set_of_versions(
    index: dict[str, Path], tmp_path: Path
) -> None:
    """uv pins one distribution at two versions for two environments: no constraint, but
    the resolved version must be one of them, with its hash."""
    beta2 = sha(index["app"] / "beta-2.0-py3-none-any.whl")
    forked = uv_lock("1.0", "0" * 64) + (
        '[[package]]\nname = "beta"\nversion = "2.0"\n'
        f'wheels = [{{ url = "https://x.test/beta2.whl", hash = "sha256:{beta2}" }}]\n'
    )
    done = lock(repository(tmp_path / "repo", extra={"uv.lock": forked}), tmp_path / "out", index)
    assert done.returncode == 0, done.stderr
    assert locked(tmp_path / "out")["beta"] == "2.0"
    assert done.stdout.rstrip().endswith("kept 1 pin(s) from uv.lock: beta==2.0")


def test_a_pin_that_cannot_be_met_is_refused_naming_the_package(
    index: dict[str, Path], tmp_path: Path
) -> None:
    repo = repository(tmp_path / "repo", extra={"uv.lock": uv_lock("3.0", "0" * 64)})
    done = lock(repo, tmp_path / "out", index)
    assert done.returncode == 2
    assert done.stderr.startswith(
        "svcc: error: lock_mismatch: beta (pinned in uv.lock: beta==3.0): no wheel set meets it"
    ), done.stderr
    assert done.stderr.count("\n") == 1
    assert not (tmp_path / "out" / "server.lock").exists()
    # the pinned version exists, but not with the pinned hash
    repo = repository(tmp_path / "repo2", extra={"uv.lock": uv_lock("1.0", "0" * 64)})
    done = lock(repo, tmp_path / "out2", index)
    assert done.returncode == 2
    assert "lock_mismatch: beta==1.0: the wheel for this platform and Python" in done.stderr
    assert "not among the hashes uv.lock pins" in done.stderr


def test_nothing_is_overwritten(index: dict[str, Path], tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    out = tmp_path / "out"
    out.mkdir()
    (out / "server.lock").write_text("mine\n")
    done = lock(repo, out, index)
    assert (done.returncode, (out / "server.lock").read_text()) == (2, "mine\n")
    assert "exists; choose a new --output" in done.stderr
    (out / "server.lock").unlink()
    (out / "wheels").mkdir()
    (out / "wheels" / "beta-2.0-py3-none-any.whl").write_bytes(b"someone else's")
    done = lock(repo, out, index)
    assert done.returncode == 2
    assert "beta-2.0-py3-none-any.whl exists and differs" in done.stderr
    assert not (out / "server.lock").exists()


def test_bad_options_are_one_line_errors(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            SVCC,
            "lock",
            str(tmp_path),
            "--platform",
            "linux/amd64",
            "--python",
            "three",
            "--wheelhouse",
            str(tmp_path / "w"),
            "--output",
            str(tmp_path / "l"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr) == (
        2,
        "svcc: error: request_invalid: --python three: write 3.N\n",
    )
    assert json.dumps(done.stdout) == '""'
