/* The tags of docs/jobs.md: each a strict comparison of one part of a job against its threshold. */
#include <errno.h>
#include <stdlib.h>
#include "analysis/jobs/tags.h"
#include "analysis/nccl_calls.h"

#define US 1000ull

void job_thresholds_default(struct job_thresholds *t)
{
	*t = (struct job_thresholds){
		.submit_share_ppm = 300000,
		.submit_min_ns = 200 * US,
		.queue_share_ppm = 500000,
		.queue_min_ns = 500 * US,
		.tail_factor_milli = 1500,
		.tail_min_jobs = 10,
		.dep_share_ppm = 400000,
		.dep_min_ns = 0,
		.fault_min_count = 1,
		.offcpu_min_ns = 0,
		.coll_wait_min_ns = 1000 * US,
		.late_window_ns = JOB_LATE_WINDOW_AUTO,
		.batch_gap_ns = 20 * US,
		.max_open_jobs = 1u << 20,
		.idle_share_ppm = 500000,
	};
}

void kernel_exec_table_init(struct kernel_exec_table *t)
{
	*t = (struct kernel_exec_table){ 0 };
	u64_map_init(&t->index);
}

void kernel_exec_table_destroy(struct kernel_exec_table *t)
{
	for (uint32_t i = 0; i < t->count; i++)
		grt_stats_destroy(&t->hists[i]);
	free(t->hists);
	free(t->keys);
	free(t->p90);
	u64_map_destroy(&t->index);
	*t = (struct kernel_exec_table){ 0 };
}

static int slot_of(struct kernel_exec_table *t, uint64_t key, uint32_t *slot)
{
	uint64_t v;

	if (u64_map_get(&t->index, key, &v)) {
		*slot = (uint32_t)(v - 1);
		return 0;
	}
	if (t->count == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 64;
		struct grt_stats *h = realloc(t->hists, cap * sizeof(*h));
		uint64_t *k;

		if (!h)
			return -ENOMEM;
		t->hists = h;
		k = realloc(t->keys, cap * sizeof(*k));
		if (!k)
			return -ENOMEM;
		t->keys = k;
		t->cap = cap;
	}
	if (u64_map_put(&t->index, key, t->count + 1))
		return -ENOMEM;
	grt_stats_init(&t->hists[t->count]);
	t->keys[t->count] = key;
	*slot = t->count++;
	return 0;
}

int kernel_exec_table_add_sample(struct kernel_exec_table *t, uint64_t kernel_key, uint64_t exec_ns)
{
	uint32_t slot;
	int err;

	free(t->p90); /* a new sample makes the cached P90s stale */
	t->p90 = NULL;
	err = slot_of(t, kernel_key, &slot);
	return err ? err : grt_stats_add(&t->hists[slot], exec_ns);
}

int kernel_exec_table_add(struct kernel_exec_table *t, const struct job *j)
{
	if (j->kind != JOB_KERNEL || !(j->known & JOB_K_EXEC))
		return 0;
	return kernel_exec_table_add_sample(t, j->kernel_key, j->t_exec);
}

uint64_t kernel_exec_table_p90(struct kernel_exec_table *t, uint64_t kernel_key,
			       uint64_t *jobs)
{
	uint64_t v;

	*jobs = 0;
	if (!u64_map_get(&t->index, kernel_key, &v))
		return 0;
	if (!t->p90) {
		t->p90 = calloc(t->count ? t->count : 1, sizeof(*t->p90));
		if (!t->p90)
			return 0;
		for (uint32_t i = 0; i < t->count; i++)
			t->p90[i] = grt_stats_percentile(&t->hists[i], 90);
	}
	*jobs = t->hists[v - 1].count;
	return t->p90[v - 1];
}

/* part > share of whole, exactly: part * 1e6 > ppm * whole */
static int above_share(uint64_t part, uint64_t whole, uint32_t ppm)
{
	return (unsigned __int128)part * 1000000u > (unsigned __int128)ppm * whole;
}

static void tag_if(struct job *j, int cond, enum job_tag tag)
{
	if (cond)
		j->tags |= 1u << tag;
}

static void tag_long_tail(const struct job_thresholds *t, struct kernel_exec_table *exec,
			  struct job *j)
{
	uint64_t p90, jobs;

	if (j->kind != JOB_KERNEL || !(j->known & JOB_K_EXEC))
		return;
	if (!exec) {
		j->flags |= JOB_F_TAIL_UNCHECKED;
		return;
	}
	p90 = kernel_exec_table_p90(exec, j->kernel_key, &jobs);
	if (jobs < t->tail_min_jobs || !jobs) {
		j->flags |= JOB_F_TAIL_UNCHECKED;
		return;
	}
	j->tail_limit = (uint64_t)((unsigned __int128)p90 * t->tail_factor_milli / 1000u);
	tag_if(j, (unsigned __int128)j->t_exec * 1000u > (unsigned __int128)p90 * t->tail_factor_milli,
	       JOB_TAG_EXEC_LONG_TAIL);
}

void job_tags_apply(const struct job_thresholds *t, struct kernel_exec_table *exec,
		    struct job *j)
{
	int total = j->known & JOB_K_TOTAL;

	j->tags = 0;
	j->tail_limit = 0;
	if (j->flags & JOB_F_FAILED)
		return;
	tag_if(j, total && (j->known & JOB_K_SUBMIT_HOST) && j->t_submit_host > t->submit_min_ns &&
			  above_share(j->t_submit_host, j->t_total, t->submit_share_ppm),
	       JOB_TAG_HOST_SUBMIT_SLOW);
	tag_if(j, total && (j->known & JOB_K_QUEUE) && j->t_queue > t->queue_min_ns &&
			  above_share(j->t_queue, j->t_total, t->queue_share_ppm),
	       JOB_TAG_QUEUE_WAIT);
	tag_long_tail(t, exec, j);
	tag_if(j, total && (j->known & JOB_K_GPU_WAIT) && j->t_gpu_wait > t->dep_min_ns &&
			  above_share(j->t_gpu_wait, j->t_total, t->dep_share_ppm),
	       JOB_TAG_DEPENDENCY_WAIT);
	tag_if(j, j->vm_faults >= t->fault_min_count && j->vm_faults > 0, JOB_TAG_VM_FAULT);
	tag_if(j, j->offcpu_count > 0 && j->t_offcpu > t->offcpu_min_ns, JOB_TAG_PREEMPTED);
	tag_if(j, j->collective && j->collective->wait_ns > t->coll_wait_min_ns,
	       JOB_TAG_COLLECTIVE_WAIT);
}

uint64_t job_tag_cost(const struct job *j, enum job_tag tag)
{
	switch (tag) {
	case JOB_TAG_HOST_SUBMIT_SLOW:
		return j->t_submit_host;
	case JOB_TAG_QUEUE_WAIT:
		return j->t_queue;
	case JOB_TAG_EXEC_LONG_TAIL:
		return j->t_exec > j->tail_limit ? j->t_exec - j->tail_limit : 0;
	case JOB_TAG_DEPENDENCY_WAIT:
		return j->t_gpu_wait;
	case JOB_TAG_VM_FAULT:
		/* instantaneous faults carry no duration: the faulting job's run stands for them */
		return j->t_vm_fault ? j->t_vm_fault : j->t_exec;
	case JOB_TAG_PREEMPTED:
		return j->t_offcpu;
	case JOB_TAG_COLLECTIVE_WAIT:
		return j->collective ? j->collective->wait_ns : 0;
	default:
		return 0;
	}
}

bool job_tag_interval(const struct job *j, enum job_tag tag, uint64_t *from, uint64_t *to)
{
	uint64_t cost = job_tag_cost(j, tag), queue_from, until;

	if (!cost)
		return false;
	switch (tag) {
	case JOB_TAG_HOST_SUBMIT_SLOW:
		*from = j->api_enter;
		break;
	case JOB_TAG_QUEUE_WAIT:
		queue_from = (j->flags & (JOB_F_SYNC_CALL | JOB_F_RETURN_UNSAMPLED)) ? j->api_enter
										       : j->submit;
		*from = queue_from;
		break;
	case JOB_TAG_EXEC_LONG_TAIL:
		*from = j->start + j->tail_limit;
		break;
	case JOB_TAG_DEPENDENCY_WAIT:
		until = j->dep_ready && j->dep_ready < j->start ? j->dep_ready : j->start;
		*from = until > cost ? until - cost : 0;
		break;
	case JOB_TAG_VM_FAULT:
		*from = j->start ? j->start : (j->submit ? j->submit : j->api_enter);
		break;
	case JOB_TAG_PREEMPTED:
		*from = j->api_enter;
		break;
	case JOB_TAG_COLLECTIVE_WAIT:
		*from = j->collective->wait_from;
		break;
	default:
		return false;
	}
	*to = *from + cost;
	return true;
}
