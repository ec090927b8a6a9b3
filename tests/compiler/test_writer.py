"""The safe writer: new-or-empty directories only, no symlinks, all or nothing."""

import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from svcc.compiler.writer import write_tree
from svcc.contracts.errors import OutputError
from svcc.contracts.target import FileTree, FileTreeError

TREE = FileTree.of({"a.txt": b"alpha", "sub/b.txt": b"beta", "sub/deep/c.bin": bytes(range(256))})


def read_tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def leftovers(parent: Path) -> list[str]:
    return [p.name for p in parent.iterdir() if ".svcc-" in p.name]


def test_writes_new_directory_with_missing_parents(tmp_path: Path) -> None:
    out = tmp_path / "x" / "y" / "bundle"
    written = write_tree(TREE, out)
    assert written == out
    assert read_tree(out) == dict(TREE)
    assert oct(os.stat(out / "a.txt").st_mode & 0o777) == "0o644"


def test_writes_into_existing_empty_directory(tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    write_tree(TREE, out)
    assert read_tree(out) == dict(TREE)
    assert leftovers(tmp_path) == []


def test_relative_paths_and_dotdot_resolve_lexically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    write_tree(TREE, "../rel/out")
    assert read_tree(tmp_path / "rel" / "out") == dict(TREE)


def test_refuses_non_empty_directory_and_keeps_it(tmp_path: Path) -> None:
    out = tmp_path / "full"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    with pytest.raises(OutputError, match="not empty"):
        write_tree(TREE, out)
    assert read_tree(out) == {"mine.txt": b"keep"}
    assert leftovers(tmp_path) == []


def test_refuses_pre_existing_file(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("data")
    with pytest.raises(OutputError, match="symlink or a file"):
        write_tree(TREE, target)
    assert target.read_text() == "data"


@pytest.mark.parametrize("where", ["target", "parent", "grandparent"])
def test_refuses_symlinks_anywhere_on_the_path(tmp_path: Path, where: str) -> None:
    real = tmp_path / "real"
    (real / "inner").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real)
    out = {"target": link, "parent": link / "out", "grandparent": link / "inner" / "out"}[where]
    with pytest.raises(OutputError, match="symlink"):
        write_tree(TREE, out)
    assert sorted(p.name for p in real.rglob("*")) == ["inner"]


def test_dangling_symlink_target_refused(tmp_path: Path) -> None:
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(OutputError):
        write_tree(TREE, tmp_path / "dangling")
    assert not (tmp_path / "nowhere").exists()


def test_failed_write_removes_created_parents(tmp_path: Path) -> None:
    """The writer creates ``new/deeper/`` before it fails on a file (a name too long for
    the file system): the parents it created are removed, the ones it found are kept."""
    parent = tmp_path / "kept"
    parent.mkdir()
    doomed = FileTree.of({"ok.txt": b"x", "n" * 300: b"too long a name"})
    with pytest.raises(OutputError, match="nothing written"):
        write_tree(doomed, parent / "new" / "deeper" / "out")
    assert list(parent.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept"]


def test_file_tree_validation() -> None:
    for bad in ["/abs", "../up", "a/../b", "a//b", "", "a\\b", "./a", "nul\0"]:
        with pytest.raises(FileTreeError):
            FileTree.of({bad: b""})
    with pytest.raises(FileTreeError, match="parent is also a file"):
        FileTree.of({"a": b"", "a/b": b""})
    assert FileTree.of({"b": b"", "a": b""}).paths() == ["a", "b"]


def _mount_tmpfs(path: Path, size: str) -> bool:
    if os.geteuid() != 0:
        return False
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        check=False,
    )
    return proc.returncode == 0


def test_full_disk_leaves_nothing(tmp_path: Path) -> None:
    mount = tmp_path / "tiny"
    mount.mkdir()
    if not _mount_tmpfs(mount, "64k"):
        pytest.skip("cannot mount a tmpfs here (needs root and mount permission)")
    try:
        big = FileTree.of({"small.txt": b"x", "big.bin": os.urandom(512 * 1024)})
        with pytest.raises(OutputError, match="No space left"):
            write_tree(big, mount / "out")
        assert list(mount.iterdir()) == []
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def _writer(args: tuple[str, int]) -> str:
    target, n = args
    tree = FileTree.of({f"f{i}.txt": f"writer {n}".encode() for i in range(50)})
    try:
        write_tree(tree, target)
    except OutputError:
        return "refused"
    return f"writer {n}"


def test_concurrent_writers_exactly_one_wins(tmp_path: Path) -> None:
    for round_ in range(3):
        target = tmp_path / f"race{round_}"
        if round_ == 1:
            target.mkdir()  # racing into an existing empty directory
        with ProcessPoolExecutor(max_workers=6) as pool:
            results = list(pool.map(_writer, [(str(target), n) for n in range(6)]))
        winners = [r for r in results if r != "refused"]
        assert len(winners) == 1, results
        contents = set(read_tree(target).values())
        assert contents == {winners[0].encode()}
        assert len(read_tree(target)) == 50
        assert leftovers(tmp_path) == []


def test_host_check_runs_before_writing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A normal Linux host passes the check ...
    write_tree(TREE, tmp_path / "fine")
    # ... and a host without no-follow opens is refused before anything is created.
    monkeypatch.delattr(os, "O_NOFOLLOW")
    with pytest.raises(OutputError, match="lacks directory-descriptor"):
        write_tree(TREE, tmp_path / "new" / "out")
    assert not (tmp_path / "new").exists()


def test_symlink_stepped_out_of_with_dotdot_is_refused(tmp_path: Path) -> None:
    # The kernel reads ``link/../out`` through ``link`` (into real's parent); lexical
    # folding would have written beside ``link`` instead. The README promises a refusal.
    (tmp_path / "elsewhere" / "real").mkdir(parents=True)
    (tmp_path / "here").mkdir()
    (tmp_path / "here" / "link").symlink_to(tmp_path / "elsewhere" / "real")
    with pytest.raises(OutputError, match="link is a symlink"):
        write_tree(TREE, tmp_path / "here" / "link" / ".." / "out")
    assert sorted(p.name for p in (tmp_path / "here").iterdir()) == ["link"]
    assert sorted(p.name for p in (tmp_path / "elsewhere").iterdir()) == ["real"]


def test_existing_empty_directory_keeps_its_mode(tmp_path: Path) -> None:
    out = tmp_path / "private"
    out.mkdir()
    os.chmod(out, 0o700)
    write_tree(TREE, out)
    assert oct(os.stat(out).st_mode & 0o777) == "0o700"
    assert read_tree(out) == dict(TREE)
    fresh = tmp_path / "fresh"
    write_tree(TREE, fresh)
    assert oct(os.stat(fresh).st_mode & 0o777) == oct(0o755 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# A writer that is signalled half-way through its tree (a real signal, delivered by the
# kernel to a real process): the staging tree must be gone when the process has ended.
_SIGNALLED_WRITER = """
import os, signal, sys
from svcc.compiler import writer
from svcc.contracts.target import FileTree

signum = int(sys.argv[2])
real_write = os.write
count = 0

def write(fd, data):
    global count
    count += 1
    if count == 50:
        os.kill(os.getpid(), signum)
    return real_write(fd, data)

writer.os.write = write
tree = FileTree.of({f"d{i // 20}/f{i}.txt": b"x" * 1000 for i in range(200)})
writer.write_tree(tree, sys.argv[1])
print("finished")
"""


@pytest.mark.parametrize("signum", [15, 2], ids=["SIGTERM", "SIGINT"])
def test_signal_during_write_removes_the_staging_tree(tmp_path: Path, signum: int) -> None:
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-c", _SIGNALLED_WRITER, str(out), str(signum)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "finished" not in proc.stdout
    if signum == 15:
        assert proc.returncode == -15, proc.stderr  # the signal's own effect, as without us
    else:
        assert "KeyboardInterrupt" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_stale_staging_trees_of_dead_writers_are_swept(tmp_path: Path) -> None:
    import fcntl

    stale = tmp_path / ".out.svcc-0123456789ab"
    (stale / "sub").mkdir(parents=True)
    (stale / "sub" / "big.bin").write_bytes(b"x" * 4096)
    os.utime(stale, (0, 0))
    held = tmp_path / ".out.svcc-ba9876543210"  # a live writer holds its lock
    held.mkdir()
    os.utime(held, (0, 0))
    recent = tmp_path / ".out.svcc-aaaaaaaaaaaa"  # just created: maybe not locked yet
    recent.mkdir()
    other = tmp_path / ".other.svcc-0123456789ab"  # another output's: not ours to judge
    other.mkdir()
    os.utime(other, (0, 0))
    fd = os.open(held, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        write_tree(TREE, tmp_path / "out")
    finally:
        os.close(fd)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [".out.svcc-ba9876543210", ".out.svcc-aaaaaaaaaaaa", ".other.svcc-0123456789ab", "out"]
    )


def _svcc_compile(out: Path, source: Path, *prefix: str) -> subprocess.CompletedProcess[str]:
    svcc = str(Path(sys.executable).parent / "svcc")
    return subprocess.run(
        [*prefix, svcc, "compile", str(source), "--target", "rest", "--output-dir", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )


ADD = "def add(a: int, b: int) -> int:\n    return a + b\n"


def test_read_only_file_system_is_an_output_error_naming_the_directory(tmp_path: Path) -> None:
    source = tmp_path / "add.py"
    source.write_text(ADD)
    mount = tmp_path / "ro"
    mount.mkdir()
    if os.geteuid() != 0 or (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(mount)],
            capture_output=True,
            check=False,
        ).returncode
        != 0
    ):
        pytest.skip("cannot mount a read-only tmpfs here (needs root and mount permission)")
    try:
        proc = _svcc_compile(mount / "out", source)
        assert proc.returncode == 2, proc.stderr
        assert f"cannot write in {mount}: Read-only file system" in proc.stderr
        assert ".svcc-" not in proc.stderr
        assert "Traceback" not in proc.stderr
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_directory_without_write_permission_is_an_output_error() -> None:
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="svcc-writer-perm-"))  # reachable by nobody
    try:
        os.chmod(base, 0o755)
        source = base / "add.py"
        source.write_text(ADD)
        os.chmod(source, 0o644)
        locked = base / "locked"
        locked.mkdir()
        os.chmod(locked, 0o555)
        prefix: tuple[str, ...] = ()
        if os.geteuid() == 0:  # root ignores permissions: run the CLI as nobody
            if not shutil.which("setpriv"):
                pytest.skip("running as root without setpriv")
            prefix = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
        proc = _svcc_compile(locked / "out", source, *prefix)
        assert proc.returncode == 2, proc.stderr
        assert f"cannot write in {locked}: Permission denied" in proc.stderr
        assert list(locked.iterdir()) == []
    finally:
        os.chmod(base / "locked", 0o755)
        shutil.rmtree(base)
