/* `grtrace snoop uvm [--csv]`: unified-memory events live, printed by export/snoop_uvm. */
#include "cli/snoop.h"
#include "export/snoop_uvm.h"
#include "trace/records_uvm.h"

static void *open_uvm(FILE *out, bool csv)
{
	return snoop_uvm_new(out, csv);
}

static void print_uvm(void *state, const struct grt_record *rec, const struct grt_strings *strings,
		      uint64_t t0_ns)
{
	if (rec->hdr.type == GRT_REC_UVM_EVENT)
		snoop_uvm_print(state, rec->hdr.pid, rec->hdr.tid, rec->hdr.ts_ns, rec->payload,
				rec->hdr.payload_len);
}

static void close_uvm(void *state)
{
	snoop_uvm_free(state);
}

static const struct snoop_view uvm_view = {
	.name = "uvm",
	.sources = "uvm",
	.summary = "unified-memory faults, migrations, evictions, thrashing (UVM tools)",
	.open = open_uvm,
	.print_state = print_uvm,
	.close = close_uvm,
	.has_csv = true,
};

GRT_SNOOP_VIEW(uvm_view);
