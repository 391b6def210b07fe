#!/usr/bin/env bash
# MediaServer against nginx, on this machine, in the same run (run by hand, not by CI).
#
#   bench/media-nginx.sh
#
# 1. Throughput for a large file (100 MB, curl, three rounds taking turns).
# 2. Requests per second for a small file (1 KB, h2load over HTTP/1.1, keep-alive, three rounds).
# 3. Throttle accuracy: configured rate against the rate curl measures over a transfer of about
#    four seconds, from 8 KB/s to 32 MB/s.
# Prints Markdown for docs/benchmarks.md. Needs nginx (apt-get install nginx-light), h2load
# (nghttp2-client), curl and the .venv that ci/test makes.
source "$(dirname "$0")/common.sh" "nginx-light nghttp2-client curl" nginx h2load curl
trap 'kill "${pids[@]}" 2>/dev/null || true; [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null; rm -rf "$work"' EXIT

mkdir -p "$work/root"
head -c 100000000 /dev/urandom >"$work/root/large.bin"
head -c 1024 /dev/urandom >"$work/root/small.bin"
# nginx's workers run as another user: they must be able to read the files.
chmod 755 "$work" "$work/root"
chmod 644 "$work/root/"*

# The media server, alone in a harness.yml of its own.
printf 'version: 1\nservices:\n  media:\n    port: 0\n    root: %s\n' "$work/root" >"$work/harness.yml"
"$harness" serve --config "$work/harness.yml" --ephemeral-ports --endpoints "$work/endpoints.json" \
    --state-dir "$work/state" >"$work/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$work/endpoints.json" ] && break; sleep 0.1; done
field() { "$python" -c "import json; print(json.load(open('$work/endpoints.json'))['media']['$1'])"; }
media=$(field url)
control=$(field controlURL)

# nginx, the anchor (the media server's access log stays on, so the comparison does not favour it).
start_nginx "$work/root"
nginx_url="http://127.0.0.1:$nginx_port"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "$(nproc) cores, $(nginx -v 2>&1 | sed 's/.*: //'), curl $(curl --version | head -1 | cut -d' ' -f2), h2load $(h2load --version | head -1 | cut -d/ -f2)"
echo
echo "| measure | nginx (anchor) | MediaServer | MediaServer / nginx |"
echo "|---|---|---|---|"

for round in 1 2 3; do
    for server in nginx media; do
        url=$([ "$server" = nginx ] && echo "$nginx_url" || echo "$media")
        curl --silent --fail --output /dev/null --write-out '%{speed_download}\n' "$url/large.bin" >>"$work/$server.large"
    done
done
a=$(median <"$work/nginx.large"); b=$(median <"$work/media.large")
"$python" -c "print(f'| 100 MB file, curl, MB/s (median of 3) | {$a/1e6:,.0f} | {$b/1e6:,.0f} | {100*$b/$a:.0f} % |')"

for round in 1 2 3; do
    for server in nginx media; do
        url=$([ "$server" = nginx ] && echo "$nginx_url" || echo "$media")
        h2load --h1 -n 50000 -c 10 -t 1 "$url/small.bin" >"$work/h2load.out" 2>&1
        grep -q 'status codes: 50000 2xx' "$work/h2load.out" || { echo "bench: $server did not answer 200 to every request:" >&2; cat "$work/h2load.out" >&2; exit 1; }
        grep -oE 'finished in [0-9.]+m?s, [0-9.]+ req/s' "$work/h2load.out" | grep -oE '[0-9.]+ req/s' | cut -d' ' -f1 >>"$work/$server.small"
    done
done
a=$(median <"$work/nginx.small"); b=$(median <"$work/media.small")
"$python" -c "print(f'| 1 KB file, h2load --h1 -c 10, requests/s (median of 3) | {$a:,.0f} | {$b:,.0f} | {100*$b/$a:.0f} % |')"

echo
echo "| configured | transfer | measured (curl) | error |"
echo "|---|---|---|---|"
for rate in 8000 64000 512000 4000000 32000000; do
    head -c $((rate * 4)) "$work/root/large.bin" >"$work/root/paced.bin"
    size=$(stat -c %s "$work/root/paced.bin")
    curl --silent --output /dev/null -X PUT --data "{\"throttleBytesPerSecond\": $rate}" "$control/settings"
    measured=$(curl --silent --output /dev/null --write-out '%{speed_download}' "$media/paced.bin")
    "$python" -c "r=$rate; m=$measured; print(f'| {r/1000:,.0f} KB/s | {$size/1e6:,.3f} MB | {m/1000:,.1f} KB/s | {100*(m-r)/r:+.1f} % |')"
done
curl --silent --output /dev/null -X PUT --data '{"throttleBytesPerSecond": null}' "$control/settings"
