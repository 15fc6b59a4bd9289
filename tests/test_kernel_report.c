/* The kernel report sections over a trace generated here: exact counts, times and rows. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "test_util.h"
#include "analysis/report_section.h"
#include "common/json_writer.h"
#include "trace/grt_reader.h"
#include "trace/grt_writer.h"
#include "trace/records_core.h"
#include "trace/records_kernel.h"

#define PID 100
#define MS 1000000ULL

static char trace_path[] = "/tmp/grt-kreport-XXXXXX";

static void put(struct grt_writer *w, uint16_t type, uint64_t ts, uint32_t tid, const void *p, uint32_t len)
{
	struct grt_event_origin o = { .ts_ns = ts, .pid = PID, .tid = tid };

	grt_writer_append(w, type, &o, p, len);
}

static void put_syscall(struct grt_writer *w, uint64_t ts, uint32_t nr, int64_t ret, uint64_t ns, uint32_t flags)
{
	struct grt_syscall_rec s = { .call_id = ts, .exit_ns = ts + ns, .ret = ret, .nr = nr, .flags = flags };

	put(w, GRT_REC_SYSCALL, ts, PID, &s, sizeof(s));
}

static void put_nv(struct grt_writer *w, uint64_t ts, uint32_t device, uint32_t op, uint32_t flags,
		   uint32_t detail, uint32_t status, uint64_t ns)
{
	struct grt_nv_ioctl_rec n = { .call_id = ts, .exit_ns = ts + ns, .ret = 0, .device = device, .op = op,
				      .flags = flags, .rm_status = status };

	if (flags & GRT_NV_F_CLASS)
		n.object_class = detail;
	if (flags & GRT_NV_F_CMD)
		n.control_cmd = detail;
	put(w, GRT_REC_NV_IOCTL, ts, PID, &n, sizeof(n));
}

static void put_fence(struct grt_writer *w, uint64_t ts, uint32_t event, uint32_t flags, uint64_t wait_ns,
		      uint32_t driver, uint32_t timeline)
{
	struct grt_fence_rec f = { .context = 3, .seqno = ts, .wait_ns = wait_ns, .event = event, .flags = flags,
				   .driver_str = driver, .timeline_str = timeline };

	put(w, GRT_REC_FENCE, ts, PID, &f, sizeof(f));
}

/* Everything the kernel sources write, in known amounts. */
static int write_trace(void)
{
	struct grt_file_header hdr = { .start_monotonic_ns = 1000 * MS, .clock_id = GRT_CLOCK_MONOTONIC };
	int fd = mkstemp(trace_path);
	struct grt_writer *w;
	uint64_t t = 1001 * MS;

	if (fd < 0)
		return -1;
	close(fd);
	w = grt_writer_open(trace_path, &hdr);
	if (!w)
		return -1;
	struct grt_process_rec proc = { .event = GRT_PROC_START, .comm_str = grt_writer_intern(w, "app") };
	put(w, GRT_REC_PROCESS, t, PID, &proc, sizeof(proc));
	for (int i = 0; i < 100; i++)
		put_syscall(w, t += 10000, 110, PID - 1, 1000, 0);		/* getppid */
	for (int i = 0; i < 3; i++)
		put_syscall(w, t += 10000, 16, -25, 500, 0);		/* ioctl, ENOTTY */
	put_syscall(w, t += 10000, 202, 0, 0, GRT_SYSCALL_F_UNFINISHED);	/* futex */
	for (int i = 0; i < 5; i++)
		put_nv(w, t += 10000, GRT_NV_DEV_CTL, 0x2b, GRT_NV_F_CLASS | GRT_NV_F_STATUS, 0xc86f, 0, 2000);
	put_nv(w, t += 10000, GRT_NV_DEV_GPU, 0x2a, GRT_NV_F_CMD | GRT_NV_F_STATUS, 0x20800a2b, 0x57, 3000);
	put_nv(w, t += 10000, GRT_NV_DEV_GPU, 0x2a, GRT_NV_F_CMD | GRT_NV_F_STATUS, 0x20800a2b, 0, 1000);
	put_nv(w, t += 10000, GRT_NV_DEV_UVM, 0x30000001, 0, 0, 0, 7000);
	struct grt_sched_offcpu_rec sleep = { .on_cpu_ns = t + 10000 + 200 * MS, .prev_state = 1 };
	put(w, GRT_REC_SCHED_OFFCPU, t += 10000, PID, &sleep, sizeof(sleep));
	struct grt_sched_offcpu_rec preempt = { .on_cpu_ns = t + 300 * MS + 5 * MS, .prev_state = 0 };
	put(w, GRT_REC_SCHED_OFFCPU, t += 300 * MS, PID + 1, &preempt, sizeof(preempt));
	uint32_t drv = grt_writer_intern(w, "nvidia-drm"), tl = grt_writer_intern(w, "tl-1");
	put_fence(w, t += MS, GRT_FENCE_INIT, 0, 0, drv, tl);
	put_fence(w, t += MS, GRT_FENCE_WAIT_START, 0, 0, drv, tl);
	put_fence(w, t += MS, GRT_FENCE_WAIT_END, GRT_FENCE_F_WAIT_MATCHED, 3 * MS, drv, tl);
	put_fence(w, t += MS, GRT_FENCE_WAIT_END, GRT_FENCE_F_WAIT_MATCHED, 1 * MS, drv, tl);
	put_fence(w, t += MS, GRT_FENCE_WAIT_END, 0, 0, drv, tl);
	put_fence(w, t += MS, GRT_FENCE_SIGNALED, 0, 0, drv, tl);
	for (int i = 0; i < 3; i++) {
		struct grt_xid_rec x = { .device = grt_pci_pack(0, 0x3b, 0, 0), .code = i < 2 ? 79 : 13,
					 .msg_str = grt_writer_intern(w, i ? "fallen off the bus" : "first"),
					 .dev_str = grt_writer_intern(w, "0000:3b:00.0") };
		put(w, GRT_REC_XID, t += 1000 * MS, PID, &x, sizeof(x));
	}
	for (int i = 1; i <= 3; i++) {
		struct grt_pcie_sample_rec p = { .device = 0, .pci = grt_pci_pack(0, 0x3b, 0, 0), .interval_ms = 100,
						 .flags = GRT_PCIE_F_PCIE, .pcie_tx_bps = i * 100000000ULL,
						 .pcie_rx_bps = 5000000 };
		put(w, GRT_REC_PCIE_SAMPLE, t += 100 * MS, 0, &p, sizeof(p));
	}
	struct grt_unsupported_probe_rec u = { .source = GRT_SRC_PCIE, .error = -95,
					       .probe_str = grt_writer_intern(w, "kprobe:nvlink_*"),
					       .reason_str = grt_writer_intern(w, "no kprobes") };
	put(w, GRT_REC_UNSUPPORTED_PROBE, t, 0, &u, sizeof(u));
	return grt_writer_close(w, GRT_END_TARGET_EXIT, t);
}

/* Runs one section over the trace and returns its JSON (caller frees) and, in text, its text. */
static char *run_section(const char *name, char **text)
{
	const struct report_section *sec = report_section_find(name);
	char err[256], *json = NULL;
	size_t json_len = 0, text_len = 0;
	struct grt_reader *r = grt_reader_open(trace_path, err, sizeof(err));
	struct report_input in;
	struct grt_record rec;
	struct json_writer w;
	FILE *out;
	void *state;

	*text = NULL;
	if (!sec || !r)
		return NULL;
	in = (struct report_input){ .header = grt_reader_header(r) };
	state = sec->create(&in);
	while (grt_reader_next(r, &rec) == GRT_READ_OK)
		sec->on_record(state, &rec, grt_reader_strings(r));
	out = open_memstream(&json, &json_len);
	jw_init(&w, out);
	sec->print_json(state, &w);
	fclose(out);
	out = open_memstream(text, &text_len);
	sec->print_text(state, out);
	fclose(out);
	sec->destroy(state);
	grt_reader_close(r);
	return json;
}

static void check_section(const char *name, const char *want_json, const char *want_text_part)
{
	char *text, *json = run_section(name, &text);

	CHECK_STR(json, want_json);
	CHECK(text && strstr(text, want_text_part));
	if (text && !strstr(text, want_text_part))
		printf("  %s text:\n%s\n", name, text);
	free(json);
	free(text);
}

static void test_syscalls_section(void)
{
	check_section("syscalls",
		      "[{\"pid\":100,\"comm\":\"app\",\"syscall\":\"getppid\",\"nr\":110,\"count\":100,\"total_ns\":100000,"
		      "\"max_ns\":1000,\"errors\":0,\"unfinished\":0},"
		      "{\"pid\":100,\"comm\":\"app\",\"syscall\":\"ioctl\",\"nr\":16,\"count\":3,\"total_ns\":1500,"
		      "\"max_ns\":500,\"errors\":3,\"unfinished\":0},"
		      "{\"pid\":100,\"comm\":\"app\",\"syscall\":\"futex\",\"nr\":202,\"count\":1,\"total_ns\":0,"
		      "\"max_ns\":0,\"errors\":0,\"unfinished\":1}]",
		      "Syscalls by process (total time)\n"
		      "       pid comm             syscall                  count     total_ms     avg_us       max_us  errors unfinished\n"
		      "       100 app              getppid                    100        0.100        1.0          1.0       0          0\n");
}

static void test_driver_section(void)
{
	check_section("driver",
		      "[{\"device\":\"nvidiactl\",\"op\":\"NV_ESC_RM_ALLOC\",\"class\":51311,\"count\":5,\"total_ns\":10000,"
		      "\"max_ns\":2000,\"failed\":0,\"rm_errors\":0},"
		      "{\"device\":\"nvidia-uvm\",\"op\":\"UVM_INITIALIZE\",\"count\":1,\"total_ns\":7000,\"max_ns\":7000,"
		      "\"failed\":0,\"rm_errors\":0},"
		      "{\"device\":\"nvidia-gpu\",\"op\":\"NV_ESC_RM_CONTROL\",\"cmd\":545262123,\"count\":2,\"total_ns\":4000,"
		      "\"max_ns\":3000,\"failed\":1,\"rm_errors\":1}]",
		      "GPU driver calls (ioctls on NVIDIA devices, total time)\n"
		      "  device           operation                            detail                count    total_ms    avg_us     max_us  failed\n");
}

static void test_offcpu_section(void)
{
	check_section("offcpu",
		      "[{\"pid\":100,\"tid\":100,\"comm\":\"app\",\"switches\":1,\"offcpu_ns\":200000000,"
		      "\"sleep_ns\":200000000,\"preempted_ns\":0,\"max_ns\":200000000},"
		      "{\"pid\":100,\"tid\":101,\"comm\":\"app\",\"switches\":1,\"offcpu_ns\":5000000,"
		      "\"sleep_ns\":0,\"preempted_ns\":5000000,\"max_ns\":5000000}]",
		      "Off-CPU time per thread\n"
		      "       pid      tid comm             switches    offcpu_ms     sleep_ms     max_ms   preempted_ms\n"
		      "       100      100 app                     1      200.000      200.000    200.000          0.000\n");
}

static void test_fences_section(void)
{
	check_section("fences",
		      "{\"events\":{\"init\":1,\"emit\":0,\"enable_signal\":0,\"signaled\":1,\"destroy\":0,"
		      "\"wait_start\":1,\"wait_end\":3},\"waits\":[{\"driver\":\"nvidia-drm\",\"timeline\":\"tl-1\","
		      "\"count\":2,\"total_ns\":4000000,\"p50_ns\":1000000,\"p99_ns\":3000000,\"max_ns\":3000000,"
		      "\"unpaired\":1}]}",
		      "\n  driver           timeline                   waits    total_ms     p50_us     p99_us     max_us  unpaired\n"
		      "  nvidia-drm       tl-1                           2       4.000     1000.0     3000.0     3000.0         1\n");
}

static void test_xid_section(void)
{
	char *text, *json = run_section("xid", &text);

	CHECK(json && strstr(json, "{\"dev\":\"0000:3b:00.0\",\"xid\":79,\"count\":2,"));
	CHECK(json && strstr(json, "\"last_msg\":\"fallen off the bus\"}"));
	CHECK(json && strstr(json, "{\"dev\":\"0000:3b:00.0\",\"xid\":13,\"count\":1,"));
	CHECK(text && strstr(text, "GPU errors (Xid): 3\n"
				   "  device           xid   count    first_s     last_s  last_message\n"));
	free(json);
	free(text);
}

static void test_pcie_section(void)
{
	check_section("pcie",
		      "{\"gpus\":[{\"device\":0,\"pci\":\"0000:3b:00.0\",\"samples\":3,"
		      "\"pcie_tx\":{\"avg_bps\":200000000,\"max_bps\":300000000},"
		      "\"pcie_rx\":{\"avg_bps\":5000000,\"max_bps\":5000000},\"nvlink_tx\":null,\"nvlink_rx\":null}],"
		      "\"config_accesses\":[],\"unsupported\":[{\"source\":\"pcie\",\"probe\":\"kprobe:nvlink_*\","
		      "\"reason\":\"no kprobes\"}]}",
		      "not available: kprobe:nvlink_* (pcie): no kprobes");
}

int main(void)
{
	if (write_trace()) {
		printf("FAIL - cannot write the test trace\n");
		return 1;
	}
	RUN_TEST(test_syscalls_section);
	RUN_TEST(test_driver_section);
	RUN_TEST(test_offcpu_section);
	RUN_TEST(test_fences_section);
	RUN_TEST(test_xid_section);
	RUN_TEST(test_pcie_section);
	unlink(trace_path);
	return TEST_EXIT_STATUS();
}
