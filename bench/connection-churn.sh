#!/usr/bin/env bash
# FakeAPNs's resident memory while providers connect and leave, one connection after another (run by
# hand, not by CI): each connection makes its TLS handshake (ALPN h2), sends the HTTP/2 preface, reads
# the server's, and closes without close_notify. Prints the RSS of `harness serve` after each batch.
#
#   bench/connection-churn.sh [connections per batch] [batches]      (3000 and 6 by default)
per_batch="${1:-3000}"
batches="${2:-6}"
source "$(dirname "$0")/common.sh" "" python3
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

start_serve
url=$(field url)
ca=$(field caFile)
rss() { awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$serve_pid/status"; }
echo "| connections | FakeAPNs RSS (MiB) |"
echo "|---|---|"
echo "| 0 | $(rss) |"
for batch in $(seq 1 "$batches"); do
    "$python" - "${url##*:}" "$ca" "$per_batch" <<'PY'
import socket, ssl, sys
import h2.config, h2.connection
port, ca, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
context = ssl.create_default_context(cafile=ca)
context.set_alpn_protocols(["h2"])
for _ in range(count):
    sock = context.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="localhost")
    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    connection.initiate_connection()
    sock.sendall(connection.data_to_send())
    sock.recv(65535)
    sock.close()
PY
    echo "| $((batch * per_batch)) | $(rss) |"
done
