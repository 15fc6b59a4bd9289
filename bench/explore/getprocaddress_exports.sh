#!/bin/bash
# On the GPU machine: do the entry points the CUDA runtime gets from cuGetProcAddress land on
# exported libcuda symbols (which the cuda source's uprobes cover)?
set -euo pipefail
cd "$(dirname "$0")"
gcc -O1 -o /tmp/getprocaddress_exports getprocaddress_exports.c -ldl
/tmp/getprocaddress_exports
