"""The engine's side of a push: its API version and registry settings (read, never trusted
for what is published), the local image by immutable id, the staging alias and its upload.

The client runs as for a build (``Engine``: fresh ``DOCKER_CONFIG``, explicit socket, scrubbed
environment), its private ``config.json`` holding the one credentials record and nothing
else; whatever it writes to stderr is stripped of the credentials before it goes anywhere.
"""

import ipaddress
import json
import time
from pathlib import Path
from typing import Any, Final

from svcc.images.errors import ImageInputError
from svcc.images.push_request import PushRequest

from svc_oci.credentials import Credentials
from svc_oci.engine import Engine
from svc_oci.enginelog import push_reason

MIN_API: Final = (1, 46)
# what an engine allows without configuration: loopback only
DEFAULT_INSECURE_CIDRS: Final = frozenset({"127.0.0.0/8", "::1/128"})
FACTS_BUDGET: Final = 1024 * 1024
FACTS_TIMEOUT_MS: Final = 30_000


def _api_version(text: str) -> tuple[int, ...] | None:
    try:
        return tuple(int(part) for part in text.split("."))
    except ValueError:
        return None


class PushEngine(Engine):
    def __init__(
        self, request: PushRequest, work: Path, credentials: Credentials, deadline: float
    ) -> None:
        super().__init__(request, work)
        self.push_request = request
        self.credentials = credentials
        self.deadline = deadline
        credentials.write_engine_config(work / "docker-config")

    def redact(self, text: bytes) -> bytes:
        for secret in self.credentials.secrets():
            text = text.replace(secret.encode(), b"<redacted>")
        return text

    def _budget_ms(self, cap: int) -> int:
        left = int((self.deadline - time.monotonic()) * 1000)
        if left <= 0:
            raise ImageInputError("timeout", "the push did not finish within timeout_ms")
        return min(left, cap)

    def _json(self, argv: list[str]) -> Any:
        out = self._run(argv, timeout_ms=self._budget_ms(FACTS_TIMEOUT_MS), budget=FACTS_BUDGET)
        try:
            return json.loads(out)
        except ValueError:
            raise ImageInputError("engine_failed", f"engine {argv[0]}: not JSON") from None

    def check_supported(self) -> None:
        """API 1.46 or later, read from the engine's ``/version``; no insecure registries and
        no insecure CIDRs beyond the loopback defaults, read from ``/info``."""
        version = self._json(["version", "--format", "{{json .Server}}"])
        api = version.get("ApiVersion") if isinstance(version, dict) else None
        parsed = _api_version(api) if isinstance(api, str) else None
        if parsed is None:
            raise ImageInputError("engine_unsupported", "the engine reports no API version")
        if parsed < MIN_API:
            name = "podman" if "podman" in json.dumps(version).lower() else "the engine"
            raise ImageInputError(
                "engine_unsupported",
                f"{name} speaks API {api}; push requires API "
                f"{'.'.join(map(str, MIN_API))} or later",
            )
        config = self._json(["info", "--format", "{{json .RegistryConfig}}"])
        if not isinstance(config, dict):
            raise ImageInputError("engine_failed", "the engine reports no registry configuration")
        insecure = sorted(
            name
            for name, index in (config.get("IndexConfigs") or {}).items()
            if not (isinstance(index, dict) and index.get("Secure") is True)
        )
        if insecure:
            raise ImageInputError(
                "engine_unsupported",
                "the engine allows insecure registries: " + ", ".join(insecure),
            )
        cidrs = []
        for cidr in config.get("InsecureRegistryCIDRs") or []:
            try:
                normal = str(ipaddress.ip_network(str(cidr), strict=False))
            except ValueError:
                normal = str(cidr)
            if normal not in DEFAULT_INSECURE_CIDRS:
                cidrs.append(normal)
        if cidrs:
            raise ImageInputError(
                "engine_unsupported",
                "the engine allows insecure registries in " + ", ".join(sorted(cidrs)),
            )

    def local_image(
        self, image_id: str, *, platform: str, user: str, labels: dict[str, str]
    ) -> None:
        """The image under its immutable id is the one the request describes."""
        try:
            found = self.inspect(image_id)
        except ImageInputError as exc:
            if exc.code != "engine_failed":
                raise
            raise ImageInputError("image_mismatch", f"no local image {image_id}") from None
        problems = []
        if found.get("Id") != image_id:
            problems.append(f"id {found.get('Id')}")
        os_name, _, arch = platform.partition("/")
        if (found.get("Os"), found.get("Architecture")) != (os_name, arch):
            problems.append(f"platform {found.get('Os')}/{found.get('Architecture')}")
        config = found.get("Config") or {}
        if config.get("User") != user:
            problems.append(f"user {config.get('User')!r}, not {user}")
        have = config.get("Labels") or {}
        problems += [f"label {k}" for k, v in sorted(labels.items()) if have.get(k) != v]
        if problems:
            raise ImageInputError(
                "image_mismatch", f"local image {image_id}: " + "; ".join(problems)
            )

    def tag(self, image_id: str, alias: str) -> None:
        self._run(
            ["tag", image_id, alias],
            timeout_ms=self._budget_ms(FACTS_TIMEOUT_MS),
            budget=FACTS_BUDGET,
        )

    def push(self, alias: str) -> None:
        """Upload through the engine; what it says it pushed is not used."""
        self._run(
            ["push", alias],
            timeout_ms=self._budget_ms(self.push_request.timeout_ms),
            budget=self.push_request.max_log_bytes,
            log=True,
            reason=lambda out, status: push_reason(out, status, alias),
        )
