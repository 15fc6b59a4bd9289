/* Table-driven decoding of NVIDIA RM escapes and UVM ioctls from their captured parameter blocks. */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>
#include "sources/nv_ioctl_decode.h"

#define NV_MAJOR 195
#define NV_CTL_MINOR 255
#define NV_MODESET_MINOR 254
#define NV_IOCTL_MAGIC 'F'
#define NV_ESC_IOCTL_XFER_CMD 211

/*
 * Where an escape's parameter block keeps the fields worth reporting.
 * Offsets re-declared from NVIDIA's nvos.h (NVOSxx_PARAMETERS); -1 = absent.
 * param_size 0 matches any size; some escapes have two layouts told apart
 * by size (NVOS21 vs NVOS64 for RM_ALLOC).
 */
struct nv_escape_layout {
	uint32_t escape;
	uint32_t param_size;
	int class_at;
	int cmd_at;
	int handle_at;
	int status_at;
};

static const struct nv_escape_layout layouts[] = {
	{ 0x2b, 32, 12, -1, 8, 28 },	/* RM_ALLOC, NVOS21: hClass, hObjectNew, status */
	{ 0x2b, 48, 12, -1, 8, 40 },	/* RM_ALLOC, NVOS64 (with rights) */
	{ 0x2a, 0, -1, 8, 4, 28 },	/* RM_CONTROL, NVOS54: cmd, hObject, status */
	{ 0x29, 0, -1, -1, 8, 12 },	/* RM_FREE, NVOS00: hObjectOld, status */
	{ 0x27, 0, 12, -1, 8, 40 },	/* RM_ALLOC_MEMORY, NVOS02 (+fd) */
	{ 0x28, 0, 12, -1, 8, 16 },	/* RM_ALLOC_OBJECT, NVOS05 */
	{ 0x4e, 0, -1, -1, 8, 40 },	/* RM_MAP_MEMORY, NVOS33 (+fd): hMemory, status */
	{ 0x4f, 0, -1, -1, 8, 24 },	/* RM_UNMAP_MEMORY, NVOS34 */
};

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

uint32_t nv_device_classify(const char *name, uint32_t major, uint32_t minor)
{
	if (!strcmp(name, "nvidiactl"))
		return GRT_NV_DEV_CTL;
	if (!strcmp(name, "nvidia-uvm"))
		return GRT_NV_DEV_UVM;
	if (!strcmp(name, "nvidia-uvm-tools"))
		return GRT_NV_DEV_UVM_TOOLS;
	if (!strcmp(name, "nvidia-modeset"))
		return GRT_NV_DEV_MODESET;
	if (!strncmp(name, "nvidia", 6) && all_digits(name + 6))
		return GRT_NV_DEV_GPU;
	if (major == NV_MAJOR)
		return minor == NV_CTL_MINOR ? GRT_NV_DEV_CTL
		       : minor == NV_MODESET_MINOR ? GRT_NV_DEV_MODESET : GRT_NV_DEV_GPU;
	return GRT_NV_DEV_OTHER;
}

static const struct nv_escape_layout *layout_of(uint32_t escape, uint32_t size)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].escape == escape && (!layouts[i].param_size || layouts[i].param_size == size))
			return &layouts[i];
	return NULL;
}

/* Reads a u32 at off when the captured bytes hold it. */
static bool field_at(const struct nv_ioctl_capture *cap, int off, uint32_t *v)
{
	if (off < 0 || (uint32_t)off + 4 > cap->arg_len)
		return false;
	memcpy(v, cap->arg + off, 4);
	return true;
}

static void decode_rm(const struct nv_ioctl_capture *cap, struct grt_nv_ioctl_rec *out)
{
	const struct nv_escape_layout *l;

	if (((cap->request >> 8) & 0xff) != NV_IOCTL_MAGIC) {
		out->op = cap->request;
		return;
	}
	out->op = cap->request & 0xff;
	if (out->op == NV_ESC_IOCTL_XFER_CMD && !cap->arg_err) {
		out->op = cap->inner_cmd;
		out->flags |= GRT_NV_F_XFER;
	}
	if (cap->arg_err) {
		out->flags |= GRT_NV_F_ARG_UNREADABLE;
		return;
	}
	l = layout_of(out->op, cap->arg_size);
	if (!l)
		return;
	if (field_at(cap, l->class_at, &out->object_class))
		out->flags |= GRT_NV_F_CLASS;
	if (field_at(cap, l->cmd_at, &out->control_cmd))
		out->flags |= GRT_NV_F_CMD;
	if (field_at(cap, l->handle_at, &out->handle))
		out->flags |= GRT_NV_F_HANDLE;
	if (field_at(cap, l->status_at, &out->rm_status))
		out->flags |= GRT_NV_F_STATUS;
}

void nv_ioctl_decode(const struct nv_ioctl_capture *cap, struct grt_nv_ioctl_rec *out)
{
	out->device = nv_device_classify(cap->dev_name, cap->dev_major, cap->dev_minor);
	out->dev_major = cap->dev_major;
	out->dev_minor = cap->dev_minor;
	out->op = cap->request;
	out->object_class = out->control_cmd = out->handle = out->rm_status = 0;
	out->flags = 0;
	switch (out->device) {
	case GRT_NV_DEV_CTL:
	case GRT_NV_DEV_GPU:
		decode_rm(cap, out);
		break;
	default:
		/* nvidia-uvm numbers its ioctls plainly; the request is the operation */
		break;
	}
}
