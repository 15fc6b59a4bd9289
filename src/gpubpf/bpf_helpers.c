/* The helpers a GPU eBPF program may call: ids, names, argument and return kinds. */
#include <stddef.h>
#include "gpubpf/bpf_helpers.h"
#include "gpubpf/gpu_abi.h"

#define A(x) GPUBPF_ARG_##x

static const struct gpubpf_helper helpers[] = {
    {GRT_BPF_FN_MAP_LOOKUP,
     "bpf_map_lookup_elem",
     GPUBPF_RET_MAP_VALUE_OR_NULL,
     {A(MAP), A(MAP_KEY)},
     GPUBPF_MAPS_DATA},
    {GRT_BPF_FN_MAP_UPDATE,
     "bpf_map_update_elem",
     GPUBPF_RET_INTEGER,
     {A(MAP), A(MAP_KEY), A(MAP_VALUE), A(ANYTHING)},
     GPUBPF_MAPS_DATA},
    {GRT_BPF_FN_MAP_DELETE,
     "bpf_map_delete_elem",
     GPUBPF_RET_INTEGER,
     {A(MAP), A(MAP_KEY)},
     GPUBPF_MAPS_DATA},
    {GRT_BPF_FN_KTIME_GET_NS, "bpf_ktime_get_ns", GPUBPF_RET_INTEGER, {0}, 0},
    {GRT_BPF_FN_TRACE_PRINTK,
     "bpf_trace_printk",
     GPUBPF_RET_INTEGER,
     {A(MEM), A(CONST_SIZE), A(OPTIONAL), A(OPTIONAL), A(OPTIONAL)},
     0},
    {GRT_BPF_FN_SMP_PROCESSOR_ID, "bpf_get_smp_processor_id", GPUBPF_RET_INTEGER, {0}, 0},
    {GRT_BPF_FN_GET_PID_TGID, "bpf_get_current_pid_tgid", GPUBPF_RET_INTEGER, {0}, 0},
    {GRT_BPF_FN_PERF_EVENT_OUTPUT,
     "bpf_perf_event_output",
     GPUBPF_RET_INTEGER,
     {A(CTX_OR_NULL), A(MAP), A(ANYTHING), A(MEM), A(CONST_SIZE)},
     GPUBPF_MAPS_RING},
    {GRT_BPF_FN_RINGBUF_OUTPUT,
     "bpf_ringbuf_output",
     GPUBPF_RET_INTEGER,
     {A(MAP), A(MEM), A(CONST_SIZE), A(ANYTHING)},
     GPUBPF_MAPS_RING},
    {GRT_BPF_FN_RINGBUF_RESERVE,
     "bpf_ringbuf_reserve",
     GPUBPF_RET_RING_MEM_OR_NULL,
     {A(MAP), A(ALLOC_SIZE), A(ANYTHING)},
     GPUBPF_MAPS_RING},
    {GRT_BPF_FN_RINGBUF_SUBMIT,
     "bpf_ringbuf_submit",
     GPUBPF_RET_VOID,
     {A(RING_MEM), A(ANYTHING)},
     0},
    {GRT_BPF_FN_RINGBUF_DISCARD,
     "bpf_ringbuf_discard",
     GPUBPF_RET_VOID,
     {A(RING_MEM), A(ANYTHING)},
     0},
    {GRT_BPF_FN_PUTS, "ebpf_puts", GPUBPF_RET_INTEGER, {A(STR)}, 0},
    {GRT_BPF_FN_GLOBALTIMER, "bpf_get_globaltimer", GPUBPF_RET_INTEGER, {0}, 0},
    {GRT_BPF_FN_BLOCK_IDX,
     "bpf_get_block_idx",
     GPUBPF_RET_INTEGER,
     {A(U64_OUT), A(U64_OUT), A(U64_OUT)},
     0},
    {GRT_BPF_FN_BLOCK_DIM,
     "bpf_get_block_dim",
     GPUBPF_RET_INTEGER,
     {A(U64_OUT), A(U64_OUT), A(U64_OUT)},
     0},
    {GRT_BPF_FN_THREAD_IDX,
     "bpf_get_thread_idx",
     GPUBPF_RET_INTEGER,
     {A(U64_OUT), A(U64_OUT), A(U64_OUT)},
     0},
    {GRT_BPF_FN_MEMBAR, "bpf_gpu_membar", GPUBPF_RET_INTEGER, {0}, 0},
    {GRT_BPF_FN_GRID_DIM,
     "bpf_get_grid_dim",
     GPUBPF_RET_INTEGER,
     {A(U64_OUT), A(U64_OUT), A(U64_OUT)},
     0},
    {GRT_BPF_FN_SM_ID, "bpf_get_sm_id", GPUBPF_RET_INTEGER, {0}, 0},
    {GRT_BPF_FN_WARP_ID, "bpf_get_warp_id", GPUBPF_RET_INTEGER, {0}, 0},
    {GRT_BPF_FN_LANE_ID, "bpf_get_lane_id", GPUBPF_RET_INTEGER, {0}, 0},
};

const struct gpubpf_helper *gpubpf_helper_find(int32_t id)
{
	for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++)
		if (helpers[i].id == id)
			return &helpers[i];
	return NULL;
}

const char *gpubpf_helper_refusal(int32_t id)
{
	if (id == GRT_BPF_FN_EXIT)
		return "helper 507 (exit) ends the application's thread: grtrace never changes "
		       "what a kernel does";
	return NULL;
}
