"""``svcc.compiler.writer.write_files``: the descriptor-based writer the analysis service
writes single files with (``process_file``, ``generate_*``)."""

import contextlib
import os
from pathlib import Path

import pytest
from svcc.compiler.writer import TargetExists, write_files
from svcc.contracts.errors import OutputError


def test_writes_into_a_new_or_existing_directory(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("other")
    written = write_files(tmp_path / "a" / "b", {"x.py": b"1", "y.py": b"2"})
    assert written == [tmp_path / "a" / "b" / "x.py", tmp_path / "a" / "b" / "y.py"]
    assert (tmp_path / "a" / "b" / "y.py").read_bytes() == b"2"
    write_files(tmp_path, {"z.py": b"3"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "keep.txt", "z.py"]


def test_existing_file_needs_overwrite_and_nothing_is_half_written(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text("old")
    with pytest.raises(TargetExists) as caught:
        write_files(tmp_path, {"a.txt": b"new", "b.txt": b"new"})
    assert caught.value.path == tmp_path / "b.txt"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.txt"]  # a.txt not written
    write_files(tmp_path, {"a.txt": b"new", "b.txt": b"new"}, overwrite=True)
    assert (tmp_path / "b.txt").read_text() == "new"


def test_symlinks_are_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "t.txt").write_text("theirs")
    inside = tmp_path / "ws"
    inside.mkdir()
    (inside / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(OutputError, match="symlink"):
        write_files(inside / "link", {"t.txt": b"mine"}, overwrite=True)
    (inside / "t.txt").symlink_to(outside / "t.txt")
    with pytest.raises(OutputError, match="not a regular file"):
        write_files(inside, {"t.txt": b"mine"}, overwrite=True)
    assert (outside / "t.txt").read_text() == "theirs"
    assert sorted(os.listdir(inside)) == ["link", "t.txt"]  # no temporary left behind


def test_a_directory_is_not_replaced_and_names_are_flat(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(OutputError, match="not a regular file"):
        write_files(tmp_path, {"d": b"x"}, overwrite=True)
    for bad in ("a/b", "..", "", "n" * 256):
        with pytest.raises(OutputError, match="not a valid file name"):
            write_files(tmp_path, {bad: b"x"})
    (tmp_path / "d" / "file").write_text("f")
    with pytest.raises(OutputError, match="symlink or not a directory"):
        write_files(tmp_path / "d" / "file" / "below", {"x": b""})
    assert os.listdir(tmp_path / "d") == ["file"]


def test_a_component_swapped_for_a_symlink_is_never_followed(tmp_path: Path) -> None:
    """A client (or anything else with write access to the workspace) swaps a folder for a
    symlink to the outside while the service writes into it: checking the path and then
    writing by path would follow the swap; the descriptor walk never does."""
    import multiprocessing

    from svcc.service.workspace import PathRefused, Workspace

    root = tmp_path / "ws"
    (root / "out").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    workspace = Workspace(root)
    target = root / "out"
    stop = multiprocessing.get_context("fork").Event()

    def swap() -> None:
        count = 0
        while not stop.is_set():
            count += 1
            try:
                target.rename(root / f"aside{count}")  # the real folder goes away ...
                target.symlink_to(outside, target_is_directory=True)  # ... a link comes
                target.unlink()
                (root / f"aside{count}").rename(target)
            except OSError:
                if target.is_symlink():
                    target.unlink()

    swapper = multiprocessing.get_context("fork").Process(target=swap)  # truly concurrent
    swapper.start()
    try:
        for i in range(3000):
            with contextlib.suppress(PathRefused, FileExistsError, FileNotFoundError):
                workspace.write_files(target, {f"f{i}.txt": b"x"}, overwrite=True)
    finally:
        stop.set()
        swapper.join()
    assert os.listdir(outside) == []
