/* BPF side of the traced-process filter every BPF source shares (one map per session). */
#ifndef GRT_PID_FILTER_BPF_H
#define GRT_PID_FILTER_BPF_H

/*
 * The session creates this map once and every source's copy is pointed at it
 * (bpf_map__reuse_fd), so a process added when it forks is traced by all.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);
} traced_tgids SEC(".maps");

/* false: trace every process (system-wide recording) */
const volatile bool filter_by_tgid = false;

static __always_inline bool tgid_is_traced(__u32 tgid)
{
	if (!filter_by_tgid)
		return true;
	return bpf_map_lookup_elem(&traced_tgids, &tgid) != NULL;
}

#endif
