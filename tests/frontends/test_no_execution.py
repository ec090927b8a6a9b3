"""svcc reads source; it never imports or runs it, whatever the source does on import."""

from pathlib import Path

from helpers import run_svcc

HOSTILE = """
import pathlib, sys, os
pathlib.Path({marker!r}).write_text("imported")
print("SIDE EFFECT ON STDOUT")
sys.stderr.write("SIDE EFFECT ON STDERR\\n")
os._exit(42)


def victim(x: int) -> int:
    pathlib.Path({marker!r}).write_text("called")
    return x
"""


def _hostile(tmp_path: Path, suffix: str = ".py") -> tuple[Path, Path]:
    marker = tmp_path / "MARKER"
    src = tmp_path / f"hostile{suffix}"
    text = HOSTILE.format(marker=str(marker))
    if suffix == ".ipynb":
        import nbformat

        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(text)]
        nb.cells[0]["id"] = "c1"
        nbformat.write(nb, str(src))
    else:
        src.write_text(text)
    return src, marker


def _assert_untouched(proc_out: str, proc_err: str, marker: Path) -> None:
    assert not marker.exists()
    # Printed lines, not the source quoted in a diagnostic (a notebook slice names the
    # statements it leaves out).
    assert "SIDE EFFECT ON STDOUT" not in proc_out.splitlines()
    assert "SIDE EFFECT ON STDERR" not in proc_err.splitlines()


def test_inspect_never_executes(tmp_path: Path) -> None:
    for suffix in (".py", ".ipynb"):
        src, marker = _hostile(tmp_path, suffix)
        for args in (["--format", "json"], ["--ir"], []):
            proc = run_svcc("inspect", str(src), *args)
            assert proc.returncode == 0, proc.stderr
            _assert_untouched(proc.stdout, proc.stderr, marker)
        assert '"victim"' in run_svcc("inspect", str(src), "--format", "json").stdout


def test_directory_inspect_never_executes(tmp_path: Path) -> None:
    src, marker = _hostile(tmp_path)
    for i in range(20):  # enough files to use the process pool
        (tmp_path / f"copy{i}.py").write_text(src.read_text())
    proc = run_svcc("inspect", str(tmp_path), "--format", "json")
    assert proc.returncode == 0
    _assert_untouched(proc.stdout, proc.stderr, marker)


def test_compile_never_executes(tmp_path: Path) -> None:
    src, marker = _hostile(tmp_path)
    refused = run_svcc("compile", str(src), "--target", "ir", "--output-dir", str(tmp_path / "a"))
    assert refused.returncode == 1  # module-level effects make `victim` conditional
    _assert_untouched(refused.stdout, refused.stderr, marker)
    quiet = tmp_path / "quiet.py"
    quiet.write_text(
        "import pathlib\n\n\ndef victim(x: int) -> int:\n"
        f"    pathlib.Path({str(marker)!r}).write_text('called')\n    return x\n"
    )
    proc = run_svcc("compile", str(quiet), "--target", "ir", "--output-dir", str(tmp_path / "b"))
    assert proc.returncode == 0, proc.stderr
    _assert_untouched(proc.stdout, proc.stderr, marker)
