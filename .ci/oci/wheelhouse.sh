#!/usr/bin/env bash
# Download, once per CI run, the wheels the OCI tests install offline (tests never touch the
# network): STATEDIR/wheelhouse/{amd64,arm64} for the REST and MCP servers on the base image
# (CPython 3.11, manylinux), and STATEDIR/wheelhouse/plugin for the svc-oci extension on this
# machine's Python (svcc's own dependencies; svcc and svc-oci themselves are built by the tests).
# The server requirements are read from the back ends' source (never imported).
# Usage: wheelhouse.sh STATEDIR
set -euo pipefail
ST=$(cd "${1:?statedir}" && pwd); ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W="$ST/wheelhouse"; mkdir -p "$W"
[ -x "$W/venv/bin/pip" ] || python3 -m venv "$W/venv"
PIP=("$W/venv/bin/pip" download -q --disable-pip-version-check --only-binary=:all:)
mapfile -t server < <(python3 - "$ROOT" <<'PY'
import ast, sys
reqs = set()
for kind in ("rest", "mcp"):
    tree = ast.parse(open(f"{sys.argv[1]}/backends/{kind}/__init__.py").read())
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "server_requirements":
            reqs.update(ast.literal_eval(node.value))
print("\n".join(sorted(reqs)))
PY
)
for arch in x86_64:amd64 aarch64:arm64; do
  "${PIP[@]}" -d "$W/${arch#*:}" --python-version 3.11 --implementation cp --abi cp311 \
    --platform "manylinux_2_17_${arch%:*}" --platform "manylinux2014_${arch%:*}" \
    --platform "manylinux_2_28_${arch%:*}" "${server[@]}"
done
# an application dependency with compiled wheels, for `svcc lock` and examples/ship.sh offline
"${PIP[@]}" -d "$W/app" --python-version 3.11 --implementation cp --abi cp311 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 "numpy==2.2.6"
mapfile -t plugin < <(python3 - "$ROOT" <<'PY'
import sys, tomllib
print("\n".join(tomllib.load(open(f"{sys.argv[1]}/pyproject.toml", "rb"))["project"]["dependencies"]))
PY
)
"${PIP[@]}" -d "$W/plugin" "${plugin[@]}" setuptools wheel
echo "wheelhouse: $(ls "$W/amd64" | wc -l) amd64, $(ls "$W/arm64" | wc -l) arm64, $(ls "$W/app" | wc -l) app, $(ls "$W/plugin" | wc -l) plugin wheels"
