"""Serves CAPABILITIES.md at / and {"status": "ok"} at /health (svcc sample target)."""

import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PAGE = (Path(__file__).resolve().parent / "CAPABILITIES.md").read_bytes()


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        routes = {
            "/": (PAGE, "text/markdown; charset=utf-8"),
            "/health": (b'{"status": "ok"}', "application/json"),
        }
        body, kind = routes.get(self.path, (b"not found\n", "text/plain"))
        self.send_response(200 if self.path in routes else 404)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    ThreadingHTTPServer((sys.argv[1], int(sys.argv[2])), Handler).serve_forever()
