"""``svcc expose build``: policies, and git acquisition against a real HTTPS server on loopback."""

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import run_svcc
from servers import serving

HERE = Path(__file__).resolve().parents[1]
REPOS = HERE / "fixtures" / "repos"
GITSERVER = HERE / "gitserver"
TOTAL = "python:shop.pricing:total"


@pytest.fixture(scope="session")
def git_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The loopback HTTPS git server (private CA, name git.test), for the whole session."""
    if shutil.which("git") is None or shutil.which("openssl") is None:
        pytest.skip("git and openssl are needed for the HTTPS git server")
    state = tmp_path_factory.mktemp("gitserver")
    up = _git_server_up(state, os.getpid())  # a session killed with SIGKILL takes it along
    assert up.returncode == 0, up.stdout + up.stderr
    port = (state / "githttpd.port").read_text().strip()
    try:
        yield {
            "url": f"https://git.test:{port}",
            "ca": str(state / "ca.crt"),
            "repos": str(state / "repos"),
        }
    finally:
        subprocess.run(
            ["bash", str(GITSERVER / "git-https-down.sh"), str(state)],
            capture_output=True,
            check=False,
            timeout=30,
        )


def _git_server_up(state: Path, watch: int) -> "subprocess.CompletedProcess[str]":
    """Start the detached git server in ``state``; it stops when process ``watch`` ends."""
    return subprocess.run(
        ["bash", str(GITSERVER / "git-https-up.sh"), str(state)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={**os.environ, "GIT_HTTPS_WATCH_PID": str(watch)},
    )


def test_git_server_stops_when_the_session_is_killed(tmp_path: Path) -> None:
    """The fixture's server is detached (setsid), so no teardown or parent-death signal
    reaches it when the test session is killed with SIGKILL: it watches the session's pid."""
    if shutil.which("git") is None or shutil.which("openssl") is None:
        pytest.skip("git and openssl are needed for the HTTPS git server")
    session = subprocess.Popen(["sleep", "60"])
    try:
        up = _git_server_up(tmp_path, session.pid)
        assert up.returncode == 0, up.stdout + up.stderr
        server = int((tmp_path / "githttpd.pid").read_text())
        os.kill(server, 0)  # running
    finally:
        session.kill()
        session.wait()
    for _ in range(100):
        try:
            os.kill(server, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(server, signal.SIGKILL)
    pytest.fail("the git server outlived the process it watches")


def _git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": "@1700000000",
        "GIT_COMMITTER_DATE": "@1700000000",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    return subprocess.run(
        ["git", "-c", "user.name=ci", "-c", "user.email=ci@test", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def publish(server: dict[str, str], name: str, commits: list[dict[str, Any]]) -> list[str]:
    """A bare repository ``name.git`` with one commit per mapping (path → text, or a
    ``("symlink", target)`` / ``("gitlink", sha)`` tuple); returns the commit ids."""
    work = Path(tempfile.mkdtemp(prefix="svcc-test-work-"))
    try:
        _git(work, "init", "-q", "-b", "main")
        ids = []
        for files in commits:
            for rel, content in files.items():
                path = work / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                if isinstance(content, tuple) and content[0] == "symlink":
                    path.unlink(missing_ok=True)
                    path.symlink_to(content[1])
                    _git(work, "add", rel)
                elif isinstance(content, tuple) and content[0] == "gitlink":
                    _git(work, "update-index", "--add", "--cacheinfo", f"160000,{content[1]},{rel}")
                else:
                    path.write_text(content)
                    _git(work, "add", rel)
            _git(work, "commit", "-q", "-m", f"commit {len(ids) + 1}")
            ids.append(_git(work, "rev-parse", "HEAD"))
        target = Path(server["repos"]) / f"{name}.git"
        shutil.rmtree(target, ignore_errors=True)
        _git(work, "clone", "-q", "--bare", str(work), str(target))
        return ids
    finally:
        shutil.rmtree(work)


def shop_files() -> dict[str, Any]:
    root = REPOS / "src_layout"
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="session")
def shop_repo(git_server: dict[str, str]) -> dict[str, str]:
    first = {f"app/{k}": v for k, v in shop_files().items()}
    later = {
        "app/src/shop/tax.py": "RATES = {}\n\n\ndef rate(region: str) -> float:\n    return 1.0\n"
    }
    ids = publish(git_server, "shop", [first, later])
    return {"url": f"{git_server['url']}/shop.git", "old": ids[0], "tip": ids[1]}


def policies(
    tmp: Path,
    grants: list[dict[str, Any]],
    *,
    exposure: dict[str, Any] | None = None,
    readiness: list[str] | None = None,
) -> list[str]:
    operator = tmp / "operator.json"
    operator.write_text(json.dumps({"schema": "svc.operator-policy/v1", "grants": grants}))
    policy = tmp / "exposure.json"
    policy.write_text(
        json.dumps(
            exposure
            or {
                "schema": "svc.exposure-policy/v1",
                "include": [TOTAL],
                "include_all_ready": False,
                "exclude": [],
                "interfaces": ["rest", "mcp"],
                "execution": ["direct"],
            }
        )
    )
    ready = tmp / "readiness.json"
    ready.write_text(
        json.dumps({"schema": "svc.readiness-policy/v1", "execution": readiness or ["direct"]})
    )
    return [
        "--operator-policy",
        str(operator),
        "--policy",
        str(policy),
        "--readiness-policy",
        str(ready),
    ]


def grant(url: str, commit: str, ca: str | None, subdir: str = "app") -> dict[str, Any]:
    return {
        "operation": "git.fetch",
        "repository": url,
        "commit": commit,
        "subdir": subdir,
        "ca_file": ca,
    }


def leftovers() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("svcc-git-*")}


def test_non_tip_commit_is_built_and_served(
    shop_repo: dict[str, str], git_server: dict[str, str], tmp_path: Path
) -> None:
    before = leftovers()
    url, old = shop_repo["url"], shop_repo["old"]
    args = policies(tmp_path, [grant(url, old, git_server["ca"])])
    out = tmp_path / "bundle"
    proc = run_svcc(
        "expose",
        "build",
        "rest",
        "--git",
        url,
        "--ref",
        old,
        "--subdir",
        "app",
        *args,
        "--output-dir",
        str(out),
        env={"GIT_SSL_CAINFO": "/nonexistent/ca.pem"},  # the grant's CA must win
    )
    assert proc.returncode == 0, proc.stderr
    assert leftovers() == before
    manifest = json.loads((out / "svc-rest.json").read_bytes())
    assert manifest["provenance"]["url"] == url
    assert manifest["provenance"]["commit"] == old
    assert manifest["provenance"]["subdir"] == "app"
    assert manifest["provenance"]["repository_digest"].startswith("sha256:")
    assert manifest["capabilities"] == [{"id": TOTAL, "name": "shop.pricing.total"}]
    with serving(out) as server, server.client() as client:
        # the old commit's tax table (the tip's would give 10.0)
        assert client.post("/capabilities/shop.pricing.total", json={"amount": 5}).json() == 6.0
    local = tmp_path / "local"
    proc = run_svcc(
        "expose", "build", "rest", str(REPOS / "src_layout"), *args, "--output-dir", str(local)
    )
    assert proc.returncode == 0, proc.stderr
    assert (local / "source" / "shop" / "pricing.py").read_bytes() == (
        out / "source" / "shop" / "pricing.py"
    ).read_bytes()


def refused(tmp_path: Path, *args: str) -> tuple[int, str]:
    before = leftovers()
    out = tmp_path / "out"
    proc = run_svcc("expose", "build", "rest", *args, "--output-dir", str(out))
    assert leftovers() == before, "a temporary directory was left behind"
    assert not out.exists()
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return proc.returncode, lines[0]


def test_refusals_of_the_url_and_ref(
    shop_repo: dict[str, str], git_server: dict[str, str], tmp_path: Path
) -> None:
    url, old = shop_repo["url"], shop_repo["old"]
    for bad, message in [
        (url.replace("https://", "http://"), "only https:// repositories"),
        (url.replace("https://", "https://user:pw@"), "credentials in the URL are refused"),
        (url + "?x=1", "query or fragment"),
    ]:
        args = policies(tmp_path, [grant(bad, old, git_server["ca"])])
        code, line = refused(tmp_path, "--git", bad, "--ref", old, "--subdir", "app", *args)
        assert code == 2
        assert message in line
    args = policies(tmp_path, [grant(url, old[:12], git_server["ca"])])
    code, line = refused(tmp_path, "--git", url, "--ref", old[:12], "--subdir", "app", *args)
    assert code == 2
    assert "full 40-hex commit" in line
    unknown = "0" * 40
    args = policies(tmp_path, [grant(url, unknown, git_server["ca"])])
    code, line = refused(tmp_path, "--git", url, "--ref", unknown, "--subdir", "app", *args)
    assert code == 2
    assert "not in the repository" in line


def test_wrong_ca_is_refused(shop_repo: dict[str, str], tmp_path: Path) -> None:
    import certifi

    url, old = shop_repo["url"], shop_repo["old"]
    for ca in (certifi.where(), None):
        args = policies(tmp_path, [grant(url, old, ca)])
        code, line = refused(tmp_path, "--git", url, "--ref", old, "--subdir", "app", *args)
        assert code == 2
        assert "certificate verification failed" in line


def test_a_subdir_that_is_a_package_keeps_its_name(
    shop_repo: dict[str, str], git_server: dict[str, str], tmp_path: Path
) -> None:
    """``--subdir app/src/shop`` exports a package folder: its modules are ``shop.*`` (the
    folder's name, not the export's temporary folder's), so ``from .tax import rate`` works."""
    url, old = shop_repo["url"], shop_repo["old"]
    args = policies(tmp_path, [grant(url, old, git_server["ca"], subdir="app/src/shop")])
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("attrs>=23\n")  # the project's pyproject.toml is above the subdir
    out = tmp_path / "bundle"
    proc = run_svcc(
        "expose",
        "build",
        "rest",
        "--git",
        url,
        "--ref",
        old,
        "--subdir",
        "app/src/shop",
        "--requirements",
        str(requirements),
        *args,
        "--output-dir",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((out / "svc-rest.json").read_bytes())
    assert manifest["capabilities"] == [{"id": TOTAL, "name": "shop.pricing.total"}]
    with serving(out) as server, server.client() as client:
        assert client.post("/capabilities/shop.pricing.total", json={"amount": 5}).json() == 6.0


def test_declared_data_files_travel_with_a_snapshot(
    git_server: dict[str, str], tmp_path: Path
) -> None:
    """``[tool.svcc] data-files`` of a commit: the declared files are exported with the
    modules, so the snapshot's bundle holds the same bytes as the local tree's."""
    root = REPOS / "ml"
    files = {f"app/{p.relative_to(root)}": p.read_text() for p in sorted(root.rglob("*.*"))}
    (commit,) = publish(git_server, "ml", [files])
    url = f"{git_server['url']}/ml.git"
    exposure = {
        "schema": "svc.exposure-policy/v1",
        "include": ["python:predict:predict", "python:shop.inventory:in_stock"],
        "include_all_ready": False,
        "exclude": [],
        "interfaces": ["rest"],
        "execution": ["direct"],
    }
    args = policies(tmp_path, [grant(url, commit, git_server["ca"])], exposure=exposure)
    snapshot, local = tmp_path / "snapshot", tmp_path / "local"
    for where, out in (
        (("--git", url, "--ref", commit, "--subdir", "app"), snapshot),
        ((str(root),), local),
    ):
        proc = run_svcc("expose", "build", "rest", *where, *args, "--output-dir", str(out))
        assert proc.returncode == 0, proc.stderr
    manifests = [json.loads((out / "svc-rest.json").read_bytes()) for out in (snapshot, local)]
    assert manifests[0]["repository"] == manifests[1]["repository"]
    assert manifests[0]["repository"]["data_files"]["source/models/iris.json"] == "models/iris.json"
    digests = [m["provenance"]["repository_digest"] for m in manifests]
    assert digests[0] == digests[1]
    for path in ("source/models/iris.json", "source/shop/stock.json"):
        assert (snapshot / path).read_bytes() == (local / path).read_bytes()
        assert manifests[0]["files"][path] == manifests[1]["files"][path]


def test_grant_must_match_url_commit_and_subdir(
    shop_repo: dict[str, str], git_server: dict[str, str], tmp_path: Path
) -> None:
    url, old, tip = shop_repo["url"], shop_repo["old"], shop_repo["tip"]
    ca = git_server["ca"]
    for granted in (
        grant(url + "/", old, ca),
        grant(url, tip, ca),
        grant(url, old, ca, subdir="."),
    ):
        args = policies(tmp_path, [granted])
        code, line = refused(tmp_path, "--git", url, "--ref", old, "--subdir", "app", *args)
        assert code == 2
        assert line.endswith(f"no git.fetch grant for repository {url} commit {old} subdir app")


@pytest.mark.parametrize("kind", ["symlink", "submodule", "lfs"])
def test_symlink_submodule_and_lfs_pointer_are_refused(
    kind: str, git_server: dict[str, str], tmp_path: Path
) -> None:
    files: dict[str, Any] = {"mod.py": "def f() -> int:\n    return 1\n"}
    if kind == "symlink":
        files["link.py"] = ("symlink", "mod.py")
    elif kind == "submodule":
        files["vendor"] = ("gitlink", "1" * 40)
    else:
        files["data.bin"] = (
            "version https://git-lfs.github.com/spec/v1\noid sha256:" + "a" * 64 + "\nsize 12345\n"
        )
    (commit,) = publish(git_server, kind, [files])
    url = f"{git_server['url']}/{kind}.git"
    args = policies(
        tmp_path,
        [grant(url, commit, git_server["ca"], subdir=".")],
        exposure={
            "schema": "svc.exposure-policy/v1",
            "include_all_ready": True,
            "interfaces": ["rest"],
            "execution": ["direct"],
        },
    )
    code, line = refused(tmp_path, "--git", url, "--ref", commit, *args)
    assert code == 2
    assert {
        "symlink": "symlinks are refused",
        "submodule": "submodules are refused",
        "lfs": "LFS pointers are refused",
    }[kind] in line


def test_over_a_limit_is_refused(git_server: dict[str, str], tmp_path: Path) -> None:
    files = {"big.py": "#" * (4 * 1024 * 1024 + 10) + "\n"}
    (commit,) = publish(git_server, "big", [files])
    url = f"{git_server['url']}/big.git"
    args = policies(
        tmp_path,
        [grant(url, commit, git_server["ca"], subdir=".")],
        exposure={
            "schema": "svc.exposure-policy/v1",
            "include_all_ready": True,
            "interfaces": ["rest"],
            "execution": ["direct"],
        },
    )
    code, line = refused(tmp_path, "--git", url, "--ref", commit, *args)
    assert code == 2
    assert "SVC-F010 big.py" in line


def test_policy_refusals_come_before_reading_input(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-dir")
    args = policies(tmp_path, [], readiness=["local-process"])
    code, line = refused(tmp_path, missing, *args)
    assert (code, line) == (
        2,
        f"svcc: error: {tmp_path / 'readiness.json'}: the readiness policy does not allow "
        'execution "direct"',
    )
    args = policies(
        tmp_path,
        [],
        exposure={
            "schema": "svc.exposure-policy/v1",
            "include": [TOTAL],
            "interfaces": ["mcp"],
            "execution": ["direct"],
        },
    )
    code, line = refused(tmp_path, missing, *args)
    assert "does not allow interface 'rest'" in line
    args = policies(
        tmp_path,
        [],
        exposure={
            "schema": "svc.exposure-policy/v1",
            "include": [TOTAL],
            "interfaces": ["rest"],
            "execution": ["local-process"],
        },
    )
    code, line = refused(tmp_path, missing, *args)
    assert 'exposure policy does not allow execution "direct"' in line
    args = policies(tmp_path, [])
    code, line = refused(tmp_path, "--git", "https://git.test:1/x.git", "--ref", "a" * 40, *args)
    assert "no git.fetch grant" in line


def test_policies_are_strict(tmp_path: Path) -> None:
    args = policies(
        tmp_path,
        [],
        exposure={
            "schema": "svc.exposure-policy/v1",
            "include": [TOTAL],
            "interfaces": ["rest"],
            "execution": ["direct"],
            "extra": 1,
        },
    )
    code, line = refused(tmp_path, str(REPOS / "src_layout"), *args)
    assert code == 2
    assert "unknown key 'extra'" in line
    args = policies(
        tmp_path,
        [],
        exposure={
            "schema": "svc.exposure-policy/v1",
            "include": ["shop.pricing.total"],
            "interfaces": ["rest"],
            "execution": ["direct"],
        },
    )
    code, line = refused(tmp_path, str(REPOS / "src_layout"), *args)
    assert "not a full capability id" in line
    (tmp_path / "operator.json").write_text('{"schema": "svc.operator-policy/v2", "grants": []}')
    proc = run_svcc(
        "expose",
        "build",
        "rest",
        str(REPOS / "src_layout"),
        *args[:1],
        str(tmp_path / "operator.json"),
        *args[2:],
        "--output-dir",
        str(tmp_path / "o"),
    )
    assert proc.returncode == 2
    assert "not a svc.operator-policy/v1 document" in proc.stderr


def test_exposure_selection_include_all_ready_and_exclude(tmp_path: Path) -> None:
    args = policies(
        tmp_path,
        [],
        exposure={
            "schema": "svc.exposure-policy/v1",
            "include": [],
            "include_all_ready": True,
            "exclude": ["python:shop.util:fields_of"],
            "interfaces": ["mcp"],
            "execution": ["direct", "local-process"],
        },
    )
    out = tmp_path / "b"
    proc = run_svcc(
        "expose", "build", "mcp", str(REPOS / "src_layout"), *args, "--output-dir", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    ids = [c["id"] for c in json.loads((out / "svc-mcp.json").read_bytes())["capabilities"]]
    assert ids == [
        "python:shop.pricing:discount",
        "python:shop.pricing:total",
        "python:shop.tax:rate",
        "python:shop.util:clamp",
    ]  # remote.fetch is conditional: not "ready"; fields_of is excluded


def test_interrupt_during_fetch_removes_the_temporary_directory(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) and SIGTERM while git waits on a server that never answers."""
    import signal
    import socket
    import threading
    import time

    from helpers import SVCC

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])  # never answers the TLS handshake
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    url, commit = f"https://127.0.0.1:{port}/stuck.git", "b" * 40
    args = policies(tmp_path, [grant(url, commit, None, subdir=".")])
    try:
        for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 130)):
            before = leftovers()
            proc = subprocess.Popen(
                [
                    SVCC,
                    "expose",
                    "build",
                    "rest",
                    "--git",
                    url,
                    "--ref",
                    commit,
                    *args,
                    "--output-dir",
                    str(tmp_path / "out"),
                ],
                stderr=subprocess.PIPE,
                text=True,
            )
            deadline = time.monotonic() + 30
            while leftovers() == before and time.monotonic() < deadline:
                time.sleep(0.05)
            assert leftovers() != before, "the fetch did not start"
            time.sleep(0.3)
            proc.send_signal(sig)
            _, stderr = proc.communicate(timeout=30)
            assert proc.returncode == code, stderr
            assert stderr.strip() == "svcc: interrupted"
            assert leftovers() == before
            assert not (tmp_path / "out").exists()
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        listener.close()


def test_a_killed_command_leaves_no_fetch_running(tmp_path: Path) -> None:
    """SIGKILL of ``svc expose build`` while git waits on a server that never answers: git
    ran in a session of its own (so that its helpers end with it), which no signal to the
    command reached, and it went on unwatched by the size and time limits. Its temporary
    directory stayed too (no ``finally`` runs): a remover now takes it."""

    from helpers import SVCC
    from test_process_lifetime import gone, running_below, survivors

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)  # connections wait in the backlog: the TLS handshake never ends
        url = f"https://127.0.0.1:{listener.getsockname()[1]}/stuck.git"
        commit = "c" * 40
        args = policies(tmp_path, [grant(url, commit, None, subdir=".")])
        private = tmp_path / "tmp"
        private.mkdir()
        proc = subprocess.Popen(
            [SVCC, "expose", "build", "rest", "--git", url, "--ref", commit, *args,
             "--output-dir", str(tmp_path / "out")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "TMPDIR": str(private)},
        )  # fmt: skip
        started: set[int] = set()
        try:
            started = running_below(proc, b"fetch", 60)
            assert [p.name[: len("svcc-git-")] for p in private.iterdir()] == ["svcc-git-"]
        finally:
            proc.kill()
            proc.wait()
        assert survivors(started) == set()
        assert gone(set(private.iterdir())) == []


# -- acquisition limits (time, bytes) against the real server ---------------------------------

# The CLI with other acquisition limits: ``svcc.compiler.git_fetch.DEFAULT_LIMITS`` is the seam
# (not a command-line option: the specification fixes the limits).
WITH_LIMITS = (
    "import json, sys\n"
    "import svcc.compiler.git_fetch as git_fetch\n"
    "git_fetch.DEFAULT_LIMITS = git_fetch.GitLimits(**json.loads(sys.argv[1]))\n"
    "from svcc.cli.main import main\n"
    "sys.exit(main(sys.argv[2:]))\n"
)


@pytest.fixture(scope="session")
def big_repo(git_server: dict[str, str]) -> dict[str, str]:
    """A commit of about 16 MB of incompressible data beside one small module."""
    import base64
    import random

    noise = random.Random(11).randbytes(12 * 1024 * 1024)
    files = {
        "mod.py": "def f() -> int:\n    return 1\n",
        "data.txt": base64.encodebytes(noise).decode(),
    }
    (commit,) = publish(git_server, "bigdata", [files])
    return {"url": f"{git_server['url']}/bigdata.git", "commit": commit}


def refused_with_limits(
    tmp_path: Path, limits: dict[str, float], repo: dict[str, str], ca: str
) -> tuple[int, str]:
    import sys

    args = policies(
        tmp_path,
        [grant(repo["url"], repo["commit"], ca, subdir=".")],
        exposure={
            "schema": "svc.exposure-policy/v1",
            "include_all_ready": True,
            "interfaces": ["rest"],
            "execution": ["direct"],
        },
    )
    before = leftovers()
    out = tmp_path / "out"
    proc = subprocess.run(
        [
            *(sys.executable, "-c", WITH_LIMITS, json.dumps(limits), "expose", "build", "rest"),
            *("--git", repo["url"], "--ref", repo["commit"], *args, "--output-dir", str(out)),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert leftovers() == before, "a temporary directory was left behind"
    assert not out.exists()
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return proc.returncode, lines[0]


def test_fetch_over_the_byte_limit_is_refused(
    big_repo: dict[str, str], git_server: dict[str, str], tmp_path: Path
) -> None:
    code, line = refused_with_limits(
        tmp_path, {"max_fetch_bytes": 1024 * 1024}, big_repo, git_server["ca"]
    )
    assert code == 2
    assert line.startswith("svcc: error: fetching "), line
    assert line.endswith("over the 1048576-byte limit of a fetch"), line


def test_fetch_over_the_time_limit_is_refused(
    big_repo: dict[str, str], git_server: dict[str, str], tmp_path: Path
) -> None:
    code, line = refused_with_limits(tmp_path, {"timeout_s": 0.25}, big_repo, git_server["ca"])
    assert code == 2
    assert line.startswith("svcc: error: "), line
    assert line.endswith("over the 0.25 s time limit"), line


def test_the_same_repository_within_the_limits_is_built(
    big_repo: dict[str, str], git_server: dict[str, str], tmp_path: Path
) -> None:
    """The two refusals above are the limits', not the repository's."""
    args = policies(
        tmp_path,
        [grant(big_repo["url"], big_repo["commit"], git_server["ca"], subdir=".")],
        exposure={
            "schema": "svc.exposure-policy/v1",
            "include_all_ready": True,
            "interfaces": ["rest"],
            "execution": ["direct"],
        },
    )
    before = leftovers()
    proc = run_svcc(
        "expose",
        "build",
        "rest",
        "--git",
        big_repo["url"],
        "--ref",
        big_repo["commit"],
        *args,
        "--output-dir",
        str(tmp_path / "out"),
    )
    assert proc.returncode == 0, proc.stderr
    assert leftovers() == before
    assert json.loads(proc.stdout)["capabilities"] == ["python:mod:f"]


def test_manifest_over_one_mebibyte_is_refused_at_generation(tmp_path: Path) -> None:
    """A tree whose bundle manifest would exceed 1 MiB (thousands of capabilities with long
    names): one line, exit 2, nothing written."""
    root = tmp_path / "wide"
    (root / "wide").mkdir(parents=True)
    (root / "wide" / "__init__.py").write_text("")
    long = "a_function_with_a_name_long_enough_to_fill_a_manifest_quickly_" * 3
    for m in range(30):
        (root / "wide" / f"part{m:02}.py").write_text(
            "\n\n".join(f"def {long}{i}(x: int) -> int:\n    return x\n" for i in range(100))
        )
    out = tmp_path / "out"
    proc = run_svcc("compile", str(root), "--target", "rest", "--output-dir", str(out))
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "the bundle manifest would be" in lines[0]
    assert "over the 1048576-byte limit; select fewer capabilities" in lines[0]
    assert not out.exists()
    proc = run_svcc(
        "compile",
        str(root),
        "--target",
        "rest",
        "--output-dir",
        str(out),
        "--select",
        f"wide.part00.{long}1",
    )
    assert proc.returncode == 0, proc.stderr  # a smaller selection of the same tree is fine
