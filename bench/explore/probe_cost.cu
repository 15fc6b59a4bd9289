// Device-side cost of block-probe designs, measured on vector-add: the same kernel with
// hand-written probe variants, 10,000 launches each, rounds interleaved, median loop time.
// usage: probe_cost N LAUNCHES ROUNDS
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

struct rec { unsigned long long start, end; unsigned x, y, z, smid, done, pad; };
struct sm_agg { unsigned long long first, last, busy; unsigned blocks, max_dur; };

__device__ __forceinline__ unsigned long long gtimer()
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}
__device__ __forceinline__ unsigned smid()
{
	unsigned s;
	asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
	return s;
}
__device__ __forceinline__ unsigned lanemask_lt()
{
	unsigned m;
	asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
	return m;
}

// variant 1/2: today's probe (per-block record, per-warp global atomic, optional head counter)
template <bool HEAD>
__global__ void va_records(const float *a, const float *b, float *c, int n, rec *r, unsigned long long *head)
{
	unsigned blk = blockIdx.x;
	if (threadIdx.x == 0) {
		r[blk].start = gtimer();
		r[blk].x = blockIdx.x; r[blk].y = 0; r[blk].z = 0; r[blk].smid = smid();
	}
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
	unsigned act = __activemask();
	if ((lanemask_lt() & act) == 0) {
		unsigned got = atomicAdd(&r[blk].done, __popc(act)) + __popc(act);
		if (got == blockDim.x) {
			r[blk].end = gtimer();
			if (HEAD)
				atomicAdd(head, 1ull);
		}
	}
}

// shared-memory block state: start and exit counter, set up behind one barrier at entry
struct blk_state { unsigned long long start; unsigned done; };

template <int MODE>
__global__ void va_shared(const float *a, const float *b, float *c, int n, rec *r, sm_agg *agg,
			  unsigned *hist, unsigned long long *head)
{
	__shared__ blk_state st;
	if (threadIdx.x == 0) {
		st.start = gtimer();
		st.done = 0;
	}
	__syncthreads();
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
	unsigned act = __activemask();
	if ((lanemask_lt() & act) != 0)
		return;
	unsigned got = atomicAdd(&st.done, __popc(act)) + __popc(act);
	if (got != blockDim.x || MODE == 0)
		return;
	unsigned long long end = gtimer();
	unsigned s = smid();
	unsigned dur = (unsigned)(end - st.start);
	if (MODE == 1) { // per-block record, plain stores
		r[blockIdx.x].start = st.start;
		r[blockIdx.x].end = end;
		r[blockIdx.x].smid = s;
	} else if (MODE == 2 || MODE == 3) { // per-SM aggregate (3: + one global histogram)
		sm_agg *g = &agg[s];
		atomicMin(&g->first, st.start);
		atomicMax(&g->last, end);
		atomicAdd(&g->busy, (unsigned long long)dur);
		atomicAdd(&g->blocks, 1u);
		atomicMax(&g->max_dur, dur);
		if (MODE == 3)
			atomicAdd(&hist[31 - __clz(dur | 1)], 1u);
	} else if (MODE == 5) { // what the rewriter emits: per-SM totals + sampled histogram copies
		sm_agg *g = &agg[s < 255 ? s : 255];
		atomicMax(&g->first, ~st.start);
		atomicMax(&g->last, end);
		atomicAdd(&g->busy, (unsigned long long)dur);
		atomicAdd(&g->blocks, 1u);
		atomicMax(&g->max_dur, dur);
		if ((blockIdx.x & 7) == 0 || gridDim.x <= 256)
			atomicAdd(&hist[(s & 7) * 64 + 2 * (31 - __clz(dur | 1))], 1u);
	} else if (MODE == 4) { // same-address reductions: global min/max/max_dur + head count
		atomicMin(&head[1], st.start);
		atomicMax(&head[2], end);
		atomicAdd(&head[0], 1ull);
		atomicAdd(&hist[31 - __clz(dur | 1)], 1u);
	}
}

__global__ void va_plain(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

static const char *names[] = {"plain", "records+head", "records", "shared-only", "shared+record",
			      "shared+sm-agg", "shared+sm-agg+hist", "shared+same-addr",
			      "shared+sm-agg+sampled-hist"};
#define NV 9

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1 << 20, launches = argc > 2 ? atoi(argv[2]) : 10000;
	int rounds = argc > 3 ? atoi(argv[3]) : 3;
	int grid = (n + 255) / 256;
	float *da, *db, *dc;
	rec *r;
	sm_agg *agg;
	unsigned *hist;
	unsigned long long *head;
	cudaMalloc(&da, n * 4); cudaMalloc(&db, n * 4); cudaMalloc(&dc, n * 4);
	cudaMalloc(&r, grid * sizeof(rec)); cudaMemset(r, 0, grid * sizeof(rec));
	cudaMalloc(&agg, 1024 * sizeof(sm_agg)); cudaMemset(agg, 0, 1024 * sizeof(sm_agg));
	cudaMalloc(&hist, 512 * 4); cudaMemset(hist, 0, 2048);
	cudaMalloc(&head, 64); cudaMemset(head, 0, 64);
	std::vector<std::vector<double>> ms(NV);
	for (int round = 0; round < rounds; round++)
		for (int v = 0; v < NV; v++) {
			auto launch = [&]() {
				switch (v) {
				case 0: va_plain<<<grid, 256>>>(da, db, dc, n); break;
				case 1: va_records<true><<<grid, 256>>>(da, db, dc, n, r, head); break;
				case 2: va_records<false><<<grid, 256>>>(da, db, dc, n, r, head); break;
				case 3: va_shared<0><<<grid, 256>>>(da, db, dc, n, r, agg, hist, head); break;
				case 4: va_shared<1><<<grid, 256>>>(da, db, dc, n, r, agg, hist, head); break;
				case 5: va_shared<2><<<grid, 256>>>(da, db, dc, n, r, agg, hist, head); break;
				case 6: va_shared<3><<<grid, 256>>>(da, db, dc, n, r, agg, hist, head); break;
				case 7: va_shared<4><<<grid, 256>>>(da, db, dc, n, r, agg, hist, head); break;
				case 8: va_shared<5><<<grid, 256>>>(da, db, dc, n, r, agg, hist, head); break;
				}
			};
			for (int i = 0; i < 20; i++)
				launch();
			cudaDeviceSynchronize();
			auto t0 = std::chrono::steady_clock::now();
			for (int i = 0; i < launches; i++)
				launch();
			cudaDeviceSynchronize();
			auto t1 = std::chrono::steady_clock::now();
			ms[v].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
		}
	if (cudaGetLastError() != cudaSuccess) {
		fprintf(stderr, "CUDA error\n");
		return 1;
	}
	for (int v = 0; v < NV; v++) {
		std::sort(ms[v].begin(), ms[v].end());
		double med = ms[v][ms[v].size() / 2], base = 0;
		std::vector<double> b = ms[0];
		base = b[b.size() / 2];
		printf("n=%d %-20s %9.2f ms  %+6.1f%%\n", n, names[v], med, (med / base - 1) * 100);
	}
	return 0;
}
