"""The target protocol: a target declares its bundle and its options, and svcc reads only
that declaration. The out-of-tree sample plug-in (tests/plugins/svcc_sample_target) is the
proof: listed with its options, compiled with them, golden (test_bundle_golden), run by
every conformance check, and served by ``svcc serve`` without any edit to svcc."""

import json
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import ClassVar, Literal

import httpx
import pytest
from attrs import field, frozen
from helpers import ROOT, SVCC, run_svcc
from servers import free_port, spawn
from svcc.compiler.registry import get_target, load_target_class, target_options
from svcc.contracts.errors import UsageError
from svcc.contracts.target import BundleSpec

EXAMPLE = ROOT / "examples" / "shapes.py"


@frozen
class Options:
    name: ClassVar[str] = "options"
    base: str = field(metadata={"help": "the base image", "metavar": "REF"})
    tag: str | None = field(default=None, metadata={"help": "a tag"})
    replicas: int = field(default=1, metadata={"help": "how many"})
    push: bool = field(default=False, metadata={"help": "push it"})
    flavour: Literal["slim", "full"] = field(default="slim", metadata={"help": "the flavour"})


def test_options_are_described_from_the_attrs_fields() -> None:
    described = {o.name: o for o in target_options(Options)}  # type: ignore[arg-type]
    assert list(described) == ["base", "tag", "replicas", "push", "flavour"]
    base = described["base"]
    assert (base.flag, base.kind, base.required, base.metavar) == ("--base", "str", True, "REF")
    assert (described["tag"].optional, described["tag"].required) == (True, False)
    assert (described["replicas"].kind, described["replicas"].default) == ("int", 1)
    assert described["push"].kind == "bool"
    assert described["flavour"].choices == ("slim", "full")


@frozen
class NoHelp:
    name: ClassVar[str] = "nohelp"
    size: int = 1


@frozen
class BadType:
    name: ClassVar[str] = "badtype"
    sizes: list[int] = field(factory=list, metadata={"help": "sizes"})


@pytest.mark.parametrize(("cls", "fragment"), [(NoHelp, "needs metadata"), (BadType, "list")])
def test_malformed_option_declarations_are_named(cls: type, fragment: str) -> None:
    with pytest.raises(UsageError, match=fragment):
        target_options(cls)


def test_get_target_and_load_target_class() -> None:
    cls = load_target_class("sample")
    assert cls.bundle is not None
    assert cls.bundle.manifest == "svc-sample.json"
    assert not cls.supports_execution_policy
    assert get_target("sample") == cls()  # defaults
    assert get_target("sample", {"style": "table"}).style == "table"  # type: ignore[attr-defined]
    for options, fragment in [
        ({"style": "grid"}, "'grid' is not one of list, table"),
        ({"style": 3}, "expected str"),
        ({"colour": "red"}, "has no option 'colour'"),
    ]:
        with pytest.raises(UsageError, match=fragment):
            get_target("sample", options)


def test_targets_lists_options() -> None:
    text = run_svcc("targets").stdout
    assert (
        "--style STYLE: how capabilities are laid out (one of list, table) (default list)" in text
    )
    listed = {
        t["name"]: t for t in json.loads(run_svcc("targets", "--format", "json").stdout)["targets"]
    }
    assert [o["flag"] for o in listed["sample"]["options"]] == ["--title", "--style"]
    assert listed["sample"]["servable"] is True
    assert listed["ir"]["servable"] is False
    assert listed["rest"]["supports_execution_policy"] is True


def test_compile_parses_the_selected_targets_options(tmp_path: Path) -> None:
    out = tmp_path / "o"
    proc = run_svcc(
        "compile", str(EXAMPLE), "--target", "sample", "--output-dir", str(out),
        "--style", "table", "--title", "Shapes",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    page = (out / "CAPABILITIES.md").read_text()
    assert page.startswith("# Shapes\n\n| function | parameters | summary |")
    bad = run_svcc(
        "compile", str(EXAMPLE), "--target", "sample", "--output-dir", str(tmp_path / "b"),
        "--style", "grid",
    )  # fmt: skip
    assert bad.returncode == 2
    assert "invalid choice: 'grid'" in bad.stderr
    # another target's option is not accepted
    other = run_svcc(
        "compile", str(EXAMPLE), "--target", "ir", "--output-dir", str(tmp_path / "c"),
        "--style", "table",
    )  # fmt: skip
    assert other.returncode == 2
    assert "unrecognized arguments: --style" in other.stderr
    assert "options of target 'sample'" in run_svcc("compile", "--target", "sample", "-h").stdout


def test_a_required_option_is_required(tmp_path: Path) -> None:
    site = tmp_path / "site"
    info = site / "needy-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: needy\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[svcc.targets]\nneedy = needy:Needy\n")
    (site / "needy.py").write_text(
        "from typing import ClassVar\n"
        "from attrs import field, frozen\n"
        "from svcc.contracts.target import FileTree\n"
        "@frozen\n"
        "class Needy:\n"
        "    name: ClassVar[str] = 'needy'\n"
        "    description: ClassVar[str] = 'needs --base'\n"
        "    supports_execution_policy: ClassVar[bool] = False\n"
        "    bundle: ClassVar[None] = None\n"
        "    base: str = field(metadata={'help': 'the base'})\n"
        "    def emit(self, ir, ctx):\n"
        "        return FileTree.of({'base.txt': self.base.encode()})\n"
    )
    env = {"PYTHONPATH": str(site)}
    args = ("compile", str(EXAMPLE), "--target", "needy", "--output-dir")
    missing = run_svcc(*args, str(tmp_path / "a"), env=env)
    assert missing.returncode == 2
    assert "the following arguments are required: --base" in missing.stderr
    given = run_svcc(*args, str(tmp_path / "b"), "--base", "alpine", env=env)
    assert given.returncode == 0, given.stderr
    assert (tmp_path / "b" / "base.txt").read_text() == "alpine"


def test_reserved_module_names_are_the_targets_own(tmp_path: Path) -> None:
    spec = load_target_class("sample").bundle
    assert isinstance(spec, BundleSpec)
    assert spec.module_name_problem("server") is not None
    assert spec.module_name_problem("svc_runtime.x") is not None  # every bundle's
    refused = run_svcc(
        "generate", "sample", str(EXAMPLE), "--output-dir", str(tmp_path / "a"),
        "--module-name", "server",
    )  # fmt: skip
    assert refused.returncode == 2
    assert "clashes with the sample bundle's own module 'server'" in refused.stderr
    allowed = run_svcc(
        "generate", "rest", str(EXAMPLE), "--output-dir", str(tmp_path / "b"),
        "--module-name", "server",
    )  # fmt: skip
    assert allowed.returncode == 0, allowed.stderr
    # and inspect, which writes no bundle, does not refuse a name a bundle would
    assert run_svcc("inspect", str(EXAMPLE), "--module-name", "app").returncode == 0


def test_generate_needs_a_servable_target(tmp_path: Path) -> None:
    proc = run_svcc("generate", "ir", str(EXAMPLE), "--output-dir", str(tmp_path / "o"))
    assert proc.returncode == 2
    assert "target 'ir' writes no service bundle" in proc.stderr


def test_serve_refuses_a_busy_port_with_exit_2(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    assert run_svcc("generate", "sample", str(EXAMPLE), "--output-dir", str(bundle)).returncode == 0
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        proc = run_svcc(
            "serve", str(bundle), "--port", str(port), "--cache-dir", str(tmp_path / "c")
        )
    assert proc.returncode == 2, proc.stderr
    assert f"port {port} on 127.0.0.1 is not available" in proc.stderr
    assert not (tmp_path / "c").exists()  # refused before any environment was built


@pytest.mark.slow
def test_sample_plugin_bundle_is_served(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    assert run_svcc("generate", "sample", str(EXAMPLE), "--output-dir", str(bundle)).returncode == 0
    port = free_port()
    proc = spawn(
        [SVCC, "serve", str(bundle), "--port", str(port), "--cache-dir", str(tmp_path / "c")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "the sample bundle never answered"
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.2)
        assert page.status_code == 200
        assert page.text == (bundle / "CAPABILITIES.md").read_text()
        assert httpx.get(f"http://127.0.0.1:{port}/health").json() == {"status": "ok"}
    finally:
        proc.kill()  # the stdlib server has nothing to clean up
        proc.wait()


def test_sample_plugin_gets_repository_bundles_images_and_kubernetes(tmp_path: Path) -> None:
    """A servable target written outside svcc gets, through the protocol alone, a repository
    bundle (``svcc generate sample DIR``), an image build context (``--target oci
    --interface sample``: run as its BundleSpec declares, its interface document labelled)
    and a Kubernetes base (``--target k8s --interface sample``: it listens, so a Service)."""
    import yaml
    from oci_support import SHAPES_REPO, SHAPES_SELECT

    bundle = tmp_path / "bundle"
    done = run_svcc(
        "generate", "sample", str(SHAPES_REPO), "--select", SHAPES_SELECT,
        "--output-dir", str(bundle), "--format", "json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["bundle_kind"] == "repository"
    manifest = json.loads((bundle / "svc-sample.json").read_text())
    assert manifest["bundle_kind"] == "repository"
    names = [c["name"] for c in manifest["capabilities"]]
    assert names == [
        f"shapes.geometry.{n}" for n in ("circle_area", "describe", "rectangle_area", "scale")
    ]

    lock = tmp_path / "sample.lock"
    # the sample's server is the standard library; a lock holds at least one wheel
    lock.write_text(f"attrs==24.2.0 --hash=sha256:{'0' * 64}\n")
    context = tmp_path / "context"
    done = run_svcc(
        "compile", str(SHAPES_REPO), "--target", "oci", "--interface", "sample",
        "--select", SHAPES_SELECT, "--base-image", "registry.test:5444/ci/base@sha256:" + "b" * 64,
        "--lock", str(lock), "--output-dir", str(context),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (context / "bundle" / "svc-sample.json").read_bytes() == (
        bundle / "svc-sample.json"
    ).read_bytes()
    containerfile = (context / "Containerfile").read_text()
    assert "EXPOSE 8000" in containerfile
    assert 'CMD ["/opt/svc/venv/bin/python", "server.py", "0.0.0.0", "8000"]' in containerfile
    plan = json.loads((context / "delivery-plan.json").read_text())
    assert plan["run"]["port"] == 8000
    assert plan["run"]["stdio"] is False
    target = json.loads((context / "target.json").read_text())
    assert target["labels"]["io.svcc.interface"] == "sample"

    base = tmp_path / "base"
    done = run_svcc(
        "compile", str(SHAPES_REPO), "--target", "k8s", "--interface", "sample",
        "--select", SHAPES_SELECT, "--image", "registry.test:5443/team/pages@sha256:" + "a" * 64,
        "--inputs-sha256", "b" * 64, "--output-dir", str(base),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (base / "service.yaml").exists()
    deployment = yaml.safe_load((base / "deployment.yaml").read_text())
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["readinessProbe"]["httpGet"]["path"] == "/health"
    assert deployment["metadata"]["labels"]["app.kubernetes.io/component"] == "sample"


def test_a_wrapper_names_a_servable_target(tmp_path: Path) -> None:
    done = run_svcc(
        "compile", str(EXAMPLE), "--target", "k8s", "--interface", "ir",
        "--image", "registry.test:5443/team/pages@sha256:" + "a" * 64,
        "--inputs-sha256", "b" * 64, "--output-dir", str(tmp_path / "o"),
    )  # fmt: skip
    assert done.returncode == 2
    assert "'ir' is not a target that writes a service" in done.stderr
    assert "\n" not in done.stderr.strip()
    assert not (tmp_path / "o").exists()
