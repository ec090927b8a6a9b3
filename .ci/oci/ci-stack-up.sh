#!/usr/bin/env bash
# Stand up the OCI test stack (root, loopback only, Debian mirror the only network it touches):
#   * registries: Debian docker-registry (distribution 2.8), one private CA
#       registry.test:5443  TLS + htpasswd basic auth   (pushes)
#       registry.test:5444  TLS, no auth                (bases: `build` accepts no credentials)
#   * base image: debootstrap minbase + python3/venv/pip -> deterministic single-layer OCI image
#                 -> pushed to the base registry; pinned by digest as $BASE_IMAGE
#   * engines:    ENGINES="docker podman" (default both)
#       docker -> Docker Engine 28.5.2 + BuildKit (pinned sid .debs, extracted), API 1.51
#       podman -> Podman 4.3.1 compat API (reports 1.41)
# Writes $ST/ci.env (shell) and $ST/stack.json (what the tests read). Stop with ci-stack-down.sh.
# The base rootfs tarball is kept in $ST (or taken from BASE_TAR) so a second run skips debootstrap.
#
# Usage: ci-stack-up.sh STATEDIR
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ST=${1:?statedir}; mkdir -p "$ST"; ST=$(cd "$ST" && pwd)
ENGINES=${ENGINES:-docker podman}
REG=registry.test:5443
BASEREG=registry.test:5444
# the pinned .debs: ../shared/oci/debs beside the checkout in CI, else this machine's copy
if [ -z "${DEB_CACHE:-}" ]; then
  for d in "$HERE/../../../shared/oci/debs" /work/shared/oci/debs; do
    [ -d "$d" ] && { DEB_CACHE=$(cd "$d" && pwd); break; }; done
  export DEB_CACHE=${DEB_CACHE:-$ST/debs}
fi
t() { local s=$SECONDS; "$@"; echo "  [$(( SECONDS - s ))s] $1 ${2:-}" >&2; }  # no args: they may hold secrets

pk=(); for p in debootstrap docker-registry apache2-utils openssl skopeo curl ca-certificates; do
  dpkg -s "$p" >/dev/null 2>&1 || pk+=("$p"); done
# install only what is missing: naming an installed package upgrades it
if [ ${#pk[@]} -ne 0 ]; then
  t apt-get update -qq
  t env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pk[@]}" >/dev/null
fi

# 1. registries (one CA); the push registry's password is random per run unless REGISTRY_PASSWORD is set
t "$HERE/registry-up.sh" "$ST/registry" "${REGISTRY_USER:-ciuser}" "${REGISTRY_PASSWORD:-}"
RU=$(sed -n 1p "$ST/registry/credentials"); RP=$(sed -n 2p "$ST/registry/credentials")
mkdir -p "$ST/base-registry"
cp "$ST/registry/ca.crt" "$ST/registry/server.crt" "$ST/registry/server.key" "$ST/base-registry/"
t env REGISTRY_NOAUTH=1 REGISTRY_PORT=5444 "$HERE/registry-up.sh" "$ST/base-registry"

# 2. base image
if [ -s "$ST/base-rootfs.tar" ]; then :
elif [ -n "${BASE_TAR:-}" ] && [ -s "$BASE_TAR" ]; then cp "$BASE_TAR" "$ST/base-rootfs.tar"
else t "$HERE/mk-base-rootfs.sh" "$ST/base" >/dev/null; mv "$ST/base/base-rootfs.tar" "$ST/"; rm -rf "$ST/base"; fi
want=$(t python3 "$HERE/mk_oci_base.py" "$ST/base-rootfs.tar" "$ST/oci-base" bookworm)
t skopeo copy -q --preserve-digests --digestfile "$ST/base.digest" \
  "oci:$ST/oci-base:bookworm" "docker://$BASEREG/ci/base:bookworm"
got=$(cat "$ST/base.digest")
[ "$got" = "$want" ] || { echo "base digest mismatch: local $want registry $got"; exit 1; }
hdr=$(curl -sfI --cacert "$ST/registry/ca.crt" \
  -H 'Accept: application/vnd.oci.image.manifest.v1+json' "https://$BASEREG/v2/ci/base/manifests/bookworm" \
  | awk -F': ' 'tolower($1)=="docker-content-digest"{print $2}' | tr -d '\r')
[ "$hdr" = "$want" ] || { echo "registry HEAD digest $hdr != $want"; exit 1; }

{
  echo "export REGISTRY=$REG"
  echo "export REGISTRY_CA=$ST/registry/ca.crt"
  echo "export REGISTRY_USER=$RU"
  echo "export REGISTRY_PASSWORD=$RP"
  echo "export BASE_REGISTRY=$BASEREG"
  echo "export BASE_IMAGE=$BASEREG/ci/base@$want"
} > "$ST/ci.env"

# 3. engines
for e in $ENGINES; do
  case $e in
    docker) t "$HERE/engine-docker-up.sh" "$ST/docker"
            sed 's/^export /export CI_DOCKER_/' "$ST/docker/env" >> "$ST/ci.env"
            echo "export CI_DOCKER_BUILDX=$ST/docker/prefix/cli-plugins/docker-buildx" >> "$ST/ci.env" ;;
    podman) t "$HERE/engine-podman-up.sh" "$ST/podman"
            sed 's/^export /export CI_PODMAN_/' "$ST/podman/env" >> "$ST/ci.env" ;;
    *) echo "unknown engine $e"; exit 1 ;;
  esac
done
# the state the tests read (tests/oci_stack.py)
python3 - "$ST" <<'EOF'
import json, re, sys
st = sys.argv[1]
env = dict(re.findall(r"^export ([A-Z0-9_]+)=(.*)$", open(f"{st}/ci.env").read(), re.M))
json.dump({"schema": "svcc.ci-oci-stack/v1", "state_dir": st, "env": env},
          open(f"{st}/stack.json", "w"), indent=1, sort_keys=True)
EOF
echo "stack up; $ST/stack.json"; grep -v PASSWORD "$ST/ci.env"
