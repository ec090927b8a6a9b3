"""The analysis service against the second adversarial pass (issue 27), end to end under
gunicorn on loopback: slow bodies do not stall everyone, answers stay bounded, malformed
input is a 4xx, and ``/containerize_file/`` reports a user's ineligible code as a 422 with
its readiness reasons (taking ``requirements`` and ``select`` as the command line does)."""

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from servers import running_service

GOOD = "def area(radius: float) -> float:\n    return 3.14 * radius**2\n"
NEEDS_YAML = "import yaml\n\n\ndef load(text: str) -> str:\n    return str(yaml.safe_load(text))\n"
MIXED = GOOD + "\n\ndef bad(x: int) -> int:\n    return x\n"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile2") / "ws"
    root.mkdir()
    (root / "geometry.py").write_text(GOOD)
    (root / "needs_yaml.py").write_text(NEEDS_YAML)
    (root / "reqs.txt").write_text("pyyaml\n")
    (root / "mixed.py").write_text(MIXED)
    return root


@pytest.fixture(scope="module")
def service(workspace: Path) -> Iterator[str]:
    with running_service(workspace, "--read-timeout", "2", workers=2) as (url, _pid):
        yield url


@pytest.fixture(scope="module")
def http(service: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service, timeout=60) as client:
        yield client


def json_error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    return body


def raw(url: str, request: bytes, timeout: float = 30) -> bytes:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_slow_bodies_do_not_stall_other_clients(service: str) -> None:
    host, port = service.removeprefix("http://").split(":")
    held = []
    for _ in range(2):  # as many as there are workers: each announces 100 bytes, sends 2
        sock = socket.create_connection((host, int(port)))
        sock.sendall(
            b"POST /analyze_file/ HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; "
            b"boundary=b\r\nContent-Length: 100\r\n\r\n--"
        )
        held.append(sock)
    try:
        time.sleep(0.5)
        start = time.monotonic()
        answer = httpx.post(
            service + "/analyze_file/", files={"file": ("g.py", GOOD.encode())}, timeout=60
        )
        assert answer.status_code == 200
        assert time.monotonic() - start < 30  # the worker timeout would be 150 s
        first = held[0].recv(4096)
        assert b" 408 " in first.split(b"\r\n", 1)[0], first[:200]
    finally:
        for sock in held:
            sock.close()


def test_silent_headers_free_the_worker(service: str) -> None:
    host, port = service.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    sock.sendall(b"POST /analyze_file/ HTTP/1.1\r\nHost: x\r\n")  # and then nothing
    try:
        sock.settimeout(20)
        answer = sock.recv(4096)
        assert b" 408 " in answer.split(b"\r\n", 1)[0], answer[:200]  # after the read timeout
    finally:
        sock.close()


class Slowloris:
    """Connections that send a request head one byte at a time, a byte every 0.2 s (each
    read sees data well within the read timeout), until their server answers."""

    HEAD = b"POST /analyze_file/ HTTP/1.1\r\nHost: x\r\n" + b"X-Pad: a\r\n" * 1000

    def __init__(self, url: str, count: int) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.socks = [socket.create_connection((host, int(port))) for _ in range(count)]
        self.answers: dict[int, bytes] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._trickle, daemon=True)
        self._thread.start()

    def _trickle(self) -> None:
        for byte in self.HEAD:
            for i, sock in enumerate(self.socks):
                if i in self.answers:
                    continue
                try:
                    sock.sendall(bytes([byte]))
                except OSError:  # answered and closed
                    sock.settimeout(1)
                    self.answers[i] = _read_all(sock)
            if self._stop.wait(0.2) or len(self.answers) == len(self.socks):
                return

    def close(self) -> list[bytes]:
        self._stop.set()
        self._thread.join(10)
        for i, sock in enumerate(self.socks):
            if i not in self.answers:
                sock.settimeout(1)
                self.answers[i] = _read_all(sock)
            sock.close()
        return [self.answers[i] for i in range(len(self.socks))]


def _read_all(sock: socket.socket) -> bytes:
    answer = b""
    try:
        while chunk := sock.recv(65536):
            answer += chunk
    except OSError:
        pass
    return answer


def test_slow_headers_do_not_stall_other_clients(service: str) -> None:
    """Slowloris against the sync workers: as many connections as there are workers,
    each trickling its headers; another client is answered once the head deadline (the
    read timeout, 2 s here) frees a worker, not after the 150 s worker timeout, and each
    slow connection gets a JSON 408."""
    slow = Slowloris(service, 2)
    try:
        time.sleep(0.5)
        answer = httpx.post(
            service + "/analyze_file/", files={"file": ("g.py", GOOD.encode())}, timeout=60
        )
        assert answer.status_code == 200
    finally:
        answers = slow.close()
    for got in answers:
        head, _, body = got.partition(b"\r\n\r\n")
        assert b" 408 " in head.split(b"\r\n", 1)[0], got[:200]
        assert json.loads(body)["title"] == "408 Request Timeout"


def test_malformed_chunked_body_is_400(service: str) -> None:
    answer = raw(
        service,
        b"POST /analyze_file/ HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; "
        b"boundary=b\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nabc\r\n0\r\n\r\n",
    )
    assert answer.split(b"\r\n", 1)[0].split()[1] == b"400", answer[:300]


def notebook(cells: list[str], metadata: str = "{}") -> bytes:
    body = ",".join(
        json.dumps({"cell_type": "code", "metadata": {}, "execution_count": None,
                    "outputs": [], "source": source, "id": f"c{i}"})
        for i, source in enumerate(cells)
    )  # fmt: skip
    return (
        '{"nbformat": 4, "nbformat_minor": 5, "metadata": '
        + metadata
        + ', "cells": ['
        + body
        + "]}"
    ).encode()


def test_diagnostics_are_bounded(http: httpx.Client) -> None:
    magics = "\n".join(["%time x=1"] * 20_000) + "\n\ndef f(x: int) -> int:\n    return x\n"
    answer = http.post("/analyze_file/", files={"file": ("n.ipynb", notebook([magics]))})
    assert answer.status_code == 200, answer.text[:300]
    assert len(answer.content) < 200_000
    readiness = answer.json()["readiness"]
    assert len(readiness["diagnostics"]) == 100
    assert readiness["diagnostics_omitted"] == {"SVC-F004": 19_900}


@pytest.mark.parametrize(
    ("route", "status"), [("/analyze_file/", 400), ("/process_file/", 422)]
)  # the statuses of every other notebook these routes cannot read
def test_deeply_nested_notebook_metadata_is_a_clean_4xx(
    http: httpx.Client, route: str, status: int
) -> None:
    deep = notebook(["x = 1\n"], "[" * 100_000 + "]" * 100_000)
    body = json_error(http.post(route, files={"file": ("deep.ipynb", deep)}), status)
    assert "nested too deeply" in body["description"]


@pytest.mark.parametrize(("route", "status"), [("/analyze_file/", 400), ("/process_file/", 422)])
def test_a_split_source_holding_a_number_is_a_clean_4xx(
    http: httpx.Client, route: str, status: int
) -> None:
    """Python's "sequence item 1: expected str instance, int found" was the description."""
    split = notebook(["x = 1\n"]).replace(b'"source": "x = 1\\n"', b'"source": ["x = 1\\n", 1]')
    assert b'["x = 1\\n", 1]' in split
    body = json_error(http.post(route, files={"file": ("split.ipynb", split)}), status)
    assert "cell 1: `source` item 2 is a number, not a string" in body["description"]
    assert "sequence item" not in body["description"]


def test_other_extensions_are_400_naming_the_formats(http: httpx.Client) -> None:
    answer = http.post("/analyze_file/", files={"file": ("data.csv", b"a,b\n1,2\n")})
    body = json_error(answer, 400)
    assert ".py" in body["description"]
    assert ".ipynb" in body["description"]


def test_containerize_ineligible_is_422_with_reasons(http: httpx.Client) -> None:
    answer = http.post(
        "/containerize_file/", data={"filename": "needs_yaml.py", "output": "out-yaml"}
    )
    body = json_error(answer, 422)
    assert body["reasons"], body
    assert all({"code", "message", "line"} <= set(r) for r in body["reasons"])


def test_containerize_takes_requirements(http: httpx.Client, workspace: Path) -> None:
    answer = http.post(
        "/containerize_file/",
        data={"filename": "needs_yaml.py", "output": "out-req", "requirements": "reqs.txt"},
    )
    assert answer.status_code == 200, answer.text
    assert "pyyaml" in (workspace / "out-req" / "application-requirements.txt").read_text()
    # and the image installs it
    assert "pyyaml" in (workspace / "out-req" / "container-requirements.txt").read_text()


def test_containerize_takes_a_selection(http: httpx.Client, workspace: Path) -> None:
    def names(output: str) -> list[str]:
        ir = json.loads((workspace / output / "capability-ir.json").read_text())
        return [c["name"] for c in ir["capabilities"]]

    everything = http.post("/containerize_file/", data={"filename": "mixed.py", "output": "o-a"})
    assert everything.status_code == 200, everything.text
    assert names("o-a") == ["area", "bad"]
    answer = http.post(
        "/containerize_file/", data={"filename": "mixed.py", "output": "o-s", "select": "area"}
    )
    assert answer.status_code == 200, answer.text
    assert names("o-s") == ["area"]
    unknown = http.post(
        "/containerize_file/", data={"filename": "mixed.py", "output": "o-u", "select": "nope"}
    )
    assert "nope" in json_error(unknown, 400)["description"]


def test_the_service_still_answers(http: httpx.Client) -> None:
    answer = http.post("/analyze_file/", files={"file": ("g.py", GOOD.encode())})
    assert answer.status_code == 200
