/* NCCL kernels as named jobs: their collective, the collective-wait tag, host and device basis, verdict lines. */
#include <string.h>
#include "jobs_trace.h"
#include "report_check.h"
#include "test_util.h"
#include "trace/records_nccl.h"

#define KERNEL "ncclDevKernel_AllReduce_Sum_f32_RING_LL"

static void tw_rank(struct tw *t, uint32_t pid, uint64_t comm, uint32_t rank, uint64_t ctx)
{
	struct grt_nccl_comm_rec c = { .return_ns = 1100, .comm = comm, .comm_id = 0x77,
				       .nranks = 2, .rank = rank };
	struct grt_cuda_context_rec retain = { .call = tw_call(GRT_CUDA_DEVICE_PRIMARY_CTX_RETAIN, 510, 0),
					       .ctx = ctx, .device = (int32_t)rank, .op = GRT_CTX_RETAIN };
	struct grt_cuda_context_rec set = { .call = tw_call(GRT_CUDA_CTX_SET_CURRENT, 610, 0),
					    .ctx = ctx, .device = -1, .op = GRT_CTX_SET };

	tw_rec(t, GRT_REC_CUDA_CONTEXT, pid, pid, 500, &retain, sizeof(retain));
	tw_rec(t, GRT_REC_CUDA_CONTEXT, pid, pid, 600, &set, sizeof(set));
	tw_rec(t, GRT_REC_NCCL_COMM, pid, pid, 1000, &c, GRT_NCCL_COMM_MIN_LEN);
}

/* An all-reduce entered at ts, its kernel launched 10 ns later; start 0: no device record. */
static void tw_all_reduce(struct tw *t, uint32_t pid, uint64_t ts, uint64_t comm, uint64_t start)
{
	struct grt_nccl_coll_rec c = { .return_ns = ts + 50, .op = GRT_NCCL_ALL_REDUCE,
				       .comm = comm, .count = 1024, .bytes = 4096, .datatype = 7,
				       .root = -1 };

	tw_rec(t, GRT_REC_NCCL_COLL, pid, pid, ts, &c, sizeof(c));
	tw_launch(t, pid, pid, ts + 10, ts + 20, 0, KERNEL);
	if (start)
		tw_gpu_kernel(t, pid, pid, ts + 10, start, start + 1000, 0, pid == 10 ? 0 : 1, KERNEL, 0);
}

/*
 * Rank 0 (pid 10, device 0) and rank 1 (pid 20, device 1). #1: rank 1 enters
 * 2 us after rank 0; #2: rank 1 is 40 ms late; #3: rank 0 is 3 us late.
 * Jobs are numbered in order of the launches: 1 and 2 are #1, 3 and 4 #2, 5 (rank 1) and 6 #3.
 */
static void write_host_only(struct tw *t)
{
	tw_open(t, SRC_HOST_ONLY | 1u << GRT_SRC_NCCL);
	tw_rank(t, 10, 0xa0, 0, 0xb0000);
	tw_rank(t, 20, 0xb0, 1, 0xb1000);
	tw_all_reduce(t, 10, 10000, 0xa0, 0);
	tw_all_reduce(t, 20, 12000, 0xb0, 0);
	tw_all_reduce(t, 10, 100000, 0xa0, 0);
	tw_all_reduce(t, 20, 40100000, 0xb0, 0);
	tw_all_reduce(t, 20, 50000000, 0xb0, 0);
	tw_all_reduce(t, 10, 50003000, 0xa0, 0);
	tw_close(t);
}

static unsigned count_of(const char *text, const char *what)
{
	unsigned n = 0;

	for (const char *p = text; p && (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* The kernels' jobs carry their collective; only rank 0's #2 waited more than 1 ms. */
static void test_named_jobs_host_basis(void)
{
	struct tw t;
	char *text;
	int rc;

	write_host_only(&t);
	text = report_capture(t.path, "jobs", 10, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_LINE(text, "verdict per device:");
	CHECK_LINE(text, "  device 0: no device timing");
	CHECK_LINE(text, "    device 0 (rank 0): 40.00 ms in collectives waiting for rank 1 (device 1): "
			 "all-reduce #2");
	CHECK(!strstr(text, "  device 1: no device timing"));
	CHECK_LINE(text, "  job 3 all-reduce #2 rank 0/2 (pid 10, device 0): waited 40.00 ms for rank 1 "
			 "(device 1), host entry times");
	CHECK_LINE(text, "  collective-wait           1   16.7%      40000.0    0.0%      40000.0");
	free(text);

	text = report_capture(t.path, "jobs", 10, NULL, true, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK(strstr(text, "\"name\":\"all-reduce #2 rank 0/2\",\"kernel\":\"" KERNEL "\","));
	CHECK(strstr(text, "\"collective\":{\"op\":\"all-reduce\",\"index\":2,\"comm_id\":119,\"rank\":0,"
			   "\"nranks\":2,\"bytes\":4096,\"entered_ns\":100000,\"wait\":{\"ns\":40000000,"
			   "\"waited_for\":1,\"waited_for_device\":1,\"basis\":\"host\"}}"));
	/* rank 1 entered #2 last: its job names the collective, with no wait */
	CHECK(strstr(text, "\"collective\":{\"op\":\"all-reduce\",\"index\":2,\"comm_id\":119,\"rank\":1,"
			   "\"nranks\":2,\"bytes\":4096,\"entered_ns\":40100000,\"wait\":null}"));
	/* every job's row, and again in the worst jobs (all six of them) */
	CHECK_EQ_U64(count_of(text, "\"collective\":{"), 12);
	CHECK(strstr(text, "\"collective_waits\":[{\"rank\":0,\"waited_for\":1,\"waited_for_device\":1,"
			   "\"ns\":40000000,\"jobs\":1,\"op\":\"all-reduce\",\"index\":2,"
			   "\"largest_ns\":40000000}]"));
	CHECK(strstr(text, "{\"device\":1,\"pci_bus_id\":null,\"uuid\":null,\"device_timing\":false,"
			   "\"collective_waits\":[]}") == NULL);
	free(text);
	unlink(t.path);
}

/* The threshold: strictly more than it; 1us tags the two short waits too. */
static void test_collective_wait_threshold(void)
{
	struct tw t;
	char *text;
	int rc;

	write_host_only(&t);
	text = report_capture(t.path, "jobs", 10, "collective-wait=40ms", false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_LINE(text, "  collective-wait           0    0.0%          0.0    0.0%          0.0");
	CHECK(!strstr(text, "verdict per device:"));
	free(text);
	text = report_capture(t.path, "jobs", 10, "collective-wait=39.999999ms", false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_LINE(text, "    device 0 (rank 0): 40.00 ms in collectives waiting for rank 1 (device 1): "
			 "all-reduce #2");
	free(text);
	text = report_capture(t.path, "jobs", 10, "collective-wait=1us", false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_LINE(text, "    device 0 (rank 0): 40.00 ms in collectives waiting for rank 1 (device 1): "
			 "all-reduce #2, all-reduce #1");
	CHECK_LINE(text, "  device 1: no device timing");
	CHECK_LINE(text, "    device 1 (rank 1): 3.00 us in collectives waiting for rank 0 (device 0): "
			 "all-reduce #3");
	CHECK_LINE(text, "  job 5 all-reduce #3 rank 1/2 (pid 20, device 1): waited 3.00 us for rank 0 "
			 "(device 0), host entry times");
	CHECK_LINE(text, "  job 1 all-reduce #1 rank 0/2 (pid 10, device 0): waited 2.00 us for rank 1 "
			 "(device 1), host entry times");
	free(text);
	text = report_capture(t.path, "jobs", 10, "collective-wait=5%", false, &rc);
	CHECK(rc != 0);
	free(text);
	unlink(t.path);
}

/*
 * With the kernels' device records: #1 starts at 20000 on rank 0 and 25000 on
 * rank 1 (host entries 2 us apart, the GPUs 5 us); #2 at 200000 and 40300000
 * (40.1 ms on the GPU, 40.0 ms between the host entries); #3 has rank 0's START
 * only, so it is measured between the host entries (rank 1 waited 3 us).
 */
static void test_device_basis(void)
{
	struct tw t;
	char *text;
	int rc;

	tw_open(&t, SRC_HOST_AND_GPU | 1u << GRT_SRC_NCCL);
	tw_rank(&t, 10, 0xa0, 0, 0xb0000);
	tw_rank(&t, 20, 0xb0, 1, 0xb1000);
	tw_all_reduce(&t, 10, 10000, 0xa0, 20000);
	tw_all_reduce(&t, 20, 12000, 0xb0, 25000);
	tw_all_reduce(&t, 10, 100000, 0xa0, 200000);
	tw_all_reduce(&t, 20, 40100000, 0xb0, 40300000);
	tw_all_reduce(&t, 20, 50000000, 0xb0, 0);
	tw_all_reduce(&t, 10, 50003000, 0xa0, 50100000);
	tw_close(&t);

	text = report_capture(t.path, "nccl", 10, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_LINE(text, "  rank 0's all-reduce #2 waited 40.10 ms for rank 1 (communicator "
			 "0x0000000000000077, 4.00 KiB, kernel starts on the GPU)");
	CHECK_LINE(text, "  rank 0's all-reduce #1 waited 5.00 us for rank 1 (communicator "
			 "0x0000000000000077, 4.00 KiB, kernel starts on the GPU)");
	CHECK_LINE(text, "  rank 1's all-reduce #3 waited 3.00 us for rank 0 (communicator "
			 "0x0000000000000077, 4.00 KiB)");
	free(text);
	text = report_capture(t.path, "nccl", 10, NULL, true, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK(strstr(text, "{\"rank\":0,\"waited_for\":1,\"op\":\"all-reduce\",\"index\":2,\"ns\":40100000,"
			   "\"entered_ns\":100000,\"comm_id\":119,\"bytes\":4096,\"basis\":\"device\"}"));
	CHECK(strstr(text, "{\"rank\":1,\"waited_for\":0,\"op\":\"all-reduce\",\"index\":3,\"ns\":3000,"
			   "\"entered_ns\":50000000,\"comm_id\":119,\"bytes\":4096,\"basis\":\"host\"}"));
	free(text);

	/* the jobs report measures the same waits the same way */
	text = report_capture(t.path, "jobs", 10, NULL, true, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK(strstr(text, "\"wait\":{\"ns\":40100000,\"waited_for\":1,\"waited_for_device\":1,"
			   "\"basis\":\"device\"}"));
	CHECK(strstr(text, "\"wait\":{\"ns\":5000,\"waited_for\":1,\"waited_for_device\":1,"
			   "\"basis\":\"device\"}"));
	CHECK(strstr(text, "\"wait\":{\"ns\":3000,\"waited_for\":0,\"waited_for_device\":0,"
			   "\"basis\":\"host\"}"));
	free(text);
	text = report_capture(t.path, "jobs", 10, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_LINE(text, "    device 0 (rank 0): 40.10 ms in collectives waiting for rank 1 (device 1): "
			 "all-reduce #2");
	CHECK_LINE(text, "  job 3 all-reduce #2 rank 0/2 (pid 10, device 0): waited 40.10 ms for rank 1 "
			 "(device 1), kernel starts on the GPU");
	free(text);
	unlink(t.path);
}

int main(void)
{
	RUN_TEST(test_named_jobs_host_basis);
	RUN_TEST(test_collective_wait_threshold);
	RUN_TEST(test_device_basis);
	return TEST_EXIT_STATUS();
}
