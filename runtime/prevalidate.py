"""Large request bodies are validated first in a helper process, so the event loop keeps
answering while a hostile body is being refused.

pydantic-core holds the GIL while it parses and validates: a 15 MB body costs the whole
server about a second, whichever thread runs it. A body above :data:`OFFLOAD_BYTES` is
therefore checked first in one helper process (started on first use, with the same
validators built from the same schemas); an invalid body is answered from the helper's
bounded errors without the server ever parsing it, a valid one is then validated in the
server as every body is (its values are needed here). A helper that died (out of memory)
is started again on the next large body; meanwhile bodies are validated in the server.
"""

import asyncio
import multiprocessing
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from .validation import RequestInvalid, RequestValidator

OFFLOAD_BYTES = 256 * 1024


Schemas = Mapping[str, tuple[Mapping[str, Any], Mapping[str, Any]]]

_validators: dict[str, RequestValidator] = {}


def _initialise(schemas: Schemas) -> None:
    """In the helper: one validator per capability, as the server built them."""
    for name, (schema, definitions) in schemas.items():
        _validators[name] = RequestValidator(schema, definitions)


def _check(name: str, body: bytes) -> tuple[list[dict[str, Any]], int] | None:
    """In the helper: ``None`` when valid, else the bounded errors and how many more."""
    try:
        _validators[name].validate_json(body)
    except RequestInvalid as exc:
        return exc.errors, exc.more
    return None


class Prevalidator:
    """The helper process, shared by every capability of one server."""

    def __init__(self, schemas: Schemas) -> None:
        self._schemas = dict(schemas)
        self._pool: ProcessPoolExecutor | None = None

    async def check(self, name: str, body: bytes) -> None:
        """Raise :class:`RequestInvalid` if the helper finds ``body`` invalid."""
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_initialise,
                initargs=(self._schemas,),
            )
        pool = self._pool
        try:
            found = await asyncio.get_running_loop().run_in_executor(pool, _check, name, body)
        except BrokenProcessPool:
            if self._pool is pool:
                self._pool = None
            pool.shutdown(wait=False, cancel_futures=True)
            return  # validated in the server instead
        if found is not None:
            raise RequestInvalid(*found)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
