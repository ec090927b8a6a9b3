#!/usr/bin/env bash
# Real Docker Engine with API >= 1.46 on Debian 12 (bookworm), no internet but Debian's mirror.
# bookworm's own docker.io is 20.10.24 (API 1.41) and trixie's is 26.1.5 (API 1.45), so we take
# docker.io + containerd (+ docker-buildx) .debs from Debian sid with `apt-get download`
# (private apt state dir, the system's sources/lists are untouched), `dpkg -x` them into a
# private prefix and run dockerd from there. dockerd/containerd/shim/buildx need only
# GLIBC_2.34 (bookworm has 2.36). sid's runc needs GLIBC_2.38 -> use bookworm's runc 1.1.5.
# Measured: apt lists 3.5 s, download 2 s (70 MB), extract ~3 s, dockerd ready < 1 s.
#
# Usage: engine-docker-up.sh STATEDIR        (root)
# Writes STATEDIR/{docker.sock,dockerd.pid,dockerd.log,data/,exec/,prefix/,env}
# Stop:  kill "$(cat STATEDIR/dockerd.pid)"   (dockerd stops its own containerd)
set -euo pipefail
ST=${1:?statedir}
# pin (override with DOCKER_DEB_VERSION=any to take whatever sid has now)
DOCKER_DEB_VERSION=${DOCKER_DEB_VERSION:-28.5.2+dfsg4-5}
CONTAINERD_DEB_VERSION=${CONTAINERD_DEB_VERSION:-2.1.9+ds1-5}
BUILDX_DEB_VERSION=${BUILDX_DEB_VERSION:-0.29.1+ds1-4}
HERE=$(cd "$(dirname "$0")" && pwd)
# the pinned .debs: ../shared/oci/debs beside the checkout (CI) or a private cache; without them
# the same versions are fetched from sid
DEB_CACHE=${DEB_CACHE:-$HERE/debs}
MIRROR=${DEBIAN_MIRROR:-$( { awk '/^URIs:/{print $2}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true
  awk '$1=="deb"{for(i=2;i<=NF;i++) if($i ~ /^https?:/){print $i; break}}' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true
  } | awk '!/-security/ && !n++')}
[ -n "$MIRROR" ] || { echo "no Debian mirror found in apt sources; set DEBIAN_MIRROR" >&2; exit 1; }
mkdir -p "$ST" "$DEB_CACHE"
ST=$(cd "$ST" && pwd)

# runtime deps from bookworm: runc (OCI runtime), tini (docker-init), iptables not needed (--iptables=false)
need=(); for p in runc tini ca-certificates; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
[ ${#need[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" >/dev/null

have_debs() { ls "$DEB_CACHE"/docker.io_*.deb "$DEB_CACHE"/containerd_*.deb "$DEB_CACHE"/docker-buildx_*.deb >/dev/null 2>&1; }
if ! have_debs; then
  A="$ST/apt-sid"; mkdir -p "$A/lists/partial" "$A/cache/archives/partial"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR sid main" > "$A/sources.list"
  O=(-o Dir::Etc::SourceList="$A/sources.list" -o Dir::Etc::SourceParts=/dev/null
     -o Dir::State::Lists="$A/lists" -o Dir::Cache="$A/cache" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=
     -o APT::Sandbox::User=root)
  apt-get "${O[@]}" update >/dev/null
  pick() { # name pinned-version -> name=version if sid still has it, else name/sid
    if [ "$2" != any ] && apt-cache "${O[@]}" madison "$1" | awk '{print $3}' | grep -qx "$2"; then echo "$1=$2"
    else echo "WARN: $1 $2 no longer in sid, taking current" >&2; echo "$1/sid"; fi; }
  (cd "$DEB_CACHE" && apt-get "${O[@]}" download "$(pick docker.io "$DOCKER_DEB_VERSION")" \
      "$(pick containerd "$CONTAINERD_DEB_VERSION")" "$(pick docker-buildx "$BUILDX_DEB_VERSION")" >/dev/null)
fi
P="$ST/prefix"; rm -rf "$P" "$ST/x"; mkdir -p "$P/bin" "$P/cli-plugins" "$ST/x"
for d in "$DEB_CACHE"/docker.io_*.deb "$DEB_CACHE"/containerd_*.deb "$DEB_CACHE"/docker-buildx_*.deb; do dpkg -x "$d" "$ST/x"; done
cp "$ST/x/usr/sbin/dockerd" "$ST/x/usr/sbin/docker-proxy" "$ST/x/usr/bin/containerd" \
   "$ST/x/usr/bin/containerd-shim-runc-v2" "$ST/x/usr/bin/ctr" "$P/bin/"
cp "$ST/x/usr/libexec/docker/cli-plugins/docker-buildx" "$P/cli-plugins/"
rm -rf "$ST/x"
# docker-init = tini (bookworm's tini ships /usr/bin/docker-init? docker.io does; tini-static always exists)
command -v docker-init >/dev/null || ln -sf "$(command -v tini-static || command -v tini)" "$P/bin/docker-init"

mkdir -p "$ST/data" "$ST/exec"
# --iptables/--ip6tables=false + --bridge=none: no NAT rules, no docker0 (containers use --network none|host)
PATH="$P/bin:$PATH" setsid dockerd \
  --host "unix://$ST/docker.sock" --data-root "$ST/data" --exec-root "$ST/exec" \
  --pidfile "$ST/dockerd.pid" --iptables=false --ip6tables=false --bridge=none \
  --storage-driver="${DOCKER_STORAGE_DRIVER:-overlay2}" > "$ST/dockerd.log" 2>&1 < /dev/null &
for i in $(seq 100); do
  curl -sf --unix-socket "$ST/docker.sock" http://d/_ping >/dev/null 2>&1 && break; sleep 0.1
done
api=$(curl -s --unix-socket "$ST/docker.sock" http://d/version | python3 -c 'import json,sys; print(json.load(sys.stdin)["ApiVersion"])')
python3 - "$api" <<'EOF' || { echo "engine API $api < 1.46"; exit 1; }
import sys; a = tuple(map(int, sys.argv[1].split("."))); sys.exit(0 if a >= (1, 46) else 1)
EOF
# docker CLI config for this engine: buildx plugin via cliPluginsExtraDirs (BuildKit builds);
# keep it away from podman's socket: buildx there falls back to the docker-container driver and
# tries to pull moby/buildkit from Docker Hub.
mkdir -p "$ST/docker-config"
[ -s "$ST/docker-config/config.json" ] || echo "{\"cliPluginsExtraDirs\": [\"$P/cli-plugins\"]}" > "$ST/docker-config/config.json"
cat > "$ST/env" <<EOF
export DOCKER_HOST=unix://$ST/docker.sock
export DOCKER_CONFIG=$ST/docker-config
EOF
echo "dockerd up: unix://$ST/docker.sock pid=$(cat "$ST/dockerd.pid") api=$api ($(PATH=$P/bin:$PATH dockerd --version))"
