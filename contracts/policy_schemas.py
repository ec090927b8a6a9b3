"""JSON Schemas (draft 2020-12) of the policy and request files svcc reads, shipped as package data.

Editors and CI validate a policy against them before svcc reads it; the readers
(:mod:`svcc.contracts.policy`, :mod:`svcc.cli.expose`, :mod:`svcc.images.request`) stay the
authority, and
``tests/contracts/test_schemas.py`` runs both over the same valid and invalid documents so the two
cannot drift apart. ``docs/reference/schemas.md`` embeds each file byte for byte
(``python -m svcc.contracts.policy_schemas > docs/reference/schemas.md``; a test compares).
"""

import json
from importlib.resources import files
from typing import Any, Final

from attrs import frozen


@frozen
class PolicySchema:
    file: str
    document: str
    option: str
    manual: str


# Every file a user writes, by the `schema` id it carries, in the order the page lists them.
SCHEMAS: Final = {
    "svc.execution/v1": PolicySchema(
        "execution-v1.schema.json",
        "execution policy, local process per call",
        "`svcc generate|compile --execution-policy`",
        "../execution-policy.md",
    ),
    "svc.execution/v2": PolicySchema(
        "execution-v2.schema.json",
        "execution policy, container per call",
        "`svcc generate|compile --execution-policy` with `--runtime-image`",
        "../execution-policy.md#execution-policy-svcexecutionv2-governed-oci-container-execution",
    ),
    "svc.operator-policy/v1": PolicySchema(
        "operator-policy-v1.schema.json",
        "operator policy",
        "`svc expose build --operator-policy`",
        "../policies.md#operator-policy-svcoperator-policyv1-operator-policy",
    ),
    "svc.exposure-policy/v1": PolicySchema(
        "exposure-policy-v1.schema.json",
        "exposure policy",
        "`svc expose build --policy`",
        "../policies.md#exposure-policy-svcexposure-policyv1-policy",
    ),
    "svc.readiness-policy/v1": PolicySchema(
        "readiness-policy-v1.schema.json",
        "readiness policy",
        "`svc expose build --readiness-policy`",
        "../policies.md#readiness-policy-svcreadiness-policyv1-readiness-policy",
    ),
    "svc.oci-build/v1": PolicySchema(
        "oci-build-v1.schema.json",
        "image build request (`build.json`, written by `svcc image plan`)",
        "`svc plugins run svc-oci build --arguments`",
        "../oci.md#svc-oci-build",
    ),
    "svc.oci-push/v1": PolicySchema(
        "oci-push-v1.schema.json",
        "image push request (`push.json`, written by `svcc image plan`)",
        "`svc plugins run svc-oci push --arguments`",
        "../oci.md#svc-oci-push",
    ),
}


def schema_text(file: str) -> str:
    """The packaged schema file, exactly as shipped."""
    return (files("svcc.contracts") / "schemas" / file).read_text(encoding="utf-8")


def schema(file: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(schema_text(file))
    return loaded


def markdown_page() -> str:
    """The whole of ``docs/reference/schemas.md``: a table, then each schema embedded."""
    lines = [
        "# Policy and request file schemas",
        "",
        "Generated from `contracts/schemas/*.schema.json` by "
        "`python -m svcc.contracts.policy_schemas > docs/reference/schemas.md`; a test keeps "
        "them in sync. The files ship inside the package "
        '(`importlib.resources.files("svcc.contracts") / "schemas"`), in JSON Schema '
        "draft 2020-12, so an editor or a CI step can check a policy before svcc reads it "
        "(with `python -m jsonschema`, or an editor that reads JSON Schemas).",
        "",
        "To check a file with them, install `jsonschema` (`pip install jsonschema`) and run "
        "a script such as this one:",
        "",
        '```python title="check_policy.py"',
        "import json",
        "import sys",
        "from importlib.resources import files",
        "",
        "from jsonschema import Draft202012Validator",
        "",
        "NAMES = {",
        *(f'    "{schema_id}": "{entry.file}",' for schema_id, entry in SCHEMAS.items()),
        "}",
        "document = json.load(open(sys.argv[1]))",
        'name = NAMES[document.get("schema", "svc.execution/v1")]',
        'schema = json.loads((files("svcc.contracts") / "schemas" / name).read_text())',
        "errors = list(Draft202012Validator(schema).iter_errors(document))",
        "for error in errors:",
        '    print(f"{sys.argv[1]}: {error.json_path}: {error.message}")',
        "sys.exit(1 if errors else 0)",
        "```",
        "",
        '```json title="policy.json"',
        '{"schema": "svc.execution/v1", "limits": {"wall_time_ms": 2000, "max_queued_calls": -1}}',
        "```",
        "",
        "```console",
        "$ python check_policy.py policy.json || echo refused",
        "policy.json: $.limits.max_queued_calls: -1 is less than the minimum of 0",
        "refused",
        "```",
        "",
        "svcc's own reader stays the authority: it also refuses duplicate keys, files over its "
        "size limit and (for `expose build`) interfaces no installed target serves. Tests run "
        "the reader and the schema over the same valid and invalid documents.",
        "",
        "| `schema` id | file | what it is | read by |",
        "|---|---|---|---|",
    ]
    for schema_id, entry in SCHEMAS.items():
        anchor = entry.file.removesuffix(".schema.json")
        lines.append(
            f"| [`{schema_id}`]({entry.manual}) | [`{entry.file}`](#{anchor}) | "
            f"{entry.document} | {entry.option} |"
        )
    lines.append("")
    for schema_id, entry in SCHEMAS.items():
        anchor = entry.file.removesuffix(".schema.json")
        lines += [
            f"## `{entry.file}` {{ #{anchor} }}",
            "",
            f"The {entry.document} (`{schema_id}`), read by {entry.option}; "
            f"fields explained in [the manual]({entry.manual}).",
            "",
            "```json",
            schema_text(entry.file).rstrip("\n"),
            "```",
            "",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    sys.stdout.write(markdown_page())
