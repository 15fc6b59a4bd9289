#!/bin/bash
# Times `report --jobs` and `export` on a generated 10-million-record trace and prints
# wall time and max RSS of each (target: <= 10 s, memory flat in the trace size), then the export
# into /dev/null and dd writing as many bytes, to tell computing from writing.
# usage: bench/jobs_scale.sh [BUILD_DIR] [RECORDS] [WORKDIR]
set -eu
build=${1:-build}
records=${2:-10000000}
work=${3:-$(mktemp -d)}
mkdir -p "$work"
trace=$work/jobs_$records.grt
[ -x "$build/fixtures/gen_jobs_trace" ] || { echo "build first: make -j2 BUILD=$build" >&2; exit 1; }
if [ ! -f "$trace" ]; then
	/usr/bin/time -f "generate: %e s, %M KiB max RSS" "$build/fixtures/gen_jobs_trace" -o "$trace" -n "$records"
fi
echo "trace: $trace ($(du -h "$trace" | cut -f1), $records records)"
run() { # LABEL COMMAND...
	local label=$1
	shift
	/usr/bin/time -f "%e %M" -o "$work/time" "$@" >"$work/out" 2>"$work/err" || {
		echo "$label failed: $(head -3 "$work/err")" >&2
		exit 1
	}
	read -r secs rss <"$work/time"
	printf '%-28s %8s s %10s KiB max RSS\n' "$label" "$secs" "$rss"
}
run "report --jobs (text)" "$build/grtrace" report "$trace" --jobs
head -12 "$work/out" | sed -n '/^== jobs ==/,$p' | head -3
run "report --jobs --format json" "$build/grtrace" report "$trace" --jobs --format json
echo "  json: $(du -h "$work/out" | cut -f1)"
run "export (protobuf)" "$build/grtrace" export "$trace" -o "$work/timeline.pftrace"
echo "  timeline: $(du -h "$work/timeline.pftrace" | cut -f1)"
rm -f "$work/timeline.pftrace"
run "export --format json" "$build/grtrace" export "$trace" --format json -o "$work/timeline.json"
echo "  timeline: $(du -h "$work/timeline.json" | cut -f1)"
# what writing costs here: the same export into /dev/null, and dd writing as many bytes
bytes=$(stat -c %s "$work/timeline.json")
rm -f "$work/timeline.json" "$work/out"
run "export --format json /dev/null" "$build/grtrace" export "$trace" --format json -o /dev/null
start=$(date +%s.%N)
dd if=/dev/zero of="$work/dd.out" bs=1M count=$((bytes >> 20)) 2>/dev/null
printf '%-28s %8s s for %s MiB (page cache, no sync)\n' "dd to a file" \
	"$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')" $((bytes >> 20))
rm -f "$work/dd.out"
