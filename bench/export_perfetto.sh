#!/bin/bash
# Measures `grtrace export` in its two formats on generated traces: per size, the median of 3
# runs' wall time, their max RSS (/usr/bin/time -v) and the output's size; then the instructions
# each format executes on a 10^5-record trace (valgrind --tool=callgrind: the same count however
# busy the machine is). BASE=OLD_GRTRACE adds the same rows for an older build whose export wrote
# trace-event JSON with `--perfetto OUT` (commit d4626cd and before).
# usage: bench/export_perfetto.sh [BUILD_DIR] [WORKDIR] [RECORDS...]   (default: 1000000 10000000)
set -eu
build=${1:-build}
work=${2:-$(mktemp -d)}
shift $(($# > 2 ? 2 : $#))
sizes=${*:-1000000 10000000}
grtrace=$build/grtrace
gen=$build/fixtures/gen_jobs_trace
[ -x "$gen" ] || { echo "build first: make -j2 BUILD=$build" >&2; exit 1; }
mkdir -p "$work"

median() { echo "$@" | tr ' ' '\n' | sort -n | sed -n 2p; }

# run LABEL OUT COMMAND...: 3 runs; the median wall time and CPU time (user + system, all
# threads: what a busy machine changes least), the largest max RSS, OUT's size, the load average
run() {
	local label=$1 out=$2 walls="" cpus="" rss=0 r w c m
	shift 2
	for r in 1 2 3; do
		/usr/bin/time -v -o "$work/time" "$@" >/dev/null 2>"$work/err" || {
			echo "$label failed: $(head -3 "$work/err")" >&2
			exit 1
		}
		w=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time" |
			awk -F: '{ print (NF == 3 ? $1 * 3600 + $2 * 60 + $3 : $1 * 60 + $2) }')
		c=$(sed -n 's/.*\(User\|System\) time (seconds): //p' "$work/time" | paste -sd+ | bc)
		m=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time")
		walls="$walls $w"
		cpus="$cpus $c"
		[ "$m" -gt "$rss" ] && rss=$m
	done
	printf '%-32s wall %6s s (%s) cpu %6s s  %6s KiB max RSS  %10s bytes  load %s\n' "$label" \
		"$(median $walls)" "${walls# }" "$(median $cpus)" "$rss" \
		"$(stat -L -c %s "$out" 2>/dev/null || echo -)" "$(cut -d' ' -f1 /proc/loadavg)"
	rm -f "$out"
}

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for n in $sizes; do
	trace=$work/jobs_$n.grt
	[ -f "$trace" ] || "$gen" -o "$trace" -n "$n" >/dev/null
	echo "trace: $n records, $(stat -L -c %s "$trace") bytes"
	run "export (protobuf)" "$work/out.pftrace" "$grtrace" export "$trace" -o "$work/out.pftrace"
	run "export --format json" "$work/out.json" "$grtrace" export "$trace" --format json \
		-o "$work/out.json"
	run "export (protobuf) to /dev/null" /dev/null "$grtrace" export "$trace" -o /dev/null
	if [ -n "${BASE:-}" ]; then
		run "base: export --perfetto (JSON)" "$work/base.json" "$BASE" export "$trace" \
			--perfetto "$work/base.json"
	fi
done

# instructions, 10^5 records
trace=$work/jobs_100000.grt
[ -f "$trace" ] || "$gen" -o "$trace" -n 100000 >/dev/null
# count LABEL COMMAND...: instructions of all threads, and of the first (reading the trace and
# building jobs, the critical path when the others have a core). Retried: valgrind stops with
# SIGTRAP when another program's uprobe sits in ld.so (tests running beside it).
count() {
	local label=$1 try done=0
	shift
	for try in 1 2 3 4 5; do
		rm -f "$work"/callgrind.out*
		if valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$work/callgrind.out" \
			"$@" >/dev/null 2>"$work/vg"; then
			done=1
			break
		fi
		sleep 2
	done
	[ $done = 1 ] || { echo "$label failed under valgrind: $(tail -3 "$work/vg")" >&2; exit 1; }
	printf '%-32s %12s instructions, %12s in the first thread\n' "$label" \
		"$(sed -n 's/.*Collected : //p' "$work/vg")" \
		"$(sed -n 's/^summary: //p' "$work/callgrind.out-01")"
}
count "callgrind: export (protobuf)" "$grtrace" export "$trace" -o "$work/out.pftrace"
count "callgrind: export --format json" "$grtrace" export "$trace" --format json -o "$work/out.json"
[ -z "${BASE:-}" ] || count "callgrind: base export (JSON)" "$BASE" export "$trace" \
	--perfetto "$work/base.json"
rm -f "$work/out.pftrace" "$work/out.json" "$work/base.json" "$work"/callgrind.out*
