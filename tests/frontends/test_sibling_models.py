"""Models imported from a sibling module (an Enum, a dataclass, a pydantic model, a TypedDict)
get their JSON shape as if defined beside the function: in a directory, in a file's local
import closure, and served (one REST bundle under uvicorn answers with each)."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import run_svcc
from servers import Server, serving
from svcc.compiler.driver import analyze_file, analyze_repository
from svcc.compiler.options import CompileOptions
from svcc.compiler.pipeline import compile_path
from svcc.frontends.repository import PARALLEL_FROM
from svcc.ir.types import EnumType, ListType, ModelType, TypedDictType

MODELS = """\
import enum
from dataclasses import dataclass
from typing import TypedDict

from pydantic import BaseModel


class Size(enum.Enum):
    S = "s"
    M = "m"


@dataclass
class Box:
    width: int
    size: Size = Size.M


class Point(TypedDict):
    x: int
    y: int


class Item(BaseModel):
    name: str
    size: Size
"""

API = """\
from shop.models import Box, Item, Point
from shop import Size
from . import models


def pick(size: Size) -> Size:
    return size


def grow(box: Box) -> Box:
    return Box(width=box.width * 2, size=box.size)


def move(points: list[Point]) -> Point:
    return {"x": points[0]["x"] + 1, "y": points[0]["y"]}


def rename(item: Item, name: str) -> Item:
    return Item(name=name, size=item.size)


def qualified(size: models.Size) -> str:
    return size.value
"""

# ``shop`` re-exports the enum from its models module: followed to where it is defined.
INIT = "from .models import Size\n"


def _project(root: Path) -> Path:
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "__init__.py").write_text(INIT)
    (root / "shop" / "models.py").write_text(MODELS)
    (root / "shop" / "api.py").write_text(API)
    (root / "pyproject.toml").write_text('[project]\nname = "shop"\ndependencies = ["pydantic"]\n')
    return root


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _project(tmp_path_factory.mktemp("sibling"))


def test_sibling_models_have_their_shapes_in_a_directory(project: Path) -> None:
    analysis = analyze_repository(project, python_version=(3, 12))
    caps = {cap.name: (cap, a.klass) for ir, cap, a in analysis.capabilities()}
    assert {name: klass for name, (_, klass) in caps.items()} == dict.fromkeys(
        ("pick", "grow", "move", "rename", "qualified"), "eligible"
    )
    pick = caps["pick"][0]
    assert pick.params[0].type == EnumType(name="shop.models.Size", values=("s", "m"))
    assert caps["grow"][0].returns.type == ModelType(name="shop.models.Box")
    assert caps["move"][0].params[0].type == ListType(item=TypedDictType(name="shop.models.Point"))
    (api,) = [ir for ir, cap, _ in analysis.capabilities() if cap.name == "pick"]
    box = next(m for m in api.models if m.name == "shop.models.Box")
    assert box.fields[1].type == EnumType(name="shop.models.Size", values=("s", "m"))
    assert box.span == caps["grow"][0].params[0].span  # reasons point into the module judged


def test_a_file_and_its_directory_agree(project: Path) -> None:
    analysis = analyze_file(project / "shop" / "api.py", python_version=(3, 12))
    assert analysis.readiness is not None
    classes = {a.capability_id: a.klass for a in analysis.readiness.assessments}
    assert set(classes.values()) == {"conditional"}  # pydantic is not declared for a file
    reasons = {r.code for a in analysis.readiness.assessments for r in a.reasons}
    assert reasons == {"SVC-R024"}  # no "has no JSON shape" left


def test_a_class_without_a_shape_keeps_the_siblings_reason(tmp_path: Path) -> None:
    (tmp_path / "things.py").write_text(
        "class Thing:\n    def __init__(self, x):\n        self.x = x\n"
    )
    (tmp_path / "use.py").write_text(
        "from things import Thing\n\n\ndef f(t: Thing) -> int:\n    return 1\n"
    )
    analysis = analyze_repository(tmp_path, python_version=(3, 12))
    (assessment,) = [a for _, cap, a in analysis.capabilities() if cap.name == "f"]
    assert assessment.klass == "unsupported"
    (reason,) = [r for r in assessment.reasons if r.code == "SVC-R011"]
    assert "has no JSON shape" not in reason.message  # the sibling's own words instead


@pytest.fixture(scope="module")
def server(project: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    out = tmp_path_factory.mktemp("bundle") / "rest"
    compile_path(
        project, target="rest", output_dir=out, options=CompileOptions(python_version=(3, 12))
    )
    with serving(out) as running:
        yield running


@pytest.mark.parametrize(
    ("name", "body", "answer"),
    [
        ("pick", {"size": "s"}, "s"),
        ("grow", {"box": {"width": 2}}, {"width": 4, "size": "m"}),
        ("move", {"points": [{"x": 1, "y": 2}]}, {"x": 2, "y": 2}),
        ("rename", {"item": {"name": "a", "size": "m"}, "name": "b"}, {"name": "b", "size": "m"}),
        ("qualified", {"size": "m"}, "m"),
    ],
)
def test_served_with_the_siblings_models(
    server: Server, name: str, body: dict[str, object], answer: object
) -> None:
    with server.client() as client:
        response = client.post(f"/capabilities/shop.api.{name}", json=body)
        assert response.status_code == 200, response.text
        assert response.json() == answer
        assert client.post("/capabilities/shop.api.pick", json={"size": "xl"}).status_code == 422


def test_linked_in_lowering_workers_too(tmp_path: Path) -> None:
    """A tree large enough to be lowered in worker processes gives the same shapes."""
    root = _project(tmp_path)
    for index in range(PARALLEL_FROM):
        (root / "shop" / f"filler_{index}.py").write_text(f"VALUE = {index}\n")
    proc = run_svcc("inspect", str(root), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout.splitlines()[0])
    classes = {a["name"]: a["class"] for a in document["files"]["shop/api.py"]["assessments"]}
    assert set(classes.values()) == {"eligible"}, classes


def test_a_sibling_asked_again_is_lowered_once_with_the_same_shapes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first probe of a module has a field for every name its text binds, so later
    questions of it are answered from that lowering, each name's shape the one a probe of
    it alone gives; a name the text scan did not see is probed alone."""
    import svcc.frontends.python as front
    from svcc.frontends import sibling_models

    models = MODELS + "Alias = Box\nglobals()['Hidden'] = Box\n"
    files = {"shop.models": (models.encode(), False)}
    lowered: list[int] = []
    real = front.read_python

    def counting(data: bytes, **kwargs: object) -> object:
        lowered.append(data.count(b"\n    f"))  # the probe's fields
        return real(data, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(front, "read_python", counting)

    def shapes(linker: sibling_models._Linker, names: list[str]) -> list[object]:
        linker._probe("shop.models", names, 0)
        return [linker.shapes[("shop.models", n, (3, 11))] for n in names]

    shared = sibling_models._Linker(files.get, (3, 11))
    first = shapes(shared, ["Size"])
    later = shapes(shared, ["Point", "Box"]) + shapes(shared, ["Item", "Alias"])
    assert len(lowered) == 1  # one lowering, with a field for every name
    assert lowered[0] > 6
    # bound where the text scan does not look, and not bound at all: probed alone
    missed = shapes(shared, ["Hidden", "Nothing"])
    assert lowered[1:] == [2]
    for names, got in (
        (["Size"], first),
        (["Point", "Box", "Item", "Alias"], later),
        (["Hidden", "Nothing"], missed),
    ):
        for name, shape in zip(names, got, strict=True):
            alone = sibling_models._Linker(files.get, (3, 11))
            assert shapes(alone, [name]) == [shape], name
    assert [s is not None for s in (*first, *later)] == [True] * 5
