"""Nothing outside a target's own package dispatches on its name: how a bundle runs (a port
or stdio, the transports it also takes, the ``Host`` check a cluster configures) and the
default interface come from ``BundleSpec`` and the registry.
"""

import ast
from pathlib import Path

import attrs
import pytest
from helpers import ROOT
from svcc.backends.mcp import BUNDLE as MCP_BUNDLE
from svcc.backends.rest import BUNDLE as REST_BUNDLE
from svcc.cli.serve import Bundle, transport_arguments
from svcc.compiler.registry import default_servable, get_target, target_options
from svcc.contracts.errors import InputError

# The package's folders, less the targets' own packages.
FOLDERS = ("backends", "clients", "compiler", "extensions", "frontends", "ir", "runtime", "service")
EXEMPT = ("backends/rest/", "backends/mcp/")
NAMES = frozenset({"rest", "mcp"})


def _dispatches(tree: ast.AST) -> list[int]:
    """Lines comparing with a built-in target's name, or taking it as a default."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(isinstance(o, ast.Constant) and o.value in NAMES for o in operands):
                lines.append(node.lineno)
        elif (
            isinstance(node, ast.keyword)
            and node.arg == "default"
            and isinstance(node.value, ast.Constant)
            and node.value.value in NAMES
        ):
            lines.append(node.value.lineno)
    return lines


def test_no_code_dispatches_on_a_built_in_interface_name() -> None:
    found = []
    for path in sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(EXEMPT):
            continue
        found += [f"{rel}:{line}" for line in _dispatches(ast.parse(path.read_bytes()))]
    assert found == []


def test_the_default_interface_comes_from_the_registry() -> None:
    """svcc's first listening servable target; an installed plug-in (``sample``, which
    listens too) changes no default."""
    assert default_servable() == "rest"
    k8s = get_target("k8s")
    assert attrs.asdict(k8s)["interface"] == default_servable()
    (shown,) = [o for o in target_options(type(k8s)) if o.name == "interface"]
    assert shown.default == "rest"


def _bundle(spec: object, target: str) -> Bundle:
    return Bundle(path=Path("."), target=target, spec=spec, requirements=())  # type: ignore[arg-type]


def test_a_transport_is_what_the_bundle_declares() -> None:
    mcp = _bundle(MCP_BUNDLE, "mcp")
    assert transport_arguments(mcp, "streamable-http", "127.0.0.1", 8123, None) == (
        True,
        ["--transport", "streamable-http", "--host", "127.0.0.1", "--port", "8123"],
    )
    stdio_only = _bundle(attrs.evolve(MCP_BUNDLE, http_transports=()), "stdio-plugin")
    with pytest.raises(InputError, match="the stdio-plugin bundle speaks stdio only"):
        transport_arguments(stdio_only, "streamable-http", "127.0.0.1", 8123, None)
    rest = _bundle(REST_BUNDLE, "rest")
    with pytest.raises(InputError, match="serves HTTP on --host/--port already"):
        transport_arguments(rest, "streamable-http", "127.0.0.1", 8123, None)


def test_a_cluster_sets_the_host_check_the_bundle_declares() -> None:
    from svcc.backends.k8s._manifests import environment
    from svcc.backends.k8s._options import workload_of

    options = {
        f.name: getattr(get_target("k8s"), f.name) for f in attrs.fields(type(get_target("k8s")))
    }
    options |= {"image": "registry.example/ns/app@sha256:" + "a" * 64, "inputs_sha256": "b" * 64}
    base = workload_of(options, capability_ids=["python:m:f"], listens=True)
    assert environment(base) == []  # REST checks no Host header
    declared = attrs.evolve(base, allowed_hosts_env="SAMPLE_HOSTS")
    names = {e["name"]: e for e in environment(declared)}
    assert names["SAMPLE_HOSTS"]["value"].split(",")[0] == base.name
    assert environment(attrs.evolve(declared, listens=False)) == []  # stdio: no Host
    assert MCP_BUNDLE.allowed_hosts_env == "SVC_MCP_ALLOWED_HOSTS"
