# Shared by the e2e scripts that source it: a scratch directory removed on exit and the ok/FAIL
# case lines tests/run.sh counts. Sets $tmp and $failed (1 once a case failed: `exit $failed`).

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

ok() { echo "ok - $1"; }
fail() {
	echo "FAIL - $1"
	failed=1
}
# check NAME COMMAND...: ok when the command succeeds
check() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else fail "$name"; fi
}

# open_gate FIFO: lets a workload waiting at its WORKLOAD_GATE go (one byte); fails after 60 s
# when no workload opened the FIFO, which would otherwise block the script for ever
open_gate() {
	timeout 60 bash -c 'printf g >"$1"' open_gate "$1"
}
