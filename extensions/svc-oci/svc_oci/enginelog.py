"""What the engine's client wrote, kept for the person who asked (``--log-file``) and read
for the one-line reason of a failure.

The log is bounded (each command's output was already counted against ``max_log_bytes`` while
it was read) and secret-free: every piece passes the engine's ``redact`` before it is kept.
``__main__`` writes it to this process's stderr once the operation is over; the core puts it in
the log file when one was asked for and drops it otherwise. It never reaches the response.
"""

import re
from typing import Final

# the header and the tail of failed fact-finding commands are small; build/push output is
# bounded by the request's max_log_bytes, counted by the core as this process's stderr allows
FAILED_TAIL: Final = 4096
MAX_REASON: Final = 400

_parts: list[bytes] = []


def record(command: str, output: bytes) -> None:
    """Keep ``output`` (already redacted) under a ``$ command`` header."""
    _parts.append(f"$ {command}\n".encode())
    if output:
        _parts.append(output if output.endswith(b"\n") else output + b"\n")


def drain() -> bytes:
    """Everything kept so far, once."""
    data = b"".join(_parts)
    _parts.clear()
    return data


_ANSI: Final = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# what a registry answers to an anonymous pull it does not allow, as the engines word it
_UNAUTHORIZED: Final = re.compile(
    r"401 Unauthorized|unauthorized|authentication required|pull access denied|"
    r"no basic auth credentials|denied: requested access",
    re.IGNORECASE,
)
_UNTRUSTED: Final = re.compile(
    r"x509:|certificate signed by unknown authority|tls: failed to verify", re.IGNORECASE
)
_NOT_FOUND: Final = re.compile(r"manifest unknown|not found|404 Not Found", re.IGNORECASE)
_UNREACHABLE: Final = re.compile(
    r"connection refused|no such host|i/o timeout|network is unreachable", re.IGNORECASE
)
# the line an engine or builder writes when it gives up
_ERROR_LINE: Final = re.compile(
    r"^(ERROR:|Error:|Error response from daemon:|error:|failed to solve:)", re.IGNORECASE
)


def one_line(text: str) -> str:
    """A single line of at most ``MAX_REASON`` characters, control characters removed."""
    text = _ANSI.sub("", text)
    text = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1] + "…"


def _last_error(text: str) -> str | None:
    lines = [_ANSI.sub("", line).strip() for line in text.splitlines()]
    errors = [line for line in lines if _ERROR_LINE.match(line)]
    if errors:
        return errors[-1]
    meaningful = [line for line in lines if line]
    return meaningful[-1] if meaningful else None


_STEP_OUTPUT: Final = re.compile(r"^#\d+ [\d.]+ ")  # BuildKit's prefix of a RUN step's output


def _pip_error(text: str) -> str | None:
    """pip's own first error inside the image (not the builder's summary of it)."""
    for raw in text.splitlines():
        line = _STEP_OUTPUT.sub("", _ANSI.sub("", raw)).strip()
        if (
            line.startswith("ERROR:")
            and "failed to solve" not in line
            and "failed to build" not in line
        ):
            return line
    return None


def build_reason(output: bytes, status: int, base_image: str) -> str:
    """Why a build failed, in one line a person can act on."""
    text = output.decode("utf-8", "replace")
    last = _last_error(text) or f"exited with status {status}"
    base_name = base_image.split("@", 1)[0]
    about_base = base_image in text or base_name in text
    if about_base and _UNAUTHORIZED.search(text):
        return one_line(
            f"pulling the base {base_image}: unauthorized: the build accepts no registry "
            "credentials; use a base in a registry that allows anonymous pulls"
        )
    if about_base and _UNTRUSTED.search(text):
        registry = base_image.split("/", 1)[0]
        return one_line(
            f"pulling the base {base_image}: the registry's certificate is not trusted by the "
            f"engine; install its CA (e.g. /etc/docker/certs.d/{registry}/ca.crt)"
        )
    if about_base and _UNREACHABLE.search(text):
        return one_line(f"pulling the base {base_image}: the registry is unreachable: {last}")
    if about_base and _NOT_FOUND.search(text):
        return one_line(
            f"pulling the base {base_image}: not found in its registry; check the name "
            "and the digest"
        )
    if "pip install" in text or "pip check" in text:
        return one_line(
            f"installing the locked wheels in the image failed: {_pip_error(text) or last}"
        )
    return one_line(f"the engine client exited with status {status}: {last}")


def command_reason(output: bytes, status: int, what: str) -> str:
    """Why another engine command (push, tag, inspect, version) failed, in one line."""
    text = output.decode("utf-8", "replace")
    last = _last_error(text) or "no output"
    return one_line(f"{what}: the engine client exited with status {status}: {last}")


def push_reason(output: bytes, status: int, alias: str) -> str:
    """Why the engine's upload of the staging alias failed, in one line."""
    text = output.decode("utf-8", "replace")
    last = _last_error(text) or f"exited with status {status}"
    registry = alias.split("/", 1)[0]
    if _UNAUTHORIZED.search(text):
        return one_line(
            f"uploading {alias}: the registry refused the credentials; check the 'auth' "
            f"record for {registry} in the credentials file: {last}"
        )
    if _UNTRUSTED.search(text):
        return one_line(
            f"uploading {alias}: the engine does not trust the registry's certificate; "
            f"install its CA for the engine (e.g. /etc/docker/certs.d/{registry}/ca.crt)"
        )
    if _UNREACHABLE.search(text):
        return one_line(f"uploading {alias}: the registry is unreachable: {last}")
    return one_line(f"uploading {alias}: the engine client exited with status {status}: {last}")
