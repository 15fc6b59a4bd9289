/* Telling grtrace's own records (flags, or __grt_ kernel names in older traces) from the program's. */
#include <string.h>
#include "analysis/own_work.h"
#include "analysis/report_util.h"
#include "trace/records_cuda.h"
#include "trace/records_gpu.h"

void own_work_init(struct own_work *o)
{
	memset(o, 0, sizeof(*o));
	u64_map_init(&o->own_handles);
}

void own_work_destroy(struct own_work *o)
{
	u64_map_destroy(&o->own_handles);
}

bool own_kernel_name(const char *name)
{
	return name && !strncmp(name, GRT_OWN_KERNEL_PREFIX, strlen(GRT_OWN_KERNEL_PREFIX));
}

static uint64_t handle_key(uint32_t pid, uint64_t handle)
{
	return handle ^ ((uint64_t)pid << 40) ^ ((uint64_t)pid * 0x9e3779b97f4a7c15ULL);
}

static bool own_named(struct own_work *o, const struct grt_record *rec,
		      const struct grt_strings *strings)
{
	uint32_t type = rec->hdr.type, name = 0;
	uint64_t handle = 0;

	switch (type) {
	case GRT_REC_CUDA_LAUNCH:
		name = ((const struct grt_cuda_launch_rec *)rec->payload)->kernel_str;
		handle = ((const struct grt_cuda_launch_rec *)rec->payload)->function;
		break;
	case GRT_REC_CUDA_FUNC_NAME:
		name = ((const struct grt_cuda_func_name_rec *)rec->payload)->name_str;
		handle = ((const struct grt_cuda_func_name_rec *)rec->payload)->handle;
		if (own_kernel_name(grt_strings_get(strings, name))) {
			u64_map_put(&o->own_handles, handle_key(rec->hdr.pid, handle), 1);
			return true;
		}
		return false;
	case GRT_REC_GPU_KERNEL:
		name = ((const struct grt_gpu_kernel_rec *)rec->payload)->kernel_str;
		break;
	case GRT_REC_GPU_LAUNCH:
		name = ((const struct grt_gpu_launch_rec *)rec->payload)->kernel_str;
		break;
	case GRT_REC_GPU_INSTRUMENT:
		name = ((const struct grt_gpu_instrument_rec *)rec->payload)->kernel_str;
		break;
	default:
		return false;
	}
	if (name && own_kernel_name(grt_strings_get(strings, name)))
		return true;
	return handle && u64_map_get(&o->own_handles, handle_key(rec->hdr.pid, handle), NULL);
}

static bool own_flagged(const struct grt_record *rec)
{
	const struct grt_cuda_call *call = report_cuda_call(rec);

	if (call)
		return call->flags & GRT_CUDA_F_OWN;
	switch (rec->hdr.type) {
	case GRT_REC_GPU_KERNEL:
		return ((const struct grt_gpu_kernel_rec *)rec->payload)->flags & GRT_GPU_F_OWN;
	case GRT_REC_GPU_COPY:
		return ((const struct grt_gpu_copy_rec *)rec->payload)->flags & GRT_GPU_F_OWN;
	case GRT_REC_GPU_LAUNCH:
		return ((const struct grt_gpu_launch_rec *)rec->payload)->flags & GRT_GPU_F_OWN;
	default:
		return false;
	}
}

bool own_work_record(struct own_work *o, const struct grt_record *rec,
		     const struct grt_strings *strings)
{
	bool own = own_flagged(rec) || own_named(o, rec, strings);

	o->records += own;
	return own;
}
