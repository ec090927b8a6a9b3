"""Wheels built from a source tree (``svcc plugins fetch`` builds svcc's own, or an
extension's, from its checkout): pip builds in the tree, so builds of one tree take turns,
and what a build that died midway left there does not fail the next one."""

import shutil
import threading
from pathlib import Path

from helpers import ROOT
from svcc.plugins.errors import PluginError
from svcc.plugins.fetch import build_wheel

SAMPLE = ROOT / "tests" / "plugins" / "svcc_sample_target"


def _tree(tmp_path: Path) -> Path:
    source = tmp_path / "src"
    shutil.copytree(SAMPLE, source, ignore=shutil.ignore_patterns("*.egg-info", "build"))
    return source


def test_builds_of_one_tree_at_once_all_succeed(tmp_path: Path) -> None:
    source = _tree(tmp_path)
    built: dict[int, str] = {}

    def build(i: int) -> None:
        out = tmp_path / f"out{i}"
        out.mkdir()
        try:
            built[i] = build_wheel(source, out).name
        except PluginError as exc:
            built[i] = f"failed: {exc}"

    threads = [threading.Thread(target=build, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert built == dict.fromkeys(range(4), "svcc_sample_target-0.1.0-py3-none-any.whl")


def test_a_staging_folder_left_by_a_dead_build_does_not_fail_the_next(tmp_path: Path) -> None:
    source = _tree(tmp_path)
    left = source / "build" / "bdist.linux-x86_64" / "wheel" / "svcc_sample_target-0.1.0.dist-info"
    left.mkdir(parents=True)
    (tmp_path / "out").mkdir()
    assert build_wheel(source, tmp_path / "out").name == "svcc_sample_target-0.1.0-py3-none-any.whl"
