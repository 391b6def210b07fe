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
