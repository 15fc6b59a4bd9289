/* The helpers a GPU eBPF program may call: ids, names, argument and return kinds. */
#ifndef GRT_GPUBPF_BPF_HELPERS_H
#define GRT_GPUBPF_BPF_HELPERS_H

#include <stdint.h>

enum gpubpf_arg {
	GPUBPF_ARG_NONE,
	GPUBPF_ARG_ANYTHING,	/* any initialized scalar */
	GPUBPF_ARG_MAP,		/* a map reference (&map) */
	GPUBPF_ARG_MAP_KEY,	/* key_size readable bytes: stack or map value */
	GPUBPF_ARG_MAP_VALUE,	/* value_size readable bytes: stack or map value */
	GPUBPF_ARG_MEM,		/* readable bytes, as many as the next argument says */
	GPUBPF_ARG_CONST_SIZE,	/* the size of the ARG_MEM before it: a known constant */
	GPUBPF_ARG_ALLOC_SIZE,	/* the size of a ring reservation: a known constant */
	GPUBPF_ARG_U64_OUT,	/* 8 writable bytes */
	GPUBPF_ARG_CTX_OR_NULL, /* the context, or 0 (bpftime's programs pass NULL) */
	GPUBPF_ARG_RING_MEM,	/* a ring reservation, released by the call */
	GPUBPF_ARG_STR,		/* readable bytes holding a NUL-terminated string */
	GPUBPF_ARG_OPTIONAL,	/* anything, or nothing (printk's unused arguments) */
};

enum gpubpf_ret {
	GPUBPF_RET_INTEGER,
	GPUBPF_RET_MAP_VALUE_OR_NULL,
	GPUBPF_RET_RING_MEM_OR_NULL,
	GPUBPF_RET_VOID,
};

/* Which maps a helper's ARG_MAP takes. */
enum gpubpf_map_class {
	GPUBPF_MAPS_DATA = 1, /* arrays and hashes */
	GPUBPF_MAPS_RING = 2, /* ring buffers */
};

struct gpubpf_helper {
	int32_t id;
	const char *name;
	enum gpubpf_ret ret;
	enum gpubpf_arg args[5];
	uint32_t maps; /* enum gpubpf_map_class bits */
};

/* The helper with that id, or NULL when it does not run on the GPU. */
const struct gpubpf_helper *gpubpf_helper_find(int32_t id);
/* Why a known helper does not run on the GPU (one line), or NULL. */
const char *gpubpf_helper_refusal(int32_t id);

#endif
