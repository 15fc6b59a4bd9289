// Host time per kernel launch, in phases of one process: untraced, T traced phases (one per
// tracer configuration), untraced again.
// usage: cuda_launch_overhead [driver|runtime] [LAUNCHES_PER_BATCH] [BATCHES] [T]
//   driver   launches with cuLaunchKernel (the probed entry point itself)
//   runtime  launches with kernel<<<>>> (cudart reaches libcuda through cuGetProcAddress)
//   T        traced phases (default 1)
// After each phase but the last it prints "phase NAME done" (untraced, traced1, traced2, ...)
// and waits for a line on stdin, so a tracer can attach before a traced phase and detach after
// it. Last it prints the median over batches of the host time per launch of every phase, and the
// launches made in each traced phase.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>

#define CHECK_RT(call)                                                                         \
	do {                                                                                   \
		cudaError_t err_ = (call);                                                     \
		if (err_ != cudaSuccess) {                                                     \
			fprintf(stderr, "cuda_launch_overhead: %s: %s\n", #call,               \
				cudaGetErrorString(err_));                                     \
			exit(1);                                                               \
		}                                                                              \
	} while (0)

#define CHECK_DRV(call)                                                                        \
	do {                                                                                   \
		CUresult err_ = (call);                                                        \
		if (err_ != CUDA_SUCCESS) {                                                    \
			const char *name_ = "?";                                               \
			cuGetErrorName(err_, &name_);                                          \
			fprintf(stderr, "cuda_launch_overhead: %s: %s\n", #call, name_);       \
			exit(1);                                                               \
		}                                                                              \
	} while (0)

__global__ void empty_kernel(int *unused)
{
}

struct launcher {
	bool driver;
	CUfunction function;
	cudaStream_t stream;
	int *arg;
};

static double now_us()
{
	timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void launch(const launcher &l)
{
	if (l.driver) {
		void *params[] = { (void *)&l.arg };

		CHECK_DRV(cuLaunchKernel(l.function, 1, 1, 1, 32, 1, 1, 0, (CUstream)l.stream, params, nullptr));
	} else {
		empty_kernel<<<1, 32, 0, l.stream>>>(l.arg);
	}
}

/*
 * Median host microseconds per launch over batches. Each batch is timed from
 * the first launch to the return of the last; the stream is drained between
 * batches (untimed) so a full launch queue never makes a launch wait for the GPU.
 */
static double phase(const launcher &l, int per_batch, int batches)
{
	std::vector<double> per_launch;

	for (int b = 0; b < batches; b++) {
		double t0 = now_us();

		for (int i = 0; i < per_batch; i++)
			launch(l);
		per_launch.push_back((now_us() - t0) / per_batch);
		CHECK_RT(cudaGetLastError());
		CHECK_RT(cudaStreamSynchronize(l.stream));
	}
	std::sort(per_launch.begin(), per_launch.end());
	return per_launch[per_launch.size() / 2];
}

static void between_phases(const char *done)
{
	char line[64];

	printf("phase %s done\n", done);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0; // EOF: carry on
}

int main(int argc, char **argv)
{
	launcher l = {};
	int per_batch = argc > 2 ? atoi(argv[2]) : 256;
	int batches = argc > 3 ? atoi(argv[3]) : 200;
	int traced_phases = argc > 4 ? atoi(argv[4]) : 1;
	double untraced, untraced_again;
	std::vector<double> traced;
	const char *name = nullptr;
	char done[32];

	l.driver = argc < 2 || !strcmp(argv[1], "driver");
	if ((argc > 1 && !l.driver && strcmp(argv[1], "runtime")) || per_batch <= 0 || batches <= 0 ||
	    traced_phases <= 0 || traced_phases > 16) {
		fprintf(stderr, "usage: cuda_launch_overhead [driver|runtime] [LAUNCHES_PER_BATCH] [BATCHES] [T]\n");
		return 2;
	}
	CHECK_RT(cudaFree(0));
	CHECK_RT(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking));
	CHECK_RT(cudaMalloc(&l.arg, sizeof(int)));
	CHECK_RT(cudaGetFuncBySymbol(&l.function, (const void *)empty_kernel));
	phase(l, per_batch, 10); // warm-up: module loading, first-launch costs

	untraced = phase(l, per_batch, batches);
	between_phases("untraced");
	for (int t = 1; t <= traced_phases; t++) {
		// the handle was resolved before any tracer came: name it for each trace
		CHECK_DRV(cuFuncGetName(&name, l.function));
		traced.push_back(phase(l, per_batch, batches));
		snprintf(done, sizeof(done), "traced%d", t);
		between_phases(done);
	}
	untraced_again = phase(l, per_batch, batches);

	printf("mode %s kernel %s launches_per_batch %d batches %d\n", l.driver ? "driver" : "runtime",
	       name, per_batch, batches);
	printf("untraced_us %.3f untraced_again_us %.3f\n", untraced, untraced_again);
	for (int t = 1; t <= traced_phases; t++)
		printf("traced%d_us %.3f added%d_us %.3f\n", t, traced[t - 1], t,
		       traced[t - 1] - (untraced + untraced_again) / 2);
	printf("traced_launches %d\n", per_batch * batches);
	CHECK_RT(cudaFree(l.arg));
	CHECK_RT(cudaStreamDestroy(l.stream));
	return 0;
}
