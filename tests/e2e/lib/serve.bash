# Shared by tests/e2e/serve_*.sh (sourced after cuda.bash): starting grtrace serve in the
# background on a free port, and the Prometheus helper.

PROMPY="python3 tests/e2e/lib/prom.py"
SERVE_PIDS=

serve_cleanup() {
	for p in $SERVE_PIDS; do kill -INT "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	cleanup
}
trap serve_cleanup EXIT

# serve_start NAME ARGS...: runs `grtrace serve --listen 127.0.0.1:0 ARGS` with stderr in
# $tmp/NAME.err; sets $SERVE_PORT (the port it bound) and $SERVE_PID; 20 s at most.
serve_start() {
	local name=$1
	shift
	"$GRT" serve --listen 127.0.0.1:0 "$@" 2>"$tmp/$name.err" &
	SERVE_PID=$!
	SERVE_PIDS="$SERVE_PIDS $SERVE_PID"
	SERVE_PORT=
	for _ in $(seq 200); do
		SERVE_PORT=$(sed -n 's|.*serving metrics on http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' \
			"$tmp/$name.err")
		[ -n "$SERVE_PORT" ] && return 0
		kill -0 "$SERVE_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "serve did not start: $(cat "$tmp/$name.err")" >&2
	return 1
}

# serve_stop PID: SIGINT, and its exit status.
serve_stop() {
	kill -INT "$1" 2>/dev/null
	wait "$1"
}
