"""Declared data files: an ML-style module that loads its model at import is served.

The module reads ``models/linear.json`` through a path built from ``__file__`` at import (how
Cog's ``setup`` and BentoML services load a model). Without ``--data`` that read is
conditional (``SVC-R026``, with the hint to declare it); with it the file is copied byte for
byte beside the module, listed with its digest in the manifest and verified at startup, and
the function is served over REST and MCP. Paths outside the source root and symlinks are
refused with exit 2 and nothing written.
"""

import json
import shutil
from pathlib import Path

from helpers import run_svcc
from mcp_client import McpBundle
from servers import failed_start, generate, serving

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "ml"
MODEL = FIXTURE / "models" / "linear.json"


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "ml")
    return tmp_path / "ml"


def test_undeclared_model_read_is_conditional_with_the_hint(tmp_path: Path) -> None:
    project = _copy(tmp_path)
    proc = run_svcc("inspect", str(project / "predict.py"), "--format", "json")
    reason = json.loads(proc.stdout)["assessments"][0]["reasons"][0]
    assert reason["code"] == "SVC-R026"
    assert "models/linear.json, which is not a declared data file" in reason["message"]
    assert "--data" in reason["hint"]


def test_declared_model_is_bundled_verified_and_served_over_rest(tmp_path: Path) -> None:
    project = _copy(tmp_path)
    data = str(project / "models" / "linear.json")
    bundle = tmp_path / "rest"
    generate(project / "predict.py", bundle, "--data", data)
    copied = bundle / "source" / "models" / "linear.json"
    assert copied.read_bytes() == MODEL.read_bytes()
    manifest = json.loads((bundle / "svc-rest.json").read_text())
    assert manifest["files"]["source/models/linear.json"].startswith("sha256:")
    with serving(bundle) as server, server.client() as client:
        response = client.post("/capabilities/predict", json={"features": [1.0, 2.0]})
        assert response.status_code == 200, server.log_text()
        assert response.json() == 0.5
    copied.write_text('{"bias": 100, "weights": [0, 0]}')  # changed after generation
    code, output = failed_start(bundle)
    assert code != 0
    assert "source/models/linear.json does not match its digest" in output


def test_declared_model_is_served_over_mcp(tmp_path: Path) -> None:
    project = _copy(tmp_path)
    bundle = tmp_path / "mcp"
    generate(
        project / "predict.py",
        bundle,
        "--data",
        str(project / "models" / "linear.json"),
        interface="mcp",
    )
    client = McpBundle(bundle)
    try:
        result = client.call("predict", {"features": [3.0, 1.0]})
        assert not result.is_error, result.content
        assert "5.5" in str(result.structured_content)
    finally:
        client.close()


def test_data_outside_the_source_root_or_through_a_symlink_is_refused(tmp_path: Path) -> None:
    project = _copy(tmp_path)
    outside = tmp_path / "secret.json"
    outside.write_text("{}")
    proc = run_svcc(
        "generate", "rest", str(project / "predict.py"), "--data", str(outside),
        "--output-dir", str(tmp_path / "out"),
    )  # fmt: skip
    assert proc.returncode == 2
    assert "outside the source root" in proc.stderr
    assert not (tmp_path / "out").exists()
    (project / "models" / "link.json").symlink_to(outside)
    proc = run_svcc(
        "inspect", str(project / "predict.py"), "--data", str(project / "models" / "link.json")
    )
    assert proc.returncode == 2
    assert "symlink" in proc.stderr
    proc = run_svcc("inspect", str(project / "predict.py"), "--data", str(project / "nope.json"))
    assert proc.returncode == 2
    assert "no such file" in proc.stderr
    assert "Traceback" not in proc.stderr
