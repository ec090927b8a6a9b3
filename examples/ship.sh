#!/usr/bin/env bash
# From a repository to a registry to a Kubernetes base: examples/shop, step by step, against a
# local engine and registry. Every command is printed before it runs.
#
# Usage: examples/ship.sh WORKDIR            (WORKDIR: new or empty; everything goes there)
#
# Required environment:
#   BASE_IMAGE     the base, pinned by digest, in a registry that allows anonymous pulls
#                  (CPython 3.11 with venv and pip), e.g. registry.example/ci/base@sha256:...
#   ENGINE_SOCKET  the engine's Unix socket, e.g. /var/run/docker.sock
#   DESTINATION    where to publish: registry.example:5443/team/shop:1.0
#   CREDENTIALS    {"auths": {"registry.example:5443": {"auth": "<base64 user:password>"}}}
# Optional:
#   ENGINE (docker client, default: the one on PATH), BUILDER (the buildx plugin; default: the
#   client's own builder), CA_FILE (a CA added for the registry), PLATFORM (linux/amd64),
#   PYTHON (3.11: the base's), SVCC (svcc), LOCK_ARGS / FETCH_ARGS (extra pip options for
#   `svcc lock` / `svcc plugins fetch`, e.g. "--no-index --find-links DIR"), UNTIL (stop
#   after that step: 5 builds only, e.g. on podman, whose API is too old for push).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
W=${1:?usage: examples/ship.sh WORKDIR}
: "${BASE_IMAGE:?set BASE_IMAGE}" "${ENGINE_SOCKET:?set ENGINE_SOCKET}"
: "${DESTINATION:?set DESTINATION}" "${CREDENTIALS:?set CREDENTIALS}"
SVCC=${SVCC:-svcc}
ENGINE=${ENGINE:-$(command -v docker)}
PLATFORM=${PLATFORM:-linux/amd64}
PYTHON=${PYTHON:-3.11}
read -r -a LOCK_EXTRA <<<"${LOCK_ARGS:-}"
read -r -a FETCH_EXTRA <<<"${FETCH_ARGS:-}"
ENGINE_OPTS=(--engine-executable "$ENGINE" --engine-socket "$ENGINE_SOCKET")
[ -n "${BUILDER:-}" ] && ENGINE_OPTS+=(--engine-builder "$BUILDER")
[ -n "${CA_FILE:-}" ] && ENGINE_OPTS+=(--ca-file "$CA_FILE")
SHOP="$HERE/shop"
# shop.catalog.price_of reads shop/catalog.json, a declared data file ([tool.svcc] data-files)
SELECT=shop.pricing.total,shop.pricing.line,shop.stats.summary,shop.catalog.price_of

mkdir -p "$W"
if [ -n "$(ls -A "$W")" ]; then echo "ship.sh: $W is not empty" >&2; exit 2; fi
W=$(cd "$W" && pwd)
step() { printf '\n== %s\n' "$*"; }
run() { printf '$ %s\n' "$*" >&2; "$@"; }
START=$(date +%s)

step "1. the bundle: the repository's ready functions as a REST service"
run "$SVCC" compile "$SHOP" --target rest --select "$SELECT" --output-dir "$W/bundle" >/dev/null

step "2. the wheel lock: server + numpy for $PLATFORM CPython $PYTHON (pip; the only network step)"
run "$SVCC" lock "$W/bundle" --platform "$PLATFORM" --python "$PYTHON" \
    --wheelhouse "$W/wheels" --output "$W/server.lock" "${LOCK_EXTRA[@]}"

step "3. the svc-oci extension: fetched, installed offline by hash, enabled"
run "$SVCC" plugins fetch svc-oci --wheelhouse "$W/plugin-wheels" --output "$W/plugin.lock" \
    "${FETCH_EXTRA[@]}" > "$W/plugin.json"
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }
run "$SVCC" plugins install "$(field "$W/plugin.json" wheel)" --sha256 "$(field "$W/plugin.json" sha256)" \
    --requirements "$W/plugin.lock" --wheelhouse "$W/plugin-wheels" --plugins-dir "$W/plugins" \
    > "$W/installed.json"
run "$SVCC" plugins enable svc-oci --version "$(field "$W/installed.json" version)" \
    --plugins-dir "$W/plugins" >/dev/null

PLAN=(image plan "$W/bundle" --interface rest --base-image "$BASE_IMAGE" --platform "$PLATFORM"
      --tag shop:ship --destination "$DESTINATION" --lock "$W/server.lock" --wheelhouse "$W/wheels"
      "${ENGINE_OPTS[@]}" --credentials "$CREDENTIALS" --plugins-dir "$W/plugins"
      --output-dir "$W/plan")
step "4. the request files and the operator policy svcc proposes"
run "$SVCC" "${PLAN[@]}" >/dev/null
printf 'an operator reviews %s and grants it (here: as proposed)\n' "$W/plan/operator-policy.proposed.json"
run python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); p.pop("proposed_by"); json.dump(p, open(sys.argv[2], "w"), indent=2)' \
    "$W/plan/operator-policy.proposed.json" "$W/policy.json"

step "5. build (offline: the locked wheels only; engine output in build.log)"
run "$SVCC" plugins run svc-oci build --arguments "$W/plan/build.json" --operator-policy "$W/policy.json" \
    --timeout-ms 600000 --log-file "$W/build.log" --plugins-dir "$W/plugins" > "$W/build-result.json"
printf 'image %s\n' "$(field "$W/build-result.json" image_id)"
if [ "${UNTIL:-7}" -le 5 ]; then printf '\nstopped after step 5 in %ss\n' "$(( $(date +%s) - START ))"; exit 0; fi

step "6. push (verified through the registry's API, promoted by digest; output in push.log)"
run "$SVCC" "${PLAN[@]}" --build-result "$W/build-result.json" >/dev/null
run "$SVCC" plugins run svc-oci push --arguments "$W/plan/push.json" --operator-policy "$W/policy.json" \
    --timeout-ms 600000 --log-file "$W/push.log" --plugins-dir "$W/plugins" > "$W/push-result.json"
printf 'published %s\n' "$(field "$W/push-result.json" digest_reference)"

step "7. the Kubernetes base for the published image (kubectl apply -k $W/k8s)"
run "$SVCC" compile "$SHOP" --target k8s --select "$SELECT" --push-result "$W/push-result.json" \
    --app-name shop --output-dir "$W/k8s" >/dev/null
ls "$W/k8s"
printf '\ndone in %ss\n' "$(( $(date +%s) - START ))"
