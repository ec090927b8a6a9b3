"""The ``k8s`` target: a Kustomize base that runs a published image on Kubernetes.

``svcc compile REPO --target k8s --image REG/NS/IMG@sha256:… --inputs-sha256 HEX`` (or
``--push-result FILE``, the ``svc.oci-push-result/v1`` document of ``svc-oci push``) writes
``kustomization.yaml`` and one file per object; ``kubectl apply -k DIR`` deploys it. It wraps
a servable target (``--interface``, a :class:`~svcc.contracts.target.Wrapper`): that target's
declaration says whether the image listens on a port (a Service, probes, an autoscaler) or
speaks on stdio. The capabilities come from the IR (their ids' digest labels every object);
the image is taken by digest only, never by tag, so what runs is exactly what was verified
at publication.
"""

from typing import Any, ClassVar

import attrs
from attrs import field, frozen
from svcc.backends.k8s._manifests import Interface, Resources, Workload
from svcc.backends.k8s._options import workload_of
from svcc.compiler.registry import default_servable
from svcc.contracts.errors import UsageError
from svcc.contracts.target import BundleSpec, EmitContext, File, FileTree
from svcc.ir.model import ModuleIR


def _opt(help_: str, metavar: str | None = None) -> dict[str, Any]:
    return {"help": help_, "metavar": metavar} if metavar else {"help": help_}


@frozen(kw_only=True)
class K8sTarget:
    name: ClassVar[str] = "k8s"
    description: ClassVar[str] = (
        "a Kustomize base (Deployment, Service, autoscaler, disruption budget, network "
        "policy) for a published image (run: kubectl apply -k)"
    )
    supports_execution_policy: ClassVar[bool] = False
    bundle: ClassVar[BundleSpec | None] = None  # manifests for a cluster, not a service

    image: str | None = field(
        default=None,
        metadata=_opt("the published image by digest: REG[:PORT]/NS/IMG@sha256:<64 hex>", "REF"),
    )
    inputs_sha256: str | None = field(
        default=None,
        metadata=_opt("the image's inputs digest (the build result's inputs_sha256)", "HEX"),
    )
    push_result: File | None = field(
        default=None,
        metadata=_opt("a svc.oci-push-result/v1 file: image and inputs digest from it", "FILE"),
    )
    interface: str = field(
        factory=default_servable,
        metadata=_opt(
            "the servable target the image runs (rest, mcp, ...): a port or stdio, as it declares",
            "TARGET",
        ),
    )
    app_name: str | None = field(
        default=None, metadata=_opt("object names (default: the image's last path part)", "NAME")
    )
    namespace: str | None = field(default=None, metadata=_opt("the namespace", "NS"))
    replicas: int = field(default=2, metadata=_opt("replicas (the autoscaler's minimum)", "N"))
    max_replicas: int | None = field(
        default=None, metadata=_opt("the autoscaler's maximum (default: 4 x replicas)", "N")
    )
    cpu_request: str = field(default="100m", metadata=_opt("CPU request", "QUANTITY"))
    cpu_limit: str = field(default="1", metadata=_opt("CPU limit", "QUANTITY"))
    memory_request: str = field(default="128Mi", metadata=_opt("memory request", "QUANTITY"))
    memory_limit: str = field(default="512Mi", metadata=_opt("memory limit", "QUANTITY"))
    auth_secret: str | None = field(
        default=None,
        metadata=_opt(
            "a Secret whose key `tokens` is mounted read-only as the bearer tokens file", "NAME"
        ),
    )
    oauth_config: str | None = field(
        default=None,
        metadata=_opt(
            "a ConfigMap whose SVC_OAUTH_* keys become the server's environment (OAuth 2.1 "
            "resource server)",
            "NAME",
        ),
    )
    otel_config: str | None = field(
        default=None,
        metadata=_opt(
            "a ConfigMap whose OTEL_* keys become the server's environment (OpenTelemetry traces)",
            "NAME",
        ),
    )
    writable_tmp: bool = field(
        default=False,
        metadata=_opt("mount a 64Mi in-memory /tmp for functions that write temporary files"),
    )

    def wrapped_target(self) -> str:
        return self.interface

    def emit(self, ir: ModuleIR, ctx: EmitContext) -> FileTree:
        """The base for the capabilities the bundle serves (a module's, or a repository's
        selection), run as the wrapped target declares (``ctx.served``)."""
        from svcc.backends.k8s._yaml import render_base

        if ctx.served is None:
            raise UsageError("the k8s target wraps a servable bundle: emit it through the driver")
        options = {f.name: getattr(self, f.name) for f in attrs.fields(K8sTarget)}
        workload = workload_of(
            options,
            capability_ids=[c.id for c in ir.capabilities],
            listens=ctx.served.listens_in_image,
        )
        workload = attrs.evolve(workload, allowed_hosts_env=ctx.served.allowed_hosts_env)
        return FileTree.of(render_base(workload))


__all__ = ["Interface", "K8sTarget", "Resources", "Workload"]
