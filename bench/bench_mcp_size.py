"""MCP time against the size of one string argument: 1, 2, 4, 8 MB, direct and governed.

A generated MCP bundle (``def size(text: str) -> int``) is driven over raw stdio; each point
is the best of ``--repeat`` round trips of one ``tools/call`` whose ``text`` is N MB, and each
doubling step prints the ratio to the previous point (measured in the same run). Before the
stdio transport of issue 27 the SDK's text reader made this quadratic (8 MB: 1.19 s, 50 MB:
52 s); the target is about 2x per doubling. A message over the limit (16 MiB by default,
``SVC_MAX_BODY_BYTES``) is refused in the same linear read. Usage:
``python bench/bench_mcp_size.py [--repeat 3]``. Never asserts a time.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SVCC = str(Path(sys.executable).parent / "svcc")
SOURCE = "def size(text: str) -> int:\n    return len(text)\n"
POLICY = {
    "limits": {"wall_time_ms": 60000, "max_input_bytes": 64 << 20, "max_output_bytes": 1000},
    "environment": {"allow": []},
}
SIZES_MB = (1, 2, 4, 8)


def start(bundle: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "server.py"],
        cwd=bundle,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    hello = {"protocolVersion": "2025-06-18", "capabilities": {},
             "clientInfo": {"name": "bench", "version": "1"}}  # fmt: skip
    exchange(proc, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
    return proc


def exchange(proc: subprocess.Popen[bytes], message: dict[str, object]) -> bytes:
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()
    return proc.stdout.readline()


def point(proc: subprocess.Popen[bytes], megabytes: int, repeat: int) -> float:
    text = "x" * (megabytes << 20)
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "size", "arguments": {"text": text}}}  # fmt: skip
    best = float("inf")
    for _ in range(repeat):
        start_time = time.perf_counter()
        answer = exchange(proc, message)
        best = min(best, time.perf_counter() - start_time)
        assert str(len(text)).encode() in answer, answer[:200]
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=3)
    repeat = max(1, parser.parse_args().repeat)
    with tempfile.TemporaryDirectory(prefix="bench-mcp-size-") as tmp:
        source = Path(tmp) / "sizes.py"
        source.write_text(SOURCE)
        policy = Path(tmp) / "policy.json"
        policy.write_text(json.dumps(POLICY))
        for mode, extra in (("direct", []), ("governed", ["--execution-policy", str(policy)])):
            bundle = Path(tmp) / mode
            subprocess.run(
                [SVCC, "generate", "mcp", str(source), "--output-dir", str(bundle), *extra],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            proc = start(bundle)
            try:
                print(f"\n== {mode} ==\n{'MB':>4} {'seconds':>8} {'step':>7}")
                previous = None
                for megabytes in SIZES_MB:
                    seconds = point(proc, megabytes, repeat)
                    step = f"{seconds / previous:6.2f}x" if previous else "      -"
                    print(f"{megabytes:>4} {seconds:8.3f} {step:>7}")
                    previous = seconds
            finally:
                assert proc.stdin is not None
                proc.stdin.close()
                proc.wait(timeout=30)


if __name__ == "__main__":
    main()
