"""Requirements are deterministic: import names come from a committed table, the user's own
mapping (`# import:` comments, `[tool.svcc] import-names`), else the normalised name; an
import nothing provides is attributed to a declared distribution with no known import name."""

import json
from pathlib import Path

from helpers import run_svcc
from svcc.contracts.requirements import DISTRIBUTION_OF, KNOWN_IMPORT_NAMES, parse_requirements


def test_the_table_maps_both_ways() -> None:
    assert KNOWN_IMPORT_NAMES["scikit-learn"] == ("sklearn",)
    assert DISTRIBUTION_OF["sklearn"] == "scikit-learn"
    assert DISTRIBUTION_OF["yaml"] == "pyyaml"


def test_installed_metadata_is_not_consulted() -> None:
    # pluggy is installed beside svcc; its names come from normalisation only
    declared = parse_requirements("pluggy\n", "r.txt")
    assert declared.import_names == frozenset({"pluggy"})
    assert declared.unmapped == ("pluggy",)


def test_import_comment_states_the_mapping() -> None:
    declared = parse_requirements("my-dist>=1  # import: mine, other.sub\n", "r.txt")
    assert declared.import_names == {"my_dist", "mine", "other.sub"}
    assert declared.unmapped == ()


def _verdict(tmp_path: Path, source: str, requirements: str) -> dict[str, object]:
    (tmp_path / "m.py").write_text(source)
    (tmp_path / "r.txt").write_text(requirements)
    proc = run_svcc(
        "inspect", str(tmp_path / "m.py"), "--requirements", str(tmp_path / "r.txt"),
        "--format", "json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assessment: dict[str, object] = json.loads(proc.stdout)["assessments"][0]
    return assessment


SOURCE = "import weirdmod\n\n\ndef f() -> int:\n    return weirdmod.x\n"


def test_unresolved_import_is_attributed_to_an_unmapped_distribution(tmp_path: Path) -> None:
    assessment = _verdict(tmp_path, SOURCE, "weird-dist==1.0\n")
    assert assessment["class"] == "eligible"
    reasons = assessment["reasons"]
    assert isinstance(reasons, list)
    assert [r["code"] for r in reasons] == ["SVC-R040"]
    assert "weird-dist" in reasons[0]["message"]
    assert "# import:" in reasons[0]["hint"]


def test_without_an_unmapped_distribution_it_stays_refused(tmp_path: Path) -> None:
    assessment = _verdict(tmp_path, SOURCE, "numpy\n")
    assert assessment["class"] == "conditional"
    reasons = assessment["reasons"]
    assert isinstance(reasons, list)
    assert [r["code"] for r in reasons] == ["SVC-R008"]


def test_the_hint_names_the_distribution_of_a_known_import(tmp_path: Path) -> None:
    assessment = _verdict(tmp_path, "import sklearn\n\n\ndef f() -> int:\n    return 1\n", "")
    reasons = assessment["reasons"]
    assert isinstance(reasons, list)
    assert "(scikit-learn)" in reasons[0]["message"]


def test_project_import_names(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / "app").mkdir(parents=True)
    (project / "app" / "__init__.py").write_text("")
    (project / "app" / "m.py").write_text(SOURCE)
    (project / "pyproject.toml").write_text(
        '[project]\nname = "p"\ndependencies = ["numpy", "weird-dist"]\n'
        '[tool.svcc]\nimport-names = {"weird-dist" = ["weirdmod"]}\n'
    )
    document = json.loads(run_svcc("inspect", str(project), "--format", "json").stdout)
    assessment = document["files"]["app/m.py"]["assessments"][0]
    assert assessment["class"] == "eligible"
    assert assessment["reasons"] == []
