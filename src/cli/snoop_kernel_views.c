/* `grtrace snoop syscall|fence|xid`: the kernel sources' live views, printed by export/snoop_kernel. */
#include <stdlib.h>
#include "cli/snoop.h"
#include "export/snoop_kernel.h"

/* The views print through snoop_kernel_print, which lays out its own columns. */
static void print_kernel(void *state, const struct grt_record *rec, const struct grt_strings *strings,
			 uint64_t t0_ns)
{
	snoop_kernel_print(state, rec, strings, t0_ns);
}

static void close_kernel(void *state)
{
	fflush(state);
}

#define KERNEL_VIEW(view_name, title)                                                              \
	static void *open_##view_name(FILE *out, bool csv)                                         \
	{                                                                                          \
		snoop_kernel_header(out, #view_name);                                              \
		return out;                                                                        \
	}                                                                                          \
	static const struct snoop_view view_name##_view = {                                        \
		.name = #view_name,                                                                \
		.sources = #view_name,                                                             \
		.summary = title,                                                                  \
		.open = open_##view_name,                                                          \
		.print_state = print_kernel,                                                       \
		.close = close_kernel,                                                             \
	};                                                                                         \
	GRT_SNOOP_VIEW(view_name##_view)

KERNEL_VIEW(syscall, "system calls with NVIDIA driver ioctls decoded");
KERNEL_VIEW(fence, "dma_fence life cycle and waits");
KERNEL_VIEW(xid, "NVIDIA GPU errors (Xid) as the driver reports them");
