"""The MCP server over raw stdio: every request that has an id gets an answer (a result or a
JSON-RPC error), whatever the line holds; what is not strict JSON never reaches a tool."""

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from servers import generate

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "hostile"


def _int(text: str) -> int | str:
    return int(text) if len(text) <= 4300 else text  # a big one is compared as text


class RawMcp:
    """``python server.py`` on pipes, initialized, read line by line in a thread."""

    def __init__(self, bundle: Path, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "server.py"],
            cwd=bundle,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        hello = {"protocolVersion": "2025-06-18", "capabilities": {},
                 "clientInfo": {"name": "t", "version": "1"}}  # fmt: skip
        assert "result" in self.request(0, "initialize", hello)
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float = 30) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError("no answer from the MCP server") from None
        return json.loads(line, parse_int=_int)  # type: ignore[no-any-return]

    def request(self, ident: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.send(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method,
                              "params": params}).encode())  # fmt: skip
        return self.answer()

    def call_raw(self, ident: int, name: str, arguments: bytes) -> dict[str, Any]:
        """``tools/call`` with ``arguments`` spliced in as raw bytes."""
        self.send(b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s",'
                  b'"arguments":%s}}' % (ident, name.encode(), arguments))  # fmt: skip
        return self.answer()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wire") / "mcp"
    generate(FIXTURE / "json_values.py", out, interface="mcp")
    return out


@pytest.fixture(scope="module")
def mcp(bundle: Path) -> Iterator[RawMcp]:
    server = RawMcp(bundle, env={"SVC_MAX_BODY_BYTES": str(1024 * 1024)})
    yield server
    server.close()


def is_error(answer: dict[str, Any], ident: object) -> str:
    assert answer.get("id") == ident, answer
    assert "error" in answer, answer
    return str(answer["error"]["message"])


def test_a_valid_call_still_works(mcp: RawMcp) -> None:
    answer = mcp.call_raw(1, "kind", b'{"value": [1, 2.5]}')
    assert answer["result"]["structuredContent"] == {"result": "list:[1, 2.5]"}


@pytest.mark.parametrize(
    ("name", "arguments", "reason"),
    [
        ("kind", b'{"value": ' + b"7" * 4301 + b"}", "4300 digits"),
        ("size", b'{"text": "\\ud800"}', "lone surrogate"),
        ("kind", b'{"value": ' + b"[" * 300 + b"]" * 300 + b"}", "nested"),
        ("size", b'{"text": "caf\xe9"}', "UTF-8"),
        ("kind", b'{"value": NaN}', "NaN"),
        ("kind", b'{"value": -Infinity}', "Infinity"),
        ("untyped", b'{"value": 1e400}', "out of range"),
        ("mapping", b'{"values": {"a": Infinity}}', "Infinity"),
    ],
    ids=["digits", "surrogate", "nesting", "utf8", "nan", "infinity", "overflow", "dict-any"],
)
def test_a_hostile_request_is_answered_with_an_error(
    mcp: RawMcp, name: str, arguments: bytes, reason: str
) -> None:
    assert reason in is_error(mcp.call_raw(7, name, arguments), 7)
    assert mcp.call_raw(8, "size", b'{"text": "ok"}')["result"]["structuredContent"] == {
        "result": 2
    }


def test_a_syntax_error_is_a_parse_error_with_its_id_or_null(mcp: RawMcp) -> None:
    mcp.send(b'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":')
    answer = mcp.answer()
    assert answer["error"]["code"] == -32700
    assert answer["id"] == 11  # read from the start of the line
    mcp.send(b"not json at all")
    assert mcp.answer()["id"] is None


def test_a_message_over_the_limit_is_refused_and_the_server_goes_on(mcp: RawMcp) -> None:
    big = b'{"text": "' + b"x" * (3 * 1024 * 1024) + b'"}'
    assert "over 1048576 bytes" in is_error(mcp.call_raw(21, "size", big), 21)
    just = b'{"text": "' + b"x" * (900 * 1024) + b'"}'
    answer = mcp.call_raw(22, "size", just)
    assert answer["result"]["structuredContent"] == {"result": 900 * 1024}


def test_an_invalid_request_with_an_id_is_answered(mcp: RawMcp) -> None:
    mcp.send(b'{"jsonrpc":"2.0","id":31,"method":"tools/call","params":[1,2]}')
    answer = mcp.answer()
    assert answer["id"] == 31
    assert "error" in answer


def test_an_invalid_request_is_told_what_is_wrong_with_it(mcp: RawMcp) -> None:
    """The error names the field and the mistake; it said only ``4 validation errors for
    union[JSONRPCRequest,...]`` whatever the mistake was (HTTP answers by the same rule:
    ``test_network_serving``)."""
    mcp.send(b'{"jsonrpc":"2.0","id":32,"method":"tools/call","params":[1,2]}')
    assert (
        is_error(mcp.answer(), 32) == "Invalid request: params: Input should be a valid dictionary"
    )
    mcp.send(b'{"jsonrpc":"1.0","id":33,"method":"tools/list"}')
    assert is_error(mcp.answer(), 33) == "Invalid request: jsonrpc: Input should be '2.0'"
    mcp.send(b'{"jsonrpc":"2.0","id":34,"method":7}')
    assert is_error(mcp.answer(), 34) == "Invalid request: method: Input should be a valid string"


def test_an_integer_result_over_4300_digits_is_encoded(mcp: RawMcp) -> None:
    answer = mcp.call_raw(41, "power", b'{"digits": 5000}')
    assert answer["result"].get("isError") is not True, answer
    assert answer["result"]["content"][0]["text"] == "1" + "0" * 5000


def test_a_message_limit_that_is_not_a_number_refuses_startup(bundle: Path) -> None:
    """``SVC_MAX_BODY_BYTES`` is read by one rule for REST and MCP: a bad value refuses
    startup (exit 4) on both, never a silent 16 MiB."""
    proc = subprocess.run(
        [sys.executable, "server.py"],
        cwd=bundle,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "SVC_MAX_BODY_BYTES": "lots"},
        check=False,
    )
    assert proc.returncode == 4
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "svc-mcp: startup refused: SVC_MAX_BODY_BYTES='lots' is not a positive integer"
    ]


def test_requests_in_flight_when_the_client_closes_its_end_are_answered(tmp_path: Path) -> None:
    """A client that writes its calls and closes stdin (``printf ... | python server.py``)
    got the answer to ``initialize`` only: the session cancelled the calls in flight when
    the request stream ended. Each is answered now, and a call the client cancelled is not
    waited for."""
    (tmp_path / "slow.py").write_text(
        "import time\n\n\ndef wait(seconds: float) -> float:\n"
        "    time.sleep(seconds)\n    return seconds\n"
    )
    bundle = tmp_path / "mcp"
    generate(tmp_path / "slow.py", bundle, interface="mcp")
    hello = {"protocolVersion": "2025-06-18", "capabilities": {},
             "clientInfo": {"name": "t", "version": "1"}}  # fmt: skip
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "a", "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
         "params": {"name": "wait", "arguments": {"seconds": 0}}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}},
        *({"jsonrpc": "2.0", "id": n, "method": "tools/call",  # still running at the end
           "params": {"name": "wait", "arguments": {"seconds": n / 10}}} for n in (2, 3, 4)),
    ]  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "server.py"],
        cwd=bundle,
        input=b"".join(json.dumps(line).encode() + b"\n" for line in lines),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    answers = {a["id"]: a for a in map(json.loads, proc.stdout.splitlines())}
    assert {1, 2, 3, 4, "a"} <= set(answers), proc.stdout
    for n in (2, 3, 4):
        assert answers[n]["result"]["structuredContent"] == {"result": n / 10}


def test_requests_from_a_file_are_answered_into_a_file(bundle: Path, tmp_path: Path) -> None:
    """A pipe is read and written in the event loop; anything else (here files on both
    ends) in a worker thread, with the same answers."""
    hello = {"protocolVersion": "2025-06-18", "capabilities": {},
             "clientInfo": {"name": "t", "version": "1"}}  # fmt: skip
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}).encode()
        + b'\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
        + b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n'
        + b"not json\n"
    )
    answers = tmp_path / "answers.jsonl"
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        proc = subprocess.run(
            [sys.executable, "server.py"],
            cwd=bundle,
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr
    by_id = {a["id"]: a for a in map(json.loads, answers.read_bytes().splitlines())}
    assert set(by_id) == {1, 2, None}, by_id
    assert by_id[2]["result"]["tools"]
    assert "Parse error" in is_error(by_id[None], None)
