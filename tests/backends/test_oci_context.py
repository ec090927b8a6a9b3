"""The oci target's build context: golden trees, determinism, and its refusals (no engine).

``tests/golden_oci/<interface>/`` holds the whole context but the runtime copies under
``bundle/svc_runtime/`` (pinned by the bundle manifest's digests); ``pytest
--snapshot-update`` rewrites it.
"""

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from golden_tree import check_tree
from helpers import SVCC, TESTS
from oci_support import EXAMPLE, SHAPES, SHAPES_REPO, SHAPES_SELECT, repository_bundle
from svcc.backends.oci import OciTarget
from svcc.compiler import bundles
from svcc.compiler import driver as analyses
from svcc.contracts.target import File, FileTree
from svcc.images.bundle_input import read_bundle
from svcc.images.errors import ImageInputError

GOLDEN = TESTS / "golden_oci"
BASE = "registry.test:5444/ci/base@sha256:" + "b" * 64
PINS = {
    "rest": [
        "fastapi==0.115.0",
        "prometheus-client==0.20.0",
        "pydantic==2.9.0",
        "pyjwt==2.8.0",
        "swagger-ui-bundle-v2==5.31.0",
        "uvicorn==0.30.0",
    ],
    "mcp": [
        "mcp==2.3.0",
        "prometheus-client==0.20.0",
        "pydantic==2.9.0",
        "pyjwt==2.8.0",
        "uvicorn==0.30.0",
    ],
}


def lock_file(tmp: Path, interface: str, pins: list[str] | None = None) -> Path:
    path = tmp / f"{interface}.lock"
    lines = [f"{pin} --hash=sha256:{i:064x}\n" for i, pin in enumerate(pins or PINS[interface])]
    path.write_text("# locked for the golden context\n" + "".join(lines))
    return path


def context(tmp: Path, interface: str, **options: object) -> FileTree:
    tmp.mkdir(parents=True, exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix=f"bundle-{interface}-", dir=tmp))
    bundle = read_bundle(repository_bundle(out, interface))
    target = OciTarget(
        interface=interface,
        base_image=str(options.get("base_image", BASE)),
        platform=str(options.get("platform", "linux/amd64")),  # type: ignore[arg-type]
        lock=File.read(str(options.get("lock") or lock_file(tmp, interface))),
        source_date_epoch=int(options.get("source_date_epoch", 1_700_000_000)),  # type: ignore[call-overload]
    )
    return target.wrap(bundle)


@pytest.mark.parametrize("interface", ["rest", "mcp"])
def test_golden_context(interface: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    emitted = {
        p: d for p, d in context(tmp_path, interface) if not p.startswith("bundle/svc_runtime/")
    }
    check_tree(GOLDEN / interface, emitted, request)


def test_context_is_deterministic_and_options_show(tmp_path: Path) -> None:
    first = context(tmp_path / "a", "rest")
    assert context(tmp_path / "b", "rest") == first
    arm = dict(context(tmp_path / "c", "rest", platform="linux/arm64"))
    changed = sorted(p for p, d in first if arm[p] != d)
    assert changed == ["Containerfile", "delivery-plan.json", "target.json"]
    containerfile = dict(first)["Containerfile"].decode()
    assert "USER 65532:65532" in containerfile
    assert "--no-index --only-binary=:all:" in containerfile
    assert "--require-hashes" in containerfile
    assert f"FROM {BASE} AS dependencies" in containerfile
    assert "EXPOSE 8000" in containerfile
    # an MCP image serves streamable HTTP on the same port (DESIGN §13)
    mcp = dict(context(tmp_path / "d", "mcp"))["Containerfile"].decode()
    assert "EXPOSE 8000" in mcp
    assert '"server.py", "--transport", "streamable-http", "--host", "0.0.0.0"' in mcp


def refused(tmp: Path, code: str, **options: object) -> str:
    with pytest.raises(ImageInputError) as info:
        context(tmp, "rest", **options)
    assert info.value.code == code
    return info.value.message


def test_refusals(tmp_path: Path) -> None:
    assert "not pinned" in refused(
        tmp_path, "base_not_pinned", base_image="registry.test:5444/ci/base:bookworm"
    )
    assert "IP literals" in refused(
        tmp_path, "reference_invalid", base_image="127.0.0.1:5000/ci/base@sha256:" + "b" * 64
    )
    missing = lock_file(tmp_path, "rest", PINS["rest"][:-1])
    assert "missing from the lock: uvicorn" in refused(tmp_path, "lock_mismatch", lock=missing)
    old = lock_file(tmp_path, "rest", [*PINS["rest"][:-1], "uvicorn==0.20.0"])
    assert "does not satisfy" in refused(tmp_path, "lock_mismatch", lock=old)


def test_single_file_bundles_are_refused() -> None:
    analysis = analyses.analyze_file(EXAMPLE)
    target = OciTarget(interface="rest", base_image=BASE, lock=File("/unused", b""))
    with pytest.raises(ImageInputError) as info:
        bundles.build_bundle(analysis, target)
    assert info.value.code == "bundle_invalid"
    assert "'file' bundle" in info.value.message
    assert "direct repository bundles only" in info.value.message


def _bundle_copy(tmp: Path) -> Path:
    return repository_bundle(tmp / "bundle", "rest")


def test_read_bundle_refuses_special_files_and_symlinked_dirs(tmp_path: Path) -> None:
    import json
    import os

    bundle = _bundle_copy(tmp_path / "fifo")
    target = bundle / "app.py"
    target.unlink()
    os.mkfifo(target)
    with pytest.raises(ImageInputError, match="special file"):
        read_bundle(bundle)

    bundle = _bundle_copy(tmp_path / "dirlink")
    shutil.move(bundle / "source", tmp_path / "elsewhere")
    (bundle / "source").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ImageInputError, match="not a plain directory"):
        read_bundle(bundle)

    bundle = _bundle_copy(tmp_path / "governed")
    manifest = json.loads((bundle / "svc-rest.json").read_text())
    manifest["execution"] = {"mode": "governed"}
    (bundle / "svc-rest.json").write_text(json.dumps(manifest))
    with pytest.raises(ImageInputError, match="not direct"):
        read_bundle(bundle)

    bundle = _bundle_copy(tmp_path / "ignored")
    (bundle / ".git").mkdir()
    (bundle / ".git" / "HEAD").write_text("ref\n")
    (bundle / ".env.local").write_text("K=V\n")
    (bundle / "tls.pem").write_text("pem\n")
    (bundle / "Dockerfile").write_text("FROM x\n")
    paths = read_bundle(bundle).tree.paths()
    assert not [p for p in paths if p.startswith(".") or p.endswith(".pem") or p == "Dockerfile"]


def _compile_oci(out: Path, lock: Path, *extra: str) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(
        [
            SVCC,
            "compile",
            str(SHAPES_REPO),
            "--target",
            "oci",
            "--interface",
            "rest",
            "--base-image",
            BASE,
            "--lock",
            str(lock),
            "--select",
            SHAPES_SELECT,
            "--source-date-epoch",
            "1700000000",
            "--output-dir",
            str(out),
            "--format",
            "json",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_compile_directory_to_oci_context(tmp_path: Path) -> None:
    """``svcc compile DIR --target oci``: the repository's direct bundle, wrapped; the same
    bytes as wrapping the ``--target rest`` bundle of the same tree."""
    out = tmp_path / "ctx"
    done = _compile_oci(out, lock_file(tmp_path, "rest"))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["target"] == "oci"
    assert result["bundle_kind"] == "repository"
    assert result["capabilities"] == [f"python:shapes.geometry:{name}" for name in SHAPES]
    written = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert sorted(written) == result["files"]
    assert written == dict(context(tmp_path / "api", "rest"))
    assert "bundle/source/shapes/units.py" in written  # the served module's import closure


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (("--execution-policy", "{}"), "no governed execution mode"),
        (("--select", "shapes.geometry.nope"), "unknown selection"),
    ],
)
def test_compile_directory_to_oci_refusals(
    tmp_path: Path, extra: tuple[str, ...], words: str
) -> None:
    out = tmp_path / "ctx"
    done = _compile_oci(out, lock_file(tmp_path, "rest"), *extra)
    assert done.returncode == 2, done.stderr
    assert words in done.stderr
    assert not out.exists() or not any(out.iterdir())


def test_compile_directory_to_oci_checks_the_lock_before_writing(tmp_path: Path) -> None:
    out = tmp_path / "ctx"
    missing = lock_file(tmp_path, "rest", PINS["rest"][:-1])
    done = _compile_oci(out, missing)
    assert done.returncode == 2
    assert "lock_mismatch" in done.stderr
    assert "missing from the lock: uvicorn" in done.stderr
    assert not out.exists() or not any(out.iterdir())
    done = subprocess.run(
        [SVCC, "compile", str(SHAPES_REPO), "--target", "oci", "--output-dir", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "--interface" in done.stderr


def test_declared_data_files_are_inputs_of_the_context(tmp_path: Path) -> None:
    """``[tool.svcc] data-files``: the model is in the context (so in the image, and in the
    inputs digest the builder computes over every context file) and named with its digest
    in the delivery plan; a manifest naming an undeclared data file is refused."""
    from svcc.compiler.pipeline import compile_path

    bundle = tmp_path / "bundle"
    compile_path(TESTS / "fixtures" / "repos" / "ml", target="rest", output_dir=bundle)
    target = OciTarget(
        interface="rest", base_image=BASE, lock=File.read(str(lock_file(tmp_path, "rest")))
    )
    tree = target.wrap(read_bundle(bundle))
    model = "source/models/iris.json"
    assert tree.get(f"bundle/{model}") == (bundle / model).read_bytes()
    plan = json.loads(tree.get("delivery-plan.json") or b"")
    manifest = json.loads((bundle / "svc-rest.json").read_text())
    assert plan["bundle"]["data_files"] == {
        model: manifest["files"][model],
        "source/shop/stock.json": manifest["files"]["source/shop/stock.json"],
    }
    manifest["repository"]["data_files"]["source/elsewhere.bin"] = "elsewhere.bin"
    (bundle / "svc-rest.json").write_text(json.dumps(manifest))
    with pytest.raises(ImageInputError) as info:
        read_bundle(bundle)
    assert info.value.message == "svc-rest.json: repository.data_files must name declared files"
