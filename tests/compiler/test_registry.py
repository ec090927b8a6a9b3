"""Target discovery: entry points, lazy loading, duplicates fatal, did-you-mean."""

import json
import shutil
from pathlib import Path

import pytest
from helpers import ROOT, modules_loaded_by, run_svcc
from svcc.compiler.registry import discover


def test_builtin_and_out_of_tree_targets_are_listed() -> None:
    found = discover()
    assert found["ir"].distribution == "svcc"
    assert found["sample"].distribution == "svcc-sample-target"
    listed = json.loads(run_svcc("targets", "--format", "json").stdout)["targets"]
    assert [t["name"] for t in listed] == sorted(t["name"] for t in listed)
    assert {"ir", "sample"} <= {t["name"] for t in listed}


def test_out_of_tree_target_emits(tmp_path: Path) -> None:
    out = tmp_path / "docs"
    proc = run_svcc(
        "compile",
        str(ROOT / "examples" / "shapes.py"),
        "--target",
        "sample",
        "--output-dir",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    text = (out / "CAPABILITIES.md").read_text()
    assert text.startswith("# shapes\n")
    assert "`circle_area(radius, unit)`" in text


def test_listing_does_not_import_targets() -> None:
    statement = "from svcc.compiler.registry import discover; discover()"
    assert modules_loaded_by(statement, ("svcc.backends.ir", "svcc_sample_target")) == []


def _fake_distribution(site: Path, name: str, entry: str) -> None:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[svcc.targets]\n{entry}\n")


def test_duplicate_target_names_are_fatal(tmp_path: Path) -> None:
    _fake_distribution(tmp_path, "rogue_target", "ir = rogue:Target")
    proc = run_svcc("targets", env={"PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 2
    assert "two targets are named 'ir'" in proc.stderr
    assert "(from svcc)" in proc.stderr
    assert "(from rogue_target)" in proc.stderr


def test_broken_target_fails_cleanly(tmp_path: Path) -> None:
    _fake_distribution(tmp_path, "broken_target", "broken = does_not_exist:Target")
    proc = run_svcc(
        "compile",
        str(ROOT / "examples" / "shapes.py"),
        "--target",
        "broken",
        "--output-dir",
        str(tmp_path / "o"),
        env={"PYTHONPATH": str(tmp_path)},
    )
    assert proc.returncode == 2
    assert "target 'broken'" in proc.stderr
    assert "failed to load" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists()


def test_unknown_target_suggests() -> None:
    proc = run_svcc(
        "compile",
        str(ROOT / "examples" / "shapes.py"),
        "--target",
        "sampel",
        "--output-dir",
        "/nonexistent/never",
    )
    assert proc.returncode == 2
    assert "did you mean 'sample'?" in proc.stderr


def test_discovery_is_read_once_and_sees_a_later_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Discovery is cached (an emit asks about eight times), but a distribution installed or
    removed later in the same process is seen on the next call."""
    first = discover()
    again = discover()
    assert again == first
    assert again["ir"].entry_point is first["ir"].entry_point  # not read a second time
    again.pop("ir")  # a caller's copy: the cache is not changed through it
    assert "ir" in discover()
    _fake_distribution(tmp_path, "early_target", "early = early:Target")
    monkeypatch.syspath_prepend(str(tmp_path))  # a path entry added after discovery
    assert "early" in discover()
    _fake_distribution(tmp_path, "late_target", "late = late:Target")  # installed later
    found = discover()
    assert found["late"].distribution == "late_target"
    shutil.rmtree(tmp_path / "late_target-1.0.dist-info")  # and uninstalled
    assert "late" not in discover()
    monkeypatch.undo()
    assert discover() == first
