#!/usr/bin/env bash
# The fault proxy against socat relaying the same bytes, on this machine, in the same run (run by
# hand, not by CI).
#
#   bench/fault-proxy.sh [rounds]
#
# 1. Throughput: a 100 MB file from nginx downloaded by curl through `harness fault-proxy` (a proxy
#    with no toxic) and through socat (fork, one process a connection), taking turns; the median of
#    each, and nginx directly for reference.
# 2. Latency: 2,000 round trips of 64 bytes on one kept connection to a Python echo server, through
#    each relay and directly: p50 and p99 of each, and the p50 a relay adds (its p50 − the direct p50).
# Prints Markdown for docs/benchmarks.md. Needs nginx (nginx-light), socat, curl and the .venv that
# ci/test makes.
source "$(dirname "$0")/common.sh" "nginx-light socat curl" nginx socat curl
rounds=${1:-5}
trap 'kill "${pids[@]}" 2>/dev/null || true; [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null; rm -rf "$work"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

mkdir -p "$work/root"
head -c 100000000 /dev/urandom >"$work/root/large.bin"
chmod 755 "$work" "$work/root"
chmod 644 "$work/root/"*
start_nginx "$work/root"

# An echo server for the round trips.
echo_port=$(free_port)
"$python" -c "
import socket, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', $echo_port)); s.listen(16)
def serve(c):
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while (d := c.recv(65536)): c.sendall(d)
while True:
    c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
" &
pids+=($!)
wait_for_port "$echo_port"

# The fault proxy, with one proxy for each upstream and no toxic.
api_port=$(free_port)
"$harness" fault-proxy --port "$api_port" >"$work/proxy.log" 2>&1 &
pids+=($!)
wait_for_port "$api_port"
proxy_web=$(free_port); proxy_echo=$(free_port)
curl -sf -X POST "localhost:$api_port/proxies" -d "{\"name\":\"web\",\"listen\":\"127.0.0.1:$proxy_web\",\"upstream\":\"127.0.0.1:$nginx_port\"}" >/dev/null
curl -sf -X POST "localhost:$api_port/proxies" -d "{\"name\":\"echo\",\"listen\":\"127.0.0.1:$proxy_echo\",\"upstream\":\"127.0.0.1:$echo_port\"}" >/dev/null

# socat, the anchor: a process per connection, as it is usually run.
socat_web=$(free_port); socat_echo=$(free_port)
socat TCP-LISTEN:$socat_web,bind=127.0.0.1,reuseaddr,fork TCP:127.0.0.1:$nginx_port &
pids+=($!)
socat TCP-LISTEN:$socat_echo,bind=127.0.0.1,reuseaddr,fork,nodelay TCP:127.0.0.1:$echo_port,nodelay &
pids+=($!)
wait_for_port "$socat_web"; wait_for_port "$socat_echo"

echo "$(nproc) cores, rounds: $rounds, $(socat -V | grep 'socat version' | cut -d' ' -f3), $(date -u +%Y-%m-%d)"
echo
echo "| measure | socat (anchor) | fault proxy | fault proxy / socat | nginx directly |"
echo "|---|---|---|---|---|"
for round in $(seq 1 "$rounds"); do
    for relay in socat proxy direct; do
        port=$([ $relay = socat ] && echo $socat_web || { [ $relay = proxy ] && echo $proxy_web || echo $nginx_port; })
        curl --silent --fail --output /dev/null --write-out '%{speed_download}\n' "http://127.0.0.1:$port/large.bin" >>"$work/$relay.speed"
    done
done
a=$(median <"$work/socat.speed"); b=$(median <"$work/proxy.speed"); c=$(median <"$work/direct.speed")
"$python" -c "print(f'| 100 MB through the relay, curl, MB/s (median of $rounds) | {$a/1e6:,.0f} | {$b/1e6:,.0f} | {$b/$a:.2f}× | {$c/1e6:,.0f} |')"

"$python" - "$echo_port" "$socat_echo" "$proxy_echo" <<'PY'
import socket, sys, time
direct, socat, proxy = (int(p) for p in sys.argv[1:])
def round_trips(port, count=2000):
    s = socket.create_connection(("127.0.0.1", port)); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    payload, times = b"x" * 64, []
    for _ in range(200): s.sendall(payload); s.recv(64)   # warm up
    for _ in range(count):
        t = time.perf_counter_ns(); s.sendall(payload); got = b""
        while len(got) < 64: got += s.recv(64)
        times.append(time.perf_counter_ns() - t)
    s.close(); return sorted(times)
def pct(values, p): return values[min(len(values) - 1, int(len(values) * p))]
base = round_trips(direct)
measured = {"socat": round_trips(socat), "proxy": round_trips(proxy)}
for label, p in (("p50", 0.5), ("p99", 0.99)):
    s, f, d = pct(measured["socat"], p) / 1000, pct(measured["proxy"], p) / 1000, pct(base, p) / 1000
    print(f"| 64-byte round trip, {label}, µs | {s:.0f} | {f:.0f} | {f / s:.2f}× | {d:.0f} |")
s, f, d = (pct(v, 0.5) / 1000 for v in (measured["socat"], measured["proxy"], base))
print(f"| latency added at p50 (relay − direct), µs | {s - d:.0f} | {f - d:.0f} | | |")
PY
echo
