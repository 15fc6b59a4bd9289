#!/bin/bash
# Fuzzes the GPU eBPF loader, verifier (with the translator and interpreter on what it accepts) and
# attach rewriter for FUZZ_SECONDS (default 30) with libFuzzer + ASan/UBSan.
# Usage: tests/fuzz/run_fuzz_gpubpf.sh BUILD_DIR; prints "ok - fuzz_gpubpf" or "FAIL - fuzz_gpubpf".
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
seconds=${FUZZ_SECONDS:-30}
out=$build/fuzz/gpubpf
bin=$out/fuzz_gpubpf
mkdir -p "$out/corpus"
srcs="$(ls src/gpubpf/*.c src/inject/ptx_*.c src/common/*.c src/trace/*.c) tests/gpubpf/bpf_interp.c"
if ! clang -g -O1 -std=gnu11 -D_GNU_SOURCE -Isrc -Itests -I"$build/gen" \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -o "$bin" \
	tests/fuzz/fuzz_gpubpf.c $srcs -lbpf -lelf -lz -lzstd -lm >"$out/build.log" 2>&1; then
	cat "$out/build.log"
	echo "FAIL - fuzz_gpubpf (build)"
	exit 1
fi
# Seeds: the test programs and samples (selector 0), their instructions (1), corpus PTX (2).
if [ ! -f "$out/corpus/.seeded" ]; then
	for o in "$build"/gpubpf/progs/*.bpf.o "$build"/gpubpf/samples/*.bpf.o; do
		[ -f "$o" ] || continue
		n=$(basename "$o" .bpf.o)
		{ printf '\000'; cat "$o"; } >"$out/corpus/obj_$n"
		sec=$(readelf -SW "$o" | awk '/probe\// {print $2; exit}')
		if [ -n "$sec" ]; then
			objcopy -O binary --only-section="$sec" "$o" "$out/insns.bin" 2>/dev/null &&
				{ printf '\001'; cat "$out/insns.bin"; } >"$out/corpus/insns_$n"
		fi
	done
	for p in "$build"/gpubpf/ptx/*.sm_90.ptx; do
		[ -f "$p" ] || continue
		{ printf '\002'; cat "$p"; } >"$out/corpus/ptx_$(basename "$p" .ptx)"
	done
	rm -f "$out/insns.bin"
	touch "$out/corpus/.seeded"
fi
# Inputs that once failed are re-run first, every time.
. tests/fuzz/libfuzzer_run.bash
libfuzzer_replay fuzz_gpubpf "$bin" tests/fuzz/regressions/gpubpf || exit 1
libfuzzer_run fuzz_gpubpf "$bin" "$seconds" "$build" "$out/corpus" -- -max_len=65536
