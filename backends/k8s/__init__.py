"""The ``k8s`` target: a Kustomize base that runs a published image on Kubernetes.

``svcc compile REPO --target k8s --image REG/NS/IMG@sha256:… --inputs-sha256 HEX`` (or
``--push-result FILE``, the ``svc.oci-push-result/v1`` document of ``svc-oci push``) writes
``kustomization.yaml`` and one file per object; ``kubectl apply -k DIR`` deploys it. The
capabilities come from the IR (their ids' digest labels every object); the image is taken by
digest only, never by tag, so what runs is exactly what was verified at publication.
"""

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import attrs
from attrs import field, frozen
from svcc.backends.k8s._manifests import Interface, Resources, Workload
from svcc.backends.k8s._options import workload_of
from svcc.compiler.target import BundleSpec, EmitContext, FileTree
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
    push_result: str | None = field(
        default=None,
        metadata=_opt("a svc.oci-push-result/v1 file: image and inputs digest from it", "FILE"),
    )
    interface: Literal["rest", "mcp"] = field(
        default="rest",
        metadata=_opt("what the image serves: rest, or mcp (streamable HTTP at /mcp)"),
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
    writable_tmp: bool = field(
        default=False,
        metadata=_opt("mount a 64Mi in-memory /tmp for functions that write temporary files"),
    )

    def emit(self, ir: ModuleIR, ctx: EmitContext) -> FileTree:  # noqa: ARG002 (the IR is all it needs)
        return self.base_for([c.id for c in ir.capabilities])

    def base_for(self, capability_ids: Sequence[str]) -> FileTree:
        """The base for these capabilities (a module's, or a repository's selection)."""
        from svcc.backends.k8s._yaml import render_base

        workload = workload_of(attrs.asdict(self), capability_ids=capability_ids)
        return FileTree.of(render_base(workload))


__all__ = ["Interface", "K8sTarget", "Resources", "Workload"]
