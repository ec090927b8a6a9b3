"""Golden collection trees: ``tests/golden_clients/<case>/<format>/`` is the whole export.

The comparison covers every file (missing, extra and different files fail);
``pytest --snapshot-update`` rewrites the trees, and the diff is reviewed as the change.
Insomnia's own CLI cannot be installed here (``inso`` downloads a native binary), so its
export is also checked against the structure of the v4 export format the app imports.
"""

import json
import re
from pathlib import Path

import pytest
from clients_support import CATALOG, FORMATS, SHAPES, SHOP_REPO, build_rest_bundle
from golden_tree import check_tree, read_tree
from helpers import ROOT
from svcc.clients import ExportOptions, export_collection
from svcc.compiler.bundles import build_bundle
from svcc.compiler.driver import analyze_file
from svcc.compiler.registry import get_target
from svcc.compiler.writer import write_tree

GOLDEN = ROOT / "tests" / "golden_clients"
CASES = {"shapes": SHAPES, "catalog": CATALOG, "repository": SHOP_REPO}


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("golden-bundles")
    out = {}
    for case, source in CASES.items():
        if source.is_dir():
            out[case] = build_rest_bundle(source, root / case, "--python-version", "3.11")
            continue
        analysis = analyze_file(source, module_name=case, python_version="3.11")
        out[case] = write_tree(build_bundle(analysis, get_target("rest"))[1], root / case)
    return out


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_collection_tree(
    case: str, fmt: str, bundles: dict[str, Path], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    export_collection(bundles[case], tmp_path / "out", ExportOptions(format=fmt))
    check_tree(GOLDEN / case / fmt, read_tree(tmp_path / "out"), request)


def test_no_stale_golden_folders() -> None:
    present = {(p.parent.name, p.name) for p in GOLDEN.glob("*/*") if p.is_dir()}
    assert present == {(c, f) for c in CASES for f in FORMATS}


_ID = re.compile(r"(wrk|env|req)_[0-9a-f]{32}")


@pytest.mark.parametrize("case", sorted(CASES))
def test_insomnia_export_has_the_v4_structure(case: str) -> None:
    """What Insomnia's v4 importer reads: the export envelope, one collection workspace,
    its base environment holding ``baseUrl``, and requests under the workspace whose URLs
    use the environment variable and whose after-response script tests the status."""
    doc = json.loads((GOLDEN / case / "insomnia" / "insomnia.json").read_text())
    assert doc["_type"] == "export"
    assert doc["__export_format"] == 4
    assert set(doc) == {"_type", "__export_format", "__export_date", "__export_source", "resources"}
    resources = doc["resources"]
    ids = [r["_id"] for r in resources]
    assert len(ids) == len(set(ids))
    assert all(_ID.fullmatch(i) for i in ids)
    kinds = [r["_type"] for r in resources]
    assert kinds[:2] == ["workspace", "environment"]
    assert set(kinds[2:]) == {"request"}
    workspace, environment, *requests = resources
    assert workspace["parentId"] is None
    assert workspace["scope"] == "collection"
    assert environment["parentId"] == workspace["_id"]
    assert environment["data"] == {"baseUrl": "http://127.0.0.1:8000", "token": ""}
    assert requests[0]["method"] == "GET"
    assert requests[0]["url"] == "{{ _.baseUrl }}/health"
    manifest_names = [r["name"] for r in requests[1:]]
    assert len(manifest_names) == len(CASES_CAPABILITIES[case])
    for index, req in enumerate(requests, start=1):
        assert req["parentId"] == workspace["_id"]
        assert req["metaSortKey"] == index
        assert req["url"].startswith("{{ _.baseUrl }}/")
        assert "insomnia.expect(insomnia.response.code).to.eql(200)" in req["afterResponseScript"]
        if req["method"] == "POST":
            assert req["body"]["mimeType"] == "application/json"
            json.loads(req["body"]["text"])
            assert req["headers"] == [{"name": "Content-Type", "value": "application/json"}]


CASES_CAPABILITIES = {
    "shapes": ["circle_area", "rectangle_area", "scale", "describe"],
    "catalog": ["quote", "page", "tree_size", "coords", "health", "Health"],
    "repository": ["shop.pricing.total", "shop.tax.rate"],
}
