/* Several GPUs: devices from context records, per-device gaps and who waited for whom, peer copies, NCCL waits. */
#include "analysis/jobs/device_verdict.h"
#include "jobs_trace.h"
#include "report_check.h"
#include "test_util.h"
#include "common/pci_addr.h"
#include "export/event_printer.h"
#include "trace/records_kernel.h"
#include "trace/records_nccl.h"

#define PID 400
#define TID 401
#define CTX0 0xb0000
#define CTX1 0xb1000
#define S0 0x5000
#define S1 0x5010

static void tw_context(struct tw *t, uint32_t pid, uint32_t tid, uint64_t ts, uint32_t op,
		       uint64_t ctx, int32_t device)
{
	static const uint16_t apis[] = { 0, GRT_CUDA_CTX_CREATE, GRT_CUDA_DEVICE_PRIMARY_CTX_RETAIN,
					 GRT_CUDA_CTX_SET_CURRENT, GRT_CUDA_CTX_PUSH_CURRENT_V2,
					 GRT_CUDA_CTX_POP_CURRENT_V2 };
	struct grt_cuda_context_rec c = { .call = tw_call(apis[op], ts + 10, 0), .ctx = ctx,
					  .device = device, .op = op };

	tw_rec(t, GRT_REC_CUDA_CONTEXT, pid, tid, ts, &c, sizeof(c));
}

static void tw_bus_id(struct tw *t, uint32_t pid, uint32_t tid, uint64_t ts, int32_t device,
		      const char *bus_id)
{
	struct grt_cuda_device_rec d = { .call = tw_call(GRT_CUDA_DEVICE_GET_PCI_BUS_ID, ts + 10, 0),
					 .device = device,
					 .pci_bus_id_str = grt_writer_intern(t->w, bus_id) };

	tw_rec(t, GRT_REC_CUDA_DEVICE, pid, tid, ts, &d, sizeof(d));
}

/* Host calls take the device of their thread's current context: set, push and pop. */
static void test_device_from_contexts(void)
{
	struct tw t;
	struct jobs_run r;

	tw_open(&t, SRC_HOST_ONLY);
	tw_context(&t, PID, TID, 100, GRT_CTX_RETAIN, CTX0, 0);
	tw_context(&t, PID, TID, 200, GRT_CTX_RETAIN, CTX1, 1);
	tw_context(&t, PID, TID, 300, GRT_CTX_SET, CTX0, -1);
	tw_launch(&t, PID, TID, 1000, 1100, S0, "a");
	tw_context(&t, PID, TID, 1200, GRT_CTX_SET, CTX1, -1);
	tw_launch(&t, PID, TID, 2000, 2100, S1, "b");
	tw_context(&t, PID, TID, 2200, GRT_CTX_PUSH, CTX0, -1);
	tw_launch(&t, PID, TID, 3000, 3100, S0, "c");
	tw_context(&t, PID, TID, 3200, GRT_CTX_POP, CTX0, -1);
	tw_launch(&t, PID, TID, 4000, 4100, S1, "d");
	/* another thread never set a context: its device stays unknown, nothing is guessed */
	tw_launch(&t, PID, TID + 1, 5000, 5100, S0, "e");
	tw_ctx_sync(&t, PID, TID, 6000, 7000);
	tw_run(&t, &r, NULL);
	CHECK_EQ_U64(r.n, 5);
	CHECK(job_at(&r, 1000) && job_at(&r, 1000)->device == 0);
	CHECK(job_at(&r, 2000) && job_at(&r, 2000)->device == 1);
	CHECK(job_at(&r, 3000) && job_at(&r, 3000)->device == 0);
	CHECK(job_at(&r, 4000) && job_at(&r, 4000)->device == 1);
	CHECK(job_at(&r, 5000) && job_at(&r, 5000)->device == JOB_NO_DEVICE);
	jobs_run_done(&r, &t);
}

/*
 * Device 1 runs dry at 1500 while the thread sits in a sync of stream S0,
 * device 0's, until 2200: device 1's gap [1500, 2500) is 800 ns sync-bound
 * (to its next job's SUBMIT at 2300), spent waiting for device 0, and 200 ns
 * other.
 */
static void test_device_waits_for_device(void)
{
	struct tw t;
	struct jobs_run r;
	const struct device_idle *d1 = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	tw_open(&t, SRC_HOST_AND_GPU);
	tw_context(&t, PID, TID, 100, GRT_CTX_RETAIN, CTX0, 0);
	tw_context(&t, PID, TID, 110, GRT_CTX_RETAIN, CTX1, 1);
	tw_bus_id(&t, PID, TID, 120, 1, "0000:29:00.0");
	tw_context(&t, PID, TID, 200, GRT_CTX_SET, CTX0, -1);
	tw_launch(&t, PID, TID, 500, 600, S0, "k0");
	tw_gpu_kernel(&t, PID, TID, 500, 1000, 2000, S0, 0, "k0", 0);
	tw_context(&t, PID, TID, 700, GRT_CTX_SET, CTX1, -1);
	tw_launch(&t, PID, TID, 800, 900, S1, "k1");
	tw_gpu_kernel(&t, PID, TID, 800, 1000, 1500, S1, 1, "k1", 0);
	tw_sync(&t, PID, TID, 1400, 2200, GRT_SYNC_STREAM, S0, 0, 0);
	tw_launch(&t, PID, TID, 2250, 2300, S1, "k1");
	tw_gpu_kernel(&t, PID, TID, 2250, 2500, 3000, S1, 1, "k1", 0);
	tw_sync(&t, PID, TID, 2400, 3100, GRT_SYNC_STREAM, S1, 0, 0);
	tw_run(&t, &r, NULL);
	for (uint32_t i = 0; i < idle_gaps_devices(r.gaps); i++)
		if (idle_gaps_device(r.gaps, i)->device == 1)
			d1 = idle_gaps_device(r.gaps, i);
	CHECK(d1 != NULL);
	if (d1) {
		CHECK_EQ_U64(d1->idle[GAP_SYNC_BOUND], 800);
		CHECK_EQ_U64(d1->idle[GAP_OTHER], 200);
		CHECK_EQ_U64(d1->n_waits_for, 1);
		CHECK_EQ_U64(d1->waits_for[0].device, 0);
		CHECK_EQ_U64(d1->waits_for[0].ns, 800);
		CHECK_EQ_U64(d1->waits_for[0].gaps, 1);
		CHECK_EQ_U64(d1->longest[0].waited_device, 0);
	}
	out = open_memstream(&text, &len);
	device_verdict_print_text(r.gaps, job_builder_devices(job_pipeline_builder(r.p)), NULL, out);
	fclose(out);
	CHECK_LINE(text, "  device 0: busy 100.0% of 1.00 us, not starved");
	CHECK_LINE(text, "  device 1 (0000:29:00.0): busy 50.0% of 2.00 us, not starved");
	CHECK_LINE(text, "    device 1 waited 800 ns for device 0 (1 gaps: the host was synchronizing "
			 "with device 0 while device 1 ran dry)");
	free(text);
	jobs_run_done(&r, &t);
}

static void tw_peer(struct tw *t, uint64_t enter, uint64_t ret_ns, uint64_t dst_ctx,
		    uint64_t src_ctx, uint64_t bytes, int async)
{
	struct grt_cuda_memcpy_rec m = {
		.call = tw_call(async ? GRT_CUDA_MEMCPY_PEER_ASYNC : GRT_CUDA_MEMCPY_PEER, ret_ns, 0),
		.bytes = bytes, .kind = GRT_COPY_PEER, .is_async = (uint8_t)async, .dims = 1,
		.dst_ctx = dst_ctx, .src_ctx = src_ctx };

	tw_rec(t, GRT_REC_CUDA_MEMCPY, PID, TID, enter, &m, sizeof(m));
}

/* A trace where the test's thread has retained device 0's and device 1's primary contexts. */
static void tw_open_two_devices(struct tw *t)
{
	tw_open(t, SRC_HOST_ONLY);
	tw_context(t, PID, TID, 100, GRT_CTX_RETAIN, CTX0, 0);
	tw_context(t, PID, TID, 110, GRT_CTX_RETAIN, CTX1, 1);
}

/* Peer copies by device pair; the synchronous ones give the bandwidth. */
static void test_peer_copies(void)
{
	struct tw t;
	char *text;
	int rc;

	tw_open_two_devices(&t);
	tw_peer(&t, 1000, 1000 + 1048576, CTX1, CTX0, 1048576 * 2, 0); /* 2 GB/s */
	tw_peer(&t, 3000000, 3000100, CTX0, CTX1, 4096, 1);
	tw_peer(&t, 4000000, 4000100, CTX0, 0xdead0, 8192, 1);	 /* a context never seen */
	tw_close(&t);
	text = report_capture(t.path, "copies", 10, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	/* no pcie source in this trace: no topology, the link is unknown */
	CHECK_LINE(text, "  0 -> 1     ?             1      2097152        1     2.000        0       0");
	CHECK_LINE(text, "  1 -> 0     ?             1         4096        0         -        1       0");
	CHECK_LINE(text, "  ? -> 0     ?             1         8192        0         -        1       0");
	free(text);
	unlink(t.path);
}

static void tw_gpu_link(struct tw *t, const char *pci, const char *peer_pci, uint32_t flags,
			uint8_t nvlink, uint8_t pcie, uint32_t links)
{
	struct grt_gpu_link_rec g = { .pci = grt_pci_parse(pci), .peer_pci = grt_pci_parse(peer_pci),
				      .flags = flags, .topology = GRT_TOPO_SYS, .nvlink_p2p = nvlink,
				      .pcie_read_p2p = pcie, .pcie_write_p2p = pcie, .nvlink_links = links };

	tw_rec(t, GRT_REC_GPU_LINK, 1, 1, 50, &g, sizeof(g));
}

#define ALL_KNOWN (GRT_GPU_LINK_F_NVLINK_P2P | GRT_GPU_LINK_F_PCIE_P2P | GRT_GPU_LINK_F_TOPOLOGY)

/*
 * The link of each pair, from gpu_link records matched by bus id: NVML's
 * 8-digit domain and upper-case hex meet the driver's 4-digit form; a pair
 * recorded one way answers the other; unknown when a device's bus id was
 * never asked, when NVML could not answer (an old driver), or when it
 * answered P2P "unknown" for PCIe.
 */
static void test_peer_copy_links(void)
{
	static const uint64_t ctx[6] = { CTX0, CTX1, 0xb2000, 0xb3000, 0xb4000, 0xb5000 };
	struct tw t;
	char *text;
	int rc;

	tw_open(&t, SRC_HOST_ONLY);
	tw_gpu_link(&t, "00000000:18:00.0", "00000000:29:00.0", ALL_KNOWN, GRT_P2P_OK, GRT_P2P_OK, 3);
	tw_gpu_link(&t, "00000000:29:00.0", "00000000:3A:00.0", ALL_KNOWN, GRT_P2P_NOT_SUPPORTED,
		    GRT_P2P_OK, 0);
	tw_gpu_link(&t, "00000000:18:00.0", "00000000:3A:00.0", ALL_KNOWN, GRT_P2P_NOT_SUPPORTED,
		    GRT_P2P_CHIPSET_NOT_SUPPORTED, 0);
	tw_gpu_link(&t, "00000000:18:00.0", "00000000:4B:00.0", 0, 0, 0, 0); /* nothing answered */
	tw_gpu_link(&t, "00000000:18:00.0", "00000000:5C:00.0", ALL_KNOWN, GRT_P2P_NOT_SUPPORTED,
		    GRT_P2P_UNKNOWN, 0);
	for (int d = 0; d < 6; d++)
		tw_context(&t, PID, TID, 100 + (uint64_t)d, GRT_CTX_RETAIN, ctx[d], d);
	tw_bus_id(&t, PID, TID, 200, 0, "0000:18:00.0");
	tw_bus_id(&t, PID, TID, 201, 1, "0000:29:00.0");
	tw_bus_id(&t, PID, TID, 202, 2, "0000:3a:00.0");
	tw_bus_id(&t, PID, TID, 204, 4, "0000:4b:00.0");
	tw_bus_id(&t, PID, TID, 205, 5, "0000:5c:00.0");
	tw_peer(&t, 1000, 2000, CTX1, CTX0, 1000, 0);		/* 0 -> 1 */
	tw_peer(&t, 3000, 4000, CTX1, ctx[2], 1000, 0);	/* 2 -> 1: recorded as 1, 2 */
	tw_peer(&t, 5000, 6000, ctx[2], CTX0, 1000, 0);	/* 0 -> 2 */
	tw_peer(&t, 7000, 8000, ctx[3], CTX0, 1000, 0);	/* 0 -> 3: no bus id */
	tw_peer(&t, 9000, 10000, ctx[4], CTX0, 1000, 0);	/* 0 -> 4: old driver */
	tw_peer(&t, 11000, 12000, ctx[5], CTX0, 1000, 0);	/* 0 -> 5: PCIe P2P unknown */
	tw_close(&t);
	text = report_capture(t.path, "copies", 10, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_LINE(text, "  0 -> 1     nvlink        1         1000        1     1.000        0       0");
	CHECK_LINE(text, "  2 -> 1     pcie          1         1000        1     1.000        0       0");
	CHECK_LINE(text, "  0 -> 2     none          1         1000        1     1.000        0       0");
	CHECK_LINE(text, "  0 -> 3     ?             1         1000        1     1.000        0       0");
	CHECK_LINE(text, "  0 -> 4     ?             1         1000        1     1.000        0       0");
	CHECK_LINE(text, "  0 -> 5     ?             1         1000        1     1.000        0       0");
	free(text);
	text = report_capture(t.path, "copies", 10, NULL, true, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK(strstr(text, "\"src_device\":0,\"dst_device\":1,\"link\":\"nvlink\"") != NULL);
	CHECK(strstr(text, "\"src_device\":2,\"dst_device\":1,\"link\":\"pcie\"") != NULL);
	CHECK(strstr(text, "\"src_device\":0,\"dst_device\":2,\"link\":\"none\"") != NULL);
	CHECK(strstr(text, "\"src_device\":0,\"dst_device\":3,\"link\":null") != NULL);
	CHECK(strstr(text, "\"src_device\":0,\"dst_device\":4,\"link\":null") != NULL);
	free(text);
	unlink(t.path);
}

static void tw_device_alloc(struct tw *t, uint64_t ts, uint64_t addr, uint64_t bytes, uint32_t kind)
{
	struct grt_cuda_alloc_rec a = { .call = tw_call(GRT_CUDA_MEM_ALLOC_V2, ts + 10, 0), .addr = addr,
					.bytes = bytes, .kind = kind };

	tw_rec(t, GRT_REC_CUDA_ALLOC, PID, TID, ts, &a, sizeof(a));
}

static void tw_dtod(struct tw *t, uint64_t ts, uint32_t kind, uint64_t dst, uint64_t src, uint64_t bytes)
{
	struct grt_cuda_memcpy_rec m = { .call = tw_call(GRT_CUDA_MEMCPY_DTOD_V2, ts + 1000, 0),
					 .dst = dst, .src = src, .bytes = bytes, .kind = kind, .dims = 1 };

	tw_rec(t, GRT_REC_CUDA_MEMCPY, PID, TID, ts, &m, sizeof(m));
}

/*
 * cuMemcpyDtoD and unified cuMemcpy between allocations of two devices are
 * peer copies of that pair (interior pointers too); within one device, into
 * freed memory, from managed memory, or from memory never allocated in the
 * trace, they are not.
 */
static void test_dtod_across_devices(void)
{
	struct grt_cuda_free_rec f = { .call = tw_call(GRT_CUDA_MEM_FREE_V2, 20010, 0), .addr = 0x2000000,
				       .kind = GRT_ALLOC_DEVICE };
	struct tw t;
	char *text;
	int rc;

	tw_open_two_devices(&t);
	tw_context(&t, PID, TID, 200, GRT_CTX_SET, CTX0, -1);
	tw_device_alloc(&t, 300, 0x1000000, 1 << 20, GRT_ALLOC_DEVICE);	/* device 0 */
	tw_device_alloc(&t, 310, 0x3000000, 1 << 20, GRT_ALLOC_DEVICE);	/* device 0 */
	tw_device_alloc(&t, 320, 0x5000000, 1 << 20, GRT_ALLOC_MANAGED);
	tw_context(&t, PID, TID, 400, GRT_CTX_SET, CTX1, -1);
	tw_device_alloc(&t, 500, 0x2000000, 1 << 20, GRT_ALLOC_ASYNC);	/* device 1 */
	tw_dtod(&t, 1000, GRT_COPY_DTOD, 0x2000000, 0x1000000, 1000);	/* 0 -> 1 */
	tw_dtod(&t, 3000, GRT_COPY_DEFAULT, 0x1000100, 0x20fff00, 1000); /* 1 -> 0, interior */
	tw_dtod(&t, 5000, GRT_COPY_DTOD, 0x3000000, 0x1000000, 1000);	/* within device 0 */
	tw_dtod(&t, 7000, GRT_COPY_DTOD, 0x2000000, 0x5000000, 1000);	/* from managed memory */
	tw_dtod(&t, 9000, GRT_COPY_DTOD, 0x2000000, 0x9000000, 1000);	/* never allocated */
	tw_dtod(&t, 11000, GRT_COPY_DTOD, 0x2100000, 0x1000000, 1000);	/* one past device 1's end */
	tw_rec(&t, GRT_REC_CUDA_FREE, PID, TID, 20000, &f, sizeof(f));
	tw_dtod(&t, 21000, GRT_COPY_DTOD, 0x2000000, 0x1000000, 1000);	/* into freed memory */
	tw_close(&t);
	text = report_capture(t.path, "copies", 10, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_LINE(text, "  0 -> 1     ?             1         1000        1     1.000        0       0");
	CHECK_LINE(text, "  1 -> 0     ?             1         1000        1     1.000        0       0");
	CHECK(strstr(text, "  0 -> 0 ") == NULL && strstr(text, "  ? -> ") == NULL);
	free(text);
	text = report_capture(t.path, "copies", 10, NULL, true, &rc);
	CHECK(strstr(text, "\"src_device\":0,\"dst_device\":1,\"link\":null,\"calls\":1,\"dtod_calls\":1,") != NULL);
	free(text);
	unlink(t.path);
}

/* A gpu_link record reads back byte for byte, and parse names every field (unknown ones null). */
static void test_gpu_link_round_trip(void)
{
	const struct grt_gpu_link_rec written[2] = {
		{ .device = 1, .pci = grt_pci_parse("00000000:29:00.0"), .peer_device = 0,
		  .peer_pci = grt_pci_parse("0000:18:00.0"), .flags = ALL_KNOWN | GRT_GPU_LINK_F_REMOTES,
		  .topology = GRT_TOPO_PXB, .nvlink_p2p = GRT_P2P_OK,
		  .pcie_read_p2p = GRT_P2P_DISABLED_BY_REGKEY, .pcie_write_p2p = GRT_P2P_OK,
		  .nvlink_links = 0x5, .nvswitch_links = 0x30000 },
		{ .device = 2, .pci = grt_pci_parse("0000:3a:00.0"), .peer_device = 3, .flags = 0 },
	};
	static const char *const want[2] = {
		"\"device\":1,\"pci\":\"0000:29:00.0\",\"peer_device\":0,\"peer_pci\":\"0000:18:00.0\","
		"\"nvlink_p2p\":\"ok\",\"pcie_read_p2p\":\"disabled_by_regkey\",\"pcie_write_p2p\":\"ok\","
		"\"topology\":\"PXB\",\"nvlinks\":2,\"nvlink_mask\":5,\"nvswitch_links\":2}",
		"\"device\":2,\"pci\":\"0000:3a:00.0\",\"peer_device\":3,\"peer_pci\":null,"
		"\"nvlink_p2p\":null,\"pcie_read_p2p\":null,\"pcie_write_p2p\":null,\"topology\":null,"
		"\"nvlinks\":null,\"nvlink_mask\":null,\"nvswitch_links\":null}",
	};
	struct grt_reader *r;
	struct grt_record rec;
	char err[256], *json = NULL;
	size_t len = 0, n = 0;
	struct tw t;

	tw_open(&t, SRC_HOST_ONLY);
	for (int i = 0; i < 2; i++)
		tw_rec(&t, GRT_REC_GPU_LINK, 1, 1, 50, &written[i], sizeof(written[i]));
	tw_close(&t);
	r = grt_reader_open(t.path, err, sizeof(err));
	CHECK(r != NULL);
	while (r && grt_reader_next(r, &rec) == GRT_READ_OK) {
		FILE *out;
		struct grt_event_printer *p;

		if (rec.hdr.type != GRT_REC_GPU_LINK)
			continue;
		CHECK(n < 2);
		if (n >= 2)
			break;
		CHECK_EQ_U64(rec.hdr.payload_len, sizeof(written[n]));
		CHECK(!memcmp(rec.payload, &written[n], sizeof(written[n])));
		out = open_memstream(&json, &len);
		p = grt_event_printer_new(out, GRT_FORMAT_JSON, 0);
		grt_event_printer_print(p, &rec, grt_reader_strings(r));
		grt_event_printer_free(p);
		fclose(out);
		CHECK(strstr(json, "\"type\":\"gpu_link\"") != NULL);
		CHECK(strstr(json, want[n]) != NULL);
		if (!strstr(json, want[n]))
			printf("  got %s", json);
		free(json);
		json = NULL;
		n++;
	}
	CHECK_EQ_U64(n, 2);
	if (r)
		grt_reader_close(r);
	unlink(t.path);
}

/*
 * A trace of format 1.2 before the peer contexts were appended: its memcpy
 * records are 64 bytes. They read zero-extended: the peer copy is counted,
 * on devices unknown, and nothing past the record is read.
 */
static void test_peer_copy_of_older_writer(void)
{
	struct grt_cuda_memcpy_rec m = {
		.call = tw_call(GRT_CUDA_MEMCPY_PEER, 1000 + 1048576, 0), .bytes = 1048576,
		.kind = GRT_COPY_PEER, .dims = 1, .dst_ctx = CTX1, .src_ctx = CTX0 };
	struct tw t;
	char *text;
	int rc;

	tw_open_two_devices(&t);
	tw_rec(&t, GRT_REC_CUDA_MEMCPY, PID, TID, 1000, &m, GRT_CUDA_MEMCPY_REC_V1_2_LEN);
	tw_close(&t);
	text = report_capture(t.path, "copies", 10, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_LINE(text, "  ? -> ?     ?             1      1048576        1     1.000        0       0");
	free(text);
	unlink(t.path);
}

/* As writers before ncclCommSplit was traced: 40-byte records. */
static void tw_comm(struct tw *t, uint32_t pid, uint64_t ts, uint64_t comm, uint32_t rank)
{
	struct grt_nccl_comm_rec c = { .return_ns = ts + 100, .comm = comm, .comm_id = 0x77,
				       .nranks = 2, .rank = rank };

	tw_rec(t, GRT_REC_NCCL_COMM, pid, pid, ts, &c, GRT_NCCL_COMM_MIN_LEN);
}

static void tw_split(struct tw *t, uint32_t pid, uint64_t ts, uint64_t parent, uint64_t comm,
		     int32_t color, int32_t key)
{
	struct grt_nccl_comm_rec c = { .return_ns = ts + 100, .comm = comm, .flags = GRT_NCCL_F_SPLIT,
				       .parent = parent, .color = color, .key = key };

	tw_rec(t, GRT_REC_NCCL_COMM, pid, pid, ts, &c, sizeof(c));
}

static void tw_nccl_call(struct tw *t, uint32_t pid, uint64_t ts, uint32_t op, uint64_t comm, int32_t peer)
{
	struct grt_nccl_coll_rec c = { .return_ns = ts + 50, .op = op, .comm = comm, .count = 1024,
				       .bytes = 4096, .datatype = 7, .root = peer };

	tw_rec(t, GRT_REC_NCCL_COLL, pid, pid, ts, &c, sizeof(c));
}

/* Process 20 launches the kernel by its mangled name, as NCCL 2.28 does on the H100. */
static void tw_all_reduce(struct tw *t, uint32_t pid, uint64_t ts, uint64_t comm)
{
	struct grt_nccl_coll_rec c = { .return_ns = ts + 50, .op = GRT_NCCL_ALL_REDUCE,
				       .comm = comm, .count = 1024, .bytes = 4096, .datatype = 7,
				       .root = -1 };

	tw_rec(t, GRT_REC_NCCL_COLL, pid, pid, ts, &c, sizeof(c));
	tw_launch(t, pid, pid, ts + 10, ts + 20, 0,
		  pid == 20 ? "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"
			    : "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
}

/*
 * Two ranks in two processes. #1: rank 1 enters 2 us after rank 0; #2:
 * rank 1 is 40 ms late; #3: rank 0 is 3 us late. The context records come
 * after the communicator records, as records of two sources may.
 */
static void test_nccl_waits(void)
{
	struct tw t;
	char *text;
	int rc;

	tw_open(&t, SRC_HOST_ONLY | 1u << GRT_SRC_NCCL);
	tw_comm(&t, 10, 1000, 0xa0, 0);
	tw_comm(&t, 20, 1100, 0xb0, 1);
	tw_context(&t, 10, 10, 500, GRT_CTX_RETAIN, CTX0, 0);
	tw_context(&t, 10, 10, 600, GRT_CTX_SET, CTX0, -1);
	tw_context(&t, 20, 20, 500, GRT_CTX_RETAIN, CTX1, 1);
	tw_context(&t, 20, 20, 600, GRT_CTX_SET, CTX1, -1);
	tw_all_reduce(&t, 10, 10000, 0xa0);
	tw_all_reduce(&t, 20, 12000, 0xb0);
	tw_all_reduce(&t, 10, 100000, 0xa0);
	tw_all_reduce(&t, 20, 40100000, 0xb0);
	tw_all_reduce(&t, 20, 50000000, 0xb0);
	tw_all_reduce(&t, 10, 50003000, 0xa0);
	tw_close(&t);
	text = report_capture(t.path, "nccl", 10, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_LINE(text, "  0x0000000000000077    0     2       10      0           3    12.00 KiB        3     40.00 ms       1");
	CHECK_LINE(text, "  0x0000000000000077    1     2       20      1           3    12.00 KiB        3      3.00 us       2");
	CHECK_LINE(text, "  all-reduce             6 calls    24.00 KiB  kernel ncclDevKernel_AllReduce_Sum_f32_RING_LL");
	CHECK_LINE(text, "  rank 0's all-reduce #2 waited 40.00 ms for rank 1 (communicator 0x0000000000000077, 4.00 KiB)");
	CHECK_LINE(text, "  rank 1's all-reduce #3 waited 3.00 us for rank 0 (communicator 0x0000000000000077, 4.00 KiB)");
	CHECK_LINE(text, "  rank 0's all-reduce #1 waited 2.00 us for rank 1 (communicator 0x0000000000000077, 4.00 KiB)");
	free(text);
	unlink(t.path);
}

/*
 * Three ranks split their communicator with one color and keys 5, 5, 1: the third becomes
 * rank 0, then the first two in their order (ranks 1 and 2). Point to point, world rank 0
 * sends to rank 1 twice: the first send waits for the receive, the second receive for the send.
 */
static void test_nccl_split_and_p2p(void)
{
	struct grt_nccl_comm_rec world = { .comm_id = 0x77, .nranks = 3 };
	struct tw t;
	char *text;
	int rc;

	tw_open(&t, SRC_HOST_ONLY | 1u << GRT_SRC_NCCL);
	for (uint32_t r = 0; r < 3; r++) {
		world.comm = 0xa0 + r;
		world.rank = r;
		world.return_ns = 200;
		tw_rec(&t, GRT_REC_NCCL_COMM, 10 * (r + 1), 10 * (r + 1), 100, &world, sizeof(world));
	}
	tw_split(&t, 10, 500, 0xa0, 0xc0, 0, 5);
	tw_split(&t, 20, 500, 0xa1, 0xc1, 0, 5);
	tw_split(&t, 30, 500, 0xa2, 0xc2, 0, 1);
	tw_nccl_call(&t, 10, 1000, GRT_NCCL_ALL_REDUCE, 0xc0, -1);
	tw_nccl_call(&t, 20, 2000, GRT_NCCL_ALL_REDUCE, 0xc1, -1);
	tw_nccl_call(&t, 30, 9000, GRT_NCCL_ALL_REDUCE, 0xc2, -1);
	tw_nccl_call(&t, 10, 20000, GRT_NCCL_SEND, 0xa0, 1);
	tw_nccl_call(&t, 20, 25000, GRT_NCCL_RECV, 0xa1, 0);
	tw_nccl_call(&t, 20, 29000, GRT_NCCL_RECV, 0xa1, 0);
	tw_nccl_call(&t, 10, 30000, GRT_NCCL_SEND, 0xa0, 1);
	tw_close(&t);
	text = report_capture(t.path, "nccl", 10, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	/* the split's members by key (5, 5, 1), ties by rank in the parent */
	CHECK_LINE(text, "  0xb0b2a39586df4627    1     3       10      ?           1     4.00 KiB        0      8.00 us       0");
	CHECK_LINE(text, "  0xb0b2a39586df4627    2     3       20      ?           1     4.00 KiB        0      7.00 us       0");
	CHECK_LINE(text, "  0xb0b2a39586df4627    0     3       30      ?           1     4.00 KiB        0         0 ns       1");
	CHECK_LINE(text, "  rank 1's all-reduce #1 waited 8.00 us for rank 0 (communicator 0xb0b2a39586df4627, 4.00 KiB)");
	CHECK_LINE(text, "  rank 2's all-reduce #1 waited 7.00 us for rank 0 (communicator 0xb0b2a39586df4627, 4.00 KiB)");
	CHECK_LINE(text, "  rank 0's send #1 waited 5.00 us for rank 1 (communicator 0x0000000000000077, 4.00 KiB)");
	CHECK_LINE(text, "  rank 1's recv #2 waited 1.00 us for rank 0 (communicator 0x0000000000000077, 4.00 KiB)");
	CHECK_LINE(text, "  send                   2 calls     8.00 KiB  kernel (none seen)");
	free(text);
	unlink(t.path);
}

int main(void)
{
	RUN_TEST(test_device_from_contexts);
	RUN_TEST(test_device_waits_for_device);
	RUN_TEST(test_peer_copies);
	RUN_TEST(test_peer_copy_of_older_writer);
	RUN_TEST(test_peer_copy_links);
	RUN_TEST(test_gpu_link_round_trip);
	RUN_TEST(test_dtod_across_devices);
	RUN_TEST(test_nccl_waits);
	RUN_TEST(test_nccl_split_and_p2p);
	return TEST_EXIT_STATUS();
}
