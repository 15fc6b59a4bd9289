// CUDA graphs: NODES kernels captured once on a stream, the graph launched REPLAYS times, with a
// plain launch on another stream beside each replay.
#include "../scenarios/common.cuh"

#define NODES 5
#define REPLAYS 100

__global__ void step_kernel(float *v, int n, float k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		v[i] = v[i] * k + 1.0f;
}

int main()
{
	const int n = 1 << 20;
	float *v, *w;
	cudaStream_t s, other;
	cudaGraph_t graph;
	cudaGraphExec_t exec;

	CHECK(cudaMalloc(&v, n * sizeof(float)));
	CHECK(cudaMalloc(&w, n * sizeof(float)));
	CHECK(cudaMemset(v, 0, n * sizeof(float)));
	CHECK(cudaMemset(w, 0, n * sizeof(float)));
	CHECK(cudaStreamCreate(&s));
	CHECK(cudaStreamCreate(&other));
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	for (int k = 0; k < NODES; k++)
		step_kernel<<<n / 256, 256, 0, s>>>(v, n, 0.5f + 0.1f * k);
	CHECK(cudaStreamEndCapture(s, &graph));
	CHECK(cudaGraphInstantiate(&exec, graph, 0));
	for (int r = 0; r < REPLAYS; r++) {
		CHECK(cudaGraphLaunch(exec, s));
		step_kernel<<<n / 256, 256, 0, other>>>(w, n, 0.9f);
	}
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaGraphExecDestroy(exec));
	CHECK(cudaGraphDestroy(graph));
	CHECK(cudaFree(v));
	CHECK(cudaFree(w));
	printf("graph_launches=%d nodes=%d plain_launches=%d\n", REPLAYS, NODES, REPLAYS);
	return 0;
}
