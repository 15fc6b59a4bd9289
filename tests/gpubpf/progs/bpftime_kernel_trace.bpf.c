/* bpftime's kernel_trace, as its README describes it: one thread's entry, with indices and time, to a GPU ring. */
#define BPF_NO_GLOBAL_DATA
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>

#define BPF_MAP_TYPE_GPU_RINGBUF_MAP 1527

struct entry_event {
	u64 bx, by, bz;
	u64 tx, ty, tz;
	u64 when;
};

struct {
	__uint(type, BPF_MAP_TYPE_GPU_RINGBUF_MAP);
	__uint(max_entries, 16);
	__type(key, u32);
	__type(value, struct entry_event);
} entries SEC(".maps");

static const u64 (*bpf_get_globaltimer)(void) = (void *)502;
static const u64 (*bpf_get_block_idx)(u64 *x, u64 *y, u64 *z) = (void *)503;
static const u64 (*bpf_get_thread_idx)(u64 *x, u64 *y, u64 *z) = (void *)505;

SEC("kprobe/_Z9vectorAddPKfS0_Pfi")
int trace_first_thread()
{
	struct entry_event e = {};

	bpf_get_block_idx(&e.bx, &e.by, &e.bz);
	bpf_get_thread_idx(&e.tx, &e.ty, &e.tz);
	if (e.bx | e.by | e.bz | e.tx | e.ty | e.tz)
		return 0;
	e.when = bpf_get_globaltimer();
	bpf_perf_event_output(NULL, &entries, 0, &e, sizeof(e));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
