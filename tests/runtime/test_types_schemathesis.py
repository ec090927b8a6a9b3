"""schemathesis against the served kinds fixture (every input kind: dates, times, durations,
UUIDs, decimals, base64, enums, dataclasses, a pydantic model, a NamedTuple, a TypedDict of
them): every check, positive and negative data, no failure."""

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from servers import Server, generate, serving

TYPES = Path(__file__).resolve().parents[1] / "fixtures" / "types"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    out = tmp_path_factory.mktemp("schemathesis-types") / "bundle"
    generate(TYPES / "kinds.py", out, "--requirements", str(TYPES / "requirements.txt"))
    with serving(out) as running:
        yield running


def test_schemathesis_finds_nothing(server: Server, tmp_path: Path) -> None:
    command = [
        str(Path(sys.executable).parent / "schemathesis"),
        "run",
        f"{server.url}/openapi.json",
        "--checks",
        "all",
        "--max-examples",
        "25",
        "--seed",
        "20261125",
        "--generation-database",
        "none",
        "--request-timeout",
        "20",
        "--no-color",
    ]
    proc = subprocess.run(
        command, capture_output=True, text=True, cwd=tmp_path, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    document = httpx.get(f"{server.url}/openapi.json", timeout=10).json()
    operations = [op for path in document["paths"].values() for op in path.values()]
    assert f"Tested: {len(operations)}" in proc.stdout
