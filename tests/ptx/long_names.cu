// Corpus: C++ kernels with long mangled names (templates in nested namespaces), visible and not.
namespace outer_namespace_with_a_long_name {
namespace inner_namespace_also_fairly_long {
template <typename T, int N, typename U> struct holder {
	T v[N];
	U u;
};

template <typename T, int N, typename U>
__global__ void templated_kernel_with_a_very_long_name(holder<T, N, U> h, T *out)
{
	out[threadIdx.x % N] = h.v[threadIdx.x % N] + (T)h.u;
}

template __global__ void templated_kernel_with_a_very_long_name<float, 7, double>(
	holder<float, 7, double>, float *);
template __global__ void templated_kernel_with_a_very_long_name<int, 3, char>(holder<int, 3, char>,
									      int *);
} // namespace inner_namespace_also_fairly_long
} // namespace outer_namespace_with_a_long_name

// Internal linkage: a plain `.entry` without `.visible`.
static __global__ void hidden_kernel(int *out)
{
	out[threadIdx.x] = 1;
}

void *keep_hidden_kernel(void)
{
	return (void *)hidden_kernel;
}
