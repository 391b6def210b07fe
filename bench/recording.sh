#!/usr/bin/env bash
# The cost of recording and the start-up of a replay, on this machine, each against an anchor measured
# in the same run (run by hand, not by CI):
#
#   bench/recording.sh [rounds]
#
# 1. silent-push-photo without its throttle, taking turns with and without --record: the median wall
#    time of each (the run's own "PASS ... in S s").
# 2. a 100 MB file downloaded by curl from `harness serve`, taking turns with and without --record:
#    the median throughput of each, and the serve process's peak resident memory while recording a
#    10 MB and a 100 MB file (bodies stream to disk: memory must not grow with the body).
# 3. `harness serve --replay` of a 1,000-entry cassette against `harness serve` with no cassette:
#    the time from start to "services are up".
# Prints Markdown for docs/benchmarks.md.
source "$(dirname "$0")/common.sh" "curl" curl
rounds=${1:-5}
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -f harness.bench.yml; rm -rf "$work"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "$(nproc) cores, rounds: $rounds, $(date -u +%Y-%m-%d)"
echo
echo "| measure | anchor | recording | recording / anchor |"
echo "|---|---|---|---|"

# 1. The scenario, unthrottled, beside harness.yml so that its relative paths hold.
swift build --product nasa-tv >/dev/null
# Its media throttle (the first in the file) raised to 1 GB/s: the transfer goes as fast as it can.
awk '!done && /^      throttle: 100KB\/s/ {sub(/100KB\/s/, "1000MB/s"); done=1} {print}' harness.yml >harness.bench.yml
plain=(); recorded=()
for round in $(seq 1 "$rounds"); do
    for mode in plain recorded; do
        extra=()
        [ "$mode" = recorded ] && extra=(--record "$work/cassette-$round")
        line=$("$harness" run silent-push-photo --config harness.bench.yml --ephemeral-ports --skip-build \
            --report-dir "$work/report-$mode-$round" "${extra[@]}" | grep '^PASS silent-push-photo in')
        seconds=$(echo "$line" | awk '{print $4}')
        if [ "$mode" = plain ]; then plain+=("$seconds"); else recorded+=("$seconds"); fi
    done
done
a=$(printf '%s\n' "${plain[@]}" | median); b=$(printf '%s\n' "${recorded[@]}" | median)
echo "| silent-push-photo, unthrottled (s, median) | $a | $b | $(awk "BEGIN {printf \"%.2f\", $b / $a}") |"

# 2. A large file through `harness serve`, recorded or not.
mkdir -p "$work/root"
head -c 100000000 /dev/urandom >"$work/root/large.bin"
head -c 10000000 /dev/urandom >"$work/root/medium.bin"
printf 'version: 1\nservices:\n  media:\n    port: 0\n    root: %s\n' "$work/root" >"$work/harness.yml"
serve() { # serve NAME [options...]: starts harness serve, sets $serve_pid and $media
    local name=$1; shift
    rm -f "$work/$name.json"
    "$harness" serve --config "$work/harness.yml" --ephemeral-ports --endpoints "$work/$name.json" \
        --state-dir "$work/state-$name" "$@" >"$work/$name.log" 2>&1 &
    serve_pid=$!
    pids+=("$serve_pid")
    for _ in $(seq 1 300); do grep -q "services are up" "$work/$name.log" 2>/dev/null && break; sleep 0.05; done
    media=$("$python" -c "import json; print(json.load(open('$work/$name.json'))['media']['url'])")
}
stop() { kill -TERM "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; }
peak_rss() { # peak_rss PID URL: downloads URL, sampling the process's resident memory (KiB)
    local peak=0 rss
    curl -s -o /dev/null "$2" &
    local fetch=$!
    while kill -0 "$fetch" 2>/dev/null; do
        rss=$(awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0)
        [ "${rss:-0}" -gt "$peak" ] && peak=$rss
        sleep 0.02
    done
    echo "$peak"
}
plain=(); recorded=()
for round in $(seq 1 "$rounds"); do
    for mode in plain recorded; do
        extra=()
        [ "$mode" = recorded ] && extra=(--record "$work/serve-cassette-$round")
        serve "$mode-$round" "${extra[@]}"
        speed=$(curl -s -o /dev/null -w '%{speed_download}' "$media/large.bin")
        stop
        if [ "$mode" = plain ]; then plain+=("$speed"); else recorded+=("$speed"); fi
        rm -rf "$work/serve-cassette-$round"
    done
done
a=$(printf '%s\n' "${plain[@]}" | median); b=$(printf '%s\n' "${recorded[@]}" | median)
echo "| 100 MB file, MB/s (median) | $(awk "BEGIN {printf \"%.0f\", $a / 1e6}") | $(awk "BEGIN {printf \"%.0f\", $b / 1e6}") | $(awk "BEGIN {printf \"%.2f\", $b / $a}") |"
serve rss-medium --record "$work/rss-medium"
medium=$(peak_rss "$serve_pid" "$media/medium.bin"); stop
serve rss-large --record "$work/rss-large"
large=$(peak_rss "$serve_pid" "$media/large.bin"); stop
serve rss-plain
unrecorded=$(peak_rss "$serve_pid" "$media/large.bin"); stop
echo "| peak RSS recording a 10 MB / 100 MB file (MiB) | $((unrecorded / 1024)) (100 MB, not recording) | $((medium / 1024)) / $((large / 1024)) | $(awk "BEGIN {printf \"%.2f\", $large / $medium}") (100 MB / 10 MB) |"

# 3. A cassette of 1,000 entries: recorded through serve, then replayed.
for i in $(seq 1 1000); do head -c 2000 /dev/urandom >"$work/root/f$i.bin"; done
serve thousand --record "$work/thousand"
for i in $(seq 1 1000); do echo "url = \"$media/f$i.bin\""; echo "output = \"/dev/null\""; done >"$work/urls.txt"
curl -s -K "$work/urls.txt"
stop
entries=$("$python" -c "import json; print(json.load(open('$work/thousand/meta.json'))['entries'])")
started() { # started NAME [options...]: seconds from launch to "services are up"
    local begin end
    begin=$(date +%s.%N); serve "$@"; end=$(date +%s.%N); stop
    awk "BEGIN {printf \"%.3f\", $end - $begin}"
}
plain=(); replayed=()
for round in $(seq 1 "$rounds"); do
    plain+=("$(started "start-plain-$round")")
    replayed+=("$(started "start-replay-$round" --replay "$work/thousand")")
done
a=$(printf '%s\n' "${plain[@]}" | median); b=$(printf '%s\n' "${replayed[@]}" | median)
echo "| serve start-up, s (median; replay of $entries entries) | $a | $b | $(awk "BEGIN {printf \"%.2f\", $b / $a}") |"
