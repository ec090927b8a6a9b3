"""Service classes end to end: a class whose ``__init__`` loads a declared data file and whose
``setup`` runs once, served under uvicorn (REST) and through the official ``mcp`` client, in
direct mode (one instance for every call) and governed local-process mode (each call from a
freshly built instance); a construction failure stops startup with one line; a scikit-learn
model trained here, loaded once by a service class, answers as the model itself does."""

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers import run_svcc
from mcp_client import McpBundle
from servers import Server, failed_start, generate, serving

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "services"
DATA = ("--data", str(FIXTURE / "words.json"))


def post(client: httpx.Client, name: str, body: object) -> httpx.Response:
    return client.post(f"/capabilities/{name}", json=body)


@pytest.fixture(scope="module")
def direct(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    out = tmp_path_factory.mktemp("direct") / "rest"
    generate(FIXTURE / "predictor.py", out, *DATA)
    with serving(out) as server:
        yield server


def test_methods_are_capabilities_named_by_class(direct: Server) -> None:
    with direct.client() as client:
        paths = client.get("/openapi.json").json()["paths"]
        assert "/capabilities/Predictor.predict" in paths
        assert "/capabilities/Predictor.setup" not in paths  # the setup method is no capability
    ir = json.loads((direct.log.parent / "rest" / "capability-ir.json").read_text())
    (service,) = ir["services"]
    assert (service["name"], service["setup"]) == ("Predictor", "setup")
    readiness = json.loads((direct.log.parent / "rest" / "readiness.json").read_text())
    assert readiness["services"] == [{"class": "Predictor", "setup": "setup"}]
    manifest = json.loads((direct.log.parent / "rest" / "svc-rest.json").read_text())
    assert manifest["services"] == [{"class": "Predictor", "module": "predictor", "setup": "setup"}]


def test_direct_setup_runs_once_and_state_is_shared(direct: Server) -> None:
    with direct.client() as client:
        answer = post(client, "Predictor.predict", {"name": "Ada", "times": 2})
        assert answer.json() == "Hello, Ada Hello, Ada"
        remembered = [post(client, "Predictor.remember", {"item": str(i)}).json() for i in range(5)]
        assert remembered[-1] == ["0", "1", "2", "3", "4"]  # one instance serves every call
        assert post(client, "Predictor.setups", {}).json() == 1  # setup ran once for all calls
        assert post(client, "Predictor.shout", {"name": "ada"}).json() == "HELLO, ADA!"
        streamed = post(client, "Predictor.greet_each", {"text": "a b"})
        assert streamed.headers["content-type"].startswith("application/jsonl")
        assert [json.loads(line) for line in streamed.text.splitlines()] == [
            "Hello, a",
            "Hello, b",
            {"done": True, "items": 2},
        ]


def test_governed_calls_each_start_from_a_fresh_instance(tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"limits": {"wall_time_ms": 4000}}))
    out = tmp_path / "governed"
    result = generate(FIXTURE / "predictor.py", out, *DATA, "--execution-policy", str(policy))
    assert result["execution"] == {"mode": "governed", "backend": "local-process"}
    with serving(out) as server, server.client() as client:
        for _ in range(3):  # what one call appended is never seen by the next
            assert post(client, "Predictor.remember", {"item": "x"}).json() == ["x"]
        assert post(client, "Predictor.setups", {}).json() == 1
        assert post(client, "Predictor.shout", {"name": "bo"}).json() == "HELLO, BO!"


def test_governed_mcp_calls_each_start_from_a_fresh_instance(tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"limits": {"wall_time_ms": 4000}}))
    out = tmp_path / "governed-mcp"
    generate(
        FIXTURE / "predictor.py", out, *DATA, "--execution-policy", str(policy), interface="mcp"
    )
    client = McpBundle(out)
    try:
        for _ in range(2):
            result = client.call("Predictor.remember", {"item": "x"})
            assert result.structured_content == {"result": ["x"]}
        greeted = client.call("Predictor.predict", {"name": "Bo"})
        assert greeted.structured_content == {"result": "Hello, Bo"}
    finally:
        client.close()


PRELOAD = """
import sys
from pathlib import Path
sys.path.insert(0, "source")
from svc_runtime import services
from svc_runtime.governed.template import Prepared, preload
prepared = Prepared(Path("."))
preload(prepared)
print(sorted(prepared.preloaded), sorted(services._INSTANCES))
print(prepared.preloaded["predictor"].Predictor.history)
"""


def test_governed_template_builds_the_instance_once_before_forking(tmp_path: Path) -> None:
    """The template runs the module and builds (and sets up) the instance before it forks
    any worker: what ``serve`` calls first (``preload``), run on the bundle as it ships."""
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"limits": {"wall_time_ms": 4000}}))
    out = tmp_path / "governed"
    generate(FIXTURE / "predictor.py", out, *DATA, "--execution-policy", str(policy))
    ran = subprocess.run(
        [sys.executable, "-c", PRELOAD], cwd=out, capture_output=True, text=True, check=True
    )
    assert ran.stdout.splitlines() == [
        "['predictor'] [('predictor', 'Predictor')]",
        "['setup']",
    ]


def test_mcp_tools_are_methods(tmp_path: Path) -> None:
    out = tmp_path / "mcp"
    generate(FIXTURE / "predictor.py", out, *DATA, interface="mcp")
    tools = json.loads((out / "mcp-tools.json").read_text())["tools"]
    assert {t["name"] for t in tools} == {
        "Predictor.predict",
        "Predictor.setups",
        "Predictor.remember",
        "Predictor.shout",
        "Predictor.greet_each",
    }
    client = McpBundle(out)
    try:
        result = client.call("Predictor.predict", {"name": "Bo"})
        assert not result.is_error
        assert result.structured_content == {"result": "Hello, Bo"}
        client.call("Predictor.remember", {"item": "a"})
        second = client.call("Predictor.remember", {"item": "b"})
        assert second.structured_content == {"result": ["a", "b"]}
        assert client.call("Predictor.setups", {}).structured_content == {"result": 1}
    finally:
        client.close()


def test_a_failing_setup_stops_startup_with_one_line(tmp_path: Path) -> None:
    source = tmp_path / "broken.py"
    source.write_text(
        "class Broken:\n"
        "    def setup(self) -> None:\n"
        "        raise RuntimeError('no model here')\n\n"
        "    def predict(self, x: int) -> int:\n"
        "        return x\n"
    )
    out = tmp_path / "rest"
    generate(source, out)
    code, output = failed_start(out)
    assert code != 0
    lines = [line for line in output.splitlines() if "Broken" in line]
    assert len(lines) == 1, output
    assert lines[0].endswith(
        "building service class 'Broken' failed in Broken.setup(): RuntimeError: no model here"
    ), output
    assert "Traceback" not in output


MODEL_SERVICE = '''"""A scikit-learn model, loaded once from a declared file beside the module."""

from pathlib import Path

import joblib

HERE = Path(__file__).parent


class Iris:
    def __init__(self) -> None:
        self.model = joblib.load(HERE / "model.joblib")

    def predict(self, features: list[float]) -> int:
        """The class the model predicts for one flower."""
        return int(self.model.predict([features])[0])
'''


def test_a_scikit_learn_model_loaded_once_answers_as_itself(tmp_path: Path) -> None:
    import joblib
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression

    features, labels = load_iris(return_X_y=True)
    model = LogisticRegression(max_iter=500).fit(features, labels)
    folder = tmp_path / "src"
    folder.mkdir()
    joblib.dump(model, folder / "model.joblib")
    (folder / "iris_service.py").write_text(MODEL_SERVICE)
    (folder / "requirements.txt").write_text("joblib\nscikit-learn\n")
    out = tmp_path / "rest"
    generate(
        folder / "iris_service.py",
        out,
        "--data",
        str(folder / "model.joblib"),
        "--requirements",
        str(folder / "requirements.txt"),
    )
    shutil.rmtree(folder)  # the bundle carries what it needs
    with serving(out) as server, server.client() as client:
        for row in (features[0], features[60], features[120]):
            expected = int(model.predict([row])[0])
            answer = post(client, "Iris.predict", {"features": [float(v) for v in row]})
            assert answer.status_code == 200, answer.text
            assert answer.json() == expected


def test_governed_local_process_refuses_a_fork_unsafe_library(tmp_path: Path) -> None:
    source = tmp_path / "net.py"
    source.write_text(
        "import torch\n\n\nclass Net:\n    def run(self, x: int) -> int:\n        return x\n"
    )
    (tmp_path / "requirements.txt").write_text("torch\n")
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"limits": {"wall_time_ms": 4000}}))
    proc = run_svcc(
        "generate",
        "rest",
        str(source),
        "--requirements",
        str(tmp_path / "requirements.txt"),
        "--execution-policy",
        str(policy),
        "--output-dir",
        str(tmp_path / "out"),
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith("svcc: error: service class Net: the module imports torch")
    assert len(proc.stderr.strip().splitlines()) == 1


def test_inspect_of_classes_without_a_service_says_so(tmp_path: Path) -> None:
    source = tmp_path / "geometry.py"
    source.write_text(
        "class Point:\n"
        "    def __init__(self, x: float, y: float) -> None:\n"
        "        self.x, self.y = x, y\n"
    )
    proc = run_svcc("inspect", str(source), "--format", "text")
    assert proc.returncode == 0, proc.stderr
    assert "classes Point hold the code, and none is a service class" in proc.stdout
    assert "hint: a class built with no arguments" in proc.stdout


COG = Path(__file__).resolve().parents[1] / "fixtures" / "cog"


def test_a_cog_predictor_is_served_with_its_input_descriptors(tmp_path: Path) -> None:
    """``cog.Input`` keywords become the request schema's; the bundle carries its own ``cog``
    (``source/cog.py``), not the package."""
    out = tmp_path / "rest"
    generate(COG / "predict.py", out)
    schema = json.loads((out / "openapi.json").read_text())["components"]["schemas"]
    request = schema["request.Predictor.predict"]
    assert request["required"] == ["prompt"]
    assert request["properties"]["scale"] == {
        "default": 2,
        "description": "How many times",
        "maximum": 5,
        "minimum": 1,
        "type": "integer",
    }
    assert request["properties"]["size"]["enum"] == ["small", "large"]
    assert request["properties"]["prompt"]["maxLength"] == 20
    with serving(out) as server, server.client() as client:
        answer = post(client, "Predictor.predict", {"prompt": "hi"})
        assert answer.status_code == 200, answer.text
        assert answer.json() == "hi hi"  # the Input defaults: scale 2, size small
        large = post(client, "Predictor.predict", {"prompt": "a", "scale": 1, "size": "large"})
        assert large.json() == " ".join(["a"] * 10)
        for bad in ({"prompt": "hi", "scale": 9}, {"prompt": ""}, {"prompt": "a", "size": "xl"}):
            assert post(client, "Predictor.predict", bad).status_code == 422, bad
        assert post(client, "Predictor.predict", {}).status_code == 422  # prompt is required


def test_a_cog_predictor_over_mcp(tmp_path: Path) -> None:
    out = tmp_path / "mcp"
    generate(COG / "predict.py", out, interface="mcp")
    client = McpBundle(out)
    try:
        result = client.call("Predictor.predict", {"prompt": "yo", "scale": 3})
        assert result.structured_content == {"result": "yo yo yo"}
        assert client.call("Predictor.predict", {"prompt": "yo", "scale": 0}).is_error
    finally:
        client.close()


def test_a_cog_directory_is_compiled_as_it_is(tmp_path: Path) -> None:
    """``cog.yaml``'s ``predict:`` chooses what is served (not ``helpers.shout``) and its
    ``python_packages`` are the declared requirements."""
    out = tmp_path / "rest"
    result = generate(COG, out)
    assert result["capabilities"] == ["python:predict:Predictor.predict"]
    assert (out / "application-requirements.txt").read_text() == "numpy>=1.26\n"
    assert not (out / "source" / "helpers.py").exists()
    with serving(out) as server, server.client() as client:
        answer = post(client, "predict.Predictor.predict", {"prompt": "x", "scale": 3})
        assert answer.json() == "x x x"


def test_the_last_definition_of_a_class_is_served() -> None:
    from svcc.frontends.python import read_python

    source = (
        b"class A:\n    def a(self) -> int:\n        return 1\n\n\n"
        b"class A:\n    def b(self, x: int = 2) -> int:\n        return x\n\n"
        b"    @property\n    def c(self) -> int:\n        return 3\n"
    )
    ir = read_python(source, path="redef.py", module="redef", python_version=(3, 11)).ir
    assert ir is not None
    assert [(c.id, [p.name for p in c.params]) for c in ir.capabilities] == [
        ("python:redef:A.b", ["x"])
    ]
    assert [(s.name, s.setup, s.required) for s in ir.services] == [("A", None, ())]


def test_a_method_that_changes_its_instance_is_no_read_only_tool() -> None:
    """The next call sees what such a method leaves: its tool is neither read-only nor
    idempotent, whether it rebinds, updates in place or mutates a value it holds."""
    from svcc.compiler.passes.tool_effects import tool_effects
    from svcc.frontends.python import read_python

    source = (
        b"class Counter:\n"
        b"    def __init__(self) -> None:\n"
        b"        self.n = 0\n"
        b"        self.seen: list[str] = []\n"
        b"        self.by_word: dict[str, int] = {}\n\n"
        b"    def bump(self, by: int = 1) -> int:\n        self.n += by\n        return self.n\n\n"
        b"    def remember(self, word: str) -> int:\n"
        b"        self.seen.append(word)\n        return len(self.seen)\n\n"
        b"    def count(self, word: str) -> int:\n"
        b"        self.by_word[word] = self.by_word.get(word, 0) + 1\n"
        b"        return self.by_word[word]\n\n"
        b"    def peek(self) -> int:\n        local = [self.n]\n        local.append(1)\n"
        b"        return sum(local)\n"
    )
    ir = read_python(source, path="counter.py", module="counter", python_version=(3, 11)).ir
    assert ir is not None
    hints = {c.name: dict(tool_effects(c).hints) for c in ir.capabilities}
    for name in ("Counter.bump", "Counter.remember", "Counter.count"):
        assert hints[name]["readOnlyHint"] is False, name
        assert hints[name]["idempotentHint"] is False, name
    assert hints["Counter.peek"]["readOnlyHint"] is True
    assert hints["Counter.peek"]["idempotentHint"] is True


def test_a_constructor_reading_its_model_in_a_with_block_is_served(tmp_path: Path) -> None:
    """``with open(HERE / ...) as f:`` in ``__init__`` is read like the ``open`` call it
    makes: eligible with the file declared, and the served bundle answers with its data."""
    source = tmp_path / "linear.py"
    source.write_text(
        "import json\nfrom pathlib import Path\n\nHERE = Path(__file__).parent\n\n\n"
        "class Linear:\n"
        "    def __init__(self) -> None:\n"
        '        with open(HERE / "weights.json") as f:\n'
        "            self.weights = json.load(f)\n\n"
        "    def predict(self, x: float) -> float:\n"
        '        return self.weights["a"] * x + self.weights["b"]\n'
    )
    (tmp_path / "weights.json").write_text('{"a": 2.0, "b": 1.0}')
    undeclared = run_svcc("inspect", str(source), "--format", "json")
    assert "SVC-R026" in undeclared.stdout
    out = tmp_path / "rest"
    generate(source, out, "--data", str(tmp_path / "weights.json"))
    with serving(out) as server, server.client() as client:
        assert post(client, "Linear.predict", {"x": 3}).json() == 7.0
