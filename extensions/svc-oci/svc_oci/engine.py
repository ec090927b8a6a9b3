"""The engine's own client, run with nothing of the user's: a fresh ``DOCKER_CONFIG`` (no
contexts, credential helpers or auth), ``DOCKER_HOST`` set to the explicit ``unix://``
socket, and an environment holding only what the build needs. BuildKit is the builder given
in ``engine.builder`` (installed as the client's only CLI plugin); without one, the client's
system builder. The engine's word is checked: the image the builder reports must be the one
the engine then inspects, with the platform, user and labels asked for.
"""

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from svcc.images.errors import ImageInputError
from svcc.images.push_request import PushRequest
from svcc.images.request import BuildRequest
from svcc.plugins.bounded import Exceeded, run_bounded

from svc_oci import enginelog
from svc_oci.enginelog import FAILED_TAIL, build_reason, command_reason

INSPECT_BUDGET = 4 * 1024 * 1024
INSPECT_TIMEOUT_MS = 60_000


class Engine:
    def __init__(self, request: BuildRequest | PushRequest, work: Path) -> None:
        self.request = request
        self.work = work
        config = work / "docker-config"
        config.mkdir()
        (config / "config.json").write_text("{}\n")
        if request.engine.builder is not None:
            (config / "cli-plugins").mkdir()
            os.symlink(request.engine.builder, config / "cli-plugins" / "docker-buildx")
        self.env = {
            "PATH": "/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "HOME": str(work),
            "TMPDIR": str(work),
            "DOCKER_CONFIG": str(config),
            "DOCKER_HOST": f"unix://{request.engine.socket}",
            "DOCKER_BUILDKIT": "1" if request.engine.builder is not None else "0",
            "BUILDX_NO_DEFAULT_ATTESTATIONS": "1",
        }

    def _run(
        self,
        argv: list[str],
        *,
        timeout_ms: int,
        budget: int,
        log: bool = False,
        reason: Callable[[bytes, int], str] | None = None,
    ) -> bytes:
        """The client's stdout. ``log``: its whole (bounded, redacted) output is kept for the
        log file; otherwise only a failure's tail is. ``reason``: the one-line message of a
        failure, from the output (``enginelog.command_reason`` by default)."""
        shown = " ".join([Path(self.request.engine.executable).name, *argv])
        try:
            done = run_bounded(
                [self.request.engine.executable, *argv],
                env=self.env,
                cwd=self.work,
                timeout_ms=timeout_ms,
                max_stdout=budget,
                max_stderr=budget,
                shared_budget=True,
            )
        except Exceeded as exc:
            enginelog.record(shown, self.redact(exc.partial if log else exc.partial[-FAILED_TAIL:]))
            if exc.what == "timeout":
                raise ImageInputError(
                    "timeout",
                    f"the engine client ({argv[0]}) did not finish within {timeout_ms} ms "
                    "(daemon work may continue); raise timeout_ms, or see --log-file",
                ) from None
            raise ImageInputError(
                "log_budget_exceeded",
                f"the engine client ({argv[0]}) wrote more than {budget} bytes; raise "
                "max_log_bytes (at most 16 MiB), or see --log-file",
            ) from None
        output = self.redact(done.stdout + done.stderr)
        if done.status != 0:
            enginelog.record(shown, output if log else output[-FAILED_TAIL:])
            why = (reason or (lambda out, status: command_reason(out, status, argv[0])))(
                output, done.status
            )
            raise ImageInputError("engine_failed", why)
        if log:
            enginelog.record(shown, output)
        return done.stdout

    def redact(self, text: bytes) -> bytes:
        """What may be written to this process's stderr (``PushEngine`` removes secrets)."""
        return text

    def build(
        self, context: Path, *, tag: str, labels: dict[str, str], source_date_epoch: int
    ) -> str:
        iidfile = self.work / "image-id"
        args = [
            "--platform",
            self.request.platform,
            "--network",
            "none",
            "--build-arg",
            f"SOURCE_DATE_EPOCH={source_date_epoch}",
            "--iidfile",
            str(iidfile),
            "-f",
            str(context / "Containerfile"),
        ]
        for key, value in sorted(labels.items()):
            args += ["--label", f"{key}={value}"]
        if self.request.engine.builder is not None:
            argv = [
                "buildx",
                "build",
                "--progress",
                "plain",
                "--provenance=false",
                "--output",
                f"type=docker,name={tag},rewrite-timestamp=true",
                *args,
            ]
        else:
            argv = ["build", "-t", tag, *args]
        self.env["SOURCE_DATE_EPOCH"] = str(source_date_epoch)
        base = getattr(self.request, "base_image", "")
        self._run(
            [*argv, str(context)],
            timeout_ms=self.request.timeout_ms,
            budget=self.request.max_log_bytes,
            log=True,
            reason=lambda out, status: build_reason(out, status, base),
        )
        try:
            image_id = iidfile.read_text().strip()
        except OSError:
            raise ImageInputError("engine_failed", "the builder reported no image id") from None
        if not image_id.startswith("sha256:") or len(image_id) != 71:
            raise ImageInputError("engine_failed", "the builder reported a malformed image id")
        return image_id

    def inspect(self, ref: str) -> dict[str, Any]:
        out = self._run(
            ["image", "inspect", ref], timeout_ms=INSPECT_TIMEOUT_MS, budget=INSPECT_BUDGET
        )
        try:
            found = json.loads(out)
        except ValueError:
            raise ImageInputError("engine_failed", "the engine's inspection is not JSON") from None
        if not isinstance(found, list) or len(found) != 1 or not isinstance(found[0], dict):
            raise ImageInputError("engine_failed", f"the engine inspected {ref} ambiguously")
        return found[0]

    def verify(
        self, image_id: str, *, tag: str, platform: str, user: str, labels: dict[str, str]
    ) -> None:
        by_id = self.inspect(image_id)
        by_tag = self.inspect(tag)
        problems = []
        if by_id.get("Id") != image_id or by_tag.get("Id") != image_id:
            problems.append(f"{tag} is not the image the builder reported ({image_id})")
        os_name, _, arch = platform.partition("/")
        if (by_id.get("Os"), by_id.get("Architecture")) != (os_name, arch):
            problems.append(f"platform {by_id.get('Os')}/{by_id.get('Architecture')}")
        config = by_id.get("Config") or {}
        if config.get("User") != user:
            problems.append(f"user {config.get('User')!r}")
        have = config.get("Labels") or {}
        wrong = sorted(k for k, v in labels.items() if have.get(k) != v)
        if wrong:
            problems.append("labels " + ", ".join(wrong))
        if problems:
            raise ImageInputError(
                "engine_failed", "the inspected image disagrees: " + "; ".join(problems)
            )
