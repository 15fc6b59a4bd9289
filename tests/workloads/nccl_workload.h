/* What the NCCL workloads share: one process per rank, rank r on fake device r, one unique id. */
#ifndef GRT_NCCL_WORKLOAD_H
#define GRT_NCCL_WORKLOAD_H

#include <sys/wait.h>
#include "fake_nccl.h"
#include "workload.h"

/* Settings every rank of a workload gets (its command-line arguments). */
struct nccl_workload_args {
	int ranks;
	int late_rank;
	int late_ms[2];		/* how late it comes, per phase of the workload */
};

typedef int (*nccl_rank_fn)(const ncclUniqueId *id, int rank, const struct nccl_workload_args *a);

/*
 * Makes the fake driver show args->ranks devices, waits at the gate, then forks a process per
 * rank running run_rank; 0 when every rank exited 0, 1 otherwise, 3 when fork failed.
 */
static inline int nccl_workload_run(const struct nccl_workload_args *args, nccl_rank_fn run_rank)
{
	ncclUniqueId id;
	int failed = 0, status;
	char count[8];

	snprintf(count, sizeof(count), "%d", args->ranks);
	setenv("FAKE_CUDA_DEVICES", count, 1);
	workload_gate();
	expect(ncclGetUniqueId(&id), ncclSuccess, "ncclGetUniqueId");
	for (int r = 0; r < args->ranks; r++) {
		pid_t pid = fork();

		if (pid < 0)
			return 3;
		if (!pid)
			exit(run_rank(&id, r, args));
	}
	while (wait(&status) > 0)
		failed |= !WIFEXITED(status) || WEXITSTATUS(status);
	return failed ? 1 : 0;
}

#endif
