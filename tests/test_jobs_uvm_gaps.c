/* Idle gaps the program's unified memory fills (CPU faults, migrations) are uvm-bound, not sync-bound. */
#include "jobs_trace.h"
#include "report_check.h"
#include "test_util.h"

#define PID 900
#define TID 900
#define STREAM 0xb000
#define US 1000ull
#define MS 1000000ull
#define MIB (1024ull * 1024ull)
#define ROUNDS 8
#define CHUNKS 32	/* 64 MiB in 2 MiB blocks */
#define GPU1 1		/* the driver numbers GPUs from 1 */

/*
 * A managed-memory ping-pong, as on the H100: each round a kernel touches
 * 64 MiB of managed memory (GPU faults, the memory migrating to the device
 * while it runs), the host syncs, then touches the 64 MiB on the CPU (CPU
 * faults, the memory migrating back: 5 ms) and launches the next kernel.
 */
static void write_pingpong(struct tw *t)
{
	uint64_t at = 1 * MS;

	tw_open(t, SRC_HOST_AND_GPU | (1u << GRT_SRC_UVM));
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t start = at + 20 * US, end = start + 2 * MS, back = end + 30 * US;

		tw_launch(t, PID, TID, at, at + 5 * US, STREAM, "touch");
		tw_gpu_kernel_id(t, PID, TID + 1, (struct tw_call_id){ TID, at - 100, at + 5 * US + 100, 0 },
				 start, end, STREAM, 0, "touch", 0);
		for (int c = 0; c < CHUNKS; c++) {
			uint64_t m = start + 10 * US + c * 60 * US;

			tw_uvm_move(t, PID, m - 5 * US, m - 5 * US, GRT_UVM_GPU_FAULT, 0, GPU1, GPU1);
			tw_uvm_move(t, PID, m, m + 50 * US, GRT_UVM_MIGRATION, 2 * MIB, GRT_UVM_PROC_CPU,
				    GPU1);
		}
		tw_ctx_sync(t, PID, TID, at + 10 * US, end + 10 * US);
		for (int c = 0; c < CHUNKS; c++) {
			uint64_t f = back + c * 150 * US;

			tw_uvm_move(t, PID, f, f, GRT_UVM_CPU_FAULT, 0, GRT_UVM_PROC_CPU, GRT_UVM_PROC_CPU);
			tw_uvm_move(t, PID, f + 2 * US, f + 140 * US, GRT_UVM_MIGRATION, 2 * MIB, GPU1,
				    GRT_UVM_PROC_CPU);
		}
		at = back + CHUNKS * 150 * US + 100 * US;
	}
}

static void test_pingpong_gaps_are_uvm_bound(void)
{
	struct tw t;
	struct jobs_run r;
	char *text;
	int rc;

	write_pingpong(&t);
	tw_run(&t, &r, NULL);
	CHECK_STR(r.v.cause, "uvm-bound");
	if (idle_gaps_devices(r.gaps) == 1) {
		const struct device_idle *d = idle_gaps_device(r.gaps, 0);

		/* per gap: from the first CPU fault to the last migration's end, 4.79 ms */
		CHECK_EQ_U64(d->gaps, ROUNDS - 1);
		CHECK_EQ_U64(d->idle[GAP_UVM_BOUND], (ROUNDS - 1) * (31 * 150 * US + 140 * US));
	}
	text = report_capture(t.path, "jobs", 5, NULL, false, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK_HAS(text, "% of idle time uvm-bound: pid 900 (?) moves unified memory between CPU and GPU "
			"while the GPU waits: 512.00 MiB migrated to the device, 512.00 MiB to the host in "
			"512 migrations, 256 CPU faults\n");
	free(text);
	text = report_capture(t.path, "jobs", 5, NULL, true, &rc);
	CHECK_HAS(text, "\"cause\":\"uvm-bound\"");
	free(text);
	jobs_run_done(&r, &t);
}

/* A gap with one CPU fault in a long stretch of host work stays host-bound. */
static void test_one_fault_does_not_make_a_gap_uvm_bound(void)
{
	struct tw t;
	struct jobs_run r;

	tw_open(&t, SRC_HOST_AND_GPU | (1u << GRT_SRC_UVM));
	for (int i = 0; i < 4; i++) {
		uint64_t at = 1 * MS + i * 10 * MS;

		tw_launch(&t, PID, TID, at, at + 5 * US, STREAM, "k");
		tw_gpu_kernel_id(&t, PID, TID + 1, (struct tw_call_id){ TID, at - 100, at + 5 * US + 100, 0 },
				 at + 20 * US, at + 1 * MS, STREAM, 0, "k", 0);
		tw_uvm_move(&t, PID, at + 5 * MS, at + 5 * MS, GRT_UVM_CPU_FAULT, 0, GRT_UVM_PROC_CPU,
			    GRT_UVM_PROC_CPU);
	}
	tw_ctx_sync(&t, PID, TID, 40 * MS, 41 * MS);
	tw_run(&t, &r, NULL);
	CHECK_STR(r.v.cause, "host-bound");
	if (idle_gaps_devices(r.gaps) == 1)
		CHECK_EQ_U64(idle_gaps_device(r.gaps, 0)->idle[GAP_UVM_BOUND], 0);
	jobs_run_done(&r, &t);
}

int main(void)
{
	RUN_TEST(test_pingpong_gaps_are_uvm_bound);
	RUN_TEST(test_one_fault_does_not_make_a_gap_uvm_bound);
	return TEST_EXIT_STATUS();
}
