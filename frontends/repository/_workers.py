"""Worker processes that lower a large tree and keep what they lowered.

Lowering is most of a directory's cost and each module lowers alone, so a large tree is
lowered in processes forked from the parent (one per core; the tree is inherited, nothing is
pickled to them). Sending each module's IR back to the parent cost almost as much as lowering
it: unpickling rebuilds every record object, in the parent alone. So a worker keeps
its modules' results and sends back only what the parent needs of every module: the front
end's diagnostics and the import statements (the module graph is built from them); the
module's text and the IR's canonical JSON go to the worker's spill file (:mod:`._spill`),
read by the parent only when something asks for them (an IR is decoded only then too:
:class:`EncodedResult`). Work that needs the
IRs themselves runs where they are: :meth:`LoweringPool.each` sends a module-level function
and its argument to every worker and returns what each computed over the modules it holds.

The workers take the files one at a time from a shared counter over the files sorted
largest first (cost follows size): whichever is free takes the next, so they finish
together (fixed shares by bytes left one core idle for a twentieth of the standard
library's lowering). A worker ends with its parent (``die_with_parent``: a SIGKILL of
``svcc`` must not leave them behind) and exits when its pipe closes, at once: tearing down
what it held cost a second of the standard library's wall time, for nothing.
"""

import ast
import contextlib
import gc
import os
import pickle
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

import attrs
from attrs import frozen
from svcc.contracts.errors import SvccError
from svcc.frontends.python import FrontendResult, Parsed, collection_paused, read_python
from svcc.frontends.python.sibling_values import keep_parsed
from svcc.frontends.repository._spill import Spilled, Spills, SpillWriter
from svcc.frontends.sibling_models import SourceOf, link_models, sources_of
from svcc.ir.model import Import, ModuleIR
from svcc.ir.serde import ir_to_json

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess
    from multiprocessing.sharedctypes import Synchronized, SynchronizedArray

    from svcc.contracts.diagnostics import Diagnostic
    from svcc.frontends.repository._tree import RepositoryTree, SourceFile

T = TypeVar("T")
A = TypeVar("A")


def lower_file(
    file: "SourceFile",
    python_version: tuple[int, int],
    encoding: str | None = None,
    siblings: "SourceOf | None" = None,
    parsed: Parsed | None = None,
) -> FrontendResult:
    """One module lowered; with ``siblings`` (the other modules' sources), the classes it
    imports from them get their shapes (:mod:`svcc.frontends.sibling_models`); ``parsed``:
    its tree, made already."""
    result = read_python(
        file.data,
        path=file.path,
        module=file.module,
        python_version=python_version,
        encoding=encoding,
        parsed=parsed,
    )
    if siblings is None:
        return result
    return link_models(
        result,
        module=file.module,
        is_package=file.is_package,
        source_of=siblings,
        python_version=python_version,
    )


class EncodedResult:
    """A module lowered in a worker, as the parent holds it: a :class:`FrontendResult`
    whose text and IR JSON stay in the worker's spill file until read, and whose IR is
    decoded from that JSON on first use (the same IR: the JSON is canonical and complete).
    ``ir`` is ``None`` exactly when the front end stopped on an error (:attr:`lowered`
    says which without reading anything)."""

    __slots__ = ("_ir", "_ir_at", "_spills", "_text_at", "diagnostics", "imports")

    def __init__(
        self,
        spills: Spills,
        diagnostics: "tuple[Diagnostic, ...]",
        text_at: Spilled | None,
        ir_at: Spilled | None,
        imports: tuple[Import, ...],
    ) -> None:
        self._spills = spills
        self.diagnostics = diagnostics
        self._text_at = text_at
        self._ir_at = ir_at
        self.imports = imports
        self._ir: ModuleIR | None = None

    @property
    def lowered(self) -> bool:
        return self._ir_at is not None

    @property
    def module_text(self) -> str | None:
        if self._text_at is None:
            return None
        return bytes(self._spills.view(self._text_at)).decode("utf-8", "surrogatepass")

    @property
    def ir_json(self) -> bytes | None:
        return None if self._ir_at is None else bytes(self._spills.view(self._ir_at))

    @property
    def ir(self) -> ModuleIR | None:
        if self._ir is None and self._ir_at is not None:
            from svcc.ir.serde import ir_from_json

            self._ir = ir_from_json(bytes(self._spills.view(self._ir_at)))
        return self._ir

    def __reduce__(self) -> tuple[Any, ...]:
        raise TypeError("an EncodedResult reads its worker's spill file: not picklable")


@frozen(kw_only=True)
class Held:
    """What a worker holds: the tree (inherited), the modules it lowered (full results),
    and its spill file's writer (see :mod:`._spill`)."""

    tree: "RepositoryTree"
    results: dict[str, FrontendResult]
    scratch: dict[str, Any]
    spill: SpillWriter


# What a worker sends of a module it lowered: an :class:`EncodedResult`'s arguments after
# the spill file (diagnostics, where its text is, where its IR JSON is, its imports).
Lean = tuple["tuple[Diagnostic, ...]", Spilled | None, Spilled | None, tuple[Import, ...]]


def _lean(result: FrontendResult, ir_json: bytes | None, spill: SpillWriter) -> Lean:
    ir, text = result.ir, result.module_text
    return (
        result.diagnostics,
        None if text is None else spill.put(text.encode("utf-8", "surrogatepass")),
        None if ir_json is None else spill.put(ir_json),
        ir.imports if ir is not None else (),
    )


# Modules a worker keeps parsed ahead of lowering them, at most, and their text's length
# in all (a tree takes about 30 times its text; see ``_Queue``).
MAX_AHEAD: Final = 64
MAX_AHEAD_CHARS: Final = 2_000_000


class _Queue:
    """The files a worker lowers, in turn: first those its import-time evaluator parsed
    while reading another module (a module imported from the one being lowered) and that
    no worker had taken, lowered from that tree (a second parse of the same text cost a
    tenth of the standard library's lowering); then the next of the order the workers
    share. ``claimed`` marks each file taken, by either way, by exactly one worker."""

    def __init__(
        self,
        files: "Sequence[SourceFile]",
        taken: "Synchronized[int]",
        claimed: "SynchronizedArray[int]",
        encoding: str | None = None,
    ) -> None:
        self.files = files
        self.taken = taken
        self.claimed = claimed
        self.position: dict[str, int] = {}
        for index, file in enumerate(files):
            self.position.setdefault(file.module, index)
        self.ahead: dict[int, Parsed] = {}
        # a text decoded otherwise than the evaluator decodes it is never lowered from its tree
        self.keeping = encoding is None

    def keep(self, module: str, text: str, version: tuple[int, int], tree: ast.Module) -> None:
        """A module the evaluator parsed: lowered next from ``tree`` if no one took it."""
        index = self.position.get(module)
        if (
            not self.keeping
            or index is None
            or index in self.ahead
            or len(self.ahead) >= MAX_AHEAD
            or sum(len(kept[0]) for kept in self.ahead.values()) + len(text) > MAX_AHEAD_CHARS
        ):
            return
        if self._claim(index):
            self.ahead[index] = (text, version, tree)

    def next(self) -> tuple[int, Parsed | None] | None:
        """The index of the next file to lower and its tree if parsed; ``None``: done."""
        if self.ahead:
            index = next(iter(self.ahead))
            return index, self.ahead.pop(index)
        while True:
            with self.taken.get_lock():
                index = self.taken.value
                self.taken.value = index + 1
            if index >= len(self.files):
                return None
            if self._claim(index):
                return index, None

    def _claim(self, index: int) -> bool:
        with self.claimed.get_lock():
            if self.claimed[index]:
                return False
            self.claimed[index] = 1
            return True


def _send(conn: "Connection", value: object) -> None:
    conn.send_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def _serve(
    conn: "Connection",
    *,
    tree: "RepositoryTree",
    files: "Sequence[SourceFile]",
    taken: "Synchronized[int]",
    claimed: "SynchronizedArray[int]",
    version: tuple[int, int],
    encoding: str | None,
    parent: int,
    others: "list[Connection]",
    spill: SpillWriter,
) -> None:
    """A worker's life: lower the files it takes (``taken``: how many of ``files`` the
    workers have taken in order; ``claimed``: which, see ``_Queue``), send the parent each
    module's encoding, then run what the parent asks over the modules held, until the pipe
    closes. ``others``: the parent's ends of the
    pipes, this worker's and those of the workers forked before it, closed here (a copy
    held open here, a pipe would never close: the worker would wait)."""
    from svcc.runtime.lifetime import die_with_parent

    _ignore_ctrl_c()
    die_with_parent(parent)
    for other in others:
        other.close()
    held = Held(tree=tree, results={}, scratch={}, spill=spill)
    siblings = sources_of(tree.files)
    # Paused for good, not resumed: the worker ends with ``os._exit``, and the first
    # collection after a pause walks every object made during it (0.1 s of the standard
    # library's, at the end, while the parent waited for the worker's exit).
    gc.disable()
    queue = _Queue(files, taken, claimed, encoding)
    keep_parsed(queue.keep)
    try:
        lowered = {}
        while (step := queue.next()) is not None:
            index, parsed = step
            file = files[index]
            result = lower_file(file, version, encoding, siblings, parsed)
            ir_json = ir_to_json(result.ir) if result.ir is not None else None
            lowered[file.module] = _lean(result, ir_json, spill)
            # the readiness report's digest is that of these bytes: encoded once
            held.results[file.module] = attrs.evolve(result, ir_json=ir_json)
        _send(conn, (True, lowered))
        del lowered
        last = False
        while not last:
            function, argument, last = pickle.loads(conn.recv_bytes())
            try:
                _send(conn, (True, function(held, argument)))
            except Exception as exc:  # re-raised in the parent, as a pool would
                _send(conn, (False, exc))
    except (EOFError, OSError):  # the parent is done with this worker, or gone
        pass
    except Exception as exc:
        with contextlib.suppress(Exception):  # the pipe may be closed, exc not picklable
            _send(conn, (False, exc))
        os._exit(1)
    os._exit(0)  # without freeing what it held (a second of the standard library's time)


class LoweringPool:
    """``count`` forked workers, each lowering a share of ``tree``'s files and keeping the
    results; :attr:`encoded` is every module's :class:`EncodedResult`, in the tree's order.
    Use as a context manager: leaving it closes the pipes, and the workers exit."""

    def __init__(
        self,
        tree: "RepositoryTree",
        count: int,
        python_version: tuple[int, int],
        encoding: str | None = None,
    ) -> None:
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self._conns: list[Connection] = []
        self._finished = False  # the workers have had their last call (see ``each``)
        self._processes: list[BaseProcess] = []
        largest_first = sorted(tree.files, key=lambda f: -len(f.data))
        taken = context.Value("q", 0)
        claimed = context.Array("b", len(largest_first))
        self._spills = Spills(count)
        try:
            for worker in range(count):
                mine, theirs = context.Pipe()
                process = context.Process(
                    target=_serve,
                    args=(theirs,),
                    kwargs={
                        "tree": tree,
                        "files": largest_first,
                        "taken": taken,
                        "claimed": claimed,
                        "version": python_version,
                        "encoding": encoding,
                        "parent": os.getpid(),
                        "others": [*self._conns, mine],
                        "spill": self._spills.writer(worker),
                    },
                    daemon=True,
                )
                with _ctrl_c_left_to_the_parent():
                    process.start()
                theirs.close()
                self._conns.append(mine)
                self._processes.append(process)
            lowered: dict[str, Lean] = {}
            for part in self._receive():
                lowered |= part
        except BaseException:
            self.close(kill=True)
            raise
        self.encoded = {
            f.module: EncodedResult(self._spills, *lowered[f.module]) for f in tree.files
        }

    def spilled(self, where: Spilled) -> memoryview:
        """Bytes a worker put in its spill file (:meth:`SpillWriter.put`), read in place."""
        return self._spills.view(where)

    def _receive(self) -> list[Any]:
        """Each worker's answer, in the workers' order. Waited for together with the
        workers' ends: a worker killed while it held a lock the others wait for (the shared
        counter, the claims) is reported at once instead of leaving the parent waiting on
        one of the others for good."""
        from multiprocessing.connection import wait

        answers: dict[int, Any] = {}
        pending = dict(enumerate(zip(self._conns, self._processes, strict=True)))
        with collection_paused():
            while pending:
                waited = [conn for conn, _ in pending.values()]
                ready = wait([*waited, *(process.sentinel for _, process in pending.values())])
                for index, (conn, process) in list(pending.items()):
                    if conn.poll():  # an answer, read even when the worker ended after it
                        try:
                            ok, value = pickle.loads(conn.recv_bytes())
                        except (EOFError, OSError):
                            raise _ended(process) from None
                        if not ok:
                            raise value
                        answers[index] = value
                        del pending[index]
                    elif process.sentinel in ready:
                        raise _ended(process)
        return [answers[index] for index in range(len(self._conns))]

    def each(
        self, function: "Callable[[Held, A], T]", argument: A, *, last: bool = False
    ) -> list[T]:
        """``function(held, argument)`` in every worker (``function`` at module level, so it
        is sent by name; ``argument`` is pickled once), what each returned. ``last``: the
        workers exit as soon as they have answered, so their teardown (a tenth of a second
        for the standard library's) overlaps what the parent does next; the pool then takes
        no more calls."""
        if self._finished:
            raise RuntimeError("the workers have had their last call")
        self._finished = last
        message = pickle.dumps((function, argument, last), protocol=pickle.HIGHEST_PROTOCOL)
        for conn, process in zip(self._conns, self._processes, strict=True):
            try:
                conn.send_bytes(message)
            except OSError:  # its end is closed: the worker is gone
                raise _ended(process) from None
        return self._receive()

    def close(self, kill: bool = False) -> None:
        """Close the pipes: each worker sees its pipe close and exits (exit code 0; one
        still running after 5 s is killed). ``kill``: on an error, at once (a worker still
        lowering reads no pipe: each would otherwise be waited for)."""
        for conn in self._conns:
            conn.close()
        for process in self._processes:
            if kill:
                process.kill()
            process.join(5)
            if process.is_alive():
                process.kill()
                process.join()

    @property
    def exitcodes(self) -> list[int | None]:
        """Each worker's exit code (``None`` while it runs; 0: it ended when its pipe
        closed)."""
        return [process.exitcode for process in self._processes]

    def __enter__(self) -> "LoweringPool":
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        self.close(kill=kind is not None)


@contextlib.contextmanager
def _ctrl_c_left_to_the_parent() -> "Iterator[None]":
    """SIGINT blocked while a worker is forked; the worker ignores it for its life
    (:func:`_ignore_ctrl_c`): Ctrl-C reaches the whole process group, and each worker
    printed a traceback of its ``KeyboardInterrupt`` (even mid-fork); the parent says
    "interrupted" once and kills them (``close(kill=True)``). Blocked, not ignored, in the
    parent: a Ctrl-C during the fork waits until it is unblocked (ignored, it was lost and
    the analysis went on to the end)."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _ignore_ctrl_c() -> None:
    """In a worker, forked with SIGINT blocked: ignored from now on (a Ctrl-C that came
    meanwhile is discarded), then unblocked. Only the main thread may set a handler, and
    a worker's target runs in its main thread."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _ended(process: "BaseProcess") -> SvccError:
    """The one-line error for a worker that ended before it answered (a kill, such as
    the out-of-memory killer's, is not a bug in svcc)."""
    process.join(5)
    code = process.exitcode
    how = f"exit code {code}" if code is None or code >= 0 else f"killed by signal {-code}"
    hint = ": out of memory?" if code == -9 else ""
    return SvccError(f"a worker lowering the tree ended unexpectedly ({how}{hint})")
