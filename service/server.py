"""``svcc serve-analysis``: the Falcon application under gunicorn, in-process.

gunicorn's ``BaseApplication`` takes the application object directly, so the workspace and
limits chosen on the command line reach every worker without environment variables.

Every answer is JSON, including the ones gunicorn writes itself: :class:`JsonErrorWorker`
(gunicorn's sync worker) writes its error pages (a malformed request line, headers over the
limit, a bad chunk) as ``{"title", "description"}``, and a request still running when the
worker's timeout fires is answered 503 in JSON before the worker is replaced. The worker
timeout is set above the analysis budget, so an analysis is always ended by its budget
(a JSON 422) first.

A sync worker serves one connection at a time, so a client that sends its request slowly
holds a worker. Each read waits ``--read-timeout`` at most, and the request line and
headers must arrive within that time in all (a client trickling a byte at a time,
slowloris, is answered 408 and the worker freed); the body has its own clock
(``app.BodyClock``). This bounds what one connection costs, not how many a client opens:
as many slow connections as there are workers still take turns holding them, so an
exposed deployment puts a buffering proxy in front (see the README).
"""

import json
import os
import signal
from typing import Any, Final

from gunicorn import util
from gunicorn.app.base import BaseApplication
from gunicorn.workers.sync import SyncWorker
from svcc.runtime.lifetime import die_with_parent

TIMEOUT_MARGIN: Final = 30


def write_json_error(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's ``util.write_error`` with a JSON body in Falcon's error shape."""
    body = json.dumps({"title": f"{status_int} {reason}", "description": mesg or reason}).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


class HeadTimeout(Exception):
    """The request line and headers did not arrive within the read timeout."""


def _head_late(_signum: int, _frame: Any) -> None:
    raise HeadTimeout


class JsonErrorWorker(SyncWorker):  # type: ignore[misc]
    """gunicorn's sync worker whose own error answers are JSON (see the module docstring)."""

    timed_out = False
    read_seconds: float = 10.0  # set by serve_analysis before the workers are forked

    def accept(self, listener: Any) -> None:
        """gunicorn's ``accept`` with a deadline on the request head: ``read_seconds`` for
        the request line and headers in all (``ITIMER_REAL``: the sync worker is one
        thread, and nothing else in it uses that timer), whatever the client trickles. A
        read of the head never times out by itself first, so a silent client and a slow
        one get the same 408."""
        client, addr = listener.accept()
        client.settimeout(2 * self.read_seconds)
        util.close_on_exec(client)
        signal.setitimer(signal.ITIMER_REAL, self.read_seconds)
        try:
            self.handle(listener, client, addr)
        except HeadTimeout:  # it fired as handle() was ending: never past this worker
            client.close()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def handle_request(self, listener: Any, req: Any, client: Any, addr: Any) -> None:
        """The head is in: its deadline is off; each later read or write waits
        ``read_seconds`` at most (and the body has its own clock, ``app.BodyClock``)."""
        signal.setitimer(signal.ITIMER_REAL, 0)
        client.settimeout(self.read_seconds)
        super().handle_request(listener, req, client, addr)

    def init_signals(self) -> None:
        super().init_signals()
        signal.signal(signal.SIGALRM, _head_late)

    def init_process(self) -> None:
        util.write_error = write_json_error  # this worker process only
        # gunicorn would notice a SIGKILLed master only after timeout / 2
        die_with_parent(os.getppid())
        super().init_process()

    def handle_abort(self, sig: int, frame: Any) -> None:
        self.timed_out = True  # SIGABRT is how the arbiter ends a worker over its timeout
        super().handle_abort(sig, frame)

    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)  # the answer is written without the deadline
        if isinstance(exc, HeadTimeout):
            self.log.warning("request head not received within %g s: 408", self.read_seconds)
            try:
                write_json_error(
                    client,
                    408,
                    "Request Timeout",
                    f"the request line and headers did not arrive within {self.read_seconds:g} s",
                )
            except Exception:
                self.log.debug("failed to send the head timeout answer")
            return
        if self.timed_out and isinstance(exc, SystemExit):
            self.log.error("request over the %s-second worker timeout", self.cfg.timeout)
            try:
                write_json_error(
                    client,
                    503,
                    "Service Unavailable",
                    f"the request took longer than the {self.cfg.timeout}-second worker timeout",
                )
            except Exception:
                self.log.debug("failed to send the timeout answer")
            return
        super().handle_error(req, client, addr, exc)


class AnalysisServer(BaseApplication):  # type: ignore[misc]
    def __init__(self, application: Any, options: dict[str, Any]) -> None:
        self.application = application
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        return self.application


def serve_analysis(
    *,
    workspace: str,
    bind: str,
    workers: int,
    max_upload_bytes: int,
    max_directory_files: int,
    analysis_memory_bytes: int,
    analysis_seconds: float,
    worker_timeout: int | None = None,
    read_seconds: float = 10.0,
) -> None:
    from svcc.service.app import create_app

    JsonErrorWorker.read_seconds = read_seconds
    application = create_app(
        workspace,
        read_seconds=read_seconds,
        max_upload_bytes=max_upload_bytes,
        max_directory_files=max_directory_files,
        analysis_memory_bytes=analysis_memory_bytes,
        analysis_seconds=analysis_seconds,
    )
    AnalysisServer(
        application,
        {
            "bind": bind,
            "workers": workers,
            "worker_class": f"{__name__}.JsonErrorWorker",
            "timeout": worker_timeout or int(2 * analysis_seconds) + TIMEOUT_MARGIN,
            "accesslog": "-",
            "control_socket_disable": True,
        },
    ).run()
