#!/bin/bash
# Puts what bench/gpu_inject.sh and bench/gpu_cupti_handover.sh need into one folder for the GPU machine.
# usage: bench/gpu_inject_carry.sh [BUILD] [DEST]   (then on the GPU machine: bash DEST/gpu_inject.sh,
# bash DEST/gpu_cupti_handover.sh)
set -eu
BUILD=${1:-build}
DEST=${2:-.device-carry/inject}
rm -rf "$DEST"
mkdir -p "$DEST/lib"
cp "$BUILD/grtrace" "$BUILD/libgrtrace-inject.so" bench/gpu_inject.sh bench/gpu_cupti_handover.sh "$DEST/"
cp -r bench/gpu_inject "$DEST/"
# the library's one shared dependency beyond libc, in case the machine lacks it
cp -L "$(ldd "$BUILD/libgrtrace-inject.so" | awk '/libzstd/ {print $3}')" "$DEST/lib/"
echo "$DEST"
