"""The lowering workers' spill files: bulky answers read in place, not piped (issue 27).

Real forked processes write; the parent reads what they wrote, maps again what grew, and
closes the files when nothing refers to them.
"""

import gc
import multiprocessing
import os
import pickle
from pathlib import Path

import pytest
from svcc.frontends.python import read_python
from svcc.frontends.repository import PARALLEL_FROM, Spilled, read_repository
from svcc.frontends.repository._spill import Spills, SpillWriter
from svcc.frontends.repository._workers import _lean


def _write_in_a_child(writer: SpillWriter, pieces: list[bytes]) -> list[Spilled]:
    """``pieces`` put by a forked process; where each went, as that process said."""
    context = multiprocessing.get_context("fork")
    mine, theirs = context.Pipe()

    def child() -> None:
        theirs.send([writer.put(p) for p in pieces])
        os._exit(0)

    process = context.Process(target=child)
    process.start()
    where: list[Spilled] = mine.recv()
    process.join()
    assert process.exitcode == 0
    return where


def test_what_a_worker_puts_the_parent_reads_in_place() -> None:
    spills = Spills(2)
    first = _write_in_a_child(spills.writer(0), [b"alpha", b"", "é\U0001f600".encode()])
    second = _write_in_a_child(spills.writer(1), [b"x" * 70_000])
    assert [bytes(spills.view(w)) for w in first] == [b"alpha", b"", "é\U0001f600".encode()]
    assert first[1] == Spilled(0, 5, 0)
    assert bytes(spills.view(second[0])) == b"x" * 70_000
    assert second[0].worker == 1


def test_a_file_that_grew_is_mapped_again_and_earlier_views_stay_valid() -> None:
    spills = Spills(1)
    writer = spills.writer(0)
    (early,) = _write_in_a_child(writer, [b"early"])
    held = spills.view(early)  # maps the file as it is (5 bytes)
    writer._size = early.length  # the next worker call appends (the child's writer did)
    (late,) = _write_in_a_child(writer, [b"later" * 1000])
    assert late.offset == 5
    assert bytes(spills.view(late)) == b"later" * 1000
    assert bytes(held) == b"early"


def test_a_piece_past_the_end_is_a_clear_error() -> None:
    spills = Spills(1)
    _write_in_a_child(spills.writer(0), [b"abc"])
    with pytest.raises(ValueError, match="past the end"):
        spills.view(Spilled(0, 2, 10))


def test_the_files_close_when_nothing_refers_to_them() -> None:
    spills = Spills(2)
    fds = list(spills._fds)
    for fd in fds:
        os.fstat(fd)
    del spills
    gc.collect()
    for fd in fds:
        with pytest.raises(OSError, match="Bad file descriptor"):
            os.fstat(fd)


def test_a_lowered_modules_answer_carries_no_text_and_no_ir() -> None:
    """What crosses the pipe per module: diagnostics, imports and three small numbers per
    piece; the text and the IR JSON (59 MB of the standard library's) stay in the file."""
    text = "import os\n" + "".join(f"def f{i}(x: int) -> int:\n    return x\n" for i in range(300))
    result = read_python(text.encode(), path="m.py", module="m", python_version=(3, 11))
    spills = Spills(1)
    from svcc.ir.serde import ir_to_json

    assert result.ir is not None
    lean = _lean(result, ir_to_json(result.ir), spills.writer(0))
    assert len(pickle.dumps(lean)) < len(text) / 10


def test_module_texts_in_any_encoding_come_back_the_same(tmp_path: Path) -> None:
    """Lowered in workers, each module's text is read back from its spill file: the same
    text as lowering in one process, whatever the file's encoding or characters."""
    for i in range(PARALLEL_FROM):
        if i % 3 == 0:
            data = f"# -*- coding: latin-1 -*-\nNAME = 'caf\xe9 {i}'\n".encode("latin-1")
        elif i % 3 == 1:
            data = f"def f(x: str = 'ü\U0001f600{i}') -> str:\n    return x\n".encode()
        else:
            data = b"def broken(:\n"
        (tmp_path / f"m{i}.py").write_bytes(data)
    from svcc.ir.serde import ir_to_json

    one = read_repository(tmp_path, python_version=(3, 11), workers=1)
    parallel = read_repository(tmp_path, python_version=(3, 11), workers=2)
    for name, module in one.modules.items():
        other = parallel.modules[name].result
        assert other.module_text == module.result.module_text
        assert other.ir_json == (ir_to_json(module.ir) if module.ir is not None else None)
    assert "caf\xe9 0" in (parallel.modules["m0"].result.module_text or "")
