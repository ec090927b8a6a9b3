"""The HTTP analysis service end to end: ``svcc serve-analysis`` (Falcon under gunicorn) on
loopback, real multipart uploads and JSON bodies through httpx."""

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import GOLDEN, SVCC, run_svcc
from servers import running_service

GOOD = '''\
"""Geometry."""

import math


def area(radius: float) -> float:
    """Area of a circle."""
    return math.pi * radius**2


def scale(points: list[float], factor: float = 2.0) -> list[float]:
    return [p * factor for p in points]
'''
MAX_UPLOAD = 100_000
MAX_FILES = 20


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("service")
    root = base / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "geometry.py").write_text(GOOD)
    (root / "broken.py").write_text("def f(:\n")
    (root / "pkg" / "util.py").write_text("def twice(x: int) -> int:\n    return 2 * x\n")
    (root / "gen_only.py").write_text("def numbers(n: int) -> list[int]:\n    yield n\n")
    (root / "many").mkdir()
    for i in range(MAX_FILES + 1):
        (root / "many" / f"m{i}.py").write_text("X = 1\n")
    (base / "outside").mkdir()
    (base / "outside" / "secret.py").write_text("def leak() -> int:\n    return 1\n")
    (root / "escape").symlink_to(base / "outside", target_is_directory=True)
    return root


@pytest.fixture(scope="module")
def service(workspace: Path) -> Iterator[str]:
    limits = ("--max-upload-bytes", str(MAX_UPLOAD), "--max-directory-files", str(MAX_FILES))
    with running_service(workspace, *limits, workers=2) as (url, _):
        yield url


@pytest.fixture(scope="module")
def http(service: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service, timeout=60) as client:
        yield client


def json_error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert set(body) >= {"title", "description"}
    assert "Traceback" not in response.text
    return body


def upload(http: httpx.Client, route: str, name: str, data: bytes, **fields: str) -> httpx.Response:
    return http.post(route, files={"file": (name, data)}, data=fields)


# -- /analyze_file/ ----------------------------------------------------------------------------


def test_analyze_file(http: httpx.Client) -> None:
    result = upload(http, "/analyze_file/", "geometry.py", GOOD.encode()).json()
    assert result["version"] == "3.8"
    assert result["imports"] == ["math"]
    assert [f["name"] for f in result["functions"]] == ["area", "scale"]
    area = result["functions"][0]
    assert area["args"] == [
        {
            "name": "radius",
            "kind": "positional_or_keyword",
            "annotation": {"type": "float", "of": []},
        }
    ]
    assert area["returns"] == {"type": "float", "of": []}
    assert result["functions"][1]["args"][0]["annotation"] == {
        "type": "list",
        "of": [{"type": "float", "of": []}],
    }
    assert [c["id"] for c in result["capabilities"]] == [
        "python:geometry:area",
        "python:geometry:scale",
    ]
    assert result["readiness"]["schema"] == "svc.readiness/v1"


def test_analyze_file_selection(http: httpx.Client) -> None:
    only = upload(
        http, "/analyze_file/", "g.py", GOOD.encode(), functions_to_analyze="scale"
    ).json()
    assert [f["selected"] for f in only["functions"]] == [False, True]
    assert [c["name"] for c in only["capabilities"]] == ["scale"]
    ignored = upload(http, "/analyze_file/", "g.py", GOOD.encode(), ignore="scale").json()
    assert [a["name"] for a in ignored["readiness"]["assessments"]] == ["area"]
    unknown = upload(http, "/analyze_file/", "g.py", GOOD.encode(), functions_to_analyze="nope")
    assert "nope" in json_error(unknown, 400)["description"]


def test_analyze_file_parameters_as_query_string(http: httpx.Client) -> None:
    response = http.post(
        "/analyze_file/", params={"python_version": "3.11"}, files={"file": ("g.py", GOOD.encode())}
    )
    assert response.json()["version"] == "3.11"


def test_analyze_file_encodings(http: httpx.Client) -> None:
    latin = (GOLDEN / "encoding_latin1" / "input.py").read_bytes()
    assert upload(http, "/analyze_file/", "l.py", latin, encoding="latin-1").status_code == 200
    body = json_error(upload(http, "/analyze_file/", "u.py", b"x = '\xff\xfe'\n"), 400)
    assert "u.py" in body["description"]
    body = json_error(
        upload(http, "/analyze_file/", "g.py", GOOD.encode(), encoding="klingon"), 400
    )
    assert "unknown encoding 'klingon'" in body["description"]


def test_analyze_file_errors(http: httpx.Client) -> None:
    assert (
        "broken.py:1"
        in json_error(upload(http, "/analyze_file/", "broken.py", b"def f(:\n"), 400)["description"]
    )
    assert "file is required" in json_error(http.post("/analyze_file/"), 400)["description"]
    body = json_error(
        upload(http, "/analyze_file/", "g.py", GOOD.encode(), python_version="2.7"), 400
    )
    # the field it came from (the CLI's option name, --python-version, was said here)
    assert body["description"].startswith("unsupported python_version '2.7': supported 3.")
    json_error(upload(http, "/analyze_file/", "big.py", b"#" * (MAX_UPLOAD + 1)), 413)


# -- /analyse_directory/ -----------------------------------------------------------------------


def test_analyse_directory(http: httpx.Client) -> None:
    result = http.post("/analyse_directory/", data={"directory_path": "pkg"}).json()
    assert list(result) == ["pkg/util.py"]
    assert result["pkg/util.py"]["functions"][0]["name"] == "twice"


def test_analyse_directory_reports_unparsable_files_in_their_entry(
    http: httpx.Client, workspace: Path
) -> None:
    (workspace / "many").rename(workspace / ".many")  # hidden: skipped by directory analysis
    try:
        result = http.post("/analyse_directory/", params={"directory_path": "."}).json()
    finally:
        (workspace / ".many").rename(workspace / "many")
    assert set(result) == {"broken.py", "gen_only.py", "geometry.py", "pkg/util.py"}
    assert "error" in result["broken.py"]
    assert result["geometry.py"]["capabilities"]


@pytest.mark.parametrize(
    "path", ["..", "../outside", "/etc", "escape", "escape/.", "pkg/../../outside"]
)
def test_path_escapes_are_refused(http: httpx.Client, path: str) -> None:
    json_error(http.post("/analyse_directory/", data={"directory_path": path}), 400)


def test_directory_limits_and_errors(http: httpx.Client) -> None:
    assert (
        "limit"
        in json_error(http.post("/analyse_directory/", data={"directory_path": "many"}), 400)[
            "description"
        ]
    )
    json_error(http.post("/analyse_directory/", data={"directory_path": "geometry.py"}), 400)
    json_error(http.post("/analyse_directory/"), 400)


# -- /process_file/ ----------------------------------------------------------------------------


def test_process_notebook(http: httpx.Client, workspace: Path) -> None:
    notebook = (GOLDEN / "notebook_magics" / "input.ipynb").read_bytes()
    response = upload(http, "/process_file/", "magics.ipynb", notebook, output="out/magics.py")
    assert response.json() == {"status": "success", "output_path": "out/magics.py"}
    text = (workspace / "out" / "magics.py").read_text()
    assert text.startswith("# Processed by svcc from magics.ipynb")
    assert "%matplotlib" not in text
    assert "def hypot" in text
    again = upload(http, "/process_file/", "magics.ipynb", notebook, output="out/magics.py")
    assert "overwrite=true" in json_error(again, 409)["description"]
    replaced = upload(
        http, "/process_file/", "magics.ipynb", notebook, output="out/magics.py", overwrite="true"
    )
    assert replaced.status_code == 200


def test_process_python_default_output(http: httpx.Client, workspace: Path) -> None:
    response = upload(http, "/process_file/", "script.py", GOOD.encode())
    assert response.json() == {"status": "success", "output_path": "script_processed.py"}
    assert (workspace / "script_processed.py").read_text().endswith(GOOD)


def test_process_file_errors(http: httpx.Client) -> None:
    assert json_error(upload(http, "/process_file/", "notes.txt", b"hello"), 400)["title"] == (
        "Invalid file type"
    )
    json_error(upload(http, "/process_file/", "x.py", GOOD.encode(), output="../x.py"), 400)
    json_error(upload(http, "/process_file/", "x.py", GOOD.encode(), output="escape/x.py"), 400)
    json_error(upload(http, "/process_file/", "bad.ipynb", b"{not a notebook"), 422)


# -- /containerize_file/ -----------------------------------------------------------------------


def test_containerize_file(http: httpx.Client, workspace: Path) -> None:
    response = http.post("/containerize_file/", data={"filename": "geometry.py", "output": "ctx"})
    assert response.json() == {"status": "success", "output_path": "ctx"}
    context = workspace / "ctx"
    for name in (
        "Containerfile",
        "wsgi.py",
        "gunicorn.conf.py",
        "container-requirements.txt",
        "app.py",
        "openapi.json",
        "svc-rest.json",
        "requirements.txt",
    ):
        assert (context / name).is_file(), name
    assert "COPY container-requirements.txt" in (context / "Containerfile").read_text()
    again = http.post("/containerize_file/", data={"filename": "geometry.py", "output": "ctx"})
    json_error(again, 409)


def test_containerized_bundle_still_passes_its_own_checks(workspace: Path) -> None:
    """The extra container files do not disturb the bundle's manifest: it starts."""
    from servers import serving

    with serving(workspace / "ctx") as server, server.client() as c:
        assert c.post("/capabilities/area", json={"radius": 1}).status_code == 200


def test_containerize_errors(http: httpx.Client) -> None:
    assert (
        "empty"
        in json_error(http.post("/containerize_file/", data={"filename": "", "output": "o1"}), 400)[
            "description"
        ]
    )
    body = json_error(  # the user's ineligible code: a 422 with its reasons (issue 27)
        http.post("/containerize_file/", data={"filename": "gen_only.py", "output": "o2"}), 422
    )
    assert "SVC-R016" in body["description"]
    assert [reason["code"] for reason in body["reasons"]] == ["SVC-R016"]
    json_error(
        http.post("/containerize_file/", data={"filename": "escape/secret.py", "output": "o3"}), 400
    )
    json_error(
        http.post("/containerize_file/", data={"filename": "geometry.py", "output": "/tmp/x"}), 400
    )


def test_containerize_a_file_whose_name_the_server_takes(
    http: httpx.Client, workspace: Path
) -> None:
    """The compiler's refusal ends "choose another with --module-name", an option the
    service does not have: the service says to rename the file."""
    (workspace / "queue.py").write_text(GOOD)
    body = json_error(
        http.post("/containerize_file/", data={"filename": "queue.py", "output": "o4"}), 400
    )
    assert body["description"] == (
        "queue.py: SVC-F015 module name 'queue' clashes with the standard library's module "
        "'queue', which the server imports first; rename the file"
    )
    assert not (workspace / "o4").exists()


# -- generation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("route", "files"),
    [
        ("/generate_server_files/", ["wsgi.py", "gunicorn.conf.py"]),
        ("/generate_requirements/", ["requirements.txt"]),
        ("/generate_containerfile/", ["Containerfile"]),
    ],
)
def test_generation(http: httpx.Client, workspace: Path, route: str, files: list[str]) -> None:
    folder = route.strip("/")
    conf = {"project_path": folder, "server": {"port": 9000}, "custom_packages": ["numpy"]}
    response = http.post(route, json=conf)
    body = response.json()
    assert body["status"] == "success"
    assert body["files"] == [f"{folder}/{name}" for name in files]
    assert all((workspace / folder / name).is_file() for name in files)
    json_error(http.post(route, json=conf), 409)
    assert http.post(route, json={"conf": conf}, params={"overwrite": "true"}).status_code == 200


def test_generation_errors(http: httpx.Client) -> None:
    route = "/generate_containerfile/"
    assert "bogus" in json_error(http.post(route, json={"bogus": 1}), 400)["description"]
    assert (
        "conf.server.port"
        in json_error(http.post(route, json={"server": {"port": "80"}}), 400)["description"]
    )
    json_error(
        http.post(route, content=b"{nope", headers={"content-type": "application/json"}), 400
    )
    json_error(http.post(route, content=b"[]", headers={"content-type": "application/json"}), 400)
    json_error(http.post(route, data={"x": "1"}), 415)
    json_error(http.post(route, json={"project_path": "../x"}), 400)
    json_error(http.post(route, json={"project_path": "escape"}), 400)


def test_unknown_route_and_method(http: httpx.Client) -> None:
    assert http.post("/analyze_file").status_code == 404  # no trailing slash
    assert http.get("/analyze_file/").status_code == 405


def test_app_factory_is_importable_alone(workspace: Path) -> None:
    code = (
        "from svcc.service.app import create_app; "
        f"app = create_app({str(workspace)!r}); print(type(app).__name__)"
    )
    out = subprocess.run(
        [str(Path(SVCC).parent / "python"), "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ},
    )
    assert out.stdout.strip() == "App"


def test_a_busy_or_malformed_bind_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """As ``svcc serve`` does for its port: gunicorn retried a held address for five
    seconds, logging each try (a dozen lines), and exited 1 ("a function is not eligible")."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        # any spelling gunicorn reads (``tcp://`` included: it was refused as a host name)
        procs = [
            run_svcc("serve-analysis", "--workspace", str(tmp_path), "--bind", bind)
            for bind in (f"127.0.0.1:{port}", f"tcp://127.0.0.1:{port}")
        ]
    for proc in procs:
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr == (
            f"svcc: error: port {port} on 127.0.0.1 is not available (Address already in use); "
            "stop what holds it or choose another with --bind\n"
        )
    proc = run_svcc("serve-analysis", "--workspace", str(tmp_path), "--bind", "127.0.0.1:http")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1
    assert "expected HOST:PORT with a port 1-65535" in proc.stderr
