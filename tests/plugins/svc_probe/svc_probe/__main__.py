"""Behaves as the request's ``tag`` says: ``probe:env`` reports its process; ``probe:sleep``
never answers; ``probe:spam`` floods stdout; ``probe:fail`` returns an error with detail."""

import json
import os
import sys
import time

request = json.loads(sys.stdin.read())
tag = request["arguments"]["tag"]
if tag == "probe:sleep":
    time.sleep(600)
if tag == "probe:spam":
    while True:
        sys.stdout.write("x" * 65536)
if tag == "probe:fail":
    body = {"ok": False, "error": {"code": "engine_failed", "message": "secret detail"}}
else:
    body = {
        "ok": True,
        "result": {
            "env": sorted(os.environ),
            "cwd": os.getcwd(),
            "cwd_entries": os.listdir("."),
            "session_leader": os.getsid(0) == os.getpid(),
            "fds": sorted(int(f) for f in os.listdir("/proc/self/fd")),
            "request": request,
            "flags": [sys.flags.isolated, sys.flags.no_user_site],
        },
    }
print(json.dumps({"schema": "svc.extension/v1", **body}))
