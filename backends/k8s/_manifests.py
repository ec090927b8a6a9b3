"""Kubernetes objects for one published image, as plain data (no I/O, no YAML).

Everything here is a pure function of a :class:`Workload`, so the same inputs give the same
documents. The objects are hardened by default (DESIGN §11): the image by digest only,
non-root 65532, a read-only root file system, no capabilities, the runtime's default seccomp
profile, no service-account token, and egress denied.
"""

from typing import Any, Final

from attrs import frozen

PORT: Final = 8000
UID: Final = 65532
# Seconds the pod keeps serving after it is marked terminating, so that endpoint removal has
# reached every proxy before the server stops accepting connections (SIGTERM); the server
# then drains what is in flight within the rest of the grace period.
PRE_STOP_SECONDS: Final = 5
GRACE_SECONDS: Final = 30
# Label values are at most 63 characters, a sha256 is 64 hex digits: labels carry a prefix
# (enough to select by), annotations the whole digest.
LABEL_DIGEST_CHARS: Final = 32

Interface = str  # a servable target's name: the component label
# A server that listens serves HTTP on PORT (an MCP image: streamable HTTP at /mcp), with
# GET /health for the probes and GET /metrics for a Prometheus scrape.
AUTH_DIR: Final = "/etc/svc/auth"
AUTH_KEY: Final = "tokens"
# 0400: the kubelet adds group read for the pod's fsGroup (the server's group) on a
# read-only secret volume; nobody else reads it.
AUTH_MODE: Final = 0o400


@frozen(kw_only=True)
class Resources:
    cpu_request: str
    cpu_limit: str
    memory_request: str
    memory_limit: str


@frozen(kw_only=True)
class Workload:
    """What the manifests say, decided before any of them is built."""

    name: str
    namespace: str | None
    image: str
    interface: Interface
    # Whether the bundle listens on a port in the image (``BundleSpec.image_serve``); else
    # it speaks on stdin/stdout.
    listens: bool
    replicas: int
    max_replicas: int
    capabilities_sha256: str
    inputs_sha256: str
    resources: Resources
    writable_tmp: bool
    # A Secret whose key ``tokens`` becomes the server's bearer tokens file (DESIGN §13).
    auth_secret: str | None = None
    # A ConfigMap holding the ``SVC_OAUTH_*`` settings, loaded whole as environment.
    oauth_config: str | None = None
    # A ConfigMap holding the ``OTEL_*`` settings (tracing), loaded whole as environment.
    otel_config: str | None = None
    # The variable through which the server accepts ``Host`` values besides loopback
    # (``BundleSpec.allowed_hosts_env``; ``""``: it checks none): set to the Service's names.
    allowed_hosts_env: str = ""


def labels(w: Workload) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": w.name,
        "app.kubernetes.io/component": w.interface,
        "app.kubernetes.io/managed-by": "svcc",
        "svcc.io/capabilities-sha256": w.capabilities_sha256[:LABEL_DIGEST_CHARS],
        "svcc.io/inputs-sha256": w.inputs_sha256[:LABEL_DIGEST_CHARS],
    }


def selector(w: Workload) -> dict[str, str]:
    """Stable across releases (a Deployment's selector is immutable): name only."""
    return {"app.kubernetes.io/name": w.name}


def annotations(w: Workload) -> dict[str, str]:
    return {
        "svcc.io/capabilities-sha256": w.capabilities_sha256,
        "svcc.io/inputs-sha256": w.inputs_sha256,
        "svcc.io/image": w.image,
    }


def scrape_annotations() -> dict[str, str]:
    """Where a Prometheus that discovers pods by annotation scrapes ``/metrics``."""
    return {
        "prometheus.io/scrape": "true",
        "prometheus.io/port": str(PORT),
        "prometheus.io/path": "/metrics",
    }


def service_hosts(w: Workload) -> str:
    """The ``Host`` values a server that checks them accepts besides loopback: the
    Service's names in the pod's namespace (``$(POD_NAMESPACE)`` is expanded by the
    kubelet)."""
    names = [w.name, f"{w.name}.$(POD_NAMESPACE)", f"{w.name}.$(POD_NAMESPACE).svc"]
    names.append(f"{w.name}.$(POD_NAMESPACE).svc.cluster.local")
    return ",".join(names)


def environment(w: Workload) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = []
    if w.auth_secret is not None:
        env.append({"name": "SVC_AUTH_TOKENS_FILE", "value": f"{AUTH_DIR}/{AUTH_KEY}"})
    if w.allowed_hosts_env and w.listens:
        env.append(
            {
                "name": "POD_NAMESPACE",
                "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
            }
        )
        env.append({"name": w.allowed_hosts_env, "value": service_hosts(w)})
    return env


def metadata(w: Workload, *, with_annotations: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": w.name}
    if w.namespace is not None:
        meta["namespace"] = w.namespace
    meta["labels"] = labels(w)
    if with_annotations:
        meta["annotations"] = annotations(w)
    return meta


def _probe(path: str, *, period: int, failures: int) -> dict[str, Any]:
    return {
        "httpGet": {"path": path, "port": "http"},
        "periodSeconds": period,
        "timeoutSeconds": 2,
        "failureThreshold": failures,
    }


def container(w: Workload) -> dict[str, Any]:
    c: dict[str, Any] = {
        "name": "server",
        "image": w.image,
        "imagePullPolicy": "IfNotPresent",
    }
    env = environment(w)
    if env:
        c["env"] = env
    sources = [name for name in (w.oauth_config, w.otel_config) if name is not None]
    if sources:
        c["envFrom"] = [{"configMapRef": {"name": name}} for name in sources]
    if w.listens:
        c["ports"] = [{"name": "http", "containerPort": PORT, "protocol": "TCP"}]
        c["startupProbe"] = _probe("/health", period=2, failures=30)
        c["readinessProbe"] = _probe("/health", period=5, failures=2)
        c["livenessProbe"] = _probe("/health", period=10, failures=3)
        c["lifecycle"] = {"preStop": {"sleep": {"seconds": PRE_STOP_SECONDS}}}
    else:
        # a stdio server speaks JSON-RPC on stdin/stdout: keep stdin open for `kubectl attach -i`.
        c["stdin"] = True
        c["tty"] = False
    c["resources"] = {
        "requests": {"cpu": w.resources.cpu_request, "memory": w.resources.memory_request},
        "limits": {"cpu": w.resources.cpu_limit, "memory": w.resources.memory_limit},
    }
    c["securityContext"] = {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "privileged": False,
        "readOnlyRootFilesystem": True,
        "runAsGroup": UID,
        "runAsNonRoot": True,
        "runAsUser": UID,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    mounts: list[dict[str, Any]] = []
    if w.writable_tmp:
        mounts.append({"name": "tmp", "mountPath": "/tmp"})
    if w.auth_secret is not None:
        mounts.append({"name": "auth", "mountPath": AUTH_DIR, "readOnly": True})
    if mounts:
        c["volumeMounts"] = mounts
    return c


def deployment(w: Workload) -> dict[str, Any]:
    pod: dict[str, Any] = {
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": GRACE_SECONDS,
        "securityContext": {
            "fsGroup": UID,
            "runAsGroup": UID,
            "runAsNonRoot": True,
            "runAsUser": UID,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [container(w)],
    }
    volumes: list[dict[str, Any]] = []
    if w.writable_tmp:
        volumes.append({"name": "tmp", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}})
    if w.auth_secret is not None:
        volumes.append(
            {
                "name": "auth",
                "secret": {
                    "secretName": w.auth_secret,
                    "defaultMode": AUTH_MODE,
                    "items": [{"key": AUTH_KEY, "path": AUTH_KEY}],
                },
            }
        )
    if volumes:
        pod["volumes"] = volumes
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata(w, with_annotations=True),
        "spec": {
            "replicas": w.replicas,
            "revisionHistoryLimit": 5,
            "selector": {"matchLabels": selector(w)},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
            },
            "template": {
                "metadata": {
                    "labels": labels(w),
                    "annotations": {
                        **annotations(w),
                        **(scrape_annotations() if w.listens else {}),
                    },
                },
                "spec": pod,
            },
        },
    }


def service(w: Workload) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(w),
        "spec": {
            "type": "ClusterIP",
            "selector": selector(w),
            "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}],
        },
    }


def autoscaler(w: Workload) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": metadata(w),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": w.name},
            "minReplicas": w.replicas,
            "maxReplicas": w.max_replicas,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 70},
                    },
                }
            ],
        },
    }


def disruption_budget(w: Workload) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": metadata(w),
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": selector(w)}},
    }


def network_policy(w: Workload) -> dict[str, Any]:
    """Ingress only to the HTTP port (REST) or none at all (MCP); egress denied."""
    ingress: list[dict[str, Any]] = []
    if w.listens:
        ingress.append({"ports": [{"port": PORT, "protocol": "TCP"}]})
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": metadata(w),
        "spec": {
            "podSelector": {"matchLabels": selector(w)},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": ingress,
            "egress": [],
        },
    }


def resources_of(w: Workload) -> dict[str, dict[str, Any]]:
    """File name → object. A server that listens (REST; MCP over stateless streamable HTTP,
    where any replica answers any request) gets a Service and an autoscaler; one on stdio
    has no port, so neither."""
    out = {"deployment.yaml": deployment(w)}
    if w.listens:
        out["service.yaml"] = service(w)
        out["hpa.yaml"] = autoscaler(w)
    out["pdb.yaml"] = disruption_budget(w)
    out["networkpolicy.yaml"] = network_policy(w)
    return out


def kustomization(w: Workload, files: list[str]) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
    }
    if w.namespace is not None:
        doc["namespace"] = w.namespace
    doc["resources"] = files
    return doc
