/* Writing GPU eBPF programs for grtrace: map types, helpers and contexts (after vmlinux.h, bpf_helpers.h). */
#ifndef GRT_GPU_BPF_H
#define GRT_GPU_BPF_H

/*
 * The conventions are bpftime's, so its programs load unchanged; this header
 * only names them. See docs/gpu-bpf.md.
 */

/* Map types that live in GPU memory. */
#define BPF_MAP_TYPE_PERGPUTD_ARRAY 1502 /* one value per GPU thread and key */
#define BPF_MAP_TYPE_GPU_ARRAY 1503	 /* one value per key, shared by every thread */
#define BPF_MAP_TYPE_GPU_RINGBUF 1527	 /* events for the host */

/* bpftime's GPU helpers. */
static long (*const ebpf_puts)(const char *s) = (void *)501;
static __u64 (*const bpf_get_globaltimer)(void) = (void *)502;
static long (*const bpf_get_block_idx)(__u64 *x, __u64 *y, __u64 *z) = (void *)503;
static long (*const bpf_get_block_dim)(__u64 *x, __u64 *y, __u64 *z) = (void *)504;
static long (*const bpf_get_thread_idx)(__u64 *x, __u64 *y, __u64 *z) = (void *)505;
static long (*const bpf_gpu_membar)(void) = (void *)506;
static long (*const bpf_get_grid_dim)(__u64 *x, __u64 *y, __u64 *z) = (void *)508;
static __u64 (*const bpf_get_sm_id)(void) = (void *)509;
static __u64 (*const bpf_get_warp_id)(void) = (void *)510;
static __u64 (*const bpf_get_lane_id)(void) = (void *)511;

/* The context of SEC("kprobe/KERNEL") and SEC("kretprobe/KERNEL") programs. */
struct grt_kernel_ctx {
	__u64 param[16]; /* the kernel's scalar parameters, zero-extended; others read 0 */
	__u32 kernel_id;
	__u32 reserved;
};

/* The context of SEC("kprobe/__memcapture") programs: the access about to happen. */
struct grt_mem_ctx {
	__u64 addr;
	__u32 size;
	__u32 flags; /* GRT_MEM_STORE, GRT_MEM_GENERIC */
	__u32 kernel_id;
	__u32 site; /* the access's number in its kernel */
};

#define GRT_MEM_STORE 1
#define GRT_MEM_GENERIC 2

#endif
