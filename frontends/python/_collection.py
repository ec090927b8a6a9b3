"""The cyclic garbage collector paused while a front end builds and lowers syntax trees."""

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collection_paused() -> Iterator[None]:
    """The cyclic garbage collector paused for the block (restored as it was after).

    Lowering builds millions of small objects (a module's syntax tree, then its IR records),
    and reading a repository keeps every module's IR: each collection of the oldest
    generation walks everything kept so far, which was about 40% of the CPU time of reading
    the standard library, and a quarter of lowering one module of 12,000 functions. Those
    objects hold no reference cycles (reference counting frees each syntax tree, or each
    slice's, as soon as it is lowered); the few cycles made meanwhile (about 20 MB over the
    standard library) are collected when the collector resumes. A cycle that holds a
    syntax tree keeps the whole tree until then (900 MB of the standard library's, once):
    ``tests/frontends/test_lowering_cycles.py`` keeps lowering free of them."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
