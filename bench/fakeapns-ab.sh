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
# It prints each build's CPU time a request too (`harness serve`'s user and system time, from /proc):
# it varies less than the rate, and on two shared cores a saving in it shows in requests/s at about half
# (the closed loop leaves gaps; docs/benchmarks.md). Runs of 200,000 make its clock ticks finer.
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
    echo $! >"$dir/pid"
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
# The serve's CPU time so far (user and system), in clock ticks.
ticks() { awk '{print $14 + $15}' "/proc/$(cat "$work/$1/pid")/stat"; }
run() { # run NAME: "requests/s CPU-ticks" of one h2load run; every answer must be a 200
    local headers=() out before
    while read -r line; do headers+=(-H "$line"); done <"$work/$1/headers"
    before=$(ticks "$1")
    out=$(h2load -n "$requests" -c 10 -m 10 -t 1 -d "$work/payload.json" "${headers[@]}" "$(cat "$work/$1/url")")
    grep -q "^status codes: $requests 2xx" <<<"$out" || { echo "bench: $1 did not answer 200 to all: $out" >&2; exit 1; }
    echo "$(grep -oE '[0-9.]+ req/s' <<<"$out" | head -1 | cut -d' ' -f1) $(($(ticks "$1") - before))"
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
"$python" - "$work/rounds" "$requests" "$(getconf CLK_TCK)" <<'PY'
import sys
requests, hertz = int(sys.argv[2]), int(sys.argv[3])
rows = [tuple(map(float, line.split())) for line in open(sys.argv[1])]
median = lambda values: sorted(values)[len(values) // 2]
ratios = sorted(b / a for a, _, b, _ in rows)
print(f"A median {median([r[0] for r in rows]):,.0f} req/s, B median {median([r[2] for r in rows]):,.0f} req/s")
print(f"B/A: median {median(ratios):.3f}, rounds " + ", ".join(f"{r:.3f}" for r in ratios))
# The serve's CPU time a request (user and system; ticks of 1/hertz s, so a few percent coarse a run).
cpu = lambda ticks: 1e6 * ticks / hertz / requests
print(f"CPU a request: A median {cpu(median([r[1] for r in rows])):.2f} µs, B median {cpu(median([r[3] for r in rows])):.2f} µs")
print("B/A CPU: rounds " + ", ".join(f"{r:.3f}" for r in sorted(b / a for _, a, _, b in rows if a)))
PY
