/* One process on three fake devices: contexts switched every way the driver allows, peer copies between them. */
#include <string.h>
#include "workload.h"

/*
 * tests/e2e/multigpu.sh holds the expected answer; change both together.
 * Launches of "step": device 0 three, device 1 three, device 2 one. Peer
 * copies: 1 MiB from device 0 to 1 (synchronous), 2 MiB from 1 to 0 (async).
 * With the argument "all-pairs", also 4 KiB from 1 to 2 and 8 KiB from 0 to 2
 * (synchronous, issued on device 1), so every pair of the fake NVML's
 * three-GPU topology has a copy.
 */
#define DEVICES 3

static void launch(CUfunction f, int times)
{
	for (int i = 0; i < times; i++)
		expect(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), 0, "launch");
}

int main(int argc, char **argv)
{
	CUcontext primary[DEVICES], created, popped = NULL;
	CUdeviceptr buf[DEVICES];
	CUmodule module;
	CUfunction step;
	CUuuid uuid;
	char bus_id[32];
	int count = 0;

	setenv("FAKE_CUDA_DEVICES", "3", 1);
	workload_gate();
	expect(cuInit(0), 0, "cuInit");
	expect(cuDeviceGetCount(&count), 0, "count");
	if (count != DEVICES)
		expect(1, 0, "device count");
	for (int d = 0; d < DEVICES; d++) {
		expect(cuDeviceGetPCIBusId(bus_id, sizeof(bus_id), d), 0, "bus id");
		expect(cuDeviceGetUuid_v2(&uuid, d), 0, "uuid");
		expect(cuDevicePrimaryCtxRetain(&primary[d], d), 0, "primary");
	}
	/* created on device 0 and made current by the creation itself */
	expect(cuCtxCreate_v2(&created, 0, 0), 0, "create");
	expect(cuModuleLoad(&module, "/opt/fake/multi.cubin"), 0, "module");
	expect(cuModuleGetFunction(&step, module, "step"), 0, "step");
	expect(cuMemAlloc_v2(&buf[0], 1 << 20), 0, "alloc 0");
	launch(step, 2);
	expect(cuCtxSetCurrent(primary[1]), 0, "set 1");
	expect(cuMemAlloc_v2(&buf[1], 2 << 20), 0, "alloc 1");
	launch(step, 2);
	expect(cuCtxPushCurrent_v2(primary[2]), 0, "push 2");
	expect(cuMemAlloc_v2(&buf[2], 1 << 20), 0, "alloc 2");
	launch(step, 1);
	expect(cuCtxPopCurrent_v2(&popped), 0, "pop 2");
	if (popped != primary[2])
		expect(1, 0, "popped context");
	launch(step, 1); /* device 1 again */
	expect(cuMemcpyPeer(buf[1], primary[1], buf[0], primary[0], 1 << 20), 0, "peer 0->1");
	expect(cuMemcpyPeerAsync(buf[0], primary[0], buf[1], primary[1], 2 << 20, NULL), 0,
	       "peer 1->0");
	if (argc > 1 && !strcmp(argv[1], "all-pairs")) {
		expect(cuMemcpyPeer(buf[2], primary[2], buf[1], primary[1], 4096), 0, "peer 1->2");
		expect(cuMemcpyPeer(buf[2], primary[2], buf[0], primary[0], 8192), 0, "peer 0->2");
	}
	expect(cuCtxSynchronize(), 0, "sync 1");
	expect(cuCtxSetCurrent(primary[0]), 0, "set 0");
	launch(step, 1);
	expect(cuCtxSynchronize(), 0, "sync 0");
	return 0;
}
