#!/bin/bash
# Fuzzes the in-process cuda path's call rings and their records for FUZZ_SECONDS (default 30) with
# libFuzzer + ASan/UBSan. Usage: tests/fuzz/run_fuzz_call_rings.sh BUILD_DIR; prints
# "ok - fuzz_call_rings" or "FAIL - fuzz_call_rings".
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
seconds=${FUZZ_SECONDS:-30}
out=$build/fuzz/call_rings
bin=$out/fuzz_call_rings
mkdir -p "$out/corpus"
if ! clang -g -O1 -std=gnu11 -D_GNU_SOURCE -Isrc -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -o "$bin" tests/fuzz/fuzz_call_rings.c >"$out/build.log" 2>&1; then
	cat "$out/build.log"
	echo "FAIL - fuzz_call_rings (build)"
	exit 1
fi
# Seeds: a producer filling and draining its ring by turns, long enough to start over, and one
# whose calls are made inside calls (mode 1); a ring holding a thread record and a launch (mode 0).
if [ ! -f "$out/corpus/.seeded" ]; then
	python3 - "$out/corpus" <<'PY'
import os, struct, sys
d = sys.argv[1]
turns = bytes([1]) + bytes([0x10, 0x30, 0x50, 0x8f, 0xb3] * 120 + [0xbf] * 40)
open(os.path.join(d, "turns"), "wb").write(turns)
# calls inside calls, three deep, with records between and the consumer reading meanwhile
nested = bytes([1]) + bytes([0x95, 0x10, 0x97, 0xb1, 0x20, 0x99, 0x30, 0xa5, 0xb2, 0xa3, 0x40,
                             0xa1, 0xbf] * 100)
open(os.path.join(d, "nested"), "wb").write(nested)
thread = struct.pack("<IIIIII", 32, 2, 4242, 4243, 1, 0) + b"trainer".ljust(16, b"\0")
launch = struct.pack("<QQQQ6III", 1000, 1700, 0xf0000000, 0xdead0, 3, 1, 1, 64, 1, 1, 0, 0)
launch += struct.pack("<HBBI", 7, 0, 2, 5) + struct.pack("<QQ", 0x1111, 0x2222)
launch = struct.pack("<II", len(launch), 3) + launch
ring = thread + launch
open(os.path.join(d, "ring"), "wb").write(bytes([0]) + struct.pack("<QQ", 0, len(ring)) + ring)
PY
	touch "$out/corpus/.seeded"
fi
# Inputs that once failed are re-run first, every time.
. tests/fuzz/libfuzzer_run.bash
libfuzzer_replay fuzz_call_rings "$bin" tests/fuzz/regressions/call_rings || exit 1
libfuzzer_run fuzz_call_rings "$bin" "$seconds" "$build" "$out/corpus" -- -max_len=8192
