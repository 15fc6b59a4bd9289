/* Tests of the uvm record description, the `uvm` report section and the snoop CSV. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "analysis/report_section.h"
#include "export/snoop_uvm.h"
#include "sources/uvm_decode.h"
#include "trace/grt_reader.h"
#include "trace/grt_writer.h"
#include "trace/record_desc.h"
#include "trace/records_uvm.h"
#include "test_util.h"

static const struct uvm_clock_map no_offset = {0};

static void put(struct grt_writer *w, uint32_t pid, const void *entry, enum uvm_queue_version v)
{
	struct uvm_decoded d;
	struct grt_event_origin o;

	CHECK_EQ_U64(uvm_decode_entry(entry, v, pid, &no_offset, &d), 0);
	o = (struct grt_event_origin){.ts_ns = d.ts_ns, .pid = pid, .tid = d.tid};
	CHECK_EQ_U64(grt_writer_append(w, GRT_REC_UVM_EVENT, &o, &d.rec, sizeof(d.rec)), 0);
}

static void migration(struct grt_writer *w, uint32_t pid, uint16_t src, uint16_t dst, uint64_t addr,
		      uint64_t bytes, uint8_t cause, uint64_t begin, uint64_t end,
		      uint64_t gpu_begin, uint64_t gpu_end)
{
	struct uvm_ev_migration_v2 m = {.type = UVM_EV_MIGRATION,
					.cause = cause,
					.src = src,
					.dst = dst,
					.address = addr,
					.bytes = bytes,
					.begin_ts = begin,
					.end_ts = end,
					.begin_gpu_ts = gpu_begin,
					.end_gpu_ts = gpu_end};

	put(w, pid, &m, UVM_QUEUE_V2);
}

/* Two processes: 100 moves 3 MiB in and 1 MiB out and thrashes; 200 faults and is evicted. */
static char *write_trace(void)
{
	static char path[] = "/tmp/grt_uvm_report_XXXXXX";
	struct grt_file_header h = {0};
	struct grt_writer *w;
	int fd = mkstemp(path);

	close(fd);
	w = grt_writer_open(path, &h);
	CHECK(w != NULL);
	/* windows [1000,3000] and [2500,4500] overlap; the end-less one adds none; [6000,6100]
	 * stands alone */
	migration(w, 100, 0, 1, 0x10000000, 2 << 20, UVM_MIGRATION_CAUSE_COHERENCE, 1000, 3000, 0,
		  0);
	migration(w, 100, 0, 1, 0x10200000, 1 << 20, UVM_MIGRATION_CAUSE_PREFETCH, 2500, 4500, 0,
		  0);
	migration(w, 100, 1, 0, 0x10000000, 1 << 20, UVM_MIGRATION_CAUSE_COHERENCE, 5000, 0, 0, 0);
	migration(w, 100, 1, 2, 0x10000000, 4096, UVM_MIGRATION_CAUSE_USER, 6000, 6100, 500, 530);
	for (int i = 0; i < 3; i++) {
		struct uvm_ev_thrashing_v2 t = {.type = UVM_EV_THRASHING_DETECTED,
						.address = 0x10000000,
						.size = 2 << 20,
						.ts = 7000 + i};

		put(w, 100, &t, UVM_QUEUE_V2);
	}
	{
		struct uvm_ev_thrashing_v2 t = {.type = UVM_EV_THRASHING_DETECTED,
						.address = 0x10400000,
						.size = 65536,
						.ts = 7100};
		struct uvm_ev_cpu_fault c = {.type = UVM_EV_CPU_FAULT,
					     .access = UVM_ACCESS_READ,
					     .address = 0x20000000,
					     .ts = 8000,
					     .pid = 200,
					     .tid = 201};
		struct uvm_ev_gpu_fault_v2 g = {.type = UVM_EV_GPU_FAULT,
						.access = UVM_ACCESS_WRITE,
						.gpu = 1,
						.address = 0x20001000,
						.ts = 8100};
		struct uvm_ev_eviction_v2 e = {.type = UVM_EV_EVICTION,
					       .src = 1,
					       .dst = 0,
					       .address_out = 0x20000000,
					       .address_in = 0x30000000,
					       .size = 2 << 20,
					       .ts = 9000};

		put(w, 100, &t, UVM_QUEUE_V2);
		put(w, 200, &c, UVM_QUEUE_V2);
		put(w, 200, &g, UVM_QUEUE_V2);
		put(w, 200, &g, UVM_QUEUE_V2);
		put(w, 200, &e, UVM_QUEUE_V2);
	}
	CHECK_EQ_U64(grt_writer_close(w, GRT_END_TARGET_EXIT, 10000), 0);
	return path;
}

static char *run_section(const char *path, bool json)
{
	const struct report_section *sec = report_section_find("uvm");
	struct report_input in = {.top_n = 5, .json = json};
	char err[256], *text = NULL;
	struct grt_reader *r = grt_reader_open(path, err, sizeof(err));
	struct grt_record rec;
	struct json_writer w;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	void *state;

	CHECK(sec != NULL && r != NULL);
	if (!sec || !r)
		return NULL;
	in.header = grt_reader_header(r);
	state = sec->create(&in);
	while (grt_reader_next(r, &rec) == GRT_READ_OK)
		sec->on_record(state, &rec, grt_reader_strings(r));
	if (json) {
		jw_init(&w, out);
		sec->print_json(state, &w);
	} else {
		sec->print_text(state, out);
	}
	fclose(out);
	sec->destroy(state);
	grt_reader_close(r);
	return text;
}

static void test_report_json_numbers(void)
{
	char *path = write_trace();
	char *json = run_section(path, true);

	CHECK(json != NULL);
	if (json) {
		/*
		 * pid 100: 3 MiB in (1 MiB prefetched), 1 MiB out, 4 KiB peer. Copy time: 2000 +
		 * 2000 (CPU windows, no GPU stamps) + 30 (GPU stamps win over the 100 ns window);
		 * in flight [1000,4500] + [6000,6100].
		 */
		CHECK(strstr(json, "\"pid\":100,") != NULL);
		CHECK(strstr(json, "\"migrated_bytes\":{\"htod\":3145728,\"dtoh\":1048576,\"dtod\":"
				   "4096,\"htoh\":0,"
				   "\"prefetched\":1048576}") != NULL);
		CHECK(
		    strstr(json, "\"migrations\":{\"htod\":2,\"dtoh\":1,\"dtod\":1,\"htoh\":0}") !=
		    NULL);
		CHECK(strstr(json, "\"migration_ns\":4030,\"migration_wall_ns\":3600,") != NULL);
		CHECK(strstr(json, "\"thrashing\":4,") != NULL);
		/* the region hit three times comes first */
		CHECK(strstr(json,
			     "\"thrashing_regions\":[{\"address\":268435456,\"bytes\":2097152,"
			     "\"events\":3},"
			     "{\"address\":272629760,\"bytes\":65536,\"events\":1}]") != NULL);
		/* pid 200: one CPU read fault, two GPU write faults, one 2 MiB eviction */
		CHECK(
		    strstr(
			json,
			"\"pid\":200,\"faults\":{\"cpu\":1,\"gpu\":2,\"gpu_replay\":0,\"fatal\":0,"
			"\"gpu_by_access\":{\"other\":0,\"read\":0,\"write\":2,") != NULL);
		CHECK(strstr(json, "\"evictions\":1,\"evicted_bytes\":2097152") != NULL);
		CHECK(strstr(json, "\"events\":12,") != NULL);
	}
	free(json);
	unlink(path);
}

static void test_report_text(void)
{
	char *path = write_trace();
	char *text = run_section(path, false);

	CHECK(text != NULL);
	if (text) {
		CHECK(strstr(text, "Unified memory (uvm): 12 events") != NULL);
		CHECK(strstr(text, "host->device 3.00 MiB (2)  device->host 1.00 MiB (1)") != NULL);
		CHECK(strstr(text, "driver prefetch moved 1.00 MiB of that (both ways)") != NULL);
		CHECK(strstr(text, "time in migrations: 0.004 ms copying on the GPU, 0.004 ms with "
				   "a migration in flight") != NULL);
		CHECK(strstr(text, "thrashing regions: 0x10000000 2.00 MiB  3 events") != NULL);
		CHECK(strstr(text, "faults: cpu 1 (read 1, write 0)  gpu 2 (read 0, write 2") !=
		      NULL);
	}
	free(text);
	unlink(path);
}

static void test_snoop_csv(void)
{
	char *path = write_trace(), *text = NULL, err[256];
	struct grt_reader *r = grt_reader_open(path, err, sizeof(err));
	struct grt_record rec;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	struct snoop_uvm *p = snoop_uvm_new(out, true);

	while (r && grt_reader_next(r, &rec) == GRT_READ_OK)
		if (rec.hdr.type == GRT_REC_UVM_EVENT)
			snoop_uvm_print(p, rec.hdr.pid, rec.hdr.tid, rec.hdr.ts_ns, rec.payload,
					rec.hdr.payload_len);
	CHECK_EQ_U64(snoop_uvm_events(p), 12);
	snoop_uvm_free(p);
	fclose(out);
	CHECK(!strncmp(text, SNOOP_UVM_CSV_HEADER "\n", strlen(SNOOP_UVM_CSV_HEADER) + 1));
	/* first row is time 0; the 2 MiB migration spans its range and lasted 2 us */
	CHECK(strstr(text, "\n0.000,migration,100,0,100,0x10000000,0x10200000,2097152,512,cpu,gpu1,"
			   "coherence,2.000,\n"));
	CHECK(strstr(text, "\n0.005,migration,100,0,100,0x10000000,0x10001000,4096,1,gpu1,gpu2,"
			   "user,0.100,0.030\n"));
	/* an end-less (asynchronous) migration leaves dur_us empty */
	CHECK(strstr(text, "\n0.004,migration,100,0,100,0x10000000,0x10100000,1048576,256,gpu1,cpu,"
			   "coherence,,\n"));
	CHECK(
	    strstr(text, "\n0.007,cpu_fault,200,201,200,0x20000000,0x20000000,0,0,cpu,-,read,,\n"));
	CHECK(strstr(text, ",eviction,200,0,200,0x20000000,0x20200000,2097152,512,gpu1,cpu,-,,\n"));
	free(text);
	grt_reader_close(r);
	unlink(path);
}

/* The generic describe() (parse) sees the extension fields too. */
static void test_describe_registered(void)
{
	const struct grt_record_desc *d = grt_record_desc_by_name("uvm");

	CHECK(d != NULL);
	if (d) {
		CHECK_EQ_U64(d->type, GRT_REC_UVM_EVENT);
		CHECK_EQ_U64(d->min_len, 48);
	}
	CHECK_STR(grt_uvm_kind_name(GRT_UVM_MIGRATION), "migration");
	CHECK_STR(grt_uvm_kind_name(99), "unknown");
	CHECK_STR(grt_uvm_cause_name(GRT_UVM_MIGRATION, 3), "prefetch");
	CHECK_STR(grt_uvm_cause_name(GRT_UVM_GPU_FAULT, 4), "prefetch");
	CHECK_STR(grt_uvm_cause_name(GRT_UVM_QUEUE_OVERFLOW, 3), "gpu_fault");
}

int main(void)
{
	RUN_TEST(test_report_json_numbers);
	RUN_TEST(test_report_text);
	RUN_TEST(test_snoop_csv);
	RUN_TEST(test_describe_registered);
	return TEST_EXIT_STATUS();
}
