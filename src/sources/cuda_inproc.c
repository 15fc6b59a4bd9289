/* The recorder's end of the in-process cuda path: per-thread call rings drained into cuda records. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <linux/types.h>
#include "common/clock.h"
#include "common/log.h"
#include "common/tsc_timeline.h"
#include "common/u64_map.h"
#include "inject/call_launch.h"
#include "inject/call_record.h"
#include "sources/cuda.h"
#include "sources/cuda_events.h"
#include "sources/cuda_inproc.h"
#include "sources/inject_preload.h"
#include "sources/session.h"
#include "sources/source.h"
#include "sources/stack_store.h"
#include "trace/records_core.h"

#define DEFAULT_RINGS 64
#define DEFAULT_RING_KB 4096
/*
 * Drained every 1 to 4 ms besides the session's tick. At 1 ms a thread
 * writing 2.5M calls a second fills ~0.4 MB of its ring between two drains,
 * less than the quarter of it a thread that just started over has until the
 * recorder reads its pad (call_rings.h). Each drain wakes the recorder, a
 * cost its CPU pays whether calls come or not (2% of one on the development
 * VM at 1 ms with no call at all): where the busiest ring wrote less than
 * DRAIN_SHARE of its data area since the last drain, the period grows with
 * the room left, up to 4 ms, and it is back at 1 ms at the first drain
 * that finds a ring writing faster. A jump from under 1/4 to over 2.5M calls
 * a second within one 4 ms period, just after its thread started over, is
 * what could then still be lost (and counted).
 */
#define DRAIN_PERIOD_MIN_NS 1000000ull
#define DRAIN_PERIOD_MAX_NS 4000000ull
#define DRAIN_SHARE 64
#define REAP_PERIOD_NS 500000000ull
#define DRAIN_ROUNDS 16
#define NO_HEAD UINT64_MAX

/*
 * The event of the thread that writes a ring, its identity as its last
 * CALL_REC_THREAD said: each short launch record is filled into it.
 */
struct ring_thread {
	struct cuda_event event;
	bool known; /* event holds the identity of the ring's current owner */
};

struct cuda_inproc {
	struct grt_session *session;
	struct cuda_decoder *decoder;
	char path[PATH_MAX];
	struct call_rings_head *head;
	uint64_t map_len;
	uint32_t nrings;     /* the geometry as created: never read back from the file */
	uint32_t ring_bytes;
	uint64_t *lost_seen; /* per ring: its `lost` already counted */
	uint64_t *heads;     /* per ring: the head a drain round reads it to, NO_HEAD when free */
	/* per ring: its last CALL_REC_THREAD, which its short launch records lean on */
	struct ring_thread *threads;
	uint32_t ring;	     /* the ring being read */
	uint64_t unringed_seen;
	uint32_t roomless_seen;	      /* threads that found no room for a ring, as last read */
	uint64_t roomless_calls_seen; /* and the calls they lost, counted as dropped */
	int timer_fd;
	uint64_t period_ns;  /* the drain timer's period now */
	uint64_t tick_bytes; /* the most any ring was read by since the last drain period began */
	uint64_t next_reap_ns;
	struct u64_map procs;	    /* pids seen recording here */
	uint32_t last_pid;	    /* the last call's: a storm comes from one process */
	struct u64_map thread_lost; /* pid << 32 | tid -> calls lost */
	struct stack_store stacks;  /* ids from CUDA_INPROC_STACK_BASE */
	/* rings whose threads stamp calls with the raw TSC are converted here (cfg.tsc) */
	bool tsc;
	struct tsc_timeline timeline;
	bool ring_tsc; /* whether the ring being read stamps its calls with the raw TSC */
	uint64_t malformed;
	int sink_error;
};

/* The knobs: rings (threads recorded at once) and KiB per ring, for tests and big machines. */
static uint32_t env_u32(const char *name, uint32_t fallback, uint32_t lo, uint32_t hi)
{
	const char *v = getenv(name);
	long n = v ? strtol(v, NULL, 10) : 0;

	return v && n >= (long)lo && n <= (long)hi ? (uint32_t)n : fallback;
}

static int create_rings(struct cuda_inproc *ip, const struct call_rings_config *cfg)
{
	uint32_t kb = env_u32("GRTRACE_CUDA_RING_KB", DEFAULT_RING_KB, 4, 1 << 20), bytes = 4096;
	void *map;
	int err;

	while (bytes < kb * 1024u)
		bytes <<= 1;
	ip->nrings = env_u32("GRTRACE_CUDA_RINGS", DEFAULT_RINGS, 1, 4096);
	ip->ring_bytes = bytes;
	ip->map_len = call_rings_size(ip->nrings, ip->ring_bytes);
	/*
	 * The headers are given their memory here; each ring's data area is
	 * given its own by the thread that claims it (inject/ring_pages.c), so
	 * that 64 idle rings take no room in /dev/shm.
	 */
	err = inject_shm_create("calls", ip->map_len,
				ip->map_len - (uint64_t)ip->nrings * ip->ring_bytes, ip->path,
				sizeof(ip->path), &map);
	if (err)
		return err;
	ip->head = map;
	ip->lost_seen = calloc(ip->nrings, sizeof(*ip->lost_seen));
	ip->heads = calloc(ip->nrings, sizeof(*ip->heads));
	ip->threads = calloc(ip->nrings, sizeof(*ip->threads));
	if (!ip->lost_seen || !ip->heads || !ip->threads)
		return -ENOMEM;
	return call_rings_init(ip->head, ip->nrings, ip->ring_bytes, cfg);
}

/* ---- records ---- */

static void status_line(struct cuda_inproc *ip, uint32_t pid, int status, const char *text)
{
	grt_session_status(ip->session, GRT_SRC_CUDA, pid, status, text);
}

/* The first call of a process: the trace says which path records it. */
static void note_process(struct cuda_inproc *ip, uint32_t pid)
{
	char line[128];

	if (pid == ip->last_pid)
		return;
	ip->last_pid = pid;
	if (u64_map_get(&ip->procs, pid, NULL) || u64_map_put(&ip->procs, pid, 1))
		return;
	snprintf(line, sizeof(line),
		 "pid %u: CUDA calls recorded in-process (libgrtrace-inject)", pid);
	status_line(ip, pid, 0, line);
}

int cuda_inproc_stack(struct cuda_inproc *ip, uint32_t stack_id, uint64_t *ips)
{
	return stack_store_get(&ip->stacks, stack_id, ips);
}

/*
 * A call with a stack or a string: both copied out next to the event, the
 * stack given its id.
 */
static __attribute__((noinline)) void on_call_with_extras(struct cuda_inproc *ip,
							    const struct cuda_event *ev,
							    const void *payload, uint32_t len,
							    bool no_return)
{
	struct cuda_text_event t = {.event = *ev};
	uint64_t ips[CUDA_STACK_DEPTH];
	uint32_t depth = (uint32_t)ev->stack_id, text_len = no_return ? 0 : ev->text_len;
	int err;

	if (depth > CUDA_STACK_DEPTH || text_len > CUDA_TEXT_LEN ||
	    len < sizeof(t.event) + depth * sizeof(uint64_t) + text_len) {
		ip->malformed++;
		return;
	}
	memcpy(ips, (const uint8_t *)payload + sizeof(t.event), depth * sizeof(uint64_t));
	memcpy(t.text, (const uint8_t *)payload + sizeof(t.event) + depth * sizeof(uint64_t),
	       text_len);
	t.event.text_len = text_len;
	t.event.stack_id = depth ? stack_store_id(&ip->stacks, ips, depth) : -1;
	if (no_return)
		t.event.flags |= CUDA_EVENT_NO_RETURN;
	note_process(ip, t.event.pid);
	err = cuda_decoder_event(ip->decoder, &t.event, sizeof(t.event) + text_len);
	if (err && !ip->sink_error)
		ip->sink_error = err;
}

/*
 * The ring to read next, and whether its thread stamps calls with the raw
 * TSC. The thread sets that when it claims the ring, before its first
 * record, and the ring stays its until the recorder frees it: read after
 * the head that published the records to read, it holds for all of them.
 * Read once a drain, not per record: a load from the ring's header for each
 * record would pull header lines the thread writes to the recorder's CPU.
 */
static void select_ring(struct cuda_inproc *ip, uint32_t i, struct call_ring *r)
{
	ip->ring = i;
	ip->ring_tsc = ip->tsc && atomic_load_explicit(&r->clock, memory_order_relaxed) ==
					  CALL_CLOCK_TSC;
}

/* A call stamped with the raw TSC, on CLOCK_MONOTONIC as every other record. */
static void to_monotonic(struct cuda_inproc *ip, struct cuda_event *ev, bool no_return)
{
	ev->entry_ns = tsc_timeline_ns(&ip->timeline, ev->entry_ns);
	if (no_return)
		return;
	ev->return_ns = tsc_timeline_ns(&ip->timeline, ev->return_ns);
	if (ev->return_ns < ev->entry_ns) /* two CPUs' counters may differ by a few ticks */
		ev->return_ns = ev->entry_ns;
}

/* A call without stack or string, on the recorder's timeline, to the decoder. */
static inline __attribute__((always_inline)) void decode_call(struct cuda_inproc *ip,
							       struct cuda_event *ev, bool no_return)
{
	int err;

	if (ip->ring_tsc)
		to_monotonic(ip, ev, no_return);
	if (no_return)
		ev->flags |= CUDA_EVENT_NO_RETURN;
	note_process(ip, ev->pid);
	err = cuda_decoder_event(ip->decoder, ev, sizeof(*ev));
	if (err && !ip->sink_error)
		ip->sink_error = err;
}

/*
 * One call from a ring. Everything is copied out of the shared memory first
 * and checked on the copy: the traced process can change it at any time.
 */
static void on_call(struct cuda_inproc *ip, const void *payload, uint32_t len, bool no_return)
{
	struct cuda_event ev;

	if (len < sizeof(ev)) {
		ip->malformed++;
		return;
	}
	memcpy(&ev, payload, sizeof(ev));
	if (ev.stack_id || (ev.text_len && !no_return)) {
		if (ip->ring_tsc)
			to_monotonic(ip, &ev, no_return);
		on_call_with_extras(ip, &ev, payload, len, no_return);
		return;
	}
	/* in the ring, stack_id is the number of ips that follow; in the decoder, an id */
	ev.stack_id = -1;
	ev.text_len = 0;
	decode_call(ip, &ev, no_return);
}

/* A thread says who writes the ring's next short launch records. */
static void on_thread(struct cuda_inproc *ip, const void *payload, uint32_t len)
{
	struct ring_thread *t = &ip->threads[ip->ring];
	struct call_rec_thread said;

	if (len < sizeof(said)) {
		ip->malformed++;
		return;
	}
	memcpy(&said, payload, sizeof(said));
	call_thread_event(&said, &t->event);
	/* in the decoder, an id: none */
	t->event.stack_id = -1;
	t->known = true;
}

/*
 * A launch's short record (most calls: every launch of a storm), made the
 * event its long record would be in its thread's event.
 */
static inline __attribute__((always_inline)) void on_launch(struct cuda_inproc *ip,
							     const void *payload, uint32_t len,
							     bool no_return)
{
	struct ring_thread *t = &ip->threads[ip->ring];

	if (!t->known || !call_launch_fill(&t->event, payload, len)) {
		ip->malformed++;
		return;
	}
	decode_call(ip, &t->event, no_return);
}

/* A record at payload, of type, len bytes; no_return: the call is still inside the driver. */
static inline __attribute__((always_inline)) void on_record(struct cuda_inproc *ip, uint32_t type,
							     const void *payload, uint32_t len,
							     bool no_return)
{
	if (type == CALL_REC_LAUNCH)
		on_launch(ip, payload, len, no_return);
	else if (type == CALL_REC_CALL)
		on_call(ip, payload, len, no_return);
	else if (type == CALL_REC_THREAD && !no_return)
		on_thread(ip, payload, len);
	else
		ip->malformed++;
}

/* ---- rings ---- */

static void count_lost(struct cuda_inproc *ip, uint32_t i, struct call_ring *r)
{
	uint64_t lost = atomic_load_explicit(&r->lost, memory_order_relaxed), key, before = 0;

	if (lost <= ip->lost_seen[i])
		return;
	grt_session_count_drop(ip->session, GRT_SRC_CUDA, lost - ip->lost_seen[i]);
	key = (uint64_t)r->pid << 32 | r->tid;
	u64_map_get(&ip->thread_lost, key, &before);
	u64_map_put(&ip->thread_lost, key, before + lost - ip->lost_seen[i]);
	ip->lost_seen[i] = lost;
}

/* A thread that exited: its ring, drained, is free for another. */
static void free_ring(struct cuda_inproc *ip, uint32_t i, struct call_ring *r)
{
	count_lost(ip, i, r);
	ip->lost_seen[i] = 0;
	atomic_store(&r->lost, 0);
	atomic_store(&r->pending, 0);
	atomic_store(&r->head, 0);
	atomic_store(&r->tail, 0);
	ip->threads[i].known = false;
	/*
	 * The next owner names itself only after its claim: until then the
	 * reaper must not find the dead one's ids there and free the ring under
	 * it (tgkill of pid 0 is refused, not ESRCH: such a ring counts alive).
	 */
	r->pid = 0;
	r->tid = 0;
	atomic_store_explicit(&r->state, CALL_RING_FREE, memory_order_release);
}

static uint8_t *ring_data(struct cuda_inproc *ip, uint32_t i)
{
	return call_rings_data(ip->head, ip->nrings, ip->ring_bytes, i);
}

static void on_ring_record(void *ctx, const struct call_ring_record *rec)
{
	on_record(ctx, rec->type, rec->payload, rec->len, false);
}

/* What ring i held up to head (call_ring_drain_to); whether it held anything. */
static bool drain_ring_to(struct cuda_inproc *ip, uint32_t i, uint64_t head)
{
	struct call_ring *r = call_rings_ring(ip->head, i);
	uint64_t before = atomic_load_explicit(&r->tail, memory_order_relaxed), handed, read;

	select_ring(ip, i, r);
	handed = call_ring_drain_to(r, ring_data(ip, i), ip->ring_bytes, head, on_ring_record, ip);
	read = atomic_load_explicit(&r->tail, memory_order_relaxed) - before;
	if (read > ip->tick_bytes)
		ip->tick_bytes = read;

	count_lost(ip, i, r);
	return handed > 0;
}

static bool drain_ring(struct cuda_inproc *ip, uint32_t i)
{
	struct call_ring *r = call_rings_ring(ip->head, i);

	return drain_ring_to(ip, i, atomic_load_explicit(&r->head, memory_order_acquire));
}

/*
 * The call a thread is inside now, if any: a record written at the ring's
 * head but not committed. At the end of a recording (or when the thread is
 * found dead) it becomes a no-return record, as the uprobe path gives.
 */
static void flush_pending(struct cuda_inproc *ip, uint32_t i)
{
	struct call_ring *r = call_rings_ring(ip->head, i);
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint32_t len = atomic_load_explicit(&r->pending, memory_order_acquire);
	uint32_t off = (uint32_t)(head & (ip->ring_bytes - 1));
	const uint8_t *at;

	/* a head that moved meanwhile: the call returned (and a later one may be open elsewhere) */
	if (!len || atomic_load_explicit(&r->head, memory_order_acquire) != head || (off & 7) ||
	    (uint64_t)off + CALL_REC_HDR + len > ip->ring_bytes)
		return;
	at = ring_data(ip, i) + off;
	select_ring(ip, i, r);
	/* the type, written when the record was reserved; its length word only at the return */
	on_record(ip, ((const uint32_t *)at)[1], at + CALL_REC_HDR, len, true);
	atomic_store(&r->pending, 0);
	/* calls made inside it, written after it and never published: lost */
	atomic_fetch_add(&r->lost, atomic_exchange(&r->unpublished, 0));
	count_lost(ip, i, r);
}

static bool thread_alive(const struct call_ring *r)
{
	return !(syscall(SYS_tgkill, (int)r->pid, (int)r->tid, 0) && errno == ESRCH);
}

/* Rings of threads that are gone without saying so (exit of the process, a kill). */
static void reap_rings(struct cuda_inproc *ip)
{
	for (uint32_t i = 0; i < ip->nrings; i++) {
		struct call_ring *r = call_rings_ring(ip->head, i);
		uint32_t state = atomic_load_explicit(&r->state, memory_order_acquire);

		if (state == CALL_RING_FREE || (state == CALL_RING_OWNED && thread_alive(r)))
			continue;
		drain_ring(ip, i);
		flush_pending(ip, i);
		free_ring(ip, i, r);
	}
}

/* What a counter of lost calls in the shared head gained since *seen, counted as dropped. */
static void count_new_drops(struct cuda_inproc *ip, const _Atomic uint64_t *counter,
			    uint64_t *seen)
{
	uint64_t now = atomic_load_explicit(counter, memory_order_relaxed);

	if (now > *seen) {
		grt_session_count_drop(ip->session, GRT_SRC_CUDA, now - *seen);
		*seen = now;
	}
}

/*
 * Threads whose ring found no room in /dev/shm (inject/ring_pages.c): their
 * calls are counted lost, and the terminal told when the first of them
 * appear; the trace says so at the stop (note_losses).
 */
static void count_roomless(struct cuda_inproc *ip)
{
	uint32_t threads = atomic_load_explicit(&ip->head->roomless, memory_order_relaxed);

	count_new_drops(ip, &ip->head->roomless_calls, &ip->roomless_calls_seen);
	if (threads != ip->roomless_seen)
		grt_notice("cuda: %u thread(s) record nothing: /dev/shm has no room for a %u KiB "
			   "ring each (GRTRACE_CUDA_RING_KB, or a larger /dev/shm)",
			   threads, ip->ring_bytes >> 10);
	ip->roomless_seen = threads;
}

static void drain_all(struct cuda_inproc *ip)
{
	uint64_t now;

	/*
	 * A sample after every call committed so far: they are interpolated, and
	 * only those committed while this drain runs are extrapolated. (A sample
	 * that found no memory leaves the newest calls extrapolated a little further.)
	 */
	if (ip->tsc)
		tsc_timeline_sample(&ip->timeline);
	/*
	 * In rounds while calls keep coming: every thread's ring is read as often
	 * as the busiest's, and the rounds are bounded so that the session's other
	 * sources get their turn. A round first notes every ring's head, then reads
	 * each to the head noted. What one thread did before another's call (its
	 * cuModuleGetFunction before a launch of that function by another thread,
	 * an allocation before its free) must be decoded first; heads noted as
	 * each ring's turn came let a round read a launch and miss the name
	 * committed just after the namer's ring was read, a window as long as the
	 * round. Noted together, the window is the microseconds the noting takes.
	 */
	for (int round = 0; round < DRAIN_ROUNDS; round++) {
		bool any = false;

		for (uint32_t i = 0; i < ip->nrings; i++) {
			struct call_ring *r = call_rings_ring(ip->head, i);

			ip->heads[i] = atomic_load_explicit(&r->state, memory_order_acquire) !=
					       CALL_RING_FREE
					   ? atomic_load_explicit(&r->head, memory_order_acquire)
					   : NO_HEAD;
		}
		for (uint32_t i = 0; i < ip->nrings; i++)
			if (ip->heads[i] != NO_HEAD)
				any |= drain_ring_to(ip, i, ip->heads[i]);
		if (!any)
			break;
	}
	count_new_drops(ip, &ip->head->unringed, &ip->unringed_seen);
	count_roomless(ip);
	now = grt_monotonic_ns();
	if (now >= ip->next_reap_ns) {
		reap_rings(ip);
		ip->next_reap_ns = now + REAP_PERIOD_NS;
	}
}

int cuda_inproc_drain(struct cuda_inproc *ip)
{
	drain_all(ip);
	return ip->sink_error;
}

static int arm_timer(struct cuda_inproc *ip, uint64_t period_ns)
{
	struct itimerspec period = {
	    .it_interval = {.tv_sec = (time_t)(period_ns / 1000000000ull),
			    .tv_nsec = (long)(period_ns % 1000000000ull)},
	};

	period.it_value = period.it_interval;
	if (timerfd_settime(ip->timer_fd, 0, &period, NULL))
		return -errno;
	ip->period_ns = period_ns;
	return 0;
}

/*
 * The next drain period (DRAIN_PERIOD_*): the busiest ring's reading since
 * the last one, scaled to what it could write in DRAIN_SHARE of its area.
 */
static void pace_drains(struct cuda_inproc *ip)
{
	uint64_t share = ip->ring_bytes / DRAIN_SHARE, next;

	if (!ip->tick_bytes)
		next = DRAIN_PERIOD_MAX_NS;
	else if (ip->tick_bytes >= share)
		next = DRAIN_PERIOD_MIN_NS;
	else
		next = ip->period_ns * share / ip->tick_bytes;
	if (next < DRAIN_PERIOD_MIN_NS)
		next = DRAIN_PERIOD_MIN_NS;
	if (next > DRAIN_PERIOD_MAX_NS)
		next = DRAIN_PERIOD_MAX_NS;
	ip->tick_bytes = 0;
	/* a timer that cannot be re-armed keeps the period it has */
	if (next != ip->period_ns)
		arm_timer(ip, next);
}

static int on_timer(void *ctx)
{
	struct cuda_inproc *ip = ctx;
	uint64_t expirations;
	int err;

	if (read(ip->timer_fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		return -errno;
	err = cuda_inproc_drain(ip);
	pace_drains(ip);
	return err;
}

bool cuda_inproc_has_process(const struct cuda_inproc *ip, uint32_t pid)
{
	return u64_map_get(&ip->procs, pid, NULL);
}

/* ---- life ---- */

static void free_inproc(struct cuda_inproc *ip)
{
	if (ip->timer_fd >= 0)
		close(ip->timer_fd);
	if (ip->head)
		munmap(ip->head, ip->map_len);
	if (ip->path[0])
		unlink(ip->path);
	u64_map_destroy(&ip->procs);
	u64_map_destroy(&ip->thread_lost);
	stack_store_destroy(&ip->stacks);
	tsc_timeline_free(&ip->timeline);
	free(ip->lost_seen);
	free(ip->heads);
	free(ip->threads);
	free(ip);
}

int cuda_inproc_start(struct grt_session *s, struct cuda_decoder *decoder,
		      const struct call_rings_config *cfg, struct cuda_inproc **out)
{
	struct cuda_inproc *ip = calloc(1, sizeof(*ip));
	struct call_rings_config rings_cfg = *cfg;
	char lib[PATH_MAX];
	int err;

	if (!ip)
		return grt_session_fail(s, -ENOMEM, "cuda: out of memory");
	ip->session = s;
	ip->decoder = decoder;
	ip->timer_fd = -1;
	u64_map_init(&ip->procs);
	u64_map_init(&ip->thread_lost);
	stack_store_init(&ip->stacks, CUDA_INPROC_STACK_BASE);
	if (gpu_find_inject_lib(lib, sizeof(lib))) {
		free_inproc(ip);
		return grt_session_fail(s, -ENOENT,
					"cuda: --cuda-via inject needs libgrtrace-inject.so beside "
					"grtrace (build it, or set GRTRACE_INJECT_LIB), or use "
					"--cuda-via uprobe");
	}
	/* the TSC, where it keeps CLOCK_MONOTONIC, is the cheaper timestamp for the threads */
	ip->tsc = tsc_timeline_usable() && !tsc_timeline_init(&ip->timeline);
	rings_cfg.tsc = ip->tsc;
	err = create_rings(ip, &rings_cfg);
	if (err) {
		free_inproc(ip);
		return grt_session_fail(s, err, "cuda: cannot create the call rings in /dev/shm: %s",
					strerror(-err));
	}
	err = inject_preload(s, lib);
	if (!err)
		err = inject_add_env(s, GRT_INJECT_ENV_CALLS, ip->path);
	if (err) {
		free_inproc(ip);
		return grt_session_fail(s, err, "cuda: cannot set the command's environment: %s",
					strerror(-err));
	}
	ip->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (ip->timer_fd < 0 || (err = arm_timer(ip, DRAIN_PERIOD_MIN_NS)) ||
	    (err = grt_session_watch_fd(s, ip->timer_fd, on_timer, ip))) {
		err = err ? err : -errno;
		free_inproc(ip);
		return grt_session_fail(s, err, "cuda: drain timer: %s", strerror(-err));
	}
	ip->next_reap_ns = grt_monotonic_ns() + REAP_PERIOD_NS;
	*out = ip;
	return 0;
}

/* Per thread that lost calls, one line: which thread, how many. */
static void note_losses(struct cuda_inproc *ip)
{
	uint64_t key, lost;
	char line[160];

	for (size_t i = 0; u64_map_iter(&ip->thread_lost, &i, &key, &lost);) {
		snprintf(line, sizeof(line),
			 "pid %u tid %u: %llu CUDA calls lost (its in-process ring was full, or they "
			 "were left inside the driver)",
			 (unsigned)(key >> 32), (unsigned)key, (unsigned long long)lost);
		status_line(ip, (uint32_t)(key >> 32), -ENOSPC, line);
	}
	if (ip->unringed_seen) {
		snprintf(line, sizeof(line),
			 "%llu CUDA calls lost: more threads than rings (GRTRACE_CUDA_RINGS=%u)",
			 (unsigned long long)ip->unringed_seen, ip->nrings);
		status_line(ip, 0, -ENOSPC, line);
	}
	if (ip->roomless_seen) {
		snprintf(line, sizeof(line),
			 "%llu CUDA calls lost: /dev/shm had no room for the rings of %u thread(s), "
			 "%u KiB each (GRTRACE_CUDA_RING_KB, or a larger /dev/shm)",
			 (unsigned long long)ip->roomless_calls_seen, ip->roomless_seen,
			 ip->ring_bytes >> 10);
		status_line(ip, 0, -ENOSPC, line);
	}
	if (ip->malformed) {
		snprintf(line, sizeof(line), "%llu malformed in-process call records skipped",
			 (unsigned long long)ip->malformed);
		status_line(ip, 0, -EINVAL, line);
	}
}

void cuda_inproc_stop(struct cuda_inproc *ip)
{
	if (!ip)
		return;
	if (ip->head) {
		drain_all(ip);
		for (uint32_t i = 0; i < ip->nrings; i++)
			flush_pending(ip, i);
		note_losses(ip);
	}
	free_inproc(ip);
}
