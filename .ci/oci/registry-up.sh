#!/usr/bin/env bash
# Stand up a real OCI/Docker registry (Debian's docker-registry = distribution 2.8.x)
# on https://registry.test:5443 (127.0.0.1 only) with a private CA and htpasswd basic auth.
# Needs root. Installs: docker-registry apache2-utils openssl (Debian).
# Usage: registry-up.sh STATEDIR [USER] [PASSWORD]
#        REGISTRY_NOAUTH=1 registry-up.sh STATEDIR   (no basic auth: the base-image registry;
#        `build` accepts no registry credentials, so bases must be pullable without them)
#        A CA/server certificate already in STATEDIR (ca.crt, server.crt, server.key) is reused.
# Writes: STATEDIR/{ca.crt,ca.key,server.crt,server.key,htpasswd,config.yml,registry.pid,registry.log,data/}
# Trust:  /etc/containers/certs.d/registry.test:5443/ca.crt (podman/buildah/skopeo)
#         /etc/docker/certs.d/registry.test:5443/ca.crt     (dockerd)
# Stop:   kill "$(cat STATEDIR/registry.pid)"
set -euo pipefail
ST=${1:?statedir}; U=${2:-ciuser}; P=${3:-cipass-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')}
HOST=${REGISTRY_HOST:-registry.test}; PORT=${REGISTRY_PORT:-5443}
mkdir -p "$ST/data"
command -v docker-registry >/dev/null && command -v htpasswd >/dev/null || \
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends docker-registry apache2-utils openssl >/dev/null

# name -> loopback (the registry listens on 127.0.0.1 only)
grep -qE "^127\.0\.0\.1[[:space:]].*\b$HOST\b" /etc/hosts || echo "127.0.0.1 $HOST" >> /etc/hosts

# private CA + server cert (SAN: HOST, localhost, 127.0.0.1)
if [ ! -s "$ST/server.crt" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
    -subj "/CN=ci-test-ca" -keyout "$ST/ca.key" -out "$ST/ca.crt" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$HOST" \
    -keyout "$ST/server.key" -out "$ST/server.csr" 2>/dev/null
  printf 'subjectAltName=DNS:%s,DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\nbasicConstraints=CA:FALSE\n' "$HOST" > "$ST/server.ext"
  openssl x509 -req -in "$ST/server.csr" -CA "$ST/ca.crt" -CAkey "$ST/ca.key" -CAcreateserial \
    -days 30 -extfile "$ST/server.ext" -out "$ST/server.crt" 2>/dev/null
fi
NOAUTH=${REGISTRY_NOAUTH:-}
if [ -z "$NOAUTH" ]; then
  htpasswd -Bbc "$ST/htpasswd" "$U" "$P" 2>/dev/null
  printf '%s\n%s\n' "$U" "$P" > "$ST/credentials"; chmod 600 "$ST/credentials"
  AUTH="auth:
  htpasswd:
    realm: ci-registry
    path: $ST/htpasswd"
  WANT=401
else
  AUTH=""; WANT=200
fi

cat > "$ST/config.yml" <<EOF
version: 0.1
log:
  level: info
  fields: {service: registry}
storage:
  filesystem: {rootdirectory: $ST/data}
  delete: {enabled: true}
http:
  addr: 127.0.0.1:$PORT
  host: https://$HOST:$PORT
  secret: ci-not-secret
  tls:
    certificate: $ST/server.crt
    key: $ST/server.key
  headers:
    X-Content-Type-Options: [nosniff]
$AUTH
EOF

# engines: trust the CA for HOST:PORT
for d in /etc/containers/certs.d /etc/docker/certs.d; do
  mkdir -p "$d/$HOST:$PORT"; cp "$ST/ca.crt" "$d/$HOST:$PORT/ca.crt"
done

docker-registry serve "$ST/config.yml" > "$ST/registry.log" 2>&1 &
echo $! > "$ST/registry.pid"
for i in $(seq 50); do
  code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$ST/ca.crt" "https://$HOST:$PORT/v2/" || true)
  [ "$code" = "$WANT" ] && break; sleep 0.1
done
[ "$code" = "$WANT" ] || { echo "registry did not come up (last code $code)"; cat "$ST/registry.log"; exit 1; }
echo "registry up: https://$HOST:$PORT pid=$(cat "$ST/registry.pid")${NOAUTH:+ (no auth)}"
