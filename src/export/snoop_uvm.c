/* Printer behind `grtrace snoop uvm`: one line per unified-memory event, text or CSV. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "export/snoop_uvm.h"
#include "trace/grt_format.h"
#include "trace/records_uvm.h"

struct snoop_uvm {
	struct grt_sink sink; /* first: the session hands us &p->sink */
	FILE *out;
	bool csv;
	bool header_done;
	uint64_t first_ns;
	uint64_t events;
};

static struct snoop_uvm *of_sink(struct grt_sink *sink)
{
	return (struct snoop_uvm *)sink;
}

static void print_header(struct snoop_uvm *p)
{
	if (p->csv)
		fprintf(p->out, "%s\n", SNOOP_UVM_CSV_HEADER);
	else
		fprintf(p->out, "%-11s %8s %8s %-18s %-37s %10s %-11s %-11s %s\n", "time_ms",
			"pid", "owner", "event", "address_range", "bytes", "src>dst", "cause",
			"duration_us");
	p->header_done = true;
}

void snoop_uvm_print(struct snoop_uvm *p, uint32_t pid, uint32_t tid, uint64_t ts_ns,
		     const void *payload, uint32_t len)
{
	const struct grt_uvm_event_rec *e = payload;
	char src[16], dst[16], dur[32] = "", gpu[32] = "", route[40];
	uint64_t end;
	double ms;

	if (len < sizeof(*e))
		return;
	if (!p->header_done)
		print_header(p);
	if (!p->events++)
		p->first_ns = ts_ns;
	ms = ts_ns >= p->first_ns ? (double)(ts_ns - p->first_ns) / 1e6
				  : -(double)(p->first_ns - ts_ns) / 1e6;
	end = e->address + e->bytes;
	if (e->flags & GRT_UVM_F_HAS_END)
		snprintf(dur, sizeof(dur), "%.3f",
			 e->end_ns >= ts_ns ? (double)(e->end_ns - ts_ns) / 1e3 : 0.0);
	if (e->kind == GRT_UVM_MIGRATION && len >= sizeof(struct grt_uvm_event_full)) {
		const struct grt_uvm_event_ext *x =
		    &((const struct grt_uvm_event_full *)payload)->ext;

		if (x->gpu_ts_ns && x->aux > x->gpu_ts_ns)
			snprintf(gpu, sizeof(gpu), "%.3f", (double)(x->aux - x->gpu_ts_ns) / 1e3);
	}
	if (p->csv) {
		fprintf(p->out,
			"%.3f,%s,%u,%u,%u,0x%" PRIx64 ",0x%" PRIx64 ",%" PRIu64 ",%" PRIu64
			",%s,%s,%s,%s,%s\n",
			ms, grt_uvm_kind_name(e->kind), pid, tid, e->owner_pid, e->address, end,
			e->bytes, (e->bytes + 4095) / 4096,
			grt_uvm_processor_name(e->src_processor, src, sizeof(src)),
			grt_uvm_processor_name(e->dst_processor, dst, sizeof(dst)),
			grt_uvm_cause_name(e->kind, e->cause), dur, gpu);
		return;
	}
	snprintf(route, sizeof(route), "%s>%s",
		 grt_uvm_processor_name(e->src_processor, src, sizeof(src)),
		 grt_uvm_processor_name(e->dst_processor, dst, sizeof(dst)));
	fprintf(p->out,
		"%-11.3f %8u %8u %-18s 0x%016" PRIx64 "-0x%016" PRIx64 " %10" PRIu64
		" %-11s %-11s %s\n",
		ms, pid, e->owner_pid, grt_uvm_kind_name(e->kind), e->address, end, e->bytes, route,
		grt_uvm_cause_name(e->kind, e->cause), dur[0] ? dur : "-");
}

static int sink_append(struct grt_sink *sink, uint16_t type, const struct grt_event_origin *origin,
		       const void *payload, uint32_t len)
{
	struct snoop_uvm *p = of_sink(sink);

	if (type == GRT_REC_UVM_EVENT)
		snoop_uvm_print(p, origin->pid, origin->tid, origin->ts_ns, payload, len);
	return 0;
}

static uint32_t sink_intern(struct grt_sink *sink, const char *text)
{
	return 0; /* the uvm lines carry no strings */
}

static int sink_drop(struct grt_sink *sink, uint32_t source, uint64_t count, uint64_t ts_ns)
{
	/* stderr: the CSV on stdout stays machine-readable */
	fprintf(stderr, "grtrace: note: %" PRIu64 " events lost (source %u)\n", count, source);
	return 0;
}

struct snoop_uvm *snoop_uvm_new(FILE *out, bool csv)
{
	struct snoop_uvm *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->sink =
	    (struct grt_sink){.append = sink_append, .intern = sink_intern, .drop = sink_drop};
	p->out = out;
	p->csv = csv;
	return p;
}

struct grt_sink *snoop_uvm_sink(struct snoop_uvm *p)
{
	return &p->sink;
}

uint64_t snoop_uvm_events(const struct snoop_uvm *p)
{
	return p->events;
}

void snoop_uvm_free(struct snoop_uvm *p)
{
	if (p)
		fflush(p->out);
	free(p);
}
