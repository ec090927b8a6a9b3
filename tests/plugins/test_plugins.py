"""svc plugins without an engine: install/list/enable/disable and the invocation contract,
with a real (test) extension wheel, svc-probe, that reports the process it runs in."""

import base64
import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import SVCC, TESTS
from svcc.images.errors import ImageInputError
from svcc.images.wheelmeta import sha256_of
from svcc.plugins import store
from svcc.plugins.invoke import PluginFailure, run
from test_process_lifetime import cmdline, descendants, gone, survivors

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("probe")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            str(TESTS / "plugins" / "svc_probe"),
            "-w",
            str(work),
        ],
        check=True,
        capture_output=True,
        env={**os.environ, "PIP_NO_INDEX": "1"},
    )
    wheel = next(work.glob("svc_probe-*.whl"))
    lock = work / "empty.lock"
    lock.write_text("# no dependencies\n")
    (work / "wheelhouse").mkdir()
    root = work / "plugins"
    installed = store.install(
        wheel,
        sha256=hashlib.sha256(wheel.read_bytes()).hexdigest(),
        requirements=lock,
        wheelhouse=work / "wheelhouse",
        plugins_dir=root,
    )
    return {"work": work, "root": root, "installed": installed, "wheel": wheel, "lock": lock}


def request(tag: str) -> dict[str, Any]:
    return {
        "schema": "svc.oci-build/v1",
        "bundle": "/b",
        "interface": "rest",
        "base_image": "registry.test/ci/base@sha256:" + "a" * 64,
        "platform": "linux/amd64",
        "tag": tag,
        "requirements": "/r.lock",
        "wheelhouse": "/w",
        "engine": {"executable": "/usr/bin/docker", "socket": "/run/d.sock", "builder": None},
    }


def files(probe: dict[str, Any], tag: str) -> tuple[Path, Path]:
    installed = probe["installed"]
    req = request(tag)
    target = {k: v for k, v in req.items() if k != "schema"}
    policy = {
        "schema": "svc.operator-policy/v1",
        "grants": [
            {
                "operation": "image.build",
                "permissions": ["registry.read", "image.build"],
                "plugin": {
                    "name": installed.name,
                    "version": installed.version,
                    "sha256": installed.sha256,
                    "lock_sha256": installed.lock_sha256,
                },
                "target": target,
            }
        ],
    }
    args, pol = probe["work"] / f"{tag}.json", probe["work"] / f"{tag}-policy.json"
    args.write_text(json.dumps(req))
    pol.write_text(json.dumps(policy))
    return args, pol


def invoke(probe: dict[str, Any], tag: str, timeout_ms: int = 10_000) -> dict[str, Any]:
    args, pol = files(probe, tag)
    return run(
        "svc-probe",
        "build",
        arguments=args,
        operator_policy=pol,
        timeout_ms=timeout_ms,
        plugins_dir=probe["root"],
    ).result


def test_install_never_activates_and_enable_disable(probe: dict[str, Any]) -> None:
    root = probe["root"]
    assert store.enabled_versions(root) == {}
    with pytest.raises(ImageInputError) as info:
        invoke(probe, "probe:env")
    assert info.value.code == "plugin_not_enabled"
    with pytest.raises(ImageInputError):
        store.enable("svc-probe", "9.9", root)
    store.enable("svc-probe", "1.0.0", root)
    listed = json.loads(
        subprocess.run(
            [SVCC, "plugins", "list", "--plugins-dir", str(root)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert [(p["name"], p["version"], p["enabled"]) for p in listed] == [
        ("svc-probe", "1.0.0", True)
    ]
    again = subprocess.run(
        [
            SVCC,
            "plugins",
            "install",
            str(probe["wheel"]),
            "--sha256",
            probe["installed"].sha256,
            "--requirements",
            str(probe["lock"]),
            "--wheelhouse",
            str(probe["work"] / "wheelhouse"),
            "--plugins-dir",
            str(root),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert again.returncode == 2
    assert "already installed" in again.stderr


def test_fresh_isolated_process(probe: dict[str, Any]) -> None:
    store.enable("svc-probe", "1.0.0", probe["root"])
    leaked = os.open(os.devnull, os.O_RDONLY)
    os.set_inheritable(leaked, True)
    os.environ["SVCC_PROBE_SECRET"] = "x"
    try:
        result = invoke(probe, "probe:env")
    finally:
        os.close(leaked)
        del os.environ["SVCC_PROBE_SECRET"]
    assert result["env"] == ["HOME", "LANG", "PATH", "TMPDIR"]
    assert result["cwd_entries"] == []
    assert result["cwd"] != os.getcwd()
    assert not Path(result["cwd"]).exists()  # removed afterwards
    assert result["session_leader"] is True
    assert leaked not in result["fds"]
    assert max(result["fds"]) <= 3  # stdin, stdout, stderr and the listing itself
    assert result["flags"] == [1, 1]
    assert result["request"]["schema"] == "svc.extension/v1"
    assert result["request"]["arguments"]["tag"] == "probe:env"


SLEEP = b"sleep\x00600\x00"  # what probe:spawn starts


def test_extension_and_what_it_started_go_with_a_killed_command(probe: dict[str, Any]) -> None:
    """SIGKILL of ``svcc plugins run`` (no ``finally`` runs) left the extension, which leads a
    session of its own, and its children running; its watcher now kills that session's group.
    Its ``svc-plugin-*`` folder (the extension's TMPDIR, where svc-oci builds) stayed too."""
    store.enable("svc-probe", "1.0.0", probe["root"])
    args, pol = files(probe, "probe:spawn")
    private = probe["work"] / "tmp-killed"
    private.mkdir()
    proc = subprocess.Popen(
        cli_argv(probe, "build", args, pol),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "TMPDIR": str(private)},
    )
    started: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            started = descendants(proc.pid)
            if any(cmdline(pid) == SLEEP for pid in started):
                break
            time.sleep(0.05)
        assert any(b"svc_probe" in cmdline(pid) for pid in started), started
        assert any(cmdline(pid) == SLEEP for pid in started), started
        assert [p.name[:11] for p in private.iterdir()] == ["svc-plugin-"]
    finally:
        proc.kill()
        proc.wait()
    assert survivors(started) == set()
    assert gone(set(private.iterdir())) == []


def test_a_killed_install_leaves_no_pip_and_no_staging(probe: dict[str, Any]) -> None:
    """SIGKILL of ``svcc plugins install`` while pip installs: pip went on and the staging
    folder ``.VERSION.installing-*`` stayed in the store."""
    from test_lifetime_commands import stopped_mid_pip

    work = probe["work"] / "killed-install"
    (work / "plugins" / "svc-probe").mkdir(parents=True)
    wheel = probe["wheel"]
    argv = ["plugins", "install", str(wheel), "--sha256", sha256_of(wheel),
            "--requirements", str(probe["lock"]), "--wheelhouse", str(probe["work"] / "wheelhouse"),
            "--plugins-dir", str(work / "plugins")]  # fmt: skip
    staging = work / "plugins" / "svc-probe"
    assert stopped_mid_pip(argv, work, signal.SIGKILL, staging) == (set(), [])


def test_bounds_and_redaction(probe: dict[str, Any]) -> None:
    store.enable("svc-probe", "1.0.0", probe["root"])
    with pytest.raises(PluginFailure) as info:
        invoke(probe, "probe:sleep", timeout_ms=500)
    assert info.value.code == "timeout"
    with pytest.raises(PluginFailure) as info:
        invoke(probe, "probe:spam")
    assert info.value.code == "plugin_failed"
    assert "stdout" in info.value.detail
    with pytest.raises(PluginFailure) as info:
        invoke(probe, "probe:fail")
    assert (info.value.code, info.value.detail) == ("engine_failed", "secret detail")
    args, pol = files(probe, "probe:fail")
    cli = cli_run(probe, "build", args, pol)
    assert (cli.returncode, cli.stdout, cli.stderr) == (
        1,
        "",
        "svcc: error: plugin_failed: engine_failed: secret detail\n",
    )
    with pytest.raises(ImageInputError) as refused:
        invoke(probe, "probe:env", timeout_ms=600_001)
    assert refused.value.code == "request_invalid"


def test_disable(probe: dict[str, Any]) -> None:
    store.enable("svc-probe", "1.0.0", probe["root"])
    store.disable("svc-probe", probe["root"])
    assert store.enabled_versions(probe["root"]) == {}
    with pytest.raises(ImageInputError) as info:
        store.disable("svc-probe", probe["root"])
    assert info.value.code == "plugin_not_enabled"


def test_manifest_must_agree_with_metadata(probe: dict[str, Any], tmp_path: Path) -> None:
    import zipfile

    wheel = tmp_path / probe["wheel"].name
    with zipfile.ZipFile(probe["wheel"]) as src, zipfile.ZipFile(wheel, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename.endswith("svc-extension.json"):
                data = data.replace(b'"1.0.0"', b'"2.0.0"')
            dst.writestr(item, data)
    with pytest.raises(ImageInputError) as info:
        store.install(
            wheel,
            sha256=hashlib.sha256(wheel.read_bytes()).hexdigest(),
            requirements=probe["lock"],
            wheelhouse=probe["work"] / "wheelhouse",
            plugins_dir=tmp_path / "plugins",
        )
    assert info.value.code == "plugin_invalid"
    assert "version" in info.value.message
    assert not (tmp_path / "plugins" / "svc-probe" / "1.0.0").exists()


def cli_argv(
    probe: dict[str, Any], operation: str, args: Path, pol: Path, *extra: str
) -> list[str]:
    return [
        SVCC,
        "plugins",
        "run",
        "svc-probe",
        operation,
        "--arguments",
        str(args),
        "--operator-policy",
        str(pol),
        "--plugins-dir",
        str(probe["root"]),
        *extra,
    ]


def cli_run(probe: dict[str, Any], operation: str, args: Path, pol: Path, *extra: str) -> Any:
    return subprocess.run(
        cli_argv(probe, operation, args, pol, *extra),
        capture_output=True,
        text=True,
        check=False,
    )


def test_log_file_is_new_private_and_holds_the_extension_output(probe: dict[str, Any]) -> None:
    store.enable("svc-probe", "1.0.0", probe["root"])
    args, pol = files(probe, "probe:fail")
    log = probe["work"] / "fail.log"
    done = cli_run(probe, "build", args, pol, "--log-file", str(log))
    assert done.returncode == 1
    assert done.stderr == "svcc: error: plugin_failed: engine_failed: secret detail\n"
    assert "the engine's output" not in done.stdout + done.stderr
    assert log.read_text() == "the engine's output\n"
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    # never overwritten, never followed: refused by the core before the extension runs
    again = cli_run(probe, "build", args, pol, "--log-file", str(log))
    assert again.returncode == 2
    assert again.stderr == (
        f"svcc: error: request_invalid: --log-file {log}: exists; a log is never overwritten\n"
    )
    assert log.read_text() == "the engine's output\n"
    link = probe["work"] / "link.log"
    link.symlink_to(probe["work"] / "elsewhere.log")
    assert cli_run(probe, "build", args, pol, "--log-file", str(link)).returncode == 2
    assert not (probe["work"] / "elsewhere.log").exists()
    # a success keeps its log too, and the result alone is on stdout
    args, pol = files(probe, "probe:env")
    ok_log = probe["work"] / "ok.log"
    done = cli_run(probe, "build", args, pol, "--log-file", str(ok_log))
    assert done.returncode == 0
    assert json.loads(done.stdout)["cwd"]
    assert ok_log.read_text() == ""


def test_the_core_strips_credentials_a_careless_extension_writes(probe: dict[str, Any]) -> None:
    """An extension that puts the password and the auth value into its message and its log:
    the CLI line is one line without them, the log file has neither."""
    store.enable("svc-probe", "1.0.0", probe["root"])
    installed = probe["installed"]
    password = "pw-" + os.urandom(8).hex()
    auth = base64.b64encode(f"ciuser:{password}".encode()).decode()
    credentials = probe["work"] / "auth.json"
    credentials.write_text(json.dumps({"auths": {"registry.test:5443": {"auth": auth}}}))
    request = {
        "schema": "svc.oci-push/v1",
        "image_id": "sha256:" + "b" * 64,
        "platform": "linux/amd64",
        "inputs_sha256": "c" * 64,
        "destination": "registry.test:5443/team/shop:1.0",
        "engine": {"executable": "/usr/bin/docker", "socket": "/run/d.sock", "builder": None},
        "authentication": {"config_file": str(credentials)},
    }
    policy = {
        "schema": "svc.operator-policy/v1",
        "grants": [
            {
                "operation": "image.push",
                "permissions": ["registry.read", "registry.publish"],
                "plugin": {
                    "name": installed.name,
                    "version": installed.version,
                    "sha256": installed.sha256,
                    "lock_sha256": installed.lock_sha256,
                },
                "repository": "registry.test:5443/team/shop",
            }
        ],
    }
    args, pol = probe["work"] / "push.json", probe["work"] / "push-policy.json"
    args.write_text(json.dumps(request))
    pol.write_text(json.dumps(policy))
    log = probe["work"] / "push.log"
    done = cli_run(probe, "push", args, pol, "--log-file", str(log))
    assert done.returncode == 1
    assert done.stderr == (
        "svcc: error: plugin_failed: registry_failed: the registry said no to <redacted> "
        "(auth <redacted>)\n"
    )
    text = log.read_text()
    assert text == "$ docker push\nlogin <redacted>\npassword=<redacted>\n"
    for stream in (done.stdout, done.stderr, text):
        assert password not in stream
        assert auth not in stream
    # the Python API's detail is stripped the same way
    with pytest.raises(PluginFailure) as info:
        run("svc-probe", "push", arguments=args, operator_policy=pol, plugins_dir=probe["root"])
    assert password not in info.value.detail
    assert auth not in info.value.detail
