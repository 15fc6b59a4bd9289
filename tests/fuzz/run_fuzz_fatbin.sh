#!/bin/bash
# Fuzzes fat binary parsing and PTX rewriting for FUZZ_SECONDS (default 30) with libFuzzer + ASan/UBSan.
# Usage: tests/fuzz/run_fuzz_fatbin.sh BUILD_DIR; prints "ok - fuzz_fatbin" or "FAIL - fuzz_fatbin".
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
seconds=${FUZZ_SECONDS:-30}
out=$build/fuzz/fatbin
bin=$out/fuzz_fatbin
mkdir -p "$out/corpus"
srcs="$(ls src/inject/fatbin*.c src/inject/ptx_*.c) src/common/kernel_regex.c"
if ! clang -g -O1 -std=gnu11 -D_GNU_SOURCE -Isrc -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -o "$bin" tests/fuzz/fuzz_fatbin.c $srcs -lzstd \
	>"$out/build.log" 2>&1; then
	cat "$out/build.log"
	echo "FAIL - fuzz_fatbin (build)"
	exit 1
fi
# Seeds: real nvcc output when the toolkit is here (selector byte first), and the corpus PTX.
nvcc=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)
if [ -n "$nvcc" ] && [ ! -f "$out/corpus/seed_zstd" ]; then
	for mode in default speed none; do
		"$nvcc" -fatbin -arch=sm_90 --compress-mode=$mode -o "$out/seed.fatbin" \
			tests/ptx/vector_add.cu 2>/dev/null || continue
		{ printf '\264'; cat "$out/seed.fatbin"; } >"$out/corpus/seed_$mode"
	done
	for f in vector_add early_return multi_kernel module_vars; do
		"$nvcc" -ptx -arch=sm_90 -o "$out/seed.ptx" "tests/ptx/$f.cu" 2>/dev/null || continue
		{ printf '\001'; cat "$out/seed.ptx"; } >"$out/corpus/seed_ptx_$f"
	done
	rm -f "$out/seed.fatbin" "$out/seed.ptx"
	touch "$out/corpus/seed_zstd"
fi
# Inputs that once failed are re-run first, every time.
. tests/fuzz/libfuzzer_run.bash
libfuzzer_replay fuzz_fatbin "$bin" tests/fuzz/regressions/fatbin || exit 1
libfuzzer_run fuzz_fatbin "$bin" "$seconds" "$build" "$out/corpus" -- -max_len=65536
