// uvm_workload MIB ITERS [--wait-file PATH] [--hold-file PATH] [--thrash]: managed memory written by the
// CPU, then by the GPU.
//
// Every 4 KiB page is touched on each side, so each GPU pass moves all MIB to
// the GPU and each later CPU pass (and the final check) moves it back:
// expected host->device = device->host = ITERS * MIB MiB. Prints one JSON line
// with what it did and CLOCK_MONOTONIC stamps around the loop, so a trace's
// event times can be checked against it. --wait-file holds the program before
// CUDA starts until PATH exists (lets a tracer attach first); --hold-file holds it
// after the context and the managed allocation exist, before any page moves,
// until that PATH exists (lets an agent bind to the process's UVM file first).
//
// --thrash instead has the CPU and the GPU write the same pages at the same
// time: one kernel whose threads each add ITERS times to their page (bounded,
// it always ends) while the CPU keeps writing every page until the kernel is
// done. The driver's thrashing detection should notice and pin or remote-map
// the region. No byte counts are expected in that mode.
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define INTS_PER_PAGE 1024

static unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__global__ void gpu_hammer(int *data, size_t pages, int iters)
{
	size_t page = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (page >= pages)
		return;
	for (int i = 0; i < iters; i++) {
		atomicAdd(&data[page * INTS_PER_PAGE + 1], 1);
		__nanosleep(2000);
	}
}

__global__ void gpu_touch(int *data, size_t pages)
{
	size_t page = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (page < pages)
		data[page * INTS_PER_PAGE] += 1;
}

static void check(cudaError_t err, const char *what)
{
	if (err != cudaSuccess) {
		fprintf(stderr, "uvm_workload: %s: %s\n", what, cudaGetErrorString(err));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	size_t mib, bytes, pages;
	int iters, *data, bad = 0, thrash = 0;
	unsigned long long t_start, t_loop0, t_loop1, cpu_passes = 0;
	const char *wait_file = NULL, *hold_file = NULL;

	if (argc < 3) {
		fprintf(stderr, "usage: uvm_workload MIB ITERS [--wait-file PATH] [--hold-file PATH] [--thrash]\n");
		return 2;
	}
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--wait-file") && i + 1 < argc)
			wait_file = argv[++i];
		else if (!strcmp(argv[i], "--hold-file") && i + 1 < argc)
			hold_file = argv[++i];
		else if (!strcmp(argv[i], "--thrash"))
			thrash = 1;
	}
	mib = strtoull(argv[1], NULL, 10);
	iters = atoi(argv[2]);
	if (mib == 0 || mib > 256 || iters <= 0) {
		fprintf(stderr, "uvm_workload: MIB must be 1..256 (never oversubscribe), ITERS > 0\n");
		return 2;
	}
	if (wait_file)
		while (access(wait_file, F_OK))
			usleep(1000);
	bytes = mib << 20;
	pages = bytes / 4096;
	t_start = mono_ns();
	check(cudaSetDevice(0), "cudaSetDevice");
	check(cudaFree(0), "context");
	check(cudaMallocManaged(&data, bytes), "cudaMallocManaged");
	if (hold_file)
		while (access(hold_file, F_OK))
			usleep(1000);
	t_loop0 = mono_ns();
	if (thrash) {
		memset(data, 0, bytes);
		gpu_hammer<<<(unsigned)((pages + 255) / 256), 256>>>(data, pages, iters);
		check(cudaGetLastError(), "launch");
		while (cudaStreamQuery(0) == cudaErrorNotReady) {
			for (size_t p = 0; p < pages; p++)
				data[p * INTS_PER_PAGE] += 1;
			cpu_passes++;
		}
		check(cudaDeviceSynchronize(), "sync");
		for (size_t p = 0; p < pages; p++)
			bad += data[p * INTS_PER_PAGE + 1] != iters;
		t_loop1 = mono_ns();
		printf("{\"pid\":%d,\"mib\":%zu,\"iters\":%d,\"thrash\":true,\"addr\":%llu,\"cpu_passes\":%llu,"
		       "\"t_start_ns\":%llu,\"t_loop0_ns\":%llu,\"t_loop1_ns\":%llu,\"loop_ms\":%.3f,\"ok\":%s}\n",
		       (int)getpid(), mib, iters, (unsigned long long)(uintptr_t)data, cpu_passes, t_start, t_loop0,
		       t_loop1, (t_loop1 - t_loop0) / 1e6, bad ? "false" : "true");
		check(cudaFree(data), "cudaFree");
		return bad ? 1 : 0;
	}
	for (int it = 0; it < iters; it++) {
		for (size_t p = 0; p < pages; p++)
			data[p * INTS_PER_PAGE] = it + (int)p;
		gpu_touch<<<(unsigned)((pages + 255) / 256), 256>>>(data, pages);
		check(cudaGetLastError(), "launch");
		check(cudaDeviceSynchronize(), "sync");
	}
	for (size_t p = 0; p < pages; p++)
		bad += data[p * INTS_PER_PAGE] != iters - 1 + (int)p + 1;
	t_loop1 = mono_ns();
	printf("{\"pid\":%d,\"mib\":%zu,\"bytes\":%zu,\"iters\":%d,\"addr\":%llu,\"expected_htod\":%zu,"
	       "\"expected_dtoh\":%zu,\"t_start_ns\":%llu,\"t_loop0_ns\":%llu,\"t_loop1_ns\":%llu,"
	       "\"loop_ms\":%.3f,\"ok\":%s}\n",
	       (int)getpid(), mib, bytes, iters, (unsigned long long)(uintptr_t)data, (size_t)iters * bytes,
	       (size_t)iters * bytes, t_start, t_loop0, t_loop1, (t_loop1 - t_loop0) / 1e6, bad ? "false" : "true");
	check(cudaFree(data), "cudaFree");
	return bad ? 1 : 0;
}
