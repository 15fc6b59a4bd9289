#!/bin/bash
# The trace writer's cost per record, with and without checksum records (format 1.2 vs the 1.1
# layout), in instructions counted by callgrind (user space only: write(2) itself is not counted).
# Usage: bench/writer_cost.sh [BUILD] [RECORDS]; runs on the development machine, no GPU.
set -eu
build=${1:-build}
n=${2:-200000}
make -s -j2 BUILD="$build" all >/dev/null
out=$build/bench
mkdir -p "$out"
# static: valgrind 3.19 stops in the dynamic loader on the development machines (SIGTRAP)
cc -static -std=gnu11 -O2 -g -D_GNU_SOURCE -Isrc -o "$out/writer_cost" bench/writer_cost.c \
	$(ls "$build"/obj/src/trace/*.o "$build"/obj/src/common/*.o | grep -v elf_file) -lm
for mode in off on; do
	valgrind --tool=callgrind --callgrind-out-file="$out/writer_cost.$mode.out" \
		"$out/writer_cost" "$out/writer_cost.grt" $mode "$n" 2>"$out/writer_cost.$mode.log"
	ir=$(sed -n 's/^==[0-9]*== Collected : //p' "$out/writer_cost.$mode.log")
	printf 'checksums %-3s  %d records  %d instructions  %.1f per record  file %d bytes\n' \
		$mode "$n" "$ir" "$(echo "$ir / $n" | bc -l)" "$(stat -c %s "$out/writer_cost.grt")"
done
