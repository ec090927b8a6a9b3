"""The lowering workers' queue: a module the import-time evaluator of one worker parsed
(while reading another module) is lowered by that worker from the same tree when no
worker had taken it; every file is lowered exactly once, by one worker."""

import ast
import multiprocessing
from pathlib import Path

from svcc.frontends.repository import TreeLimits, read_tree
from svcc.frontends.repository._workers import MAX_AHEAD, MAX_AHEAD_CHARS, _Queue


def _files(tmp_path: Path, count: int) -> list:  # type: ignore[type-arg]
    for n in range(count):
        (tmp_path / f"m{n:03}.py").write_text(f"X = {n}\n")
    return list(read_tree(tmp_path, TreeLimits()).files)


def test_every_file_is_lowered_once_whichever_way_it_was_taken(tmp_path: Path) -> None:
    files = _files(tmp_path, 50)
    context = multiprocessing.get_context("fork")
    taken, claimed = context.Value("q", 0), context.Array("b", len(files))
    first, second = _Queue(files, taken, claimed), _Queue(files, taken, claimed)
    tree = ast.parse("X = 7\n")
    first.keep("m007", "X = 7\n", (3, 11), tree)
    first.keep("m007", "X = 7\n", (3, 11), tree)  # kept once
    second.keep("m007", "X = 7\n", (3, 11), tree)  # the first claimed it
    second.keep("m049", "X = 49\n", (3, 11), tree)
    assert list(first.ahead) == [files.index(next(f for f in files if f.module == "m007"))]
    done: list[int] = []
    kept = []
    for queue in (first, second, first, second) * len(files):
        step = queue.next()
        if step is not None:
            done.append(step[0])
            if step[1] is not None:
                kept.append(files[step[0]].module)
    assert sorted(done) == list(range(len(files)))
    assert sorted(kept) == ["m007", "m049"]


def test_trees_kept_ahead_are_bounded(tmp_path: Path) -> None:
    files = _files(tmp_path, MAX_AHEAD + 10)
    context = multiprocessing.get_context("fork")
    queue = _Queue(files, context.Value("q", 0), context.Array("b", len(files)))
    tree = ast.parse("")
    for file in files:
        queue.keep(file.module, "", (3, 11), tree)
    assert len(queue.ahead) == MAX_AHEAD
    big = "#" * (MAX_AHEAD_CHARS // 2 + 1)
    by_size = _Queue(files, context.Value("q", 0), context.Array("b", len(files)))
    for file in files[:3]:
        by_size.keep(file.module, big, (3, 11), tree)
    assert len(by_size.ahead) == 1  # a tree takes about 30 times its text: bounded by text too
    encoded = _Queue(files, context.Value("q", 0), context.Array("b", len(files)), "latin-1")
    encoded.keep(files[0].module, "", (3, 11), tree)
    assert not encoded.ahead  # an --encoding override: the evaluator's text may differ
