/* Perfetto export content: job slices with their tags, flows, lanes, counters, instants. */
#include <stdio.h>
#include "export/perfetto.h"
#include "jobs_trace.h"
#include "test_util.h"

#define PID 500
#define TID 501

static char *export_trace(const char *path, struct perfetto_stats *st)
{
	struct job_thresholds t;
	char *buf = NULL, err[256] = "";
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	int rc;

	job_thresholds_default(&t);
	rc = perfetto_json_export(path, out, &t, st, err, sizeof(err));
	fclose(out);
	CHECK_EQ_U64(rc, 0);
	return buf;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void test_job_slice_tags_and_flow(void)
{
	struct tw t;
	struct perfetto_stats st;
	char *out;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_launch(&t, PID, TID, 1000, 2000, 0x10, "queued_kernel");
	tw_gpu_kernel(&t, PID, TID, 1000, 900000, 1000000, 0x10, 0, "queued_kernel", 0);
	tw_ctx_sync(&t, PID, TID, 3000, 1001000);
	tw_close(&t);
	out = export_trace(t.path, &st);
	/* the flow leaves the launch call and enters the kernel, bound by the job's id */
	CHECK(strstr(out, "{\"ph\":\"X\",\"name\":\"queued_kernel\",\"pid\":1000000000,\"tid\":1,"
			  "\"ts\":900,\"dur\":100,\"cat\":\"kernel\",\"bind_id\":1,\"flow_in\":true,"
			  "\"args\":{\"job\":1,\"tags\":\"queue-wait\",\"t_submit_host_us\":1,"
			  "\"t_queue_us\":898,") != NULL);
	CHECK(strstr(out, "{\"ph\":\"X\",\"name\":\"cuLaunchKernel\",\"pid\":500,\"tid\":501,\"ts\":1,"
			  "\"dur\":1,\"bind_id\":1,\"flow_out\":true,\"args\":{\"kernel\":\"queued_kernel\"}}")
	      != NULL);
	/* a sync call became no job: no flow */
	CHECK(strstr(out, "\"name\":\"cuCtxSynchronize\",\"pid\":500,\"tid\":501,\"ts\":3,\"dur\":998,"
			  "\"args\":{\"sync\":") != NULL);
	CHECK_EQ_U64(count(out, "\"flow_out\""), 1);
	CHECK_EQ_U64(count(out, "\"flow_in\""), 1);
	CHECK(strstr(out, "\"ph\":\"s\"") == NULL && strstr(out, "\"ph\":\"f\"") == NULL);
	CHECK(strstr(out, "\"name\":\"process_name\",\"pid\":1000000000,\"tid\":0,\"ts\":0,\"args\":"
			  "{\"name\":\"GPU 0\"}") != NULL);
	CHECK_EQ_U64(st.jobs, 1);
	CHECK_EQ_U64(st.flows, 1);
	free(out);
	unlink(t.path);
}

/* Graph nodes run at once on one stream: each overlap gets a lane, so every track nests. */
static void test_overlapping_nodes_get_lanes(void)
{
	struct tw t;
	struct perfetto_stats st;
	char *out;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_graph(&t, PID, TID, 1000, 2000, 0x10, 0xabc);
	tw_gpu_kernel(&t, PID, TID, 1000, 3000, 9000, 0x10, 0, "a", 5);
	tw_gpu_kernel(&t, PID, TID, 1000, 4000, 8000, 0x10, 0, "b", 5);
	tw_gpu_kernel(&t, PID, TID, 1000, 9000, 10000, 0x10, 0, "c", 5);
	tw_ctx_sync(&t, PID, TID, 3000, 11000);
	tw_close(&t);
	out = export_trace(t.path, &st);
	CHECK(strstr(out, "\"name\":\"a\",\"pid\":1000000000,\"tid\":1,") != NULL);
	CHECK(strstr(out, "\"name\":\"b\",\"pid\":1000000000,\"tid\":2,") != NULL);
	CHECK(strstr(out, "\"name\":\"c\",\"pid\":1000000000,\"tid\":1,") != NULL);
	CHECK(strstr(out, "(overlap 1)") != NULL);
	CHECK_EQ_U64(st.flows, 3);
	CHECK_EQ_U64(count(out, "\"group\":1"), 3);
	/* one flow leaves the graph launch and fans out to its three nodes */
	CHECK(strstr(out, "\"name\":\"cuGraphLaunch\",\"pid\":500,\"tid\":501,\"ts\":1,\"dur\":1,"
			  "\"bind_id\":1,\"flow_out\":true") != NULL);
	CHECK_EQ_U64(count(out, "\"bind_id\":1,\"flow_in\":true"), 3);
	free(out);
	unlink(t.path);
}

static void test_counters_and_instants(void)
{
	struct tw t;
	struct perfetto_stats st;
	struct grt_cuda_alloc_rec a = { .call = { .return_ns = 1500, .api = GRT_CUDA_MEM_ALLOC_V2 },
					.addr = 0x7000, .bytes = 1 << 20, .kind = GRT_ALLOC_DEVICE };
	struct grt_cuda_free_rec f = { .call = { .return_ns = 2500, .api = GRT_CUDA_MEM_FREE_V2 },
				       .addr = 0x7000, .kind = GRT_ALLOC_DEVICE };
	struct grt_xid_rec x = { .code = 79 };
	struct grt_pcie_sample_rec p = { .device = 1, .flags = GRT_PCIE_F_PCIE, .pcie_tx_bps = 1000,
					 .pcie_rx_bps = 2000 };
	char *out;

	tw_open(&t, SRC_HOST_AND_GPU | (1u << GRT_SRC_UVM) | (1u << GRT_SRC_SCHED));
	tw_rec(&t, GRT_REC_CUDA_ALLOC, PID, TID, 1000, &a, sizeof(a));
	tw_rec(&t, GRT_REC_CUDA_FREE, PID, TID, 2000, &f, sizeof(f));
	tw_uvm(&t, PID, 3000, 4000, GRT_UVM_MIGRATION);
	tw_rec(&t, GRT_REC_XID, 0, 0, 5000, &x, sizeof(x));
	tw_offcpu(&t, PID, TID, 6000, 7000);
	tw_rec(&t, GRT_REC_PCIE_SAMPLE, 0, 0, 8000, &p, sizeof(p));
	tw_close(&t);
	out = export_trace(t.path, &st);
	CHECK(strstr(out, "{\"ph\":\"C\",\"name\":\"device memory in use\",\"pid\":500,\"tid\":0,"
			  "\"ts\":1,\"args\":{\"bytes\":1048576}}") != NULL);
	CHECK(strstr(out, "\"name\":\"device memory in use\",\"pid\":500,\"tid\":0,\"ts\":2.5,"
			  "\"args\":{\"bytes\":0}") != NULL);
	CHECK(strstr(out, "\"name\":\"UVM migrated\",\"pid\":500,\"tid\":0,\"ts\":3,"
			  "\"args\":{\"bytes\":4096}") != NULL);
	CHECK(strstr(out, "{\"ph\":\"i\",\"name\":\"Xid 79\",\"pid\":0,\"tid\":0,\"ts\":5,\"s\":\"g\"") != NULL);
	CHECK(strstr(out, "{\"ph\":\"X\",\"name\":\"off-CPU (preempted)\",\"pid\":500,\"tid\":1073742325,"
			  "\"ts\":6,\"dur\":1}") != NULL);
	CHECK(strstr(out, "\"name\":\"off-CPU 501\"") != NULL);
	/* allocation calls carry no args: no empty object */
	CHECK(strstr(out, "\"name\":\"cuMemAlloc_v2\",\"pid\":500,\"tid\":501,\"ts\":1,\"dur\":0.5}")
	      != NULL);
	CHECK(strstr(out, "\"args\":{}") == NULL);
	CHECK(strstr(out, "{\"ph\":\"C\",\"name\":\"PCIe throughput\",\"pid\":1000000001,\"tid\":0,"
			  "\"ts\":8,\"args\":{\"tx_bytes_per_s\":1000,\"rx_bytes_per_s\":2000}}") != NULL);
	CHECK(strstr(out, "\"args\":{\"name\":\"GPU 1\"}") != NULL);
	CHECK(strstr(out, "NVLink") == NULL);
	free(out);
	unlink(t.path);
}

int main(void)
{
	RUN_TEST(test_job_slice_tags_and_flow);
	RUN_TEST(test_overlapping_nodes_get_lanes);
	RUN_TEST(test_counters_and_instants);
	return TEST_EXIT_STATUS();
}
