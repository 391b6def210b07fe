#!/usr/bin/env bash
# Two builds of FakeAPNs against each other, in the same minutes (run by hand, not by CI): how a change
# moves throughput when the machine is too uneven for two separate runs of fakeapns-h2load.sh to say.
#
#   bench/fakeapns-ab.sh HARNESS_A HARNESS_B [rounds] [requests]     (10 rounds of 100,000 by default)
#
# Keep the builds apart first, e.g. `swift build -c release --product harness && cp .build/release/harness
# /tmp/harness-before`, then the same after the change. Both `harness serve`s run side by side, each
# with a device registered through its control API; each round h2load POSTs the same silent push as
# fakeapns-h2load.sh to A, then to B. Prints each round's B/A and the medians (with an even number of
# rounds, the upper of the two middle ones). A round's two runs are back to back, so a slow moment of
# the machine hits both: the ratios vary far less than either build's requests per second.
# Absolute, before common.sh moves to the package root.
a=$(realpath "$1")
b=$(realpath "$2")
rounds="${3:-10}"
requests="${4:-100000}"
source "$(dirname "$0")/common.sh" "nghttp2-client" h2load
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
printf '{"aps":{"content-available":1}}' >"$work/payload.json"

setup() { # setup BINARY NAME: serve from BINARY, its URL and headers in $work/NAME.*
    local dir="$work/$2"
    mkdir -p "$dir"
    "$1" serve --ephemeral-ports --endpoints "$dir/endpoints.json" --state-dir "$dir/state" >"$dir/serve.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 1 100); do [ -s "$dir/endpoints.json" ] && break; sleep 0.1; done
    get() { "$python" -c "import json,sys; print(json.load(open('$dir/endpoints.json'))['apns']['$1'])"; }
    local topic token
    topic=$(get topic)
    token=$(curl -s -X POST -d "{\"topic\":\"$topic\"}" "$(get controlURL)/devices" |
        "$python" -c 'import json,sys; print(json.load(sys.stdin)["deviceToken"])')
    echo "$(get url)/3/device/$token" >"$dir/url"
    printf '%s\n' "authorization: bearer $(provider_token "$(get keyFile)" "$(get keyId)" "$(get teamId)")" \
        "apns-topic: $topic" "apns-push-type: background" "apns-priority: 5" >"$dir/headers"
}
run() { # run NAME: requests per second of one h2load run; every answer must be a 200
    local headers=() out
    while read -r line; do headers+=(-H "$line"); done <"$work/$1/headers"
    out=$(h2load -n "$requests" -c 10 -m 10 -t 1 -d "$work/payload.json" "${headers[@]}" "$(cat "$work/$1/url")")
    grep -q "^status codes: $requests 2xx" <<<"$out" || { echo "bench: $1 did not answer 200 to all: $out" >&2; exit 1; }
    grep -oE '[0-9.]+ req/s' <<<"$out" | head -1 | cut -d' ' -f1
}
setup "$a" a
setup "$b" b
run a >/dev/null
run b >/dev/null
for _ in $(seq 1 "$rounds"); do
    ra=$(run a)
    rb=$(run b)
    echo "$ra $rb" >>"$work/rounds"
done
"$python" -c '
import sys
rows = [tuple(map(float, line.split())) for line in sys.stdin]
median = lambda values: sorted(values)[len(values) // 2]
ratios = sorted(b / a for a, b in rows)
print(f"A median {median([a for a, _ in rows]):,.0f} req/s, B median {median([b for _, b in rows]):,.0f} req/s")
print(f"B/A: median {median(ratios):.3f}, rounds " + ", ".join(f"{r:.3f}" for r in ratios))' <"$work/rounds"
