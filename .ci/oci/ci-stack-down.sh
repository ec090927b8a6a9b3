#!/usr/bin/env bash
# Stop what ci-stack-up.sh started (by pidfile only), and undo its network leftovers.
# Usage: ci-stack-down.sh STATEDIR [--purge]   (--purge also deletes STATEDIR and engine storage)
set -uo pipefail
ST=${1:?statedir}
stop() { # pidfile
  [ -s "$1" ] || return 0; local p; p=$(cat "$1")
  kill -0 "$p" 2>/dev/null || return 0
  kill "$p"; for i in $(seq 100); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.1; done
  echo "pid $p still alive after 10 s, sending KILL"; kill -9 "$p"
}
# stop containers first so nothing is left running under the engines
if [ -S "$ST/docker/docker.sock" ]; then
  ids=$(DOCKER_HOST=unix://$ST/docker/docker.sock docker ps -q 2>/dev/null); [ -z "$ids" ] || DOCKER_HOST=unix://$ST/docker/docker.sock docker rm -f $ids >/dev/null
fi
[ -s "$ST/podman/podman.pid" ] && { ids=$(podman ps -q 2>/dev/null); [ -z "$ids" ] || podman rm -f -t 0 $ids >/dev/null; }
stop "$ST/docker/dockerd.pid"       # dockerd stops its managed containerd itself
stop "$ST/podman/podman.pid"
stop "$ST/registry/registry.pid"
stop "$ST/base-registry/registry.pid"
# dockerd leaves an nsfs bind mount of its default netns under exec-root
grep -o "$ST/docker/exec/netns/[^ ]*" /proc/mounts 2>/dev/null | sort -u | while read -r m; do umount "$m"; done
# podman's CNI bridge exists only if something ran with the bridge network
ip link show cni-podman0 >/dev/null 2>&1 && ip link delete cni-podman0
if [ "${2:-}" = --purge ]; then
  grep -o "$ST/[^ ]*" /proc/mounts | sort -ru | while read -r m; do umount "$m" 2>/dev/null; done
  rm -rf "$ST"
fi
echo "stack down"
