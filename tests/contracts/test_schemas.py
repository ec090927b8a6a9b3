"""The packaged JSON Schemas of policy and request files agree with svcc's readers and the manual.

Every policy file and example in the repository validates; documents the reader refuses are
refused by the schema too, and what the schema's own examples show is read without error, so a
field added to one side only fails here. The docs page embeds exactly the packaged files."""

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT
from jsonschema import Draft202012Validator
from svcc.cli.expose import load_exposure_policy, load_operator_policy, load_readiness_policy
from svcc.contracts.errors import SvccError
from svcc.contracts.policy import load_execution
from svcc.contracts.policy_schemas import SCHEMAS, markdown_page, schema
from svcc.images.push_request import parse_push_request
from svcc.images.request import parse_build_request

IMAGE = "sha256:" + "0" * 64


def _execution(path: Path) -> object:
    data = json.loads(path.read_text())
    if isinstance(data, dict) and data.get("schema") == "svc.execution/v2":
        return load_execution(path, IMAGE, "linux/amd64")
    return load_execution(path)


READERS: dict[str, Callable[[Path], object]] = {
    "svc.execution/v1": _execution,
    "svc.execution/v2": _execution,
    "svc.operator-policy/v1": load_operator_policy,
    "svc.exposure-policy/v1": load_exposure_policy,
    "svc.readiness-policy/v1": load_readiness_policy,
    "svc.oci-build/v1": lambda path: parse_build_request(json.loads(path.read_text())),
    "svc.oci-push/v1": lambda path: parse_push_request(json.loads(path.read_text())),
}


def _validator(schema_id: str) -> Draft202012Validator:
    return Draft202012Validator(schema(SCHEMAS[schema_id].file))


def _schema_id(document: object) -> str | None:
    if document == {}:
        return "svc.execution/v1"
    if isinstance(document, dict) and document.get("schema") in SCHEMAS:
        return str(document["schema"])
    return None


def _found_in_the_repository() -> Iterator[tuple[str, Any]]:
    """Policy files under tests/, examples/ and docs/, and JSON examples of the manual."""
    for folder in ("tests", "examples", "docs"):
        for path in sorted((ROOT / folder).rglob("*.json")):
            try:
                document = json.loads(path.read_text())
            except (ValueError, UnicodeDecodeError):
                continue
            if document != {} and _schema_id(document):
                yield str(path.relative_to(ROOT)), document
    for page in sorted((ROOT / "docs").rglob("*.md")):
        text = page.read_text()
        snippets = re.findall(r"```json\n(.*?)```", text, flags=re.S)
        snippets += re.findall(r"`(\{\"schema\": \"svc[^`]*\})`", text)
        for snippet in snippets:
            try:
                document = json.loads(snippet)
            except ValueError:
                continue
            if _schema_id(document) and page.name != "schemas.md":
                yield str(page.relative_to(ROOT)), document


FOUND = list(_found_in_the_repository())


# Written by `svcc image plan`, not by hand: checked on what the planner writes (below).
PLANNED = {"svc.oci-build/v1", "svc.oci-push/v1"}


def test_the_repository_holds_examples_of_every_schema() -> None:
    assert {_schema_id(doc) for _, doc in FOUND} == set(SCHEMAS) - PLANNED


def test_what_image_plan_writes_validates(tmp_path: Path) -> None:
    from svcc.images.plan import PROPOSAL_KEY, PlanInputs, build_request, proposed_policy
    from svcc.images.plan import push_request as plan_push
    from svcc.images.request import PluginIdentity

    inputs = PlanInputs(
        bundle=tmp_path / "bundle",
        interface="rest",
        base_image="python:3.12-slim@sha256:" + "a" * 64,
        platform="linux/arm64",
        tag="shop:1",
        destination="registry.example:5443/team/shop:1",
        lock=tmp_path / "pylock.toml",
        wheelhouse=tmp_path / "wheels",
        engine_executable="/usr/bin/docker",
        engine_socket="/var/run/docker.sock",
        engine_builder="/usr/libexec/docker/cli-plugins/docker-buildx",
        credentials=tmp_path / "config.json",
        ca_file=tmp_path / "ca.pem",
        build_timeout_ms=300_000,
        push_timeout_ms=300_000,
    )
    built = {"image_id": "sha256:" + "b" * 64, "inputs_sha256": "c" * 64, "platform": "linux/arm64"}
    build, push = build_request(inputs), plan_push(inputs, built)
    plugin = PluginIdentity(name="svc-oci", version="0.4.1", sha256="d" * 64, lock_sha256="e" * 64)
    granted = proposed_policy(build, inputs.destination, plugin)
    del granted[PROPOSAL_KEY]  # what an operator grants, once reviewed
    for document in (build, push, granted):
        schema_id = str(document["schema"])
        assert [e.message for e in _validator(schema_id).iter_errors(document)] == []
        path = tmp_path / "document.json"
        path.write_text(json.dumps(document))
        READERS[schema_id](path)


@pytest.mark.parametrize(("where", "document"), FOUND, ids=[w for w, _ in FOUND])
def test_every_policy_in_the_repository_validates(where: str, document: Any) -> None:
    schema_id = _schema_id(document)
    assert schema_id is not None
    errors = [e.message for e in _validator(schema_id).iter_errors(document)]
    assert errors == [], where


def test_every_schema_is_draft_2020_12_and_valid() -> None:
    for entry in SCHEMAS.values():
        document = schema(entry.file)
        assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        Draft202012Validator.check_schema(document)


def _examples() -> Iterator[tuple[str, Any]]:
    for schema_id, entry in SCHEMAS.items():
        for example in schema(entry.file)["examples"]:
            yield schema_id, example
    for _, document in FOUND:
        schema_id = _schema_id(document)
        assert schema_id is not None
        yield schema_id, document


@pytest.mark.parametrize(("schema_id", "document"), list(_examples()))
def test_what_the_schema_accepts_the_reader_reads(
    schema_id: str, document: Any, tmp_path: Path
) -> None:
    assert _validator(schema_id).is_valid(document)
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(document).replace("<40 hex>", "0" * 40))
    READERS[schema_id](path)


ENGINE = {"executable": "/usr/bin/docker", "socket": "/var/run/docker.sock", "builder": None}
BUILD = schema(SCHEMAS["svc.oci-build/v1"].file)["examples"][0]
PUSH = schema(SCHEMAS["svc.oci-push/v1"].file)["examples"][0]
GRANT = {"operation": "git.fetch", "repository": "https://h/r.git", "commit": "0" * 40}
# Documents each reader refuses (exit 1 or 2), by the schema that must refuse them too.
REFUSED: list[tuple[str, Any]] = [
    ("svc.execution/v1", {"limitz": {}}),
    ("svc.execution/v1", {"schema": "svc.execution/v3"}),
    ("svc.execution/v1", {"limits": {"wall_time_ms": 0}}),
    ("svc.execution/v1", {"limits": {"wall_time_ms": 3_600_001}}),
    ("svc.execution/v1", {"limits": {"max_queued_calls": -1}}),
    ("svc.execution/v1", {"limits": {"max_input_bytes": "1"}}),
    ("svc.execution/v1", {"limits": {"max_concurrent_calls": True}}),
    ("svc.execution/v1", {"limits": {"extra": 1}}),
    ("svc.execution/v1", {"environment": {"allow": ["1BAD"]}}),
    ("svc.execution/v1", {"environment": {"allow": ["A", "A"]}}),
    ("svc.execution/v1", {"environment": {"inherit": 1}}),
    ("svc.execution/v1", {"working_directory": "keep"}),
    ("svc.execution/v1", {"network": "deny"}),
    ("svc.execution/v1", {"subprocess": "deny"}),
    ("svc.execution/v1", {"subprocess": "forbid"}),
    ("svc.execution/v1", {"worker_user": "bad user"}),
    ("svc.execution/v1", []),
    ("svc.execution/v2", {"schema": "svc.execution/v2", "network": "inherit"}),
    ("svc.execution/v2", {"schema": "svc.execution/v2", "limits": {"wall_time_ms": 99}}),
    ("svc.execution/v2", {"schema": "svc.execution/v2", "limits": {"memory_mib": 15}}),
    ("svc.execution/v2", {"schema": "svc.execution/v2", "limits": {"max_queued_calls": 1}}),
    ("svc.execution/v2", {"schema": "svc.execution/v2", "pool": {"size": 65}}),
    ("svc.execution/v2", {"schema": "svc.execution/v2", "environment": {"inherit": True}}),
    ("svc.execution/v2", {"schema": "svc.execution/v2", "worker_user": "x"}),
    ("svc.operator-policy/v1", {"schema": "svc.operator-policy/v1"}),
    ("svc.operator-policy/v1", {"schema": "svc.operator-policy/v1", "grants": {}}),
    ("svc.operator-policy/v1", {"schema": "svc.operator-policy/v1", "grants": [{}]}),
    ("svc.operator-policy/v1", {"schema": "svc.operator-policy/v1", "grants": [], "x": 1}),
    ("svc.operator-policy/v1", {"schema": "svc.operator-policy/v1", "grants": [{**GRANT, "x": 1}]}),
    (
        "svc.operator-policy/v1",
        {"schema": "svc.operator-policy/v1", "grants": [{"operation": "git.fetch", "commit": "c"}]},
    ),
    (
        "svc.operator-policy/v1",
        {"schema": "svc.operator-policy/v1", "grants": [{**GRANT, "ca_file": "rel/ca.pem"}]},
    ),
    (
        "svc.operator-policy/v1",
        {"schema": "svc.operator-policy/v1", "grants": [{**GRANT, "subdir": 1}]},
    ),
    ("svc.operator-policy/v1", {"schema": "svc.operator-policy/v2", "grants": []}),
    ("svc.exposure-policy/v1", {"schema": "svc.exposure-policy/v1", "interfaces": ["rest"]}),
    ("svc.exposure-policy/v1", {"schema": "svc.exposure-policy/v1", "execution": ["direct"]}),
    (
        "svc.exposure-policy/v1",
        {"schema": "svc.exposure-policy/v1", "interfaces": [], "execution": ["governed"]},
    ),
    (
        "svc.exposure-policy/v1",
        {"schema": "svc.exposure-policy/v1", "interfaces": [], "execution": [], "include": ["m:f"]},
    ),
    (
        "svc.exposure-policy/v1",
        {"schema": "svc.exposure-policy/v1", "interfaces": [], "execution": [], "exclude": [1]},
    ),
    (
        "svc.exposure-policy/v1",
        {"schema": "svc.exposure-policy/v1", "interfaces": "rest", "execution": []},
    ),
    (
        "svc.exposure-policy/v1",
        {
            "schema": "svc.exposure-policy/v1",
            "interfaces": [],
            "execution": [],
            "include_all_ready": "yes",
        },
    ),
    ("svc.readiness-policy/v1", {"schema": "svc.readiness-policy/v1"}),
    ("svc.readiness-policy/v1", {"schema": "svc.readiness-policy/v1", "execution": ["oci"]}),
    ("svc.readiness-policy/v1", {"schema": "svc.readiness-policy/v1", "execution": [], "x": 1}),
    ("svc.oci-build/v1", {**BUILD, "schema": "svc.oci-build/v2"}),
    ("svc.oci-build/v1", {**BUILD, "extra": 1}),
    ("svc.oci-build/v1", {k: v for k, v in BUILD.items() if k != "tag"}),
    ("svc.oci-build/v1", {**BUILD, "bundle": "relative/bundle"}),
    ("svc.oci-build/v1", {**BUILD, "tag": ""}),
    ("svc.oci-build/v1", {**BUILD, "platform": "linux/s390x"}),
    ("svc.oci-build/v1", {**BUILD, "timeout_ms": 540_001}),
    ("svc.oci-build/v1", {**BUILD, "max_log_bytes": 0}),
    ("svc.oci-build/v1", {**BUILD, "engine": {**ENGINE, "socket": "tcp://host:2375"}}),
    ("svc.oci-build/v1", {**BUILD, "engine": {**ENGINE, "extra": 1}}),
    ("svc.oci-build/v1", {**BUILD, "engine": {"executable": "/d", "socket": "/s"}}),
    ("svc.oci-push/v1", {**PUSH, "image_id": "sha256:abc"}),
    ("svc.oci-push/v1", {**PUSH, "inputs_sha256": "A" * 64}),
    ("svc.oci-push/v1", {**PUSH, "destination": "registry.example/team/shop@sha256:" + "a" * 64}),
    ("svc.oci-push/v1", {**PUSH, "destination": "registry.example/team/shop"}),
    ("svc.oci-push/v1", {**PUSH, "authentication": {}}),
    ("svc.oci-push/v1", {**PUSH, "authentication": {"config_file": "/c", "ca_file": "ca.pem"}}),
    ("svc.oci-push/v1", {**PUSH, "timeout_ms": True}),
]


@pytest.mark.parametrize(("schema_id", "document"), REFUSED)
def test_what_the_reader_refuses_the_schema_refuses(
    schema_id: str, document: Any, tmp_path: Path
) -> None:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(document))
    with pytest.raises(SvccError):
        READERS[schema_id](path)
    assert not _validator(schema_id).is_valid(document)


def test_the_manual_embeds_exactly_the_packaged_files() -> None:
    page = (ROOT / "docs" / "reference" / "schemas.md").read_text()
    assert page == markdown_page(), (
        "regenerate: python -m svcc.contracts.policy_schemas > docs/reference/schemas.md"
    )
    for entry in SCHEMAS.values():
        packaged = (ROOT / "contracts" / "schemas" / entry.file).read_text()
        assert f"```json\n{packaged}```" in page
    on_disk = {p.name for p in (ROOT / "contracts" / "schemas").glob("*.schema.json")}
    assert on_disk == {entry.file for entry in SCHEMAS.values()}


def test_the_wheel_ships_every_schema(svcc_wheel: Path) -> None:
    """Package data, not just files of the checkout: what `importlib.resources` finds installed."""
    import zipfile

    with zipfile.ZipFile(svcc_wheel) as wheel:
        shipped = {Path(n).name for n in wheel.namelist() if "svcc/contracts/schemas/" in n}
    assert shipped == {entry.file for entry in SCHEMAS.values()}
