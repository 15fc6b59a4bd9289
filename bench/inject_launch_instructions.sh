#!/bin/bash
# Instructions per instrumented launch on the library's launch path, counted by callgrind on the
# fake driver (no GPU): the wrapper cuLaunchKernel inclusive, less what depends on the collection
# thread's timing (arena creation, pending-entry chunks), between a 1000- and a 3000-launch run.
# Counted on the application's thread alone (--separate-threads): toggle-collect is global, so
# without it whatever the collection thread ran meanwhile was counted as the launch's.
# usage: bench/inject_launch_instructions.sh [BUILD]   (needs valgrind; GRTRACE_INJECT_LIB=another
# build of the library compares it on the same fake driver)
set -eu
BUILD=${1:-build}
FIX=$PWD/$BUILD/fixtures/inject
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export LD_LIBRARY_PATH=$FIX GRTRACE_INJECT_LIB=${GRTRACE_INJECT_LIB:-$PWD/$BUILD/libgrtrace-inject.so} GRTRACE_CACHE_DIR=$W/cache
export GRTRACE_CUPTI_PATH=$FIX/cupti/libcupti.so.13
inc() { # callgrind file, function as callgrind_annotate names it: its inclusive instructions
	callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
		awk -v fn="$2" 'index($0, fn) { gsub(",", "", $1); print $1; found = 1; exit } END { if (!found) print 0 }'
}
for n in 1000 3000; do
	"$BUILD/grtrace" record -f -s gpu -o "$W/t.grt" -- valgrind --tool=callgrind \
		--callgrind-out-file="$W/cg.$n" --separate-threads=yes --toggle-collect=cuLaunchKernel \
		"$FIX/app" $n >/dev/null 2>&1
	mv "$W/cg.$n-01" "$W/cg.$n"
	eval "net_$n=\$(( \$(inc $W/cg.$n 'interpose.c:cuLaunchKernel ') - \$(inc $W/cg.$n ':arena_alloc ') - \$(inc $W/cg.$n 'malloc.c:calloc ') ))"
done
echo "instructions per launch: $(( (net_3000 - net_1000) / 2000 ))"
