"""The ``svc.extension/v1`` envelope: one JSON request on stdin, one JSON response on stdout.

Errors are returned with their code and a message (never a log or a credential); anything
unexpected is ``internal_error`` without a traceback on stdout.
"""

import json
import sys
from typing import Any

MAX_REQUEST = 1024 * 1024


def respond(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"schema": "svc.extension/v1", **payload}, sort_keys=True))
    sys.stdout.flush()


def main() -> int:
    """Answer the request; then the engine's log (bounded, redacted) on stderr, which the
    core keeps only in the log file the person asked for."""
    from svc_oci import enginelog

    try:
        return _answer()
    finally:
        sys.stderr.buffer.write(enginelog.drain())
        sys.stderr.flush()


def _answer() -> int:
    from svcc.images.errors import ImageInputError

    from svc_oci.build import build
    from svc_oci.push import push

    operations = {"build": build, "push": push}

    data = sys.stdin.buffer.read(MAX_REQUEST + 1)
    try:
        if len(data) > MAX_REQUEST:
            raise ImageInputError("request_invalid", "request over the size limit")
        try:
            request = json.loads(data)
        except ValueError as exc:
            raise ImageInputError("request_invalid", f"request is not JSON: {exc}") from None
        if not isinstance(request, dict) or request.get("schema") != "svc.extension/v1":
            raise ImageInputError("request_invalid", "request is not svc.extension/v1")
        operation = operations.get(str(request.get("operation")))
        if operation is None:
            raise ImageInputError(
                "request_invalid", f"unknown operation {request.get('operation')!r}"
            )
        result = operation(request.get("arguments"))
    except ImageInputError as exc:
        respond({"ok": False, "error": {"code": exc.code, "message": exc.message}})
        return 1
    except Exception as exc:  # a bug: say which kind, never the traceback on stdout
        # the type only: a message could quote an input (a credential) back
        print(f"svc-oci: internal error: {type(exc).__name__}", file=sys.stderr)
        respond({"ok": False, "error": {"code": "internal_error", "message": type(exc).__name__}})
        return 3
    respond({"ok": True, "result": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
