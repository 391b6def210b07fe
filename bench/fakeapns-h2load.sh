#!/usr/bin/env bash
# FakeAPNs throughput against nghttpd, on this machine, in the same run (run by hand, not by CI).
#
#   bench/fakeapns-h2load.sh [requests]      (ROUNDS=5 by default)
#
# 1. FakeAPNs (release `harness serve`): h2load POSTs a silent push with a provider token to a
#    registered device, so every request goes through full validation and delivery.
# 2. The anchor: nghttpd (Debian's nghttp2-server) answering the same POSTs from a static file.
# 3. FakeAPNs's resident memory with 1000 concurrent connections.
# Prints a Markdown table for docs/benchmarks.md. Needs h2load, nghttpd, openssl and .venv (ci/test).
requests="${1:-100000}"
source "$(dirname "$0")/common.sh" "nghttp2-client nghttp2-server openssl" h2load nghttpd openssl
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

start_serve
url=$(field url); ca=$(field caFile); key=$(field keyFile); kid=$(field keyId); team=$(field teamId)
control=$(field controlURL); topic=$(field topic)
token=$(curl -s -X POST -d "{\"topic\":\"$topic\"}" "$control/devices" | "$python" -c 'import json,sys; print(json.load(sys.stdin)["deviceToken"])')
jwt=$(provider_token "$key" "$kid" "$team")
printf '{"aps":{"content-available":1}}' >"$work/payload.json"
headers=(-H "authorization: bearer $jwt" -H "apns-topic: $topic" -H "apns-push-type: background" -H "apns-priority: 5")

# nghttpd: a self-signed certificate and a docroot holding the same path.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
    -keyout "$work/nghttpd.key" -out "$work/nghttpd.pem" 2>/dev/null
mkdir -p "$work/docroot/3/device"
printf '' >"$work/docroot/3/device/$token"
nghttpd_port=$(free_port)
nghttpd --address=127.0.0.1 --htdocs="$work/docroot" "$nghttpd_port" "$work/nghttpd.key" "$work/nghttpd.pem" >/dev/null 2>&1 &
pids+=($!)
wait_for_port "$nghttpd_port"

# Two h2load runs; prints "req/s p50 p99 status" (latencies in ms). Requests per second come from a run
# without --log-file: writing a line per request costs h2load enough of the shared cores to slow the
# server under test. The second run logs every request for the percentiles.
measure() { # name url
    h2load -n "$requests" -c 10 -m 10 -t 1 -d "$work/payload.json" "${headers[@]}" "$2" >"$work/$1.out" 2>&1
    h2load -n "$requests" -c 10 -m 10 -t 1 -d "$work/payload.json" "${headers[@]}" --log-file="$work/$1.log" "$2" \
        >"$work/$1.latency.out" 2>&1
    local rps status
    rps=$(grep -oE 'finished in [0-9.]+m?s, [0-9.]+ req/s' "$work/$1.out" | grep -oE '[0-9.]+ req/s' | cut -d' ' -f1)
    status=$(grep -E '^status codes:' "$work/$1.out" | sed 's/status codes: //')
    "$python" - "$work/$1.log" "$rps" "$status" <<'PY'
import sys
times = sorted(int(line.split()[2]) for line in open(sys.argv[1]) if line.strip())
p = lambda q: times[min(len(times) - 1, int(q * len(times)))] / 1000
print(f"{float(sys.argv[2]):.0f} {p(0.5):.2f} {p(0.99):.2f} {sys.argv[3]}")
PY
}

# Rounds of the two servers taking turns, so that a slow moment of the machine hits both; the table
# gives each server's median round, and each round's ratio is printed too (a round's two runs are
# back to back, so their ratio varies less than either server on a shared machine).
rounds="${ROUNDS:-5}"
for round in $(seq 1 "$rounds"); do
    measure nghttpd "https://127.0.0.1:$nghttpd_port/3/device/$token" >>"$work/nghttpd.rounds"
    measure fakeapns "$url/3/device/$token" >>"$work/fakeapns.rounds"
done
echo "h2load -n $requests -c 10 -m 10 -t 1, POST $(wc -c <"$work/payload.json") bytes, TLS 1.3, $(nproc) cores"
echo
echo "| server | requests/s (median) | the $rounds rounds, slowest first | p50 ms | p99 ms | status codes |"
echo "|---|---|---|---|---|---|"
"$python" - "$work/nghttpd.rounds" "$work/fakeapns.rounds" <<'PY'
import sys
def median(path):
    rounds = sorted((line.split(maxsplit=3) for line in open(path)), key=lambda r: float(r[0]))
    return rounds[len(rounds) // 2], [float(r[0]) for r in rounds]
(anchor, anchor_all), (fake, fake_all) = median(sys.argv[1]), median(sys.argv[2])
for name, (rps, p50, p99, status), runs in [("nghttpd (anchor)", anchor, anchor_all), ("FakeAPNs, token auth + full validation", fake, fake_all)]:
    print(f"| {name} | {float(rps):,.0f} | {', '.join(f'{r:,.0f}' for r in runs)} | {p50} | {p99} | {status.strip()} |")
print(f"\nFakeAPNs answers {100 * float(fake[0]) / float(anchor[0]):.1f} % of nghttpd's requests/s (medians).")
pairs = [100 * float(f.split()[0]) / float(a.split()[0]) for a, f in zip(open(sys.argv[1]), open(sys.argv[2]))]
print("Round by round: " + ", ".join(f"{r:.1f} %" for r in pairs) + f" (median {sorted(pairs)[len(pairs) // 2]:.1f} %).")
PY
echo
rss() { awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$serve_pid/status"; }
before=$(rss)
h2load -n 20000 -c 1000 -m 1 -t 1 -d "$work/payload.json" "${headers[@]}" "$url/3/device/$token" >"$work/many.out" 2>&1 &
h2=$!
peak=$before
while kill -0 "$h2" 2>/dev/null; do
    now=$(rss)
    [ "$now" -gt "$peak" ] && peak=$now
    sleep 0.1
done
wait "$h2" || true
echo "FakeAPNs RSS: $before MiB after the rounds above, at most $peak MiB while 1000 connections were open," \
    "$(rss) MiB after ($(grep -oE '[0-9.]+ req/s' "$work/many.out" | head -1) over 1000 connections," \
    "$(grep -E '^status codes:' "$work/many.out" | sed 's/status codes: //'))"
