"""``svc expose build INTERFACE``: a servable target's repository bundle under operator,
exposure and readiness policies (``docs/policies.md``).

The three policy documents are strict JSON (unknown keys refused, schema ids checked) and
are read from the paths on the command line only. Every refusal they imply (direct
execution not allowed by both policies, the interface not allowed, no ``git.fetch`` grant
matching the URL, commit and subdirectory literally) happens before the repository is read
or fetched, and names what is missing.
"""

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from attrs import frozen
from svcc.contracts.errors import SvccError

if TYPE_CHECKING:
    from svcc.compiler.bundles import CompileResult
    from svcc.contracts.requirements import DeclaredRequirements

OPERATOR_SCHEMA: Final = "svc.operator-policy/v1"
EXPOSURE_SCHEMA: Final = "svc.exposure-policy/v1"
READINESS_POLICY_SCHEMA: Final = "svc.readiness-policy/v1"
MAX_POLICY_BYTES: Final = 1024 * 1024
EXECUTION_MODES: Final = ("direct", "local-process")


class PolicyError(SvccError):
    """A policy document is invalid, or it does not grant what the command needs (exit 2)."""


@frozen(kw_only=True)
class GitGrant:
    repository: str
    commit: str
    subdir: str
    ca_file: str | None


@frozen(kw_only=True)
class ExposurePolicy:
    include: tuple[str, ...]
    include_all_ready: bool
    exclude: tuple[str, ...]
    interfaces: tuple[str, ...]
    execution: tuple[str, ...]


def _load(path: str | Path, schema: str) -> dict[str, Any]:
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PolicyError(f"{path}: cannot read policy: {exc.strerror or exc}") from None
    if len(data) > MAX_POLICY_BYTES:
        raise PolicyError(f"{path}: policy is over {MAX_POLICY_BYTES} bytes")
    try:
        doc = json.loads(data, object_pairs_hook=_no_duplicates)
    except ValueError as exc:
        raise PolicyError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != schema:
        raise PolicyError(f'{path}: not a {schema} document ("schema": "{schema}")')
    return doc


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _keys(doc: Mapping[str, Any], where: str, required: set[str], optional: set[str]) -> None:
    unknown = sorted(set(doc) - required - optional)
    if unknown:
        raise PolicyError(f"{where}: unknown key {unknown[0]!r}")
    missing = sorted(required - set(doc))
    if missing:
        raise PolicyError(f"{where}: missing key {missing[0]!r}")


def _strings(value: Any, where: str, choices: tuple[str, ...] | None = None) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PolicyError(f"{where}: expected a list of strings")
    for item in value:
        if choices is not None and item not in choices:
            raise PolicyError(f"{where}: {item!r} is not one of {', '.join(choices)}")
    return tuple(value)


def load_operator_policy(path: str | Path) -> tuple[GitGrant, ...]:
    """The ``git.fetch`` grants (other operations' grants are checked by their commands)."""
    doc = _load(path, OPERATOR_SCHEMA)
    _keys(doc, str(path), {"schema", "grants"}, set())
    if not isinstance(doc["grants"], list):
        raise PolicyError(f"{path}: grants: expected a list")
    out = []
    for index, grant in enumerate(doc["grants"]):
        where = f"{path}: grants[{index}]"
        if not isinstance(grant, dict) or not isinstance(grant.get("operation"), str):
            raise PolicyError(f'{where}: expected an object with an "operation"')
        if grant["operation"] != "git.fetch":
            continue
        _keys(grant, where, {"operation", "repository", "commit"}, {"subdir", "ca_file"})
        for key in ("repository", "commit"):
            if not isinstance(grant[key], str):
                raise PolicyError(f"{where}: {key}: expected a string")
        subdir = grant.get("subdir", ".")
        ca_file = grant.get("ca_file")
        if not isinstance(subdir, str):
            raise PolicyError(f"{where}: subdir: expected a string")
        if ca_file is not None and (not isinstance(ca_file, str) or not ca_file.startswith("/")):
            raise PolicyError(f"{where}: ca_file: expected an absolute path or null")
        out.append(
            GitGrant(
                repository=grant["repository"],
                commit=grant["commit"],
                subdir=subdir,
                ca_file=ca_file,
            )
        )
    return tuple(out)


def load_exposure_policy(path: str | Path) -> ExposurePolicy:
    doc = _load(path, EXPOSURE_SCHEMA)
    where = str(path)
    _keys(
        doc,
        where,
        {"schema", "interfaces", "execution"},
        {"include", "include_all_ready", "exclude"},
    )
    include_all = doc.get("include_all_ready", False)
    if not isinstance(include_all, bool):
        raise PolicyError(f"{where}: include_all_ready: expected true or false")
    include = _strings(doc.get("include", []), f"{where}: include")
    exclude = _strings(doc.get("exclude", []), f"{where}: exclude")
    for item in (*include, *exclude):
        if not item.startswith("python:") or item.count(":") != 2:
            raise PolicyError(f"{where}: {item!r} is not a full capability id (python:MODULE:NAME)")
    return ExposurePolicy(
        include=include,
        include_all_ready=include_all,
        exclude=exclude,
        interfaces=_strings(doc["interfaces"], f"{where}: interfaces", _servable()),
        execution=_strings(doc["execution"], f"{where}: execution", EXECUTION_MODES),
    )


def _servable() -> tuple[str, ...]:
    from svcc.compiler.registry import servable_targets

    return tuple(servable_targets())


def load_readiness_policy(path: str | Path) -> tuple[str, ...]:
    doc = _load(path, READINESS_POLICY_SCHEMA)
    _keys(doc, str(path), {"schema", "execution"}, set())
    return _strings(doc["execution"], f"{path}: execution", EXECUTION_MODES)


def matching_grant(grants: tuple[GitGrant, ...], url: str, commit: str, subdir: str) -> GitGrant:
    """The grant matching all three literally (no normalisation, no wildcards)."""
    for grant in grants:
        if (grant.repository, grant.commit, grant.subdir) == (url, commit, subdir):
            return grant
    raise PolicyError(
        f"the operator policy has no git.fetch grant for repository {url} commit {commit} "
        f"subdir {subdir}"
    )


@frozen(kw_only=True)
class ExposeRequest:
    interface: str
    output_dir: str
    operator_policy: str
    policy: str
    readiness_policy: str
    directory: str | None = None
    git: str | None = None
    ref: str | None = None
    subdir: str = "."
    python_version: str | None = None
    requirements: "DeclaredRequirements | None" = None


def expose_build(request: ExposeRequest) -> "CompileResult":
    """Policies first, then acquisition, analysis, selection and the bundle."""
    from svcc.compiler.bundles import local_name, served_bundle, tree_digest, write_bundle
    from svcc.compiler.driver import analyze
    from svcc.compiler.git_fetch import (
        GitSource,
        acquire,
        check_commit,
        check_subdir,
        check_url,
        subdir_parts,
    )
    from svcc.compiler.options import AnalyzeOptions

    grants = load_operator_policy(request.operator_policy)
    exposure = load_exposure_policy(request.policy)
    readiness = load_readiness_policy(request.readiness_policy)
    if "direct" not in exposure.execution:
        raise PolicyError(
            f'{request.policy}: the exposure policy does not allow execution "direct"'
        )
    if "direct" not in readiness:
        raise PolicyError(
            f'{request.readiness_policy}: the readiness policy does not allow execution "direct"'
        )
    if request.interface not in exposure.interfaces:
        raise PolicyError(
            f"{request.policy}: the exposure policy does not allow interface {request.interface!r}"
        )
    if not exposure.include and not exposure.include_all_ready:
        raise PolicyError(f"{request.policy}: the exposure policy selects nothing")
    from svcc.compiler.registry import get_target

    backend = get_target(request.interface)
    served_bundle(backend, "a repository bundle")

    def build(
        root: Path, name: str, provenance: dict[str, Any], folder_name: str | None = None
    ) -> "CompileResult":
        if not root.is_dir():
            from svcc.contracts.errors import InputError

            raise InputError(f"{root}: not a directory")
        analysis = analyze(
            root,
            AnalyzeOptions(
                python_version=request.python_version,
                requirements=request.requirements,
                folder_name=folder_name,
            ),
        )
        assert analysis.repository is not None  # a directory
        provenance["repository_digest"] = tree_digest(analysis.repository)
        return write_bundle(
            analysis,
            backend,
            request.output_dir,
            select=exposure.include,
            exclude=exposure.exclude,
            include_all_ready=exposure.include_all_ready,
            name=analysis.repository.tree.config.name or name,
            provenance=provenance,
        )

    if request.git is None:
        if request.directory is None:
            raise PolicyError("give a directory or --git URL --ref COMMIT")
        root = Path(request.directory)
        return build(root, local_name(root), {"kind": "directory"})
    if request.ref is None:
        raise PolicyError("--git needs --ref COMMIT (a full 40-hex commit id)")
    check_url(request.git)
    check_commit(request.ref)
    check_subdir(request.subdir)
    grant = matching_grant(grants, request.git, request.ref, request.subdir)
    source = GitSource(url=request.git, commit=request.ref, subdir=request.subdir)
    folders = subdir_parts(request.subdir)
    with acquire(source, ca_file=grant.ca_file) as tree:
        name = request.git.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git") or "repository"
        return build(
            tree,
            name,
            {"kind": "git", "url": request.git, "commit": request.ref, "subdir": request.subdir},
            # the export's temporary folder is not the user's: the subdir names the package
            folder_name=folders[-1] if folders else "",
        )
