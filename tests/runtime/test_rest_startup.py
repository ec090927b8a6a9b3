"""Startup rules of a generated REST server: a bundle that is not what was generated never
serves. Each refusal is one line (no traceback) and a non-zero exit, under real uvicorn."""

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from servers import failed_start, generate, serving

SOURCE = """\
def area(width: float, height: float = 1.0) -> float:
    return width * height


def label(text: str) -> str:
    return text.upper()
"""


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    source = tmp_path / "geometry.py"
    source.write_text(SOURCE)
    out = tmp_path / "bundle"
    generate(source, out)
    return out


def reseal(bundle: Path) -> None:
    """Recompute the manifest's digests, as someone editing the bundle on purpose would."""
    manifest_path = bundle / "svc-rest.json"
    manifest = json.loads(manifest_path.read_text())
    for relpath in manifest["files"]:
        data = (bundle / relpath).read_bytes()
        manifest["files"][relpath] = "sha256:" + hashlib.sha256(data).hexdigest()
    manifest_path.write_text(json.dumps(manifest))


def edit_source(bundle: Path, change: Callable[[str], str]) -> None:
    path = bundle / "source" / "geometry.py"
    path.write_text(change(path.read_text()))


def refused(bundle: Path) -> str:
    code, output = failed_start(bundle)
    assert code != 0
    assert "Traceback" not in output
    lines = [line for line in output.splitlines() if "startup refused" in line]
    assert len(lines) == 1, output
    return lines[0]


def test_untouched_bundle_starts(bundle: Path) -> None:
    with serving(bundle) as server, server.client() as c:
        assert c.post("/capabilities/area", json={"width": 2}).json() == 2.0


def test_edited_source_fails_the_digest_check(bundle: Path) -> None:
    edit_source(bundle, lambda s: s.replace("width * height", "width * height * 2"))
    line = refused(bundle)
    assert "source/geometry.py does not match its digest" in line


def test_renamed_parameter_fails_the_shape_check(bundle: Path) -> None:
    edit_source(bundle, lambda s: s.replace("width", "w"))
    reseal(bundle)
    line = refused(bundle)
    assert "callable shape changed" in line
    assert "'width'" in line
    assert "'w'" in line


def test_removed_function_fails_the_shape_check(bundle: Path) -> None:
    edit_source(bundle, lambda s: s.replace("def label", "def _label"))
    reseal(bundle)
    assert "capability 'label' is missing" in refused(bundle)


def test_removed_default_fails_the_shape_check(bundle: Path) -> None:
    edit_source(bundle, lambda s: s.replace("height: float = 1.0", "height: float"))
    reseal(bundle)
    assert "'height'" in refused(bundle)


def test_sync_turned_async_fails_the_shape_check(bundle: Path) -> None:
    edit_source(bundle, lambda s: s.replace("def label", "async def label"))
    reseal(bundle)
    assert "label was sync" in refused(bundle)


def test_source_failing_at_import_is_one_line(bundle: Path) -> None:
    edit_source(bundle, lambda s: s + "\n1 / 0\n")
    reseal(bundle)
    assert "ZeroDivisionError" in refused(bundle)


@pytest.mark.parametrize("name", ["openapi.json", "svc_runtime/validation.py", "svc-rest.json"])
def test_missing_file(bundle: Path, name: str) -> None:
    (bundle / name).unlink()
    if name.endswith(".py"):
        code, _ = failed_start(bundle)
        assert code != 0  # the runtime itself is gone: the import fails before our checks
        return
    assert "missing" in refused(bundle)


def test_tampered_openapi_fails(bundle: Path) -> None:
    path = bundle / "openapi.json"
    path.write_text(path.read_text().replace('"integer"', '"number"'))
    assert "openapi.json does not match its digest" in refused(bundle)


def test_corrupt_manifest(bundle: Path) -> None:
    (bundle / "svc-rest.json").write_text("{not json")
    assert "not valid JSON" in refused(bundle)


def test_manifest_path_escape_is_refused(bundle: Path) -> None:
    manifest = json.loads((bundle / "svc-rest.json").read_text())
    manifest["files"]["../outside.txt"] = "sha256:" + "0" * 64
    (bundle / "svc-rest.json").write_text(json.dumps(manifest))
    assert "invalid path" in refused(bundle)


def test_symlinked_file_is_refused(bundle: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_bytes((bundle / "readiness.json").read_bytes())
    (bundle / "readiness.json").unlink()
    (bundle / "readiness.json").symlink_to(target)
    assert "symlink" in refused(bundle)


def test_invalid_body_limit_setting(bundle: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SVC_MAX_BODY_BYTES", "lots")
    assert "SVC_MAX_BODY_BYTES" in refused(bundle)


def test_repository_kind_without_its_runtime_is_one_line(bundle: Path) -> None:
    """A manifest edited to say ``bundle_kind: repository`` on a bundle that has no
    ``svc_runtime/repository.py`` (the manifest is not self-hashed): one line, exit 4."""
    manifest = json.loads((bundle / "svc-rest.json").read_text())
    manifest["bundle_kind"] = "repository"
    (bundle / "svc-rest.json").write_text(json.dumps(manifest))
    code, _ = failed_start(bundle)
    assert code == 4  # startup refused
    line = refused(bundle)
    assert "bundle_kind" in line
    assert "svc_runtime/repository.py" in line
