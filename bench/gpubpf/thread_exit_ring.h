/* The ring of the ring benchmark and its experiments: one 32-byte event per thread at exit. */
#ifndef GRT_BENCH_THREAD_EXIT_RING_H
#define GRT_BENCH_THREAD_EXIT_RING_H

struct thread_exit {
	u64 x, y, z;
	u64 ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_GPU_RINGBUF);
	__uint(max_entries, 16);
	__type(key, u32);
	__type(value, struct thread_exit);
} exits SEC(".maps");

#endif
