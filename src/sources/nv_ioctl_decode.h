/* Decoding an ioctl on an NVIDIA device file: which device, which driver operation, its key fields. */
#ifndef GRT_NV_IOCTL_DECODE_H
#define GRT_NV_IOCTL_DECODE_H

#include <stdint.h>
#include "trace/records_kernel.h"

/* What the BPF side captured about one ioctl on an NVIDIA-like character device. */
struct nv_ioctl_capture {
	const char *dev_name;	/* the file's name, "nvidiactl" */
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t request;	/* ioctl request as passed */
	uint32_t inner_cmd;	/* NV_ESC_IOCTL_XFER_CMD: the escape it carries */
	uint32_t arg_size;	/* declared parameter size (inner size for XFER) */
	const uint8_t *arg;	/* parameter bytes read after the call */
	uint32_t arg_len;
	int32_t arg_err;
};

/* Classifies a device file by name, then by NVIDIA's fixed major: enum grt_nv_device. */
uint32_t nv_device_classify(const char *name, uint32_t major, uint32_t minor);

/*
 * Fills device, dev_major/minor, op, object_class, control_cmd, handle,
 * rm_status and flags of out from cap. The caller fills the call's fields
 * (call_id, fd, request, ret, times, path_str).
 */
void nv_ioctl_decode(const struct nv_ioctl_capture *cap, struct grt_nv_ioctl_rec *out);

#endif
