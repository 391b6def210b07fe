#!/usr/bin/env bash
# FakeAPNs's legacy binary gateway against its HTTP/2 API, one connection each, in the same run (run by
# hand, not by CI).
#
#   bench/legacy-gateway.sh [notifications]      (ROUNDS=3 by default)
#
# The same silent push to the same registered device, `notifications` times:
# 1. the legacy gateway: command-2 frames written by `openssl s_client` from a file, on one connection,
#    then a byte that is no command. The gateway answers that byte with its error response and closes,
#    which it can only do once every notification before it was taken, so s_client's run is the time
#    the gateway took for all of them.
# 2. the HTTP/2 API: h2load, one connection, 100 streams at once, with a provider token.
# Prints a Markdown table for docs/benchmarks.md. Needs h2load, openssl and .venv (ci/test).
count="${1:-100000}"
source "$(dirname "$0")/common.sh" "nghttp2-client openssl" h2load openssl
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

printf 'version: 1\nservices:\n  apns: {legacyPort: 0, feedbackPort: 0}\n' >"$work/harness.yml"
"$harness" serve --config "$work/harness.yml" --ephemeral-ports --endpoints "$work/endpoints.json" \
    --state-dir "$work/state" >"$work/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 300); do grep -q "services are up" "$work/serve.log" 2>/dev/null && break; sleep 0.05; done
url=$(field url); ca=$(field caFile); key=$(field keyFile); kid=$(field keyId); team=$(field teamId)
control=$(field controlURL); topic=$(field topic); legacy=$(field legacyGateway)
token=$(curl -s -X POST -d "{\"topic\":\"$topic\"}" "$control/devices" | "$python" -c 'import json,sys; print(json.load(sys.stdin)["deviceToken"])')
certificate=$(curl -s -X POST -d "{\"bundleId\":\"$topic\",\"environment\":\"sandbox\"}" "$control/certificates")
cert=$(echo "$certificate" | "$python" -c 'import json,sys; print(json.load(sys.stdin)["certificateFile"])')
certkey=$(echo "$certificate" | "$python" -c 'import json,sys; print(json.load(sys.stdin)["keyFile"])')
payload='{"aps":{"content-available":1}}'

# The legacy stream: `count` command-2 frames (token, payload, identifier, expiry 0, priority 5), then 0xEE.
"$python" - "$token" "$payload" "$count" "$work/frames.bin" <<'PY'
import struct, sys
token, payload, count, path = bytes.fromhex(sys.argv[1]), sys.argv[2].encode(), int(sys.argv[3]), sys.argv[4]
with open(path, "wb") as out:
    for identifier in range(count):
        items = [(1, token), (2, payload), (3, struct.pack(">I", identifier)), (4, struct.pack(">I", 0)), (5, b"\x05")]
        data = b"".join(bytes([i]) + struct.pack(">H", len(v)) + v for i, v in items)
        out.write(b"\x02" + struct.pack(">I", len(data)) + data)
    out.write(b"\xee")
PY

jwt=$(provider_token "$key" "$kid" "$team")
printf '%s' "$payload" >"$work/payload.json"

legacy_round() { # prints notifications per second
    local started ended answer
    started=$(date +%s.%N)
    answer=$(openssl s_client -quiet -ign_eof -connect "$legacy" -cert "$cert" -key "$certkey" -CAfile "$ca" \
        <"$work/frames.bin" 2>/dev/null | od -An -tx1 | tr -d ' \n')
    ended=$(date +%s.%N)
    [ "$answer" = "088000000000" ] || { echo "bench: the gateway answered '$answer', not 088000000000" >&2; exit 1; }
    awk "BEGIN {printf \"%.0f\", $count / ($ended - $started)}"
}
http2_round() {
    h2load -n "$count" -c 1 -m 100 -t 1 -d "$work/payload.json" -H "authorization: bearer $jwt" \
        -H "apns-topic: $topic" -H "apns-push-type: background" -H "apns-priority: 5" "$url/3/device/$token" \
        >"$work/h2load.out" 2>&1
    grep -q "$count succeeded" "$work/h2load.out" || { cat "$work/h2load.out" >&2; exit 1; }
    grep -oE 'finished in [0-9.]+m?s, [0-9.]+ req/s' "$work/h2load.out" | grep -oE '[0-9.]+ req/s' | cut -d' ' -f1 \
        | awk '{printf "%.0f", $1}'
}

rounds="${ROUNDS:-3}"
legacy_rates=(); http2_rates=()
for _ in $(seq 1 "$rounds"); do
    legacy_rates+=("$(legacy_round)")
    http2_rates+=("$(http2_round)")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
legacy=$(median "${legacy_rates[@]}"); http2=$(median "${http2_rates[@]}")
echo "$(nproc) cores, $count notifications per round, one connection each, $rounds rounds, $(date -u +%Y-%m-%d)"
echo
echo "| interface | notifications/s (median) | the rounds | legacy / HTTP/2 |"
echo "|---|---|---|---|"
echo "| HTTP/2 API (h2load -c 1 -m 100, provider token) | $http2 | ${http2_rates[*]} | |"
echo "| legacy gateway (command 2, openssl s_client from a file) | $legacy | ${legacy_rates[*]} | $(awk "BEGIN {printf \"%.2f\", $legacy / $http2}") |"
