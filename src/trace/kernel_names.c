/* Names of syscall numbers, NVIDIA escape and UVM ioctl numbers, fence events. */
#include <string.h>
#include "trace/kernel_names.h"
#include "trace/records_kernel.h"
#include "trace/trace_names.h"

const char *grt_syscall_name(uint32_t nr)
{
	return nr < GRT_SYSCALL_TABLE_SIZE ? grt_syscall_names_x86_64[nr] : NULL;
}

int grt_syscall_nr(const char *name)
{
	for (int nr = 0; nr < GRT_SYSCALL_TABLE_SIZE; nr++)
		if (grt_syscall_names_x86_64[nr] && !strcmp(grt_syscall_names_x86_64[nr], name))
			return nr;
	return -1;
}

static const char *const nv_devices[] = {
	[GRT_NV_DEV_UNKNOWN] = "unknown",	   [GRT_NV_DEV_CTL] = "nvidiactl",
	[GRT_NV_DEV_GPU] = "nvidia-gpu",	   [GRT_NV_DEV_UVM] = "nvidia-uvm",
	[GRT_NV_DEV_UVM_TOOLS] = "nvidia-uvm-tools", [GRT_NV_DEV_MODESET] = "nvidia-modeset",
	[GRT_NV_DEV_OTHER] = "nvidia-other",
};

const char *grt_nv_device_name(uint32_t device)
{
	return GRT_NAME_OF(nv_devices, device);
}

/*
 * Escape numbers of the RM devices (nvidiactl, nvidiaN), re-declared from
 * NVIDIA's open kernel modules (nv_escape.h for the RM_* range 0x27..0x5f,
 * nv-ioctl-numbers.h for the OS range from 200).
 */
static const char *const nv_escapes[256] = {
	[0x27] = "NV_ESC_RM_ALLOC_MEMORY",
	[0x28] = "NV_ESC_RM_ALLOC_OBJECT",
	[0x29] = "NV_ESC_RM_FREE",
	[0x2a] = "NV_ESC_RM_CONTROL",
	[0x2b] = "NV_ESC_RM_ALLOC",
	[0x32] = "NV_ESC_RM_CONFIG_GET",
	[0x33] = "NV_ESC_RM_CONFIG_SET",
	[0x34] = "NV_ESC_RM_DUP_OBJECT",
	[0x35] = "NV_ESC_RM_SHARE",
	[0x37] = "NV_ESC_RM_CONFIG_GET_EX",
	[0x38] = "NV_ESC_RM_CONFIG_SET_EX",
	[0x39] = "NV_ESC_RM_I2C_ACCESS",
	[0x41] = "NV_ESC_RM_IDLE_CHANNELS",
	[0x4a] = "NV_ESC_RM_VID_HEAP_CONTROL",
	[0x4d] = "NV_ESC_RM_ACCESS_REGISTRY",
	[0x4e] = "NV_ESC_RM_MAP_MEMORY",
	[0x4f] = "NV_ESC_RM_UNMAP_MEMORY",
	[0x52] = "NV_ESC_RM_GET_EVENT_DATA",
	[0x54] = "NV_ESC_RM_ALLOC_CONTEXT_DMA2",
	[0x56] = "NV_ESC_RM_ADD_VBLANK_CALLBACK",
	[0x57] = "NV_ESC_RM_MAP_MEMORY_DMA",
	[0x58] = "NV_ESC_RM_UNMAP_MEMORY_DMA",
	[0x59] = "NV_ESC_RM_BIND_CONTEXT_DMA",
	[0x5c] = "NV_ESC_RM_EXPORT_OBJECT_TO_FD",
	[0x5d] = "NV_ESC_RM_IMPORT_OBJECT_FROM_FD",
	[0x5e] = "NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO",
	[0x5f] = "NV_ESC_RM_LOCKLESS_DIAGNOSTIC",
	[200] = "NV_ESC_CARD_INFO",
	[201] = "NV_ESC_REGISTER_FD",
	[206] = "NV_ESC_ALLOC_OS_EVENT",
	[207] = "NV_ESC_FREE_OS_EVENT",
	[209] = "NV_ESC_STATUS_CODE",
	[210] = "NV_ESC_CHECK_VERSION_STR",
	[211] = "NV_ESC_IOCTL_XFER_CMD",
	[212] = "NV_ESC_ATTACH_GPUS_TO_FD",
	[213] = "NV_ESC_QUERY_DEVICE_INTR",
	[214] = "NV_ESC_SYS_PARAMS",
	[215] = "NV_ESC_NUMA_INFO",
	[216] = "NV_ESC_SET_NUMA_STATUS",
	[217] = "NV_ESC_EXPORT_TO_DMABUF_FD",
	[218] = "NV_ESC_WAIT_OPEN_COMPLETE",
};

/* nvidia-uvm ioctl numbers (uvm_ioctl.h, uvm_linux_ioctl.h); plain numbers, not _IOC-encoded. */
static const char *const uvm_ioctls[80] = {
	[1] = "UVM_RESERVE_VA",
	[2] = "UVM_RELEASE_VA",
	[3] = "UVM_REGION_COMMIT",
	[4] = "UVM_REGION_DECOMMIT",
	[5] = "UVM_REGION_SET_STREAM",
	[6] = "UVM_SET_STREAM_RUNNING",
	[7] = "UVM_SET_STREAM_STOPPED",
	[9] = "UVM_RUN_TEST",
	[10] = "UVM_ADD_SESSION",
	[11] = "UVM_REMOVE_SESSION",
	[12] = "UVM_ENABLE_COUNTERS",
	[13] = "UVM_MAP_COUNTER",
	[14] = "UVM_CREATE_EVENT_QUEUE",
	[15] = "UVM_REMOVE_EVENT_QUEUE",
	[16] = "UVM_MAP_EVENT_QUEUE",
	[17] = "UVM_EVENT_CTRL",
	[18] = "UVM_REGISTER_MPS_SERVER",
	[19] = "UVM_REGISTER_MPS_CLIENT",
	[20] = "UVM_GET_GPU_UUID_TABLE",
	[23] = "UVM_CREATE_RANGE_GROUP",
	[24] = "UVM_DESTROY_RANGE_GROUP",
	[25] = "UVM_REGISTER_GPU_VASPACE",
	[26] = "UVM_UNREGISTER_GPU_VASPACE",
	[27] = "UVM_REGISTER_CHANNEL",
	[28] = "UVM_UNREGISTER_CHANNEL",
	[29] = "UVM_ENABLE_PEER_ACCESS",
	[30] = "UVM_DISABLE_PEER_ACCESS",
	[31] = "UVM_SET_RANGE_GROUP",
	[33] = "UVM_MAP_EXTERNAL_ALLOCATION",
	[34] = "UVM_FREE",
	[35] = "UVM_MEM_MAP",
	[36] = "UVM_DEBUG_ACCESS_MEMORY",
	[37] = "UVM_REGISTER_GPU",
	[38] = "UVM_UNREGISTER_GPU",
	[39] = "UVM_PAGEABLE_MEM_ACCESS",
	[40] = "UVM_PREVENT_MIGRATION_RANGE_GROUPS",
	[41] = "UVM_ALLOW_MIGRATION_RANGE_GROUPS",
	[42] = "UVM_SET_PREFERRED_LOCATION",
	[43] = "UVM_UNSET_PREFERRED_LOCATION",
	[44] = "UVM_ENABLE_READ_DUPLICATION",
	[45] = "UVM_DISABLE_READ_DUPLICATION",
	[46] = "UVM_SET_ACCESSED_BY",
	[47] = "UVM_UNSET_ACCESSED_BY",
	[51] = "UVM_MIGRATE",
	[53] = "UVM_MIGRATE_RANGE_GROUP",
	[54] = "UVM_ENABLE_SYSTEM_WIDE_ATOMICS",
	[55] = "UVM_DISABLE_SYSTEM_WIDE_ATOMICS",
	[56] = "UVM_TOOLS_INIT_EVENT_TRACKER",
	[57] = "UVM_TOOLS_SET_NOTIFICATION_THRESHOLD",
	[58] = "UVM_TOOLS_EVENT_QUEUE_ENABLE_EVENTS",
	[59] = "UVM_TOOLS_EVENT_QUEUE_DISABLE_EVENTS",
	[60] = "UVM_TOOLS_ENABLE_COUNTERS",
	[61] = "UVM_TOOLS_DISABLE_COUNTERS",
	[62] = "UVM_TOOLS_READ_PROCESS_MEMORY",
	[63] = "UVM_TOOLS_WRITE_PROCESS_MEMORY",
	[64] = "UVM_TOOLS_GET_PROCESSOR_UUID_TABLE",
	[65] = "UVM_MAP_DYNAMIC_PARALLELISM_REGION",
	[66] = "UVM_UNMAP_EXTERNAL",
	[67] = "UVM_TOOLS_FLUSH_EVENTS",
	[68] = "UVM_ALLOC_SEMAPHORE_POOL",
	[69] = "UVM_CLEAN_UP_ZOMBIE_RESOURCES",
	[70] = "UVM_PAGEABLE_MEM_ACCESS_ON_GPU",
	[71] = "UVM_POPULATE_PAGEABLE",
	[72] = "UVM_VALIDATE_VA_RANGE",
	[73] = "UVM_CREATE_EXTERNAL_RANGE",
	[74] = "UVM_MAP_EXTERNAL_SPARSE",
	[75] = "UVM_MM_INITIALIZE",
	[76] = "UVM_TOOLS_INIT_EVENT_TRACKER_V2",
	[77] = "UVM_TOOLS_GET_PROCESSOR_UUID_TABLE_V2",
	[78] = "UVM_ALLOC_DEVICE_P2P",
	[79] = "UVM_CLEAR_ALL_ACCESS_COUNTERS",
};

#define UVM_INITIALIZE 0x30000001u
#define UVM_DEINITIALIZE 0x30000002u
#define UVM_IS_8_SUPPORTED 2047u

static const char *uvm_op_name(uint32_t op)
{
	if (op == UVM_INITIALIZE)
		return "UVM_INITIALIZE";
	if (op == UVM_DEINITIALIZE)
		return "UVM_DEINITIALIZE";
	if (op == UVM_IS_8_SUPPORTED)
		return "UVM_IS_8_SUPPORTED";
	return op < 80 ? uvm_ioctls[op] : NULL;
}

const char *grt_nv_op_name(uint32_t device, uint32_t op)
{
	switch (device) {
	case GRT_NV_DEV_CTL:
	case GRT_NV_DEV_GPU:
		return op < 256 ? nv_escapes[op] : NULL;
	case GRT_NV_DEV_UVM:
	case GRT_NV_DEV_UVM_TOOLS:
		return uvm_op_name(op);
	default:
		return NULL;
	}
}

static const char *const fence_events[] = {
	[GRT_FENCE_INIT] = "init",	       [GRT_FENCE_EMIT] = "emit",
	[GRT_FENCE_ENABLE_SIGNAL] = "enable_signal", [GRT_FENCE_SIGNALED] = "signaled",
	[GRT_FENCE_DESTROY] = "destroy",       [GRT_FENCE_WAIT_START] = "wait_start",
	[GRT_FENCE_WAIT_END] = "wait_end",
};

const char *grt_fence_event_name(uint32_t event)
{
	return GRT_NAME_OF(fence_events, event);
}
