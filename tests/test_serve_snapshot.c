/* serve's snapshot: a process's launch total from its per-kernel counters and the unkeyed rest. */
#include <stdlib.h>
#include "test_util.h"
#include "serve/agent.h"

static void test_launch_total_is_the_kernels_sum(void)
{
	struct serve_kernel_count first[] = {{"gemm", 700}, {"other", 41}};
	struct serve_kernel_count second[] = {{"reduce", 5}};
	struct serve_proc_snapshot procs[3] = {};
	struct serve_snapshot s = {.procs = procs, .nprocs = 3};

	procs[0].kernels = first;
	procs[0].nkernels = 2;
	procs[0].stats.launches = 3; /* launches the per-kernel table had no room for */
	procs[1].kernels = second;
	procs[1].nkernels = 1;
	/* procs[2]: calls but no launch */
	serve_snapshot_total_launches(&s);
	CHECK_EQ_U64(procs[0].stats.launches, 744);
	CHECK_EQ_U64(procs[1].stats.launches, 5);
	CHECK_EQ_U64(procs[2].stats.launches, 0);
	/* the kernels' own counts are left as they are */
	CHECK_EQ_U64(first[0].launches, 700);
	CHECK_EQ_U64(first[1].launches, 41);
}

int main(void)
{
	RUN_TEST(test_launch_total_is_the_kernels_sum);
	return TEST_EXIT_STATUS();
}
