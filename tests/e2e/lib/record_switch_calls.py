# Drives bench/gpu_inproc/record_switch.py on a fake libcuda: 30 allocations, each freed, with
# the in-process recording on for every third (10 recorded). Prints whether the switch is live.
import ctypes
import sys

sys.path.insert(0, "bench/gpu_inproc")
from record_switch import RecordSwitch  # noqa: E402

cuda = ctypes.CDLL(sys.argv[1])
cuda.cuInit(0)
switch = RecordSwitch()
print("switch", "live" if switch.active else "none")
ptr = ctypes.c_uint64()
for i in range(30):
    switch.on(i % 3 == 0)
    cuda.cuMemAlloc_v2(ctypes.byref(ptr), 64)
    cuda.cuMemFree_v2(ptr)
switch.on(True)
