"""Types in governed mode: the worker receives validated values, so dates, times, durations
and UUIDs are served (pickled to the worker as objects), while parameters built from the
bundled classes (Enum, dataclass, ...) are refused at generation (SVC-R054) and a result
that is not already JSON is a 500 whose log line says why."""

from pathlib import Path

from helpers import run_svcc
from servers import serving

SOURCE = """import datetime
import enum
import uuid


class Color(enum.Enum):
    RED = "red"


def shift(day: datetime.date, key: uuid.UUID) -> str:
    return (day + datetime.timedelta(days=1)).isoformat() + "/" + key.hex[:4]


def stamp(day: datetime.date) -> datetime.date:
    return day


def paint(color: Color) -> str:
    return color.name


def today() -> object:
    return datetime.date(2024, 1, 1)
"""


def _write(tmp_path: Path) -> tuple[Path, Path]:
    source = tmp_path / "governed_kinds.py"
    source.write_text(SOURCE)
    policy = tmp_path / "policy.json"
    policy.write_text("{}")
    return source, policy


def test_governed_refuses_parameters_that_need_objects(tmp_path: Path) -> None:
    source, policy = _write(tmp_path)
    proc = run_svcc(
        "generate", "rest", str(source), "--output-dir", str(tmp_path / "g"),
        "--execution-policy", str(policy),
    )  # fmt: skip
    assert proc.returncode == 1
    assert "paint is conditional (SVC-R054 line 18: parameter 'color' needs a Color" in proc.stderr
    assert "stamp is unsupported (SVC-R022 line 14" in proc.stderr  # never already JSON
    assert "shift is" not in proc.stderr  # served governed: only named in the --select hint
    assert "today is" not in proc.stderr
    assert not (tmp_path / "g").exists()


def test_governed_serves_dates_and_uuids(tmp_path: Path) -> None:
    source, policy = _write(tmp_path)
    out = tmp_path / "bundle"
    proc = run_svcc(
        "generate", "rest", str(source), "--output-dir", str(out),
        "--execution-policy", str(policy), "--select", "shift,today",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    with serving(out) as server, server.client() as client:
        key = "12345678-1234-5678-1234-567812345678"
        response = client.post("/capabilities/shift", json={"day": "2024-02-28", "key": key})
        assert response.status_code == 200, response.text
        assert response.json() == "2024-02-29/1234"
        bad = client.post("/capabilities/shift", json={"day": "2024-02-30", "key": key})
        assert bad.status_code == 422
        assert bad.json()["detail"][0]["loc"] == ["body", "day"]
        failed = client.post("/capabilities/today", json={})
        assert failed.status_code == 500
    log = server.log_text()
    assert "result of type date is not finite JSON (governed mode serves results" in log


def test_repository_bundle_builds_its_modules_objects(tmp_path: Path) -> None:
    """A repository bundle's IR holds one IR per module: each capability's dataclasses and
    enums are its own module's, and NamedTuple results are objects there too."""
    repo = tmp_path / "repo"
    (repo / "geo").mkdir(parents=True)
    (repo / "geo" / "__init__.py").write_text("")
    (repo / "geo" / "shapes.py").write_text(
        "import enum\nfrom dataclasses import dataclass\nfrom typing import NamedTuple\n\n\n"
        "class Unit(enum.Enum):\n    M = 'm'\n    KM = 'km'\n\n\n"
        "@dataclass\nclass Box:\n    w: float\n    h: float = 1.0\n\n\n"
        "class Size(NamedTuple):\n    area: float\n    unit: Unit\n\n\n"
        "def measure(box: Box, unit: Unit = Unit.M) -> Size:\n"
        "    return Size(box.w * box.h, unit)\n"
    )
    out = tmp_path / "bundle"
    proc = run_svcc("compile", str(repo), "--target", "rest", "--output-dir", str(out))
    assert proc.returncode == 0, proc.stderr
    with serving(out) as server, server.client() as client:
        response = client.post(
            "/capabilities/geo.shapes.measure", json={"box": {"w": 2}, "unit": "km"}
        )
        assert response.status_code == 200, server.log_text()
        assert response.json() == {"area": 2.0, "unit": "km"}
        bad = client.post("/capabilities/geo.shapes.measure", json={"box": {"h": 2}})
        assert bad.status_code == 422
        assert bad.json()["detail"][0]["loc"] == ["body", "box", "w"]
