/* serve's exposition: the writer's exact text in both formats, Accept negotiation, the metric
 * families of a known snapshot, and top's rows (rates, percentiles, busiest kernel, sorting). */
#include <stdlib.h>
#include <string.h>
#include "test_util.h"
#include "export/prom_text.h"
#include "serve/metrics.h"
#include "serve/top_rows.h"
#include "trace/records_cuda.h"
#include "trace/records_kernel.h"
#include "serve/xid_counts.h"

static char *render(enum prom_format format, void (*fn)(struct prom_writer *w))
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	struct prom_writer w;

	prom_writer_init(&w, out, format);
	fn(&w);
	prom_finish(&w);
	fclose(out);
	return text;
}

static void one_counter_and_histogram(struct prom_writer *w)
{
	struct prom_label labels[] = {{"pid", "7"}, {"comm", "a\"b\\c\nd"}};
	const double bounds[] = {0.5, 1};
	const uint64_t counts[] = {2, 3};

	prom_family(w, "x_events", PROM_COUNTER, "Events \\ seen\nhere.");
	prom_sample_u64(w, "", labels, 2, 42);
	prom_family(w, "x_seconds", PROM_HISTOGRAM, "Durations.");
	prom_histogram(w, labels, 1, bounds, counts, 2, 6, 2.5);
}

static void test_text_format_exact(void)
{
	char *text = render(PROM_TEXT_004, one_counter_and_histogram);

	CHECK_STR(text, "# HELP x_events_total Events \\\\ seen\\nhere.\n"
			"# TYPE x_events_total counter\n"
			"x_events_total{pid=\"7\",comm=\"a\\\"b\\\\c\\nd\"} 42\n"
			"# HELP x_seconds Durations.\n"
			"# TYPE x_seconds histogram\n"
			"x_seconds_bucket{pid=\"7\",le=\"0.5\"} 2\n"
			"x_seconds_bucket{pid=\"7\",le=\"1\"} 5\n"
			"x_seconds_bucket{pid=\"7\",le=\"+Inf\"} 6\n"
			"x_seconds_sum{pid=\"7\"} 2.5\n"
			"x_seconds_count{pid=\"7\"} 6\n");
	free(text);
}

static void test_openmetrics_exact(void)
{
	char *text = render(PROM_OPENMETRICS_1, one_counter_and_histogram);

	static const char head[] = "# HELP x_events Events \\\\ seen\\nhere.\n"
				   "# TYPE x_events counter\n"
				   "x_events_total{";

	CHECK(!strncmp(text, head, strlen(head)));
	CHECK(strstr(text, "x_seconds_count{pid=\"7\"} 6\n# EOF\n") != NULL);
	free(text);
}

static void test_accept_negotiation(void)
{
	static const struct {
		const char *accept;
		enum prom_format want;
	} cases[] = {
	    {NULL, PROM_TEXT_004},
	    {"", PROM_TEXT_004},
	    {"*/*", PROM_TEXT_004},
	    {"text/plain;version=0.0.4", PROM_TEXT_004},
	    {"application/openmetrics-text", PROM_OPENMETRICS_1},
	    {"application/openmetrics-text; version=1.0.0", PROM_OPENMETRICS_1},
	    /* what Prometheus 2.42 sends */
	    {"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
	     "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
	     PROM_OPENMETRICS_1},
	    {"text/plain, application/openmetrics-text;q=0", PROM_TEXT_004},
	    {"application/openmetrics-textual", PROM_TEXT_004},
	    {"APPLICATION/OpenMetrics-Text;q=0.2", PROM_OPENMETRICS_1},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_EQ_U64(prom_format_for_accept(cases[i].accept), cases[i].want);
}

/* A process with known counters: two kernels, one API, memory and copies. */
static void fill_proc(struct serve_proc_snapshot *p, struct serve_kernel_count *k,
		      struct serve_api_count *a, uint64_t scale)
{
	memset(p, 0, sizeof(*p));
	p->pid = 4242;
	strcpy(p->comm, "train");
	p->stats.launches = 1000 * scale;
	p->stats.sync_wait_ns = 500000000ull * scale;
	p->stats.alloc_bytes[GRT_ALLOC_DEVICE] = 4096;
	p->stats.in_use_bytes[GRT_ALLOC_DEVICE] = 1024;
	p->stats.alloc_bytes[GRT_ALLOC_HOST] = 100;
	p->stats.in_use_bytes[GRT_ALLOC_HOST] = 100;
	p->stats.copy_bytes[GRT_COPY_HTOD] = 2000000000ull * scale;
	p->stats.copies[GRT_COPY_HTOD] = 2 * scale;
	k[0] = (struct serve_kernel_count){"gemm", 700 * scale};
	k[1] = (struct serve_kernel_count){"relu", 300 * scale * scale};
	p->kernels = k;
	p->nkernels = 2;
	memset(a, 0, sizeof(*a));
	a->api = GRT_CUDA_LAUNCH_KERNEL;
	a->stats.calls = a->stats.returns = 100 * scale;
	a->stats.duration_ns = 150000 * scale;
	a->stats.hist[10] = 98 * scale; /* [1024, 2048) ns */
	a->stats.hist[20] = 2 * scale;	/* [~1 ms, ~2 ms) */
	p->apis = a;
	p->napis = 1;
}

static void test_families_of_a_snapshot(void)
{
	struct serve_kernel_count k[2];
	struct serve_api_count a;
	struct serve_proc_snapshot p;
	struct serve_snapshot s = {.procs = &p, .nprocs = 1, .leaking_processes = 1};
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	fill_proc(&p, k, &a, 1);
	s.leaked_bytes[GRT_ALLOC_DEVICE] = 555;
	serve_metrics_write(out, PROM_TEXT_004, &s);
	fclose(out);
	CHECK(strstr(text, "grtrace_cuda_launches_total{pid=\"4242\",comm=\"train\",kernel=\"gemm\"} 700\n"));
	CHECK(strstr(text, "grtrace_cuda_api_calls_total{pid=\"4242\",comm=\"train\",api=\"cuLaunchKernel\"} 100\n"));
	/* hist[10] ends at 2^11 ns: the second bound; the first (2^10) holds nothing */
	CHECK(strstr(text, "grtrace_cuda_api_duration_seconds_bucket{pid=\"4242\",comm=\"train\",api=\"cuLaunchKernel\",le=\"1.024e-06\"} 0\n"));
	CHECK(strstr(text, "grtrace_cuda_api_duration_seconds_bucket{pid=\"4242\",comm=\"train\",api=\"cuLaunchKernel\",le=\"2.048e-06\"} 98\n"));
	CHECK(strstr(text, "grtrace_cuda_api_duration_seconds_bucket{pid=\"4242\",comm=\"train\",api=\"cuLaunchKernel\",le=\"0.002097152\"} 100\n"));
	CHECK(strstr(text, "grtrace_cuda_api_duration_seconds_count{pid=\"4242\",comm=\"train\",api=\"cuLaunchKernel\"} 100\n"));
	CHECK(strstr(text, "grtrace_cuda_api_duration_seconds_sum{pid=\"4242\",comm=\"train\",api=\"cuLaunchKernel\"} 0.00015\n"));
	CHECK(strstr(text, "grtrace_cuda_memory_in_use_bytes{pid=\"4242\",comm=\"train\",kind=\"device\"} 1024\n"));
	CHECK(strstr(text, "grtrace_cuda_memory_in_use_bytes{pid=\"4242\",comm=\"train\",kind=\"host\"} 100\n"));
	CHECK(strstr(text, "grtrace_cuda_memcpy_bytes_total{pid=\"4242\",comm=\"train\",direction=\"htod\"} 2000000000\n"));
	CHECK(!strstr(text, "direction=\"dtoh\""));
	CHECK(strstr(text, "grtrace_cuda_sync_wait_seconds_total{pid=\"4242\",comm=\"train\"} 0.5\n"));
	CHECK(strstr(text, "grtrace_cuda_leaked_bytes_total{kind=\"device\"} 555\n"));
	CHECK(strstr(text, "grtrace_cuda_leaking_processes_total 1\n"));
	CHECK(!strstr(text, "grtrace_gpu_pcie")); /* no NVML, no device families */
	free(text);
}

/* NVML gauges: each family only where a GPU has the reading, scaled to ratios and watts. */
static void test_device_families(void)
{
	struct serve_snapshot s = {.ndevices = 2};
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	s.devices[0] = (struct serve_device){
	    .device = 0, .pci = grt_pci_pack(0, 0x3b, 0, 0), .flags = GRT_PCIE_F_PCIE,
	    .pcie_tx_bps = 1024000, .pcie_rx_bps = 256000000,
	    .gauges = {.flags = NVML_G_UTILIZATION | NVML_G_MEMORY | NVML_G_POWER,
		       .gpu_util_pct = 37, .mem_util_pct = 12, .power_mw = 123456,
		       .mem_used_bytes = 1ull << 30, .mem_total_bytes = 80ull << 30}};
	s.devices[1] = (struct serve_device){
	    .device = 1, .pci = grt_pci_pack(0, 0x86, 0, 0),
	    .gauges = {.flags = NVML_G_MEMORY, .mem_used_bytes = 5, .mem_total_bytes = 16}};
	serve_metrics_write(out, PROM_TEXT_004, &s);
	fclose(out);
	CHECK(strstr(text, "# TYPE grtrace_gpu_utilization_ratio gauge\n"
			   "grtrace_gpu_utilization_ratio{device=\"0\",pci=\"0000:3b:00.0\"} 0.37\n"
			   "# HELP"));
	CHECK(strstr(text, "grtrace_gpu_memory_utilization_ratio{device=\"0\",pci=\"0000:3b:00.0\"} 0.12\n"));
	CHECK(strstr(text, "grtrace_gpu_memory_used_bytes{device=\"0\",pci=\"0000:3b:00.0\"} 1073741824\n"
			   "grtrace_gpu_memory_used_bytes{device=\"1\",pci=\"0000:86:00.0\"} 5\n"));
	CHECK(strstr(text, "grtrace_gpu_memory_total_bytes{device=\"1\",pci=\"0000:86:00.0\"} 16\n"));
	CHECK(strstr(text, "grtrace_gpu_power_watts{device=\"0\",pci=\"0000:3b:00.0\"} 123.456\n"
			   "# HELP"));
	CHECK(strstr(text, "grtrace_gpu_pcie_rx_bytes_per_second{device=\"0\",pci=\"0000:3b:00.0\"} 256000000\n"));
	CHECK(!strstr(text, "device=\"1\",pci=\"0000:86:00.0\"} 0")); /* nothing it lacks */
	CHECK(!strstr(text, "nvlink")); /* no GPU has NVLink: no family */
	CHECK(!strstr(text, "grtrace_uvm")); /* -s uvm off: no UVM families */
	free(text);
}

/* UVM families: processes with a tracker only, every side and direction. */
static void test_uvm_families(void)
{
	struct serve_proc_snapshot p[2] = {
	    {.pid = 7, .comm = "train", .uvm_bound = true,
	     .uvm = {.faults = {72, 1383}, .migrated_bytes = {16777216, 4096, 0}}},
	    {.pid = 8, .comm = "idle"},
	};
	struct serve_snapshot s = {.procs = p, .nprocs = 2, .uvm_counted = true};
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	s.health.lost_uvm = 3;
	serve_metrics_write(out, PROM_TEXT_004, &s);
	fclose(out);
	CHECK(strstr(text, "# TYPE grtrace_uvm_faults_total counter\n"
			   "grtrace_uvm_faults_total{pid=\"7\",comm=\"train\",processor=\"cpu\"} 72\n"
			   "grtrace_uvm_faults_total{pid=\"7\",comm=\"train\",processor=\"gpu\"} 1383\n"
			   "# HELP"));
	CHECK(strstr(text, "grtrace_uvm_migrated_bytes_total{pid=\"7\",comm=\"train\",direction=\"htod\"} 16777216\n"
			   "grtrace_uvm_migrated_bytes_total{pid=\"7\",comm=\"train\",direction=\"dtoh\"} 4096\n"
			   "grtrace_uvm_migrated_bytes_total{pid=\"7\",comm=\"train\",direction=\"dtod\"} 0\n"));
	CHECK(!strstr(text, "grtrace_uvm_faults_total{pid=\"8\""));
	CHECK(strstr(text, "grtrace_events_lost_total{source=\"uvm\"} 3\n"));
	free(text);
}

static void test_quantiles(void)
{
	uint64_t hist[AGG_HIST_BUCKETS] = {0};

	CHECK(top_hist_quantile_us(hist, 0.5) < 0);
	hist[10] = 100; /* all in [1024, 2048) ns */
	CHECK(top_hist_quantile_us(hist, 0.5) > 1.535 && top_hist_quantile_us(hist, 0.5) < 1.537);
	hist[20] = 100; /* half in [1048576, 2097152) ns */
	CHECK(top_hist_quantile_us(hist, 0.99) > 2076.0 && top_hist_quantile_us(hist, 0.99) < 2077.0);
}

static void test_top_rows(void)
{
	struct serve_kernel_count k0[2], k1[2];
	struct serve_api_count a0, a1;
	struct serve_proc_snapshot p0, p1[2];
	struct serve_snapshot s0 = {.taken_ns = 1000000000ull, .procs = &p0, .nprocs = 1};
	struct serve_snapshot s1 = {.taken_ns = 3000000000ull, .procs = p1, .nprocs = 2};
	struct top_row *rows;
	char line[256];
	long n;

	fill_proc(&p0, k0, &a0, 1);
	fill_proc(&p1[0], k1, &a1, 2);
	p1[1] = (struct serve_proc_snapshot){.pid = 9999, .exited = true};
	p0.uvm_bound = p1[0].uvm_bound = true;
	p0.uvm.faults[UVM_FAULTS_CPU] = 10;
	p1[0].uvm.faults[UVM_FAULTS_CPU] = 40;
	p1[0].uvm.faults[UVM_FAULTS_GPU] = 70;
	n = top_rows_compute(&s0, &s1, &rows);
	CHECK_EQ_U64(n, 1); /* the exited process is not shown */
	CHECK_EQ_U64(rows[0].pid, 4242);
	CHECK(rows[0].launches_per_s == 500);	   /* 1000 more in 2 s */
	CHECK(rows[0].copy_gbps == 1);		   /* 2 GB more in 2 s */
	CHECK(rows[0].sync_share == 0.25);	   /* 0.5 s waited in 2 s */
	CHECK_EQ_U64(rows[0].device_bytes, 1024); /* pinned host memory left out */
	CHECK_STR(rows[0].busiest, "relu");	   /* +900 against gemm's +700 */
	CHECK(rows[0].api_p50_us > 1.0 && rows[0].api_p50_us < 2.1);
	CHECK(rows[0].api_p99_us > 1000 && rows[0].api_p99_us < 2100);
	top_format_row(&rows[0], line, sizeof(line));
	CHECK(!strncmp(line, "   4242 train                   500 ", 36));
	CHECK(rows[0].uvm_faults_per_s == 50); /* 100 more faults, CPU and GPU, in 2 s */
	CHECK(strstr(line, "1.0KiB    1.000     25        50  relu") != NULL);
	free(rows);
	p1[0].uvm_bound = false; /* no tracker: no UVM rate */
	n = top_rows_compute(&s0, &s1, &rows);
	CHECK(rows[0].uvm_faults_per_s < 0);
	top_format_row(&rows[0], line, sizeof(line));
	CHECK(strstr(line, "1.0KiB    1.000     25         -  relu") != NULL);
	free(rows);
	n = top_rows_compute(NULL, &s1, &rows);
	CHECK_EQ_U64(n, 1);
	CHECK(rows[0].launches_per_s == 0 && rows[0].api_p99_us < 0); /* no rates on the first screen */
	free(rows);
}

static void test_sorting(void)
{
	struct top_row rows[3] = {
	    {.pid = 3, .launches_per_s = 10, .device_bytes = 300},
	    {.pid = 1, .launches_per_s = 30, .device_bytes = 100},
	    {.pid = 2, .launches_per_s = 20, .device_bytes = 200},
	};

	top_rows_sort(rows, 3, TOP_SORT_LAUNCHES);
	CHECK(rows[0].pid == 1 && rows[1].pid == 2 && rows[2].pid == 3);
	top_rows_sort(rows, 3, TOP_SORT_MEMORY);
	CHECK(rows[0].pid == 3 && rows[1].pid == 2 && rows[2].pid == 1);
	top_rows_sort(rows, 3, TOP_SORT_PID);
	CHECK(rows[0].pid == 1 && rows[1].pid == 2 && rows[2].pid == 3);
	CHECK(top_sort_for_key('m') == TOP_SORT_MEMORY && top_sort_for_key('x') == -1);
	CHECK(top_sort_for_key('u') == TOP_SORT_UVM);
	CHECK_STR(top_sort_name(TOP_SORT_UVM), "UVM faults/s");
}

/* Xid records as the xid source emits them, counted per GPU and code, and their family. */
static void test_xid_counts(void)
{
	struct xid_counts *x = xid_counts_new();
	struct grt_strings *strings = grt_strings_new();
	struct grt_xid_rec r = {.code = 79, .dev_str = 1};
	struct grt_record rec = {.hdr = {.type = GRT_REC_XID, .payload_len = sizeof(r)}, .payload = &r};
	struct serve_snapshot s = {.xid_counted = true};
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	grt_strings_set(strings, 1, "0000:3b:00.0");
	xid_counts_on_record(x, &rec, strings);
	xid_counts_on_record(x, &rec, strings);
	r.code = 13;
	xid_counts_on_record(x, &rec, strings);
	r.dev_str = 0; /* no device string: still counted */
	xid_counts_on_record(x, &rec, strings);
	rec.hdr.type = GRT_REC_DROP; /* other records are ignored */
	xid_counts_on_record(x, &rec, strings);
	s.nxids = xid_counts_get(x, s.xids, SERVE_MAX_XIDS);
	CHECK_EQ_U64(s.nxids, 3);
	out = open_memstream(&text, &len);
	serve_metrics_write(out, PROM_TEXT_004, &s);
	fclose(out);
	CHECK(strstr(text, "grtrace_xid_errors_total{device=\"0000:3b:00.0\",xid=\"79\"} 2\n"));
	CHECK(strstr(text, "grtrace_xid_errors_total{device=\"0000:3b:00.0\",xid=\"13\"} 1\n"));
	CHECK(strstr(text, "grtrace_xid_errors_total{device=\"unknown\",xid=\"13\"} 1\n"));
	free(text);
	xid_counts_stop(x);
	grt_strings_free(strings);
}

int main(void)
{
	RUN_TEST(test_text_format_exact);
	RUN_TEST(test_openmetrics_exact);
	RUN_TEST(test_accept_negotiation);
	RUN_TEST(test_families_of_a_snapshot);
	RUN_TEST(test_device_families);
	RUN_TEST(test_uvm_families);
	RUN_TEST(test_quantiles);
	RUN_TEST(test_top_rows);
	RUN_TEST(test_sorting);
	RUN_TEST(test_xid_counts);
	return TEST_EXIT_STATUS();
}
