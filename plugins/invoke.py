"""``svc plugins run NAME OP``: one ``svc.extension/v1`` request in, one response out.

The core authorises first (the operator policy's grant for the operation, from
:data:`svcc.plugins.grants.GRANTS`, bound to the
installed extension), before the extension starts or any input is read. The extension then
runs in a fresh process: ``python -I`` of its own environment, a clean environment, a new
session, a fresh empty working directory, no inherited descriptors, and bounded request,
stdout, stderr and time (the whole process group is killed at the deadline).
"""

import json
from pathlib import Path
from typing import Any, Final

from attrs import frozen
from svcc.contracts.watch import private_directory
from svcc.images.plan import refuse_proposal
from svcc.images.request import PluginIdentity
from svcc.plugins import logfile
from svcc.plugins.bounded import Exceeded, run_bounded
from svcc.plugins.errors import PluginError
from svcc.plugins.grants import authorise
from svcc.plugins.store import active

ENVELOPE: Final = "svc.extension/v1"
MAX_REQUEST: Final = 1024 * 1024
MAX_STDOUT: Final = 4 * 1024 * 1024
MAX_STDERR: Final = 64 * 1024
TIMEOUT_DEFAULT_MS: Final = 10_000
TIMEOUT_MAX_MS: Final = 600_000


class PluginFailure(Exception):
    """The extension ran and failed (or broke the protocol). The CLI shows ``plugin_failed``
    followed by ``code`` and the one-line, secret-free ``detail``."""

    def __init__(self, code: str, detail: str, log: bytes = b"") -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail
        self.log = log  # what the extension wrote to stderr before it was stopped


@frozen
class Outcome:
    result: dict[str, Any]


def _log_budget(arguments: Any) -> int:
    """What the extension's stderr may carry beyond its own lines: the engine's output,
    bounded by the request's ``max_log_bytes`` (validated by the grant check)."""
    value = arguments.get("max_log_bytes") if isinstance(arguments, dict) else None
    return value if isinstance(value, int) and value > 0 else 1024 * 1024


def _read_json(path: Path, what: str) -> Any:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_REQUEST + 1)
    except OSError as exc:
        raise PluginError("request_invalid", f"{what} {path}: {exc.strerror}") from None
    if len(data) > MAX_REQUEST:
        raise PluginError("request_invalid", f"{what} {path}: over {MAX_REQUEST} bytes")
    try:
        return json.loads(data)
    except ValueError as exc:
        raise PluginError("request_invalid", f"{what} {path}: not JSON: {exc}") from None


def run(
    name: str,
    operation: str,
    *,
    arguments: Path,
    operator_policy: Path,
    timeout_ms: int = TIMEOUT_DEFAULT_MS,
    plugins_dir: Path | None = None,
    log_file: Path | None = None,
) -> Outcome:
    """Authorise, run, answer. ``log_file``: created new (0600) once authorised; it receives
    the engine's output with every credential stripped, whatever the outcome."""
    if not 1 <= timeout_ms <= TIMEOUT_MAX_MS:
        raise PluginError("request_invalid", f"--timeout-ms must be 1 to {TIMEOUT_MAX_MS}")
    plugin = active(name, plugins_dir)
    if operation not in plugin.operations:
        raise PluginError("request_invalid", f"{plugin.name} has no operation {operation!r}")
    args = _read_json(arguments, "arguments")
    policy = _read_json(operator_policy, "operator policy")
    refuse_proposal(policy, operator_policy)
    identity = PluginIdentity(
        name=plugin.name,
        version=plugin.version,
        sha256=plugin.sha256,
        lock_sha256=plugin.lock_sha256,
    )
    authorise(operation, args, policy, identity)
    request = json.dumps(
        {
            "schema": ENVELOPE,
            "operation": operation,
            "arguments": args,
            "plugin": {"name": plugin.name, "version": plugin.version},
        },
        sort_keys=True,
    ).encode()
    if len(request) > MAX_REQUEST:
        raise PluginError("request_invalid", "the request is over the size limit")
    log_fd = logfile.create(log_file) if log_file is not None else None
    stderr = b""
    try:
        stdout, stderr, status = _spawn(
            plugin.python, plugin.module, request, timeout_ms, MAX_STDERR + _log_budget(args)
        )
        return Outcome(_response(stdout, stderr, status))
    except PluginFailure as exc:
        stderr = stderr or exc.log
        secrets = logfile.secrets_of(args)
        detail = logfile.scrub(exc.detail.encode(), secrets).decode("utf-8", "replace")
        if operation == "push" and exc.code in ("timeout", "plugin_failed"):
            # killed or broken without its own answer: the core cannot know whether the
            # upload had started, so it says what a started upload would say
            raise PluginFailure("remote_state_unconfirmed", f"{exc.code}: {detail}") from None
        raise PluginFailure(exc.code, detail) from None
    finally:
        if log_fd is not None:
            logfile.write(log_fd, logfile.scrub(stderr, logfile.secrets_of(args)))


def _spawn(
    python: Path, module: str, request: bytes, timeout_ms: int, max_stderr: int
) -> tuple[bytes, bytes, int]:
    with private_directory("svc-plugin-") as workdir:  # the extension's TMPDIR: goes with svcc
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(workdir),
               "TMPDIR": str(workdir)}  # fmt: skip
        try:
            done = run_bounded(
                [str(python), "-I", "-m", module],
                env=env,
                cwd=workdir,
                timeout_ms=timeout_ms,
                stdin=request,
                max_stdout=MAX_STDOUT,
                max_stderr=max_stderr,
            )
        except OSError as exc:
            raise PluginFailure("plugin_failed", f"cannot start: {exc.strerror}") from None
        except Exceeded as exc:
            if exc.what == "timeout":
                raise PluginFailure(
                    "timeout",
                    f"no response within {timeout_ms} ms; raise --timeout-ms (at most "
                    f"{TIMEOUT_MAX_MS})",
                    exc.partial,
                ) from None
            raise PluginFailure(
                "plugin_failed", f"{exc.what} over its bound", exc.partial
            ) from None
    return done.stdout, done.stderr, done.status


def _response(stdout: bytes, stderr: bytes, status: int) -> dict[str, Any]:
    try:
        response = json.loads(stdout)
    except ValueError:
        tail = stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise PluginFailure(
            "plugin_failed", f"no JSON response (exit {status}): {tail[0][:300]}"
        ) from None
    if not isinstance(response, dict) or response.get("schema") != ENVELOPE:
        raise PluginFailure("plugin_failed", f"response is not {ENVELOPE}")
    if response.get("ok") is True and isinstance(response.get("result"), dict):
        return response["result"]  # type: ignore[no-any-return]
    error = response.get("error")
    if isinstance(error, dict) and isinstance(error.get("code"), str):
        raise PluginFailure(error["code"], str(error.get("message", "")))
    raise PluginFailure("plugin_failed", "malformed response")
