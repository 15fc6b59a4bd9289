/* bpftime's kernelretsnoop, as its README describes it: every thread's exit time and index, as events. */
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>

#define BPF_MAP_TYPE_GPU_RINGBUF_MAP 1527

struct slot {
	char bytes[1024];
};

struct {
	__uint(type, BPF_MAP_TYPE_GPU_RINGBUF_MAP);
	__uint(max_entries, 16);
	__type(key, u32);
	__type(value, struct slot);
} exit_events SEC(".maps");

static const u64 (*bpf_get_globaltimer)(void) = (void *)502;
static const u64 (*bpf_get_thread_idx)(u64 *x, u64 *y, u64 *z) = (void *)505;

struct thread_exit {
	u64 x, y, z;
	u64 ns;
};

SEC("kretprobe/_Z9vectorAddPKfS0_Pf")
int snoop_exit()
{
	struct thread_exit e;

	bpf_get_thread_idx(&e.x, &e.y, &e.z);
	e.ns = bpf_get_globaltimer();
	bpf_perf_event_output(NULL, &exit_events, 0, &e, sizeof(e));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
