"""A Cog project's ``cog.yaml``: read bounded and safely into a record (the predictor, the
declared packages, the keys honoured and not), refused with one line and exit 2 when it
cannot be served as written; a directory whose ``cog.yaml`` names a function serves that
function, with the packages declared, under uvicorn."""

import json
import textwrap
from pathlib import Path

import pytest
from helpers import run_svcc
from servers import generate, serving
from svcc.contracts.errors import InputError
from svcc.frontends.cog import MAX_BYTES, read_cog

PREDICT = textwrap.dedent(
    """
    from cog import Input


    def predict(
        text: str = Input(description="Text to repeat.", max_length=5),
        times: int = Input(default=2, ge=1, le=3),
    ) -> str:
        return text * times


    def helper(x: int) -> int:
        return x
    """
)
COG_YAML = textwrap.dedent(
    """
    build:
      gpu: true
      python_version: "3.11"
      python_packages:
        - "pydantic>=2.9,<3"
      python_requirements: requirements.txt
      system_packages:
        - "libgl1"
    predict: "predict.py:predict"
    image: "r8.im/someone/model"
    """
)


def _project(root: Path, cog_yaml: str = COG_YAML) -> Path:
    root.mkdir(exist_ok=True)
    (root / "cog.yaml").write_text(cog_yaml)
    (root / "predict.py").write_text(PREDICT)
    (root / "requirements.txt").write_text(
        "--extra-index-url https://download.example/whl\nnumpy>=1.26  # arrays\n"
    )
    return root


def test_the_record_names_what_is_honoured_and_what_is_not(tmp_path: Path) -> None:
    cog = read_cog(_project(tmp_path / "p"))
    assert cog is not None
    assert (cog.predict_file, cog.module, cog.predictor) == ("predict.py", "predict", "predict")
    assert cog.capability_id == "python:predict:predict"
    assert cog.requirements == ("pydantic>=2.9,<3", "numpy>=1.26")
    assert cog.python_version == "3.11"
    assert cog.honoured == ("build.python_packages", "build.python_requirements", "predict")
    assert cog.ignored == (
        "build.gpu",
        "build.python_version",
        "build.system_packages",
        "image",
        "build.python_requirements --extra-index-url",
    )
    declared = cog.declared()
    assert declared is not None
    assert declared.distributions == ("numpy", "pydantic")


def test_no_cog_yaml_is_no_record(tmp_path: Path) -> None:
    assert read_cog(tmp_path) is None


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("predict: [unclosed", "not valid YAML at line 1"),
        ("- a list", "must be a mapping"),
        ("build:\n  gpu: true\n", "`predict` must name the predictor"),
        ('predict: "predict.py"', "must be FILE.py:NAME"),
        ('predict: "../elsewhere/predict.py:Predictor"', "is outside the directory"),
        ('predict: "/etc/predict.py:Predictor"', "is outside the directory"),
        ('predict: "missing.py:Predictor"', "is not a file of the directory"),
        ('predict: "predict.py:predict"\nbuild: [1]', "`build` must be a mapping"),
        (
            'predict: "predict.py:predict"\nbuild:\n  python_packages: "numpy"',
            "`build.python_packages` must be a list",
        ),
        (
            'predict: "predict.py:predict"\nbuild:\n  python_packages: ["not a requirement!"]',
            "invalid requirement",
        ),
        (
            'predict: "predict.py:predict"\nbuild:\n  python_version: 3.10',
            "must be a quoted version",
        ),
        ("predict: *undefined", "not valid YAML"),
        ("x: !!python/object/apply:os.system ['true']", "not valid YAML"),
        ("x: " + "y" * MAX_BYTES, "larger than"),
    ],
)
def test_refusals_are_one_line(tmp_path: Path, text: str, said: str) -> None:
    root = _project(tmp_path / "p", text)
    with pytest.raises(InputError) as caught:
        read_cog(root)
    message = str(caught.value)
    assert said in message
    assert message.startswith("cog.yaml: ")
    assert "\n" not in message


def test_a_refusal_exits_2_with_one_line(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", 'predict: "../x.py:Predictor"')
    proc = run_svcc("inspect", str(root))
    assert proc.returncode == 2
    assert "SVC-F008 cog.yaml: predict file '../x.py' is outside the directory" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_a_cog_directory_serves_its_predictor(tmp_path: Path) -> None:
    """``predict: "predict.py:predict"`` names a function: ``generate DIR`` serves it alone
    (not ``helper``), with ``build.python_packages`` declared and without the Cog package."""
    root = _project(tmp_path / "p")
    (root / "requirements.txt").write_text("")
    proc = run_svcc("inspect", str(root), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    [note] = document["diagnostics"]
    assert note["code"] == "SVC-F038"
    assert "not honoured (the bundle does not do them): build.gpu" in note["message"]
    out = tmp_path / "bundle"
    tree = generate(root, out)
    assert tree["capabilities"] == ["python:predict:predict"]
    assert (out / "application-requirements.txt").read_text() == "pydantic>=2.9,<3\n"
    with serving(out) as server, server.client() as client:
        answer = client.post("/capabilities/predict.predict", json={"text": "ab"})
        assert answer.status_code == 200, answer.text
        assert answer.json() == "abab"
        refused = client.post("/capabilities/predict.predict", json={"text": "abcdef", "times": 4})
        assert refused.status_code == 422
        kinds = {e["type"] for e in refused.json()["detail"]}
        assert kinds == {"string_too_long", "less_than_equal"}
