# Shared by the benchmark scripts: run from the package root, with the tools named present, the
# .venv that ci/test makes, a release `harness` in $harness and a scratch folder in $work.
#
#   source bench/common.sh "apt packages" tool...
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
packages=$1
shift
for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install $packages)" >&2; exit 1; }
done
python=.venv/bin/python
[ -x "$python" ] || { echo "bench: run ci/test once to create .venv" >&2; exit 1; }
swift build -c release --product harness >/dev/null
harness="$(swift build -c release --show-bin-path)/harness"
work=$(mktemp -d)
pids=()
free_port() { "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_for_port() {
    for _ in $(seq 1 100); do "$python" -c "import socket; socket.create_connection(('127.0.0.1', $1))" 2>/dev/null && return; sleep 0.1; done
}
start_nginx() { # start_nginx ROOT: nginx serving ROOT on a free port ($nginx_port), pid in $work/nginx.pid
    # One worker per core, sendfile, keep-alive, no access log.
    nginx_port=$(free_port)
    mkdir -p "$work/nginx"
    cat >"$work/nginx/nginx.conf" <<CONF
worker_processes auto;
pid $work/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    client_body_temp_path $work/nginx; proxy_temp_path $work/nginx; fastcgi_temp_path $work/nginx;
    uwsgi_temp_path $work/nginx; scgi_temp_path $work/nginx;
    server { listen 127.0.0.1:$nginx_port; root $1; }
}
CONF
    nginx -c "$work/nginx/nginx.conf" -p "$work/nginx"
    wait_for_port "$nginx_port"
}
provider_token() { # provider_token KEY_FILE KEY_ID TEAM_ID: an ES256 provider token (JWT) for FakeAPNs
    "$python" - "$1" "$2" "$3" <<'PY'
import base64, json, sys, time
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
key = serialization.load_pem_private_key(open(sys.argv[1], 'rb').read(), None)
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b'=').decode()
head = b64(json.dumps({'alg': 'ES256', 'kid': sys.argv[2]}).encode()) + '.' + b64(json.dumps({'iss': sys.argv[3], 'iat': int(time.time())}).encode())
r, s = decode_dss_signature(key.sign(head.encode(), ec.ECDSA(hashes.SHA256())))
print(head + '.' + b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big')))
PY
}
start_serve() { # start_serve [serve options]: harness serve on free ports, its pid in $serve_pid
    "$harness" serve --ephemeral-ports --endpoints "$work/endpoints.json" --state-dir "$work/state" "$@" \
        >"$work/serve.log" 2>&1 &
    pids+=($!)
    serve_pid=$!
    for _ in $(seq 1 100); do [ -s "$work/endpoints.json" ] && break; sleep 0.1; done
}
field() { # field NAME: FakeAPNs's NAME in the endpoints file start_serve wrote
    "$python" -c "import json,sys; print(json.load(open('$work/endpoints.json'))['apns']['$1'])"
}
