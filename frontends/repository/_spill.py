"""Bulky answers of the lowering workers, passed through a file each, not through a pipe.

What a worker sends back in bulk (each module's IR JSON and text, its readiness report,
its rendered document: 130 MB for the standard library) went through a pipe: pickled in
the worker, copied into the kernel, copied out by the parent, copied again as it was
unpickled, in the parent alone and after the workers were done. A worker now appends the
bytes to an anonymous file of its own (created by the parent before the fork) and sends
only where they are (:class:`Spilled`); the parent maps the file and reads a piece only
when something asks for it (``inspect DIR --format json`` reads the documents and none of
the IRs or texts).
"""

import mmap
import os
import weakref

from attrs import frozen


@frozen
class Spilled:
    """Where a worker wrote some bytes: its file (the worker's index), offset, length."""

    worker: int
    offset: int
    length: int


def _anonymous_file() -> int:
    """A file descriptor of an unnamed file (in memory where the system allows)."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("svcc-spill", os.MFD_CLOEXEC)
    import tempfile

    with tempfile.TemporaryFile() as file:  # unlinked already; the duplicate keeps it
        return os.dup(file.fileno())


class SpillWriter:
    """A worker's side: appends to its own file (no one else writes it)."""

    def __init__(self, fd: int, worker: int) -> None:
        self._fd = fd
        self._worker = worker
        self._size = 0

    def put(self, data: bytes) -> Spilled:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]
        where = Spilled(self._worker, self._size, len(data))
        self._size += len(data)
        return where


class Spills:
    """The parent's side: one file per worker, each mapped when a piece of it is read
    (again when it has grown since). Closed when nothing refers to it any more; a view
    keeps its mapping alive."""

    def __init__(self, count: int) -> None:
        self._fds: list[int] = []
        try:
            for _ in range(count):
                self._fds.append(_anonymous_file())
        except BaseException:
            _close(self._fds)
            raise
        self._maps: list[mmap.mmap | None] = [None] * count
        weakref.finalize(self, _close, self._fds)

    def writer(self, worker: int) -> SpillWriter:
        """``worker``'s writer, for the worker (a forked copy of this object)."""
        return SpillWriter(self._fds[worker], worker)

    def view(self, where: Spilled) -> memoryview:
        if where.length == 0:
            return memoryview(b"")
        held = self._maps[where.worker]
        end = where.offset + where.length
        if held is None or len(held) < end:
            held = self._maps[where.worker] = mmap.mmap(
                self._fds[where.worker], 0, access=mmap.ACCESS_READ
            )
            if len(held) < end:  # not written: a bug, not something a user did
                raise ValueError(f"{where} lies past the end of its file ({len(held)} bytes)")
        return memoryview(held)[where.offset : end]


def _close(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)
    fds.clear()
