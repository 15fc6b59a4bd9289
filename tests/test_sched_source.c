/* The sched source on a real workload: a known sleep shows up as one off-CPU interval. */
#include <stdio.h>
#include "test_util.h"
#include "kernel_test_session.h"
#include "trace/records_kernel.h"

#define SLEEP_MS 200
#define TOLERANCE_MS 60	/* timer slack, scheduling and a loaded 2-core VM */

static char workload[PATH_MAX];

static void test_sleep_is_offcpu(void)
{
	char *argv[] = { workload, "--wait-stdin", "sleep:200", NULL };
	struct held_child child = { .pid = -1, .go_fd = -1 };
	struct mem_sink m;
	char err[512] = "";
	size_t long_intervals = 0, wakeups_of_child = 0;
	uint64_t longest = 0;

	mem_sink_init(&m);
	CHECK_EQ_U64(start_held(argv, &child), 0);
	CHECK_EQ_U64(record_held(&child, "sched", NULL, &m, err, sizeof(err)), 0);
	if (err[0])
		printf("  session: %s\n", err);
	for (size_t i = 0; i < m.count; i++) {
		const struct mem_record *r = &m.recs[i];

		if (r->type == GRT_REC_SCHED_OFFCPU) {
			const struct grt_sched_offcpu_rec *o = (const void *)r->payload;
			uint64_t off = o->on_cpu_ns - r->origin.ts_ns;

			CHECK_EQ_U64(r->origin.pid, child.pid);
			if (off > longest)
				longest = off;
			if (off >= (SLEEP_MS - 5) * 1000000ULL) {
				long_intervals++;
				CHECK(off <= (SLEEP_MS + TOLERANCE_MS) * 1000000ULL);
				CHECK_EQ_U64(r->origin.tid, child.pid);
				CHECK(o->prev_state & 1);	/* TASK_INTERRUPTIBLE: a sleep, not a preemption */
			}
		} else if (r->type == GRT_REC_SCHED_WAKEUP) {
			const struct grt_sched_wakeup_rec *w = (const void *)r->payload;

			wakeups_of_child += w->target_tid == (uint32_t)child.pid;
		}
	}
	if (long_intervals != 1)
		printf("  longest off-CPU interval %.3f ms\n", longest / 1e6);
	CHECK_EQ_U64(long_intervals, 1);
	CHECK(wakeups_of_child >= 1);
	mem_sink_free(&m);
}

int main(int argc, char **argv)
{
	fixture_path(argv[0], "kernel_workload", workload, sizeof(workload));
	RUN_TEST(test_sleep_is_offcpu);
	return TEST_EXIT_STATUS();
}
