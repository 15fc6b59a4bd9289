/* BPF side of lost-event counting: a per-CPU counter bumped when a ring buffer is full. */
#ifndef GRT_DROP_COUNTER_BPF_H
#define GRT_DROP_COUNTER_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} dropped_events SEC(".maps");

static __always_inline void count_dropped_event(void)
{
	__u32 zero = 0;
	__u64 *count = bpf_map_lookup_elem(&dropped_events, &zero);

	if (count)
		*count += 1;
}

#endif
