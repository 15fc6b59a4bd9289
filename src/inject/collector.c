/* The collection thread: wakes at the application's syncs and periodically, runs the hooks. */
#include <errno.h>
#include <time.h>
#include "inject/calib.h"
#include "inject/collector.h"
#include "inject/copy_timing.h"
#include "inject/inject.h"
#include "inject/instrument.h"
#include "inject/own_thread.h"

#define TICK_NS 1000000 /* how often the thread looks */

/*
 * Whether to collect now. The collection's driver calls slow the launches of
 * an application that is submitting work (bench/RESULTS.md, runs 11-13), so
 * it runs after an application thread synchronized (what it launched is
 * complete, and it often does host work next), when an instrumentation asks
 * (a probe pool running low), and otherwise every GRTRACE_GPU_DRAIN_MS.
 * Under the lock.
 */
static bool collect_due(struct instr_state *is)
{
	if (atomic_exchange(&is->sync_seen, 0) ||
	    inject_now_ns() - is->last_collect_ns >= is->st->cfg.drain_ms * 1000000ULL)
		return true;
	for (unsigned u = 0; u < is->ninstr; u++)
		if (is->instr[u]->collect_due && is->instr[u]->collect_due(is->instr[u]->self))
			return true;
	return false;
}

static void *collector_main(void *arg)
{
	struct instr_state *is = arg;
	struct inject_stats *stats = &is->st->stats;

	pthread_mutex_lock(&is->lock);
	is->last_collect_ns = inject_now_ns();
	while (!is->stop) {
		struct timespec ts;
		uint64_t t0, t1;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += TICK_NS;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&is->wake, &is->lock, &ts);
		if (atomic_load(&is->captures))
			continue;
		t0 = inject_now_ns();
		for (unsigned u = 0; u < is->ninstr; u++)
			if (is->instr[u]->tick)
				is->instr[u]->tick(is->instr[u]->self);
		t1 = inject_now_ns();
		stat_add(&stats->drain_topup_ns, t1 - t0);
		/* copies timed with events: without the lock, which the launch path needs */
		pthread_mutex_unlock(&is->lock);
		copy_timing_collect(is->st, false);
		pthread_mutex_lock(&is->lock);
		if (is->stop)
			break;
		/* device times are mapped with the opening calibration: wait for it */
		if (!instr_any_pending(is) || is->st->cfg.collect_at_exit ||
		    !calib_opening_finished(is->st) || !collect_due(is))
			continue;
		is->last_collect_ns = t1;
		for (unsigned u = 0; u < is->ninstr; u++)
			if (is->instr[u]->collect)
				is->instr[u]->collect(is->instr[u]->self, INSTR_COLLECT_RUNNING);
	}
	pthread_mutex_unlock(&is->lock);
	return NULL;
}

int collector_start(struct instr_state *is)
{
	if (is->thread_started)
		return 0;
	/* its name marks its driver calls as grtrace's in the cuda source's records */
	if (own_thread_start(&is->thread, "probes", collector_main, is))
		return -EAGAIN;
	is->thread_started = true;
	return 0;
}

void collector_stop(struct instr_state *is)
{
	pthread_mutex_lock(&is->lock);
	if (is->thread_started) {
		is->stop = true;
		pthread_cond_signal(&is->wake);
		pthread_mutex_unlock(&is->lock);
		pthread_join(is->thread, NULL);
		pthread_mutex_lock(&is->lock);
		is->thread_started = false;
	}
	pthread_mutex_unlock(&is->lock);
}
