"""schemathesis against a live generated server: every check, positive and negative data.

The rules fixture holds a few functions whose whole point is to fail (raise, return NaN,
lie about their return type, sleep, overflow a float to infinity); those are excluded here
because their 500s and undocumented statuses are the behaviour other tests pin. Every
other operation must give no 500, no undocumented status, no response violating its
schema, accept every schema-valid request and refuse every schema-invalid one.
"""

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from servers import FIXTURES, Server, generate, serving

DELIBERATE_FAILURES = (
    "boom",  # raises: generic 500 by design
    "returns_nan",  # NaN is not JSON: 500 by design
    "returns_object",  # not encodable: 500 by design
    "returns_lie",  # return types document, they do not enforce
    "teapot",  # raises HTTPException(418), preserved as raised
    "blocking",  # sleeps as long as asked
    "scale",  # float overflow gives inf, which is not JSON: 500 by design
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    out = tmp_path_factory.mktemp("schemathesis") / "bundle"
    generate(
        FIXTURES / "rules.py",
        out,
        "--requirements",
        str(FIXTURES / "requirements.txt"),
        "--allow",
        "env",
    )
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
        "20261122",
        "--generation-database",
        "none",
        "--request-timeout",
        "20",
        "--no-color",
        "--exclude-operation-id-regex",
        "^(" + "|".join(DELIBERATE_FAILURES) + ")$",
    ]
    proc = subprocess.run(
        command, capture_output=True, text=True, cwd=tmp_path, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    # nothing was skipped: every operation the document publishes, minus the excluded ones
    document = httpx.get(f"{server.url}/openapi.json", timeout=10).json()
    operations = [
        item["operationId"] for path in document["paths"].values() for item in path.values()
    ]
    tested = [op for op in operations if op not in DELIBERATE_FAILURES]
    assert len(tested) > len(DELIBERATE_FAILURES)
    assert f"Tested: {len(tested)}" in proc.stdout
