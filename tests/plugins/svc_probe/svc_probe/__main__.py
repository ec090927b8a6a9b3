"""Behaves as the request's ``tag`` says: ``probe:env`` reports its process; ``probe:sleep``
never answers; ``probe:spawn`` starts a ``sleep`` and never answers; ``probe:spam`` floods
stdout; ``probe:fail`` returns an error with detail.
``push`` is a careless extension: it writes the credentials it was given to its stderr (the
log) and into a two-line error message, so the core's own stripping can be tested."""

import base64
import json
import os
import subprocess
import sys
import time

request = json.loads(sys.stdin.read())
if request["operation"] == "push":
    path = request["arguments"]["authentication"]["config_file"]
    with open(path) as handle:
        auth = next(iter(json.load(handle)["auths"].values()))["auth"]
    password = base64.b64decode(auth).decode().partition(":")[2]
    sys.stderr.write(f"$ docker push\nlogin {auth}\npassword={password}\n")
    message = f"the registry said no to {password}\n(auth {auth})"
    body = {"ok": False, "error": {"code": "registry_failed", "message": message}}
    print(json.dumps({"schema": "svc.extension/v1", **body}))
    sys.exit(1)
tag = request["arguments"]["tag"]
if tag == "probe:spawn":
    subprocess.Popen(["sleep", "600"])
if tag in ("probe:sleep", "probe:spawn"):
    time.sleep(600)
if tag == "probe:spam":
    while True:
        sys.stdout.write("x" * 65536)
if tag == "probe:fail":
    sys.stderr.write("the engine's output\n")
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
