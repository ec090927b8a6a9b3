#!/usr/bin/env bash
# Loopback HTTPS git server (smart HTTP via `git http-backend`) with a private CA, for tests of
# `svcc expose build --git https://git.test:PORT/NAME.git --ref <commit>`.
# Needs: root (for the /etc/hosts line only), git, openssl, python3 (stdlib only). No apt installs.
# Usage: git-https-up.sh STATEDIR [PORT]        (PORT 0/empty = pick a free one)
#   env: GIT_HTTPS_HOST (default git.test)  GIT_HTTPS_BASIC=user:pass (require basic auth)
#        GIT_HTTPS_ALLOW_PUSH=1 (enable receive-pack)  GIT_HTTPS_DEMO=1 (create demo.git, 2 commits)
#        GIT_HTTPS_WATCH_PID=PID (stop the server when PID ends, e.g. the test session's)
# Serves STATEDIR/repos/<name>.git (create bare repos there, any time: no restart needed).
# Writes STATEDIR/{ca.crt,ca.key,server.crt,server.key,githttpd.pid,githttpd.port,githttpd.log,env}
# Stop:  git-https-down.sh STATEDIR [--purge]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ST=${1:?statedir}; PORT=${2:-0}; HOST=${GIT_HTTPS_HOST:-git.test}
mkdir -p "$ST/repos"; ST=$(cd "$ST" && pwd)
SRV=${GITHTTPD:-$HERE/githttpd.py}
if [ -s "$ST/githttpd.pid" ] && kill -0 "$(cat "$ST/githttpd.pid")" 2>/dev/null; then
  echo "already running: pid $(cat "$ST/githttpd.pid")"; exit 0; fi

# name -> loopback (idempotent; left in place by the down script, like registry.test)
grep -qE "^127\.0\.0\.1[[:space:]].*\b$HOST\b" /etc/hosts || echo "127.0.0.1 $HOST" >> /etc/hosts

# private CA + server cert (SAN: HOST, localhost, 127.0.0.1, ::1)
if [ ! -s "$ST/server.crt" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
    -subj "/CN=git-test-ca" -keyout "$ST/ca.key" -out "$ST/ca.crt" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$HOST" \
    -keyout "$ST/server.key" -out "$ST/server.csr" 2>/dev/null
  printf 'subjectAltName=DNS:%s,DNS:localhost,IP:127.0.0.1,IP:::1\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\nbasicConstraints=CA:FALSE\n' "$HOST" > "$ST/server.ext"
  openssl x509 -req -in "$ST/server.csr" -CA "$ST/ca.crt" -CAkey "$ST/ca.key" -CAcreateserial \
    -days 30 -extfile "$ST/server.ext" -out "$ST/server.crt" 2>/dev/null
fi

if [ -n "${GIT_HTTPS_DEMO:-}" ] && [ ! -d "$ST/repos/demo.git" ]; then
  w=$(mktemp -d); git init -q -b main "$w"
  for i in 1 2; do echo "v$i" > "$w/file.txt"; git -C "$w" add file.txt
    GIT_AUTHOR_DATE=@170000000$i GIT_COMMITTER_DATE=@170000000$i git -C "$w" -c user.name=ci -c user.email=ci@test commit -qm "c$i"; done
  git clone -q --bare "$w" "$ST/repos/demo.git"; rm -rf "$w"
fi

args=(--root "$ST/repos" --cert "$ST/server.crt" --key "$ST/server.key" --host 127.0.0.1 --port "$PORT"
      --pidfile "$ST/githttpd.pid" --portfile "$ST/githttpd.port")
[ -z "${GIT_HTTPS_BASIC:-}" ] || args+=(--basic "$GIT_HTTPS_BASIC")
[ -z "${GIT_HTTPS_ALLOW_PUSH:-}" ] || args+=(--allow-push)
[ -z "${GIT_HTTPS_WATCH_PID:-}" ] || args+=(--watch-pid "$GIT_HTTPS_WATCH_PID")
rm -f "$ST/githttpd.port"
setsid python3 "$SRV" "${args[@]}" > "$ST/githttpd.log" 2>&1 < /dev/null &
for i in $(seq 100); do [ -s "$ST/githttpd.port" ] && break; sleep 0.05; done
[ -s "$ST/githttpd.port" ] || { echo "githttpd did not start"; cat "$ST/githttpd.log"; exit 1; }
P=$(cat "$ST/githttpd.port")
for i in $(seq 100); do
  code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$ST/ca.crt" "https://$HOST:$P/nonexistent.git/info/refs?service=git-upload-pack" || true)
  [ "$code" = 404 ] || [ "$code" = 401 ] && break; sleep 0.05
done
cat > "$ST/env" <<EOT
export GIT_HTTPS_URL=https://$HOST:$P
export GIT_HTTPS_CA=$ST/ca.crt
export GIT_HTTPS_REPOS=$ST/repos
EOT
echo "git https up: https://$HOST:$P/<name>.git (repos in $ST/repos) pid=$(cat "$ST/githttpd.pid") CA=$ST/ca.crt"
