/* `grtrace snoop gpu --bpf PROG.bpf.o -- CMD`: GPU eBPF ring events and printk lines live. */
#include "cli/snoop.h"
#include "common/clock.h"
#include "export/event_printer.h"
#include "trace/records_bpf.h"
#include "trace/records_core.h"

/*
 * The lines are parse's text lines of the same records: events with their
 * fields named from BTF, printk and puts lines, losses, and the source's
 * status lines (a program that could not be loaded says so here).
 */
static void *open_gpu(FILE *out, bool csv)
{
	(void)csv;
	return grt_event_printer_new(out, GRT_FORMAT_TEXT, grt_monotonic_ns());
}

static void print_gpu(void *state, const struct grt_record *rec,
		      const struct grt_strings *strings, uint64_t t0_ns)
{
	(void)t0_ns;
	switch (rec->hdr.type) {
	case GRT_REC_BPF_EVENT:
	case GRT_REC_BPF_PRINTK:
	case GRT_REC_BPF_LOST:
	case GRT_REC_SOURCE_STATUS:
		grt_event_printer_print(state, rec, strings);
		break;
	default:
		break;
	}
}

static void close_gpu(void *state)
{
	grt_event_printer_free(state);
}

static const struct snoop_view gpu_view = {
    .name = "gpu",
    .sources = "gpu",
    .summary = "GPU eBPF ring events and printk lines (--bpf PROG.bpf.o -- CMD ARGS)",
    .open = open_gpu,
    .print_state = print_gpu,
    .close = close_gpu,
    .launches = true,
};

GRT_SNOOP_VIEW(gpu_view);
