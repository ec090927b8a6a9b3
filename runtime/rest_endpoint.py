"""A capability's REST endpoint: the request body read under its bounds, validated, the
call made and its answer written, as raw ASGI (no framework per request). The application
(``rest``) and the stream endpoints (``rest_stream``) build on it, so each imports it
rather than the other.
"""

import asyncio
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.exceptions import HTTPException

from .bodies import BodyReader, BodyTimeout
from .calls import CallShape
from .encoding import Invoke, ResultNotJson, encode_result
from .limits import RETRY_AFTER_SECONDS, DeadlineExceeded, LimitRefused
from .prevalidate import OFFLOAD_BYTES, Prevalidator
from .validation import (
    RequestInvalid,
    RequestValidator,
    TooLarge,
    check_size,
)

log = logging.getLogger("svc.rest")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

JSON_HEADERS = [(b"content-type", b"application/json")]


async def respond(send: Send, status: int, body: bytes, headers: Any = None) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                *(headers or JSON_HEADERS),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def error_body(detail: Any) -> bytes:
    return encode_result({"detail": detail})


INTERNAL_ERROR = error_body("Internal Server Error")
BODY_TIMEOUT = error_body("Request Timeout: the request body did not arrive in time")
# The rest of such a body may still come: the connection ends with the answer.
BODY_TIMEOUT_HEADERS = [*JSON_HEADERS, (b"connection", b"close")]


class CapabilityEndpoint:
    """``POST /capabilities/<name>`` as a raw ASGI app: everything is prepared at startup."""

    __slots__ = ("_bodies", "_invoke", "_prevalidator", "_shape", "_validator")

    def __init__(
        self,
        invoke: Invoke,
        shape: CallShape,
        validator: RequestValidator,
        bodies: BodyReader,
        prevalidator: Prevalidator | None = None,
    ) -> None:
        self._invoke = invoke
        self._shape = shape
        self._validator = validator
        self._bodies = bodies
        self._prevalidator = prevalidator

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await self._read_body(scope, receive, send)
        if body is None:
            return
        if self._prevalidator is None or len(body) <= OFFLOAD_BYTES:
            await self._serve(body, receive, send)
            return
        try:
            await self._prevalidator.check(self._shape.name, body)
        except RequestInvalid as exc:
            await respond(send, 422, encode_result(exc.body()))
            return
        await self._serve(body, receive, send)

    async def _serve(self, body: bytes, receive: Receive, send: Send) -> None:
        try:
            values = self._validator.validate_json(body)
            args, kwargs = self._shape.bind(values)
        except RequestInvalid as exc:
            await respond(send, 422, encode_result(exc.body()))
            return
        del body
        await self._call(receive, send, args, kwargs)

    async def _call(
        self, _receive: Receive, send: Send, args: list[Any], kwargs: dict[str, Any]
    ) -> None:
        """The function in this process, and its answer (``receive`` is for a call that
        watches the client while it runs)."""
        try:
            payload = await self._invoke(args, kwargs)
        except HTTPException as exc:
            await self._http_exception(send, exc)  # the function's own answer, as raised
            return
        except asyncio.CancelledError:
            raise
        except LimitRefused as exc:
            await self._refused(send, exc)
            return
        except ResultNotJson as exc:
            log.error("capability %s: the result has no JSON form: %s", self._shape.name, exc)
            await respond(send, 500, INTERNAL_ERROR)
            return
        except BaseException:  # SystemExit, KeyboardInterrupt...: the JSON 500, never text
            log.exception("capability %s failed", self._shape.name)
            await respond(send, 500, INTERNAL_ERROR)
            return
        await respond(send, 200, payload)

    async def _refused(self, send: Send, exc: LimitRefused) -> None:
        """A call the direct-mode limits refused (``limits``): 503 with ``Retry-After``
        over the concurrency cap, 504 past an async deadline."""
        log.warning("capability %s: %s", self._shape.name, exc)
        if isinstance(exc, DeadlineExceeded):
            await respond(send, 504, error_body("Gateway Timeout"))
            return
        retry = (b"retry-after", str(RETRY_AFTER_SECONDS).encode())
        body = error_body("Service Unavailable: too many calls running; retry later")
        await respond(send, 503, body, [*JSON_HEADERS, retry])

    async def _read_body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        try:
            for name, value in scope["headers"]:
                if name == b"content-type":
                    media = value.split(b";", 1)[0].strip().lower()
                    if media != b"application/json" and not media.endswith(b"+json"):
                        await respond(
                            send, 415, error_body("Unsupported Media Type: send application/json")
                        )
                        return None
                elif name == b"content-length" and value.isdigit():
                    check_size(int(value), self._bodies.limit)
            body = await self._bodies.read(receive)
        except TooLarge:
            await respond(send, 413, error_body("Request body too large"))
            return None
        except BodyTimeout:
            await respond(send, 408, BODY_TIMEOUT, BODY_TIMEOUT_HEADERS)
            return None
        if body is None:
            return None  # the client went away
        if not body:
            await respond(
                send,
                422,
                error_body(
                    [
                        {
                            "type": "missing",
                            "loc": ["body"],
                            "msg": "Field required: the body must be a JSON object",
                            "input": None,
                        }
                    ]
                ),
            )
            return None
        return body

    async def _http_exception(self, send: Send, exc: HTTPException) -> None:
        try:
            headers = [
                (k.lower().encode("latin-1"), v.encode("latin-1"))
                for k, v in (exc.headers or {}).items()
            ]
            body = b"" if _bodiless(exc.status_code) else error_body(exc.detail)
        except Exception:
            log.exception(
                "capability %s raised an HTTP exception that cannot be sent "
                "(a header that is not latin-1, or a detail that is not JSON)",
                self._shape.name,
            )
            await respond(send, 500, INTERNAL_ERROR)
            return
        if _bodiless(exc.status_code):
            await respond(send, exc.status_code, b"", headers)
            return
        await respond(send, exc.status_code, body, [*JSON_HEADERS, *headers])


def _bodiless(status: int) -> bool:
    return status in (204, 304) or status < 200
