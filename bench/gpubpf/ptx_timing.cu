// Kernel-only timing of vec_add PTX modules: the plain kernel and copies instrumented with GPU eBPF
// programs (`grtrace bpf check --kernel-ptx`), or edited by hand to take one part of a program
// out. No recorder, no host collection: each module is JIT-compiled by the driver and launched
// LAUNCHES times over 2^20 floats, ROUNDS rounds of all modules interleaved; prints the median
// microseconds per launch, the spread, the ratio to the first module, and whether c = a + b.
//
//   ptx_timing LAUNCHES ROUNDS NAME=FILE.ptx...
//
// An instrumented module takes the environment as its fifth parameter (src/gpubpf/gpu_abi.h).
// A NAME that starts with "ring" gets an environment whose map 0 is a ring already full, every
// SM's "exhausted" word set: the state a busy kernel's exit program finds on every launch but
// the first. Any other NAME gets a per-thread map of 2^20 u64 values as map 0.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <string>
#include <vector>

#define N (1 << 20)
#define RING_HEAD_BYTES (32 + 256 * 128) // header, then 256 drop slots of 128 bytes
#define RING_DATA_BYTES 4096

static void check(CUresult r, const char *what)
{
	const char *s = nullptr;

	if (r == CUDA_SUCCESS)
		return;
	cuGetErrorString(r, &s);
	fprintf(stderr, "ptx_timing: %s: %s\n", what, s ? s : "?");
	exit(1);
}

struct module {
	std::string name, path;
	CUmodule mod;
	CUfunction fn;
	bool has_env, ring;
	std::vector<double> us;
	bool output_ok = true;
};

static std::string read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	std::string s;
	char buf[65536];
	size_t n;

	if (!f) {
		fprintf(stderr, "ptx_timing: cannot read %s\n", path);
		exit(1);
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		s.append(buf, n);
	fclose(f);
	return s;
}

static CUdeviceptr make_env(CUdeviceptr map0)
{
	uint64_t env[7 + 64] = {};
	CUdeviceptr d;

	env[0] = 0x46504247ull | (1ull << 32); // magic, version 1
	env[1] = N;			       // thread_capacity
	env[5] = 1ull << 32;		       // clock_mult: equal rates
	env[7] = map0;
	check(cuMemAlloc(&d, sizeof(env)), "alloc env");
	check(cuMemcpyHtoD(d, env, sizeof(env)), "copy env");
	return d;
}

static CUdeviceptr make_full_ring(void)
{
	std::vector<uint64_t> ring((RING_HEAD_BYTES + RING_DATA_BYTES) / 8, 0);
	CUdeviceptr d;

	ring[0] = RING_DATA_BYTES; // head at the capacity: nothing fits
	ring[2] = RING_DATA_BYTES; // capacity
	for (int slot = 0; slot < 256; slot++)
		ring[(32 + slot * 128 + 8) / 8] = 1; // exhausted
	check(cuMemAlloc(&d, ring.size() * 8), "alloc ring");
	check(cuMemcpyHtoD(d, ring.data(), ring.size() * 8), "copy ring");
	return d;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: ptx_timing LAUNCHES ROUNDS NAME=FILE.ptx...\n");
		return 2;
	}
	int launches = atoi(argv[1]), rounds = atoi(argv[2]);
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr a, b, c, thread_map, env_ring, env_thread;
	CUevent start, stop;
	std::vector<module> mods;
	std::vector<float> h(N), out(N);

	check(cuInit(0), "cuInit");
	check(cuDeviceGet(&dev, 0), "device");
	check(cuCtxCreate(&ctx, nullptr, 0, dev), "context");
	for (int i = 3; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		module m;

		if (!eq) {
			fprintf(stderr, "ptx_timing: %s: want NAME=FILE.ptx\n", argv[i]);
			return 2;
		}
		m.name.assign(argv[i], eq - argv[i]);
		m.path = eq + 1;
		std::string ptx = read_file(eq + 1);
		m.has_env = ptx.find("grt_p_bpf_env") != std::string::npos;
		m.ring = m.name.rfind("ring", 0) == 0;
		check(cuModuleLoadData(&m.mod, ptx.c_str()), m.path.c_str());
		check(cuModuleGetFunction(&m.fn, m.mod, "vec_add"), "vec_add");
		mods.push_back(m);
	}
	for (int i = 0; i < N; i++)
		h[i] = (float)(i % 1000) * 0.5f;
	check(cuMemAlloc(&a, N * 4), "alloc");
	check(cuMemAlloc(&b, N * 4), "alloc");
	check(cuMemAlloc(&c, N * 4), "alloc");
	check(cuMemAlloc(&thread_map, (size_t)N * 8), "alloc");
	check(cuMemsetD8(thread_map, 0, (size_t)N * 8), "memset");
	check(cuMemcpyHtoD(a, h.data(), N * 4), "copy");
	check(cuMemcpyHtoD(b, h.data(), N * 4), "copy");
	env_ring = make_env(make_full_ring());
	env_thread = make_env(thread_map);
	check(cuEventCreate(&start, 0), "event");
	check(cuEventCreate(&stop, 0), "event");
	for (int r = 0; r < rounds; r++) {
		for (auto &m : mods) {
			int n = N;
			CUdeviceptr env = m.ring ? env_ring : env_thread;
			void *params[] = {&a, &b, &c, &n, &env};
			float ms;

			check(cuMemsetD8(c, 0, N * 4), "memset c");
			// one launch outside the timing: the first pays for loading the module
			check(cuLaunchKernel(m.fn, N / 256, 1, 1, 256, 1, 1, 0, nullptr, params,
					     nullptr),
			      "launch");
			check(cuEventRecord(start, nullptr), "record");
			for (int i = 0; i < launches; i++)
				check(cuLaunchKernel(m.fn, N / 256, 1, 1, 256, 1, 1, 0, nullptr,
						     params, nullptr),
				      "launch");
			check(cuEventRecord(stop, nullptr), "record");
			check(cuEventSynchronize(stop), "sync");
			check(cuEventElapsedTime(&ms, start, stop), "elapsed");
			m.us.push_back(ms * 1000.0 / launches);
			check(cuMemcpyDtoH(out.data(), c, N * 4), "copy back");
			for (int i = 0; i < N; i++)
				if (out[i] != h[i] + h[i]) {
					m.output_ok = false;
					break;
				}
		}
	}
	double base = 0;
	printf("%-22s %10s %21s %8s  %s\n", "module", "us/launch", "min..max", "ratio",
	       "c = a + b");
	for (auto &m : mods) {
		std::vector<double> s = m.us;
		std::sort(s.begin(), s.end());
		double med = s[s.size() / 2];
		if (!base)
			base = med;
		printf("%-22s %10.2f %10.2f..%-10.2f %7.2fx  %s\n", m.name.c_str(), med, s.front(),
		       s.back(), med / base, m.output_ok ? "yes" : "NO");
	}
	return 0;
}
