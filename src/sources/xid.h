/* Event shared by xid.bpf.c and xid.c: one GPU error (Xid) the NVIDIA driver reported. */
#ifndef GRT_XID_H
#define GRT_XID_H

#define XID_DEV_LEN 32
#define XID_MSG_LEN 256

/* Field offsets of nvidia:nvidia_dev_xid from its format file (rodata). */
struct xid_layout {
	__u32 dev;		/* __data_loc */
	__u32 error_code;
	__u32 msg;		/* __data_loc */
};

struct xid_event {
	__u64 ts_ns;
	__u32 code;
	__u32 pid;
	__u32 tid;
	__u32 cpu;
	char dev[XID_DEV_LEN];
	char msg[XID_MSG_LEN];
};

#endif
