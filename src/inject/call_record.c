/* In-process recording of CUDA driver calls: the cuda source's records, built in the calling thread. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "inject/call_launch.h"
#include "inject/call_record.h"
#include "inject/call_rings.h"
#include "inject/inject.h"
#include "inject/interpose.h"
#include "inject/ring_pages.h"
#include "common/tsc_counter.h"
#include "sources/cuda.h"
#include "sources/cuda_api.h"
#include "trace/records_cuda.h"

/*
 * Each call becomes the same struct cuda_event the uprobe programs of
 * sources/cuda.bpf.c fill, decoded the same way from the same argument
 * values, so the recorder turns both into identical records with one
 * decoder. Differences that remain are the path's, not the data's: see
 * docs/cuda.md ("In-process recording").
 */

#define EXPORT __attribute__((visibility("default")))
#define STACK_DEPTH CUDA_STACK_DEPTH

bool call_record_on;
bool call_record_raw_tsc;

/*
 * What every recorded call reads of the process, in one cache line: after a
 * real launch, whose driver work evicts most of what the wrapper touched,
 * each further line the path needs is another miss.
 */
static struct {
	struct call_rings_head *rings;
	uint32_t pid;
	uint32_t ppid;
	uint32_t launch_return_every; /* the rings' configuration, copied */
	bool args;
	bool raw_tsc; /* timestamps are the raw TSC (the recorder converts them) */
	/* Bumped whenever a thread may have a new name; each thread compares its copy. */
	atomic_uint comm_generation;
	/* Bumped in a forked child: every ring pointer inherited from the parent is the parent's. */
	atomic_uint fork_generation;
	/* the rseq area's offset from the thread pointer (cpu_id at +4), where glibc registered one */
	long rseq_offset;
	bool have_rseq;
	bool have_key;
	pthread_key_t exit_key;
	uint32_t ring_bytes; /* every ring's data area */
	bool launch_stacks;  /* launches carry their user stacks (the long record) */
	uint64_t map_len;
} rec_state __attribute__((aligned(64)));

_Static_assert(sizeof(rec_state) <= 64, "the process's hot state fits one line");

/*
 * Per api, what the hot path asks of cuda_api.c and of the configuration,
 * looked up once at load.
 */
static struct {
	uint8_t cls;
	bool legacy32; /* a pre-3.2 (32-bit) entry point */
	bool launch;
	bool stack; /* its records carry the user stack */
	bool text;  /* its records carry a string */
} apis[GRT_CUDA_API_COUNT];

_Static_assert(CUDA_CLASS_COUNT < 256, "classes fit a byte");

/*
 * A thread whose ring the recorder keeps up with starts over at the ring's
 * start (call_rings.h) only once this much time went by since it last wrote
 * there, in the clock's units: 30 ms of CLOCK_MONOTONIC, or of a TSC ticking
 * at 2 to 5 GHz 15 to 6 ms, against a drain every 1 ms: at the rate it wrote
 * so far, what lies before the pad takes that long to write again, and the
 * recorder reads the pad long before. A burst after a quiet spell has the
 * quarter or more before the pad, ~2.5 ms of 2.5 M calls a second.
 */
#define START_OVER_AFTER 30000000ull

/*
 * Calls made inside a recorded call on the same thread (a profiler's CUPTI
 * callback calling the driver's entry points): how deep they are recorded.
 * A call deeper still is counted lost.
 */
#define CALL_NEST_MAX 3
/*
 * How much deeper on the stack a call's wrapper frame is than the open
 * call's when it is made inside that call: past the rest of that wrapper's
 * frame, the driver's and the callback's (192 bytes and more through the
 * fake driver's -O0 code; a real driver's are larger). Two calls from one
 * caller differ by the stack arguments only, 48 bytes for cuLaunchKernel's
 * five: a call less deep than this comes after an open call the thread
 * left without its return.
 */
#define CALL_NEST_MIN_BYTES 128

/* A timestamp: the raw TSC where the recorder converts it, else CLOCK_MONOTONIC. */
static inline uint64_t call_clock(void)
{
	return rec_state.raw_tsc ? grt_tsc_read() : inject_now_ns();
}

/*
 * The thread's state. What a recorded launch reads and writes comes first,
 * in two cache lines, for the reason rec_state is one line. Everything a
 * launch needs to know before it writes its record is here, not in the
 * ring's shared header: a call whose next load waits for a line a real
 * launch evicted waits for each such line in turn. Aligned to 64 bytes, not
 * more: glibc refuses to dlopen() a library whose initial-exec TLS asks for
 * more alignment than the static TLS block's (64 on x86-64), and the
 * driver's injection hook loads this library with dlopen().
 */
struct call_thread {
	_Alignas(64) struct call_ring *ring; /* NULL: none claimed yet */
	uint8_t *data;
	struct call_ring_producer prod;
	uint64_t last_entry; /* the last call's entry time, in the clock's units */
	uint64_t lap_start;  /* when the thread last wrote at its ring's start */
	uintptr_t stack_lo, stack_hi;
	/* the launch inside the driver now, its short record's length: its return needs no more */
	struct call_rec_launch *open_launch;
	uint32_t open_len; /* the open record's length, a long record's as reserved */
	uint32_t depth;	   /* recorded calls inside the driver now: more than 1 inside each other */
	uintptr_t open_frame; /* the innermost open call's wrapper frame: a call inside it is deeper */
	unsigned comm_generation; /* of comm; 0: not read yet */
	bool thread_said;	  /* its ring holds a CALL_REC_THREAD with comm as it is now */
	/* the rest: per claim, per name, and the sampled launch returns' countdown */
	_Alignas(64) uint32_t tid;
	unsigned ring_generation;
	uint32_t launches_to_skip; /* --launch-returns countdown */
	/* why the thread has no ring (enum ringless): its calls are counted, no claim retried */
	uint8_t ringless;
	char comm[CUDA_COMM_LEN];
	struct cuda_event *open_long; /* the long record open now, if the innermost is one */
	/* the records of the calls around the innermost, held open in the ring (call_ring_hold) */
	struct held_call {
		void *rec;
		uintptr_t frame;
		uint32_t len;
	} held[CALL_NEST_MAX];
};

_Static_assert(offsetof(struct call_thread, tid) == 128, "a launch's thread state fits two lines");

enum ringless {
	RINGLESS_NOT = 0,
	RINGLESS_ALL_TAKEN, /* every ring was taken */
	RINGLESS_NO_ROOM,   /* no room in /dev/shm for the ring's pages (ring_pages.c) */
};

static __thread struct call_thread me __attribute__((tls_model("initial-exec")));

/* ---- the process ---- */

EXPORT __attribute__((noinline)) void grt_cuda_inproc_begin(uint32_t pid)
{
	/* the recorder's uprobe reads the argument; keep the call */
	__asm__ volatile("" : : "r"(pid) : "memory");
}

static void announce_process(void)
{
	grt_cuda_inproc_begin(rec_state.pid);
	atomic_fetch_add_explicit(&rec_state.rings->processes, 1, memory_order_relaxed);
}

static void thread_exit(void *unused)
{
	if (me.ring && me.ring_generation == atomic_load(&rec_state.fork_generation))
		atomic_store_explicit(&me.ring->state, CALL_RING_CLOSED, memory_order_release);
	me.ring = NULL;
}

/*
 * After an exec the main thread keeps its id but not its memory: the ring the
 * image before claimed for it would look alive forever. It is closed here,
 * drained by the recorder and freed.
 */
static void close_rings_of_old_image(void)
{
	struct call_rings_head *h = rec_state.rings;
	uint32_t tid = inject_tid();

	for (uint32_t i = 0; i < h->nrings; i++) {
		struct call_ring *r = call_rings_ring(h, i);
		uint32_t owned = CALL_RING_OWNED;

		if (r->pid == rec_state.pid && r->tid == tid)
			atomic_compare_exchange_strong(&r->state, &owned, CALL_RING_CLOSED);
	}
}

static bool class_has_text(enum cuda_probe_class cls);
static bool class_has_stack(enum cuda_probe_class cls, const struct call_rings_config *cfg);

static void index_apis(const struct call_rings_config *cfg)
{
	for (uint32_t api = 0; api < GRT_CUDA_API_COUNT; api++) {
		enum cuda_probe_class cls = cuda_api_class(api);

		apis[api].cls = (uint8_t)cls;
		apis[api].legacy32 = cuda_api_is_legacy32(api);
		apis[api].launch = cls < CUDA_CLASS_COUNT && cuda_class_is_launch(cls);
		apis[api].stack = cls < CUDA_CLASS_COUNT && class_has_stack(cls, cfg);
		apis[api].text = cls < CUDA_CLASS_COUNT && class_has_text(cls);
	}
}

/*
 * The rseq area glibc registered for each thread holds the thread's CPU, kept
 * by the kernel: read in place, it saves a call into libc per record. Looked
 * up by name, so that a glibc without it (before 2.35) still loads the library.
 */
static void find_rseq(void)
{
	const long *offset = inject_real_dlsym(RTLD_DEFAULT, "__rseq_offset");
	const unsigned *size = inject_real_dlsym(RTLD_DEFAULT, "__rseq_size");

	rec_state.have_rseq = offset && size && *size >= 8;
	rec_state.rseq_offset = rec_state.have_rseq ? *offset : 0;
}

/*
 * The calls' two timestamps are the raw TSC when the recorder converts them,
 * unless the gpu source records here too (its launch path opens its own
 * bracket at the record's entry time, in CLOCK_MONOTONIC) or the environment
 * asks for clock_gettime.
 */
static bool want_raw_tsc(const struct call_rings_config *cfg)
{
	const char *clock = getenv(GRT_INJECT_ENV_CLOCK);

	return cfg->tsc && !inject_gpu_recording() && !(clock && !strcmp(clock, "monotonic"));
}

void call_record_load(void)
{
	const char *path = getenv(GRT_INJECT_ENV_CALLS);
	struct stat sb;
	void *map;
	int fd;

	if (!path || !*path || !ring_pages_load(path))
		return;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &sb) || sb.st_size < (off_t)CALL_RINGS_HEAD_BYTES) {
		close(fd);
		return;
	}
	map = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return;
	if (call_rings_check(map, (uint64_t)sb.st_size)) {
		munmap(map, (size_t)sb.st_size);
		return;
	}
	rec_state.rings = map;
	rec_state.ring_bytes = rec_state.rings->ring_bytes;
	atomic_store(&rec_state.comm_generation, 1);
	rec_state.map_len = (uint64_t)sb.st_size;
	rec_state.pid = (uint32_t)getpid();
	close_rings_of_old_image();
	rec_state.ppid = (uint32_t)getppid();
	rec_state.have_key = !pthread_key_create(&rec_state.exit_key, thread_exit);
	rec_state.launch_return_every = rec_state.rings->cfg.launch_return_every;
	rec_state.args = rec_state.rings->cfg.args;
	rec_state.launch_stacks = rec_state.rings->cfg.stacks && rec_state.rings->cfg.launch_stacks;
	rec_state.raw_tsc = want_raw_tsc(&rec_state.rings->cfg);
	call_record_raw_tsc = rec_state.raw_tsc;
	index_apis(&rec_state.rings->cfg);
	find_rseq();
	if (inject()->cfg.debug)
		inject_debug("call timestamps: %s",
			     rec_state.raw_tsc ? "the TSC, converted by the recorder" : "clock_gettime");
	announce_process();
	call_record_on = true;
}

void call_record_after_fork(void)
{
	if (!rec_state.rings)
		return;
	/* the forking thread's ring stays the parent's: the child's threads claim their own */
	atomic_fetch_add(&rec_state.fork_generation, 1);
	me.ring = NULL;
	me.data = NULL;
	me.tid = 0;
	/* a call the parent was inside is not the child's to finish (call_record_exit) */
	me.depth = 0;
	me.prod.held = 0;
	me.open_launch = NULL;
	me.open_long = NULL;
	rec_state.pid = (uint32_t)getpid();
	rec_state.ppid = (uint32_t)getppid();
	announce_process();
}

void call_record_comm_changed(void)
{
	/* never 0, a thread's "not read yet" */
	if (atomic_fetch_add_explicit(&rec_state.comm_generation, 1, memory_order_relaxed) + 1 == 0)
		atomic_fetch_add_explicit(&rec_state.comm_generation, 1, memory_order_relaxed);
}

/* ---- the thread ---- */

static void read_stack_bounds(void)
{
	pthread_attr_t attr;
	size_t size = 0;
	void *lo = NULL;

	me.stack_lo = me.stack_hi = 0;
	if (pthread_getattr_np(pthread_self(), &attr))
		return;
	if (!pthread_attr_getstack(&attr, &lo, &size)) {
		me.stack_lo = (uintptr_t)lo;
		me.stack_hi = (uintptr_t)lo + size;
	}
	pthread_attr_destroy(&attr);
}

/*
 * A free ring for this thread, or false (every ring taken, or no room for
 * one in /dev/shm: its calls are counted lost).
 */
static __attribute__((noinline, cold)) bool claim_ring(void)
{
	struct call_rings_head *h = rec_state.rings;
	unsigned gen = atomic_load(&rec_state.fork_generation);
	uint8_t *data;

	if (me.ringless && me.ring_generation == gen)
		return false;
	me.tid = inject_tid();
	me.ring_generation = gen;
	for (uint32_t i = 0; i < h->nrings; i++) {
		struct call_ring *r = call_rings_ring(h, i);
		uint32_t expected = CALL_RING_FREE;

		if (atomic_load_explicit(&r->state, memory_order_relaxed) != CALL_RING_FREE ||
		    !atomic_compare_exchange_strong(&r->state, &expected, CALL_RING_OWNED))
			continue;
		r->pid = rec_state.pid;
		r->tid = me.tid;
		data = call_rings_data(h, h->nrings, h->ring_bytes, i);
		/* every page now, or none of this thread's calls (ring_pages.c) */
		if (!ring_pages_take(data, h->ring_bytes, (uint64_t)(data - (uint8_t *)h),
				     atomic_load_explicit(&r->pages_ready, memory_order_relaxed))) {
			r->pid = 0;
			r->tid = 0;
			atomic_store_explicit(&r->state, CALL_RING_FREE, memory_order_release);
			atomic_fetch_add_explicit(&h->roomless, 1, memory_order_relaxed);
			me.ringless = RINGLESS_NO_ROOM;
			return false;
		}
		atomic_store_explicit(&r->pages_ready, 1, memory_order_relaxed);
		atomic_store_explicit(&r->clock,
				      rec_state.raw_tsc ? CALL_CLOCK_TSC : CALL_CLOCK_MONOTONIC,
				      memory_order_relaxed);
		me.ring = r;
		me.data = data;
		me.prod = (struct call_ring_producer){0};
		me.open_launch = NULL;
		me.depth = 0;
		me.ringless = RINGLESS_NOT;
		me.thread_said = false;
		me.lap_start = me.last_entry = call_clock();
		read_stack_bounds();
		if (rec_state.have_key)
			pthread_setspecific(rec_state.exit_key, &me);
		return true;
	}
	me.ringless = RINGLESS_ALL_TAKEN;
	return false;
}

/*
 * Whether the thread has a ring; a call of a thread without one (every ring
 * taken) is counted lost. A forked child's only thread drops its parent's
 * ring in the fork handler (call_record_after_fork): a ring a thread holds is
 * its own.
 */
static inline bool thread_ready(void)
{
	if (__builtin_expect(me.ring != NULL, 1) || claim_ring())
		return true;
	atomic_fetch_add_explicit(me.ringless == RINGLESS_NO_ROOM ? &rec_state.rings->roomless_calls
								  : &rec_state.rings->unringed,
				  1, memory_order_relaxed);
	return false;
}

/*
 * The thread's name as it is now, read again only after it may have changed
 * (generations start at 1: a thread's 0 is a name never read).
 */
static __attribute__((noinline, cold)) void read_comm(unsigned gen)
{
	char name[17] = "";

	prctl(PR_GET_NAME, name);
	memset(me.comm, 0, sizeof(me.comm));
	memcpy(me.comm, name, strnlen(name, CUDA_COMM_LEN - 1));
	me.comm_generation = gen;
	me.thread_said = false;
}

static inline void refresh_comm(void)
{
	unsigned gen = atomic_load_explicit(&rec_state.comm_generation, memory_order_relaxed);

	if (__builtin_expect(me.comm_generation != gen, 0))
		read_comm(gen);
}

static inline void fill_comm(char *out)
{
	refresh_comm();
	memcpy(out, me.comm, CUDA_COMM_LEN);
}

/* ---- user stacks ---- */

/* The address a uprobe at real reports: past an endbr64 landing pad, where it is placed. */
static uint64_t probed_address(const void *real)
{
	static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};

	if (real && !memcmp(real, endbr64, sizeof(endbr64)))
		return (uint64_t)(uintptr_t)real + 4;
	return (uint64_t)(uintptr_t)real;
}

/* This library's code, from its ELF header to the end of its text (the linker's symbols). */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));
extern const char __etext[] __attribute__((visibility("hidden")));

static bool in_this_library(uintptr_t ip)
{
	return ip >= (uintptr_t)__ehdr_start && ip < (uintptr_t)__etext;
}

/*
 * The application's stack at the driver's entry, as a uprobe's frame-pointer
 * walk gives it: the driver function, the call site, then one return address
 * per frame. Only frames inside this thread's stack are followed: code built
 * without frame pointers leaves garbage there, which must not be dereferenced.
 * The wrapper of a call around this one (a call inside a call) is this
 * library's, not the application's: left out, as no uprobe sees it.
 */
static uint32_t capture_stack(uint64_t *ips, void *frame, const void *real)
{
	const uintptr_t *fp = frame;
	uint32_t n = 0;

	ips[n++] = probed_address(real);
	if (!fp || (uintptr_t)fp < me.stack_lo || (uintptr_t)fp + 16 > me.stack_hi)
		return n;
	ips[n++] = fp[1];
	fp = (const uintptr_t *)fp[0];
	while (n < STACK_DEPTH && fp && !((uintptr_t)fp & 7) && (uintptr_t)fp >= me.stack_lo &&
	       (uintptr_t)fp + 16 <= me.stack_hi) {
		const uintptr_t *next = (const uintptr_t *)fp[0];

		if (!fp[1])
			break;
		if (!in_this_library(fp[1]))
			ips[n++] = fp[1];
		if (next && next <= fp)
			break;
		fp = next;
	}
	return n;
}

/* ---- decoding the arguments, as cuda.bpf.c does ---- */

#define USER_PTR_MIN 0x10000ull
#define USER_PTR_MAX 0x7ffffffff000ull
#define ARG_SLOT_SPAN 0x10000ull
#define PAGE 4096ull

/*
 * The words are read as the uprobe path reads them, past the end of a
 * shorter argument (an int) and of the parameter array, within mapped pages:
 * deliberately, so a sanitizer build must not stop the application for it.
 * Only memory known to be mapped is read: the thread's own stack (where
 * launch stubs put their arguments), and the page of the first argument,
 * which the driver itself reads.
 */
#define READS_PAST_OBJECTS __attribute__((no_sanitize("address")))

/* a word at any address: arguments are as aligned as the application made them */
typedef uint64_t unaligned_u64 __attribute__((aligned(1), may_alias));

/* The kernel's argument words into args: how many were readable. */
READS_PAST_OBJECTS static uint32_t read_kernel_args(uint64_t *args, uint64_t params, bool want)
{
	const uint64_t *slots = (const uint64_t *)(uintptr_t)params;
	uint64_t lo = me.stack_lo, hi = me.stack_hi, prev = 0, first_page;
	uint32_t n, i;

	if (!params || !want)
		return 0;
	/*
	 * The slots past the kernel's own may lie past the array's page, maybe
	 * an unmapped one: read up to its end, or further on the thread's own
	 * stack, which is mapped (where launch stubs keep the array: one in 256
	 * placements straddles a page), as the uprobe path's reads do.
	 */
	n = CUDA_LAUNCH_ARG_WORDS;
	if (!(params >= lo && params + n * 8 <= hi)) {
		n = (uint32_t)((PAGE - (params & (PAGE - 1))) / 8);
		if (n > CUDA_LAUNCH_ARG_WORDS)
			n = CUDA_LAUNCH_ARG_WORDS;
	}
	if (!n)
		return 0;
	/* an argument is read on the stack, or on the page of the first one, which the driver reads */
	first_page = slots[0] & ~(PAGE - 1);
	for (i = 0; i < n; i++) {
		uint64_t slot = slots[i], word = 0;

		if (slot - USER_PTR_MIN > USER_PTR_MAX - USER_PTR_MIN ||
		    (prev && (slot > prev ? slot - prev : prev - slot) > ARG_SLOT_SPAN) ||
		    (!(slot >= lo && slot + 1 <= hi) && (slot & ~(PAGE - 1)) != first_page))
			break;
		if ((slot & (PAGE - 1)) <= PAGE - 8) {
			/* one load, not eight: this runs for every argument word of every launch */
			word = *(const volatile unaligned_u64 *)(uintptr_t)slot;
		} else { /* cut at the page's end, as the uprobe path cuts it; not memcpy: the
			  * sanitizer intercepts it */
			const volatile uint8_t *bytes = (const volatile uint8_t *)(uintptr_t)slot;

			for (unsigned b = 0; b < PAGE - (slot & (PAGE - 1)); b++)
				word |= (uint64_t)bytes[b] << (8 * b);
		}
		args[i] = word;
		prev = slot;
	}
	return i;
}

/* CUDA_MEMCPY3D (the _v2 layout): only what the record needs. */
struct copy3d_side {
	uint64_t x_bytes, y, z, lod;
	uint32_t memory_type, pad;
	uint64_t host, device, array, reserved, pitch, height;
};

struct copy3d {
	struct copy3d_side src, dst;
	uint64_t width_bytes, height, depth;
};

_Static_assert(sizeof(struct copy3d) == 200, "CUDA_MEMCPY3D layout");

static uint64_t side_start(uint32_t type, uint64_t host, uint64_t device, uint64_t array,
			   uint64_t offset)
{
	if (type == CU_MEMORYTYPE_HOST)
		return host + offset;
	if (type == 3) /* CU_MEMORYTYPE_ARRAY */
		return array;
	return device + offset;
}

static void decode_copy_2d(struct cuda_copy_args *c, uint64_t desc)
{
	const CUDA_MEMCPY2D *p = (const void *)(uintptr_t)desc;

	c->src = side_start((uint32_t)p->srcMemoryType, (uint64_t)(uintptr_t)p->srcHost,
			    p->srcDevice, (uint64_t)(uintptr_t)p->srcArray,
			    p->srcY * p->srcPitch + p->srcXInBytes);
	c->dst = side_start((uint32_t)p->dstMemoryType, (uint64_t)(uintptr_t)p->dstHost,
			    p->dstDevice, (uint64_t)(uintptr_t)p->dstArray,
			    p->dstY * p->dstPitch + p->dstXInBytes);
	c->src_type = (uint8_t)p->srcMemoryType;
	c->dst_type = (uint8_t)p->dstMemoryType;
	c->bytes = p->WidthInBytes * p->Height;
}

static uint64_t copy3d_offset(const struct copy3d_side *s)
{
	return (s->z * s->height + s->y) * s->pitch + s->x_bytes;
}

static void decode_copy_3d(struct cuda_copy_args *c, uint64_t desc)
{
	const struct copy3d *p = (const void *)(uintptr_t)desc;

	c->src = side_start(p->src.memory_type, p->src.host, p->src.device, p->src.array,
			    copy3d_offset(&p->src));
	c->dst = side_start(p->dst.memory_type, p->dst.host, p->dst.device, p->dst.array,
			    copy3d_offset(&p->dst));
	c->src_type = (uint8_t)p->src.memory_type;
	c->dst_type = (uint8_t)p->dst.memory_type;
	c->bytes = p->width_bytes * p->height * p->depth;
}

/*
 * A launch's arguments into its short record, every field of it written
 * (the record is not zeroed first): what a graph launch or a launch without
 * a configuration lacks is 0, as in the uprobe path's event.
 */
static inline __attribute__((always_inline)) void
decode_launch(struct call_rec_launch *l, enum cuda_probe_class cls, const uint64_t *a,
	      bool want_args)
{
	if (cls == CUDA_CLASS_GRAPH_LAUNCH || cls == CUDA_CLASS_LAUNCH_EX) {
		const CUlaunchConfig *cfg = (const void *)(uintptr_t)a[0];
		bool graph = cls == CUDA_CLASS_GRAPH_LAUNCH;

		memset(l->grid, 0, offsetof(struct call_rec_launch, ret) -
				       offsetof(struct call_rec_launch, grid));
		l->function = graph ? a[0] : a[1];
		l->stream = graph ? a[1] : 0;
		l->arg_words = graph ? 0 : (uint8_t)read_kernel_args(l->args, a[2], want_args);
		if (graph || !cfg)
			return;
		l->grid[0] = cfg->gridDimX;
		l->grid[1] = cfg->gridDimY;
		l->grid[2] = cfg->gridDimZ;
		l->block[0] = cfg->blockDimX;
		l->block[1] = cfg->blockDimY;
		l->block[2] = cfg->blockDimZ;
		l->shared_mem = cfg->sharedMemBytes;
		l->stream = (uint64_t)(uintptr_t)cfg->hStream;
	} else {
		l->function = a[0];
		l->grid[0] = (uint32_t)a[1];
		l->grid[1] = (uint32_t)a[2];
		l->grid[2] = (uint32_t)a[3];
		l->block[0] = (uint32_t)a[4];
		l->block[1] = (uint32_t)a[5];
		l->block[2] = (uint32_t)a[6];
		l->shared_mem = (uint32_t)a[7];
		l->stream = a[8];
		l->arg_words = (uint8_t)read_kernel_args(l->args, a[9], want_args);
	}
}

/* Everything a class's entry probe reads (cuda.bpf.c, ENTER(class)). */
static void decode_entry(struct cuda_event *ev, enum cuda_probe_class cls, const uint64_t *a)
{
	union cuda_call_args *x = &ev->args;

	switch (cls) {
	case CUDA_CLASS_MEM_ALLOC:
	case CUDA_CLASS_MEM_ALLOC_MANAGED:
	case CUDA_CLASS_MEM_ALLOC_HOST:
	case CUDA_CLASS_MEM_HOST_ALLOC:
		x->alloc.out = a[0];
		x->alloc.bytes = a[1];
		break;
	case CUDA_CLASS_MEM_ALLOC_ASYNC:
		x->alloc.out = a[0];
		x->alloc.bytes = a[1];
		x->alloc.stream = a[2];
		break;
	case CUDA_CLASS_MEM_ALLOC_FROM_POOL_ASYNC:
		x->alloc.out = a[0];
		x->alloc.bytes = a[1];
		x->alloc.stream = a[3];
		break;
	case CUDA_CLASS_MEM_ALLOC_PITCH:
		x->alloc.out = a[0];
		x->alloc.pitch_out = a[1];
		x->alloc.bytes = a[3];
		break;
	case CUDA_CLASS_MEM_FREE:
	case CUDA_CLASS_MEM_FREE_HOST:
		x->free.addr = a[0];
		break;
	case CUDA_CLASS_MEM_FREE_ASYNC:
		x->free.addr = a[0];
		x->free.stream = a[1];
		break;
	case CUDA_CLASS_MEMCPY:
	case CUDA_CLASS_MEMCPY_HTOD:
	case CUDA_CLASS_MEMCPY_DTOH:
	case CUDA_CLASS_MEMCPY_DTOD:
		x->copy.dst = a[0];
		x->copy.src = a[1];
		x->copy.bytes = a[2];
		x->copy.dims = 1;
		break;
	case CUDA_CLASS_MEMCPY_ASYNC:
	case CUDA_CLASS_MEMCPY_HTOD_ASYNC:
	case CUDA_CLASS_MEMCPY_DTOH_ASYNC:
	case CUDA_CLASS_MEMCPY_DTOD_ASYNC:
		x->copy.dst = a[0];
		x->copy.src = a[1];
		x->copy.bytes = a[2];
		x->copy.stream = a[3];
		x->copy.dims = 1;
		break;
	case CUDA_CLASS_MEMCPY_PEER:
	case CUDA_CLASS_MEMCPY_PEER_ASYNC:
		/* (dst, dstContext, src, srcContext, bytes[, stream]) */
		x->copy.dst = a[0];
		x->copy.dst_ctx = a[1];
		x->copy.src = a[2];
		x->copy.src_ctx = a[3];
		x->copy.bytes = a[4];
		x->copy.stream = cls == CUDA_CLASS_MEMCPY_PEER_ASYNC ? a[5] : 0;
		x->copy.dims = 1;
		break;
	case CUDA_CLASS_MEMCPY_2D:
	case CUDA_CLASS_MEMCPY_2D_ASYNC:
		x->copy.dims = 2;
		x->copy.stream = cls == CUDA_CLASS_MEMCPY_2D_ASYNC ? a[1] : 0;
		if (!(ev->flags & CUDA_EVENT_LEGACY32) && a[0])
			decode_copy_2d(&x->copy, a[0]);
		break;
	case CUDA_CLASS_MEMCPY_3D:
	case CUDA_CLASS_MEMCPY_3D_ASYNC:
		x->copy.dims = 3;
		x->copy.stream = cls == CUDA_CLASS_MEMCPY_3D_ASYNC ? a[1] : 0;
		if (!(ev->flags & CUDA_EVENT_LEGACY32) && a[0])
			decode_copy_3d(&x->copy, a[0]);
		break;
	case CUDA_CLASS_MEMSET_D8:
	case CUDA_CLASS_MEMSET_D16:
	case CUDA_CLASS_MEMSET_D32:
	case CUDA_CLASS_MEMSET_D8_ASYNC:
	case CUDA_CLASS_MEMSET_D16_ASYNC:
	case CUDA_CLASS_MEMSET_D32_ASYNC:
		x->memset.dst = a[0];
		x->memset.value = (uint32_t)a[1];
		x->memset.count = a[2];
		if (cls >= CUDA_CLASS_MEMSET_D8_ASYNC)
			x->memset.stream = a[3];
		break;
	case CUDA_CLASS_CTX_SYNCHRONIZE:
		break;
	case CUDA_CLASS_STREAM_SYNCHRONIZE:
	case CUDA_CLASS_STREAM_QUERY:
		x->sync.stream = a[0];
		break;
	case CUDA_CLASS_EVENT_SYNCHRONIZE:
	case CUDA_CLASS_EVENT_QUERY:
		x->sync.event = a[0];
		break;
	case CUDA_CLASS_STREAM_WAIT_EVENT:
		x->sync.stream = a[0];
		x->sync.event = a[1];
		break;
	case CUDA_CLASS_EVENT_RECORD:
		x->sync.event = a[0];
		x->sync.stream = a[1];
		break;
	case CUDA_CLASS_MODULE_LOAD:
	case CUDA_CLASS_LIBRARY_LOAD_FROM_FILE:
		x->module.out = a[0];
		x->module.path = a[1];
		break;
	case CUDA_CLASS_MODULE_LOAD_DATA:
	case CUDA_CLASS_MODULE_LOAD_FAT_BINARY:
	case CUDA_CLASS_LIBRARY_LOAD_DATA:
		x->module.out = a[0];
		x->module.image = a[1];
		break;
	case CUDA_CLASS_MODULE_UNLOAD:
	case CUDA_CLASS_LIBRARY_UNLOAD:
		x->module.module = a[0];
		break;
	case CUDA_CLASS_MODULE_GET_FUNCTION:
	case CUDA_CLASS_LIBRARY_GET_KERNEL:
		x->name.out = a[0];
		x->name.module = a[1];
		x->name.name = a[2];
		break;
	case CUDA_CLASS_KERNEL_GET_FUNCTION:
		x->name.out = a[0];
		x->name.module = a[1];
		break;
	case CUDA_CLASS_FUNC_GET_NAME:
		x->name.out = a[0];
		x->name.handle = a[1];
		break;
	/* contexts and devices: the arguments cuda.bpf.c's save_context/save_device_query take */
	case CUDA_CLASS_CTX_CREATE: /* (CUcontext *pctx, flags, CUdevice) */
	case CUDA_CLASS_CTX_CREATE_V4: /* (CUcontext *pctx, params, flags, CUdevice) */
	case CUDA_CLASS_CTX_RETAIN: /* (CUcontext *pctx, CUdevice) */
		x->context.out = a[0];
		x->context.device = (int32_t)a[cls == CUDA_CLASS_CTX_CREATE	 ? 2
						: cls == CUDA_CLASS_CTX_CREATE_V4 ? 3
										    : 1];
		break;
	case CUDA_CLASS_CTX_SET_CURRENT:
	case CUDA_CLASS_CTX_PUSH_CURRENT:
		x->context.ctx = a[0];
		x->context.device = -1;
		break;
	case CUDA_CLASS_CTX_POP_CURRENT: /* pctx may be NULL */
		x->context.out = a[0];
		x->context.device = -1;
		break;
	case CUDA_CLASS_DEVICE_PCI_BUS_ID: /* (char *pciBusId, int len, CUdevice) */
		x->device.out = a[0];
		x->device.device = (int32_t)a[2];
		break;
	case CUDA_CLASS_DEVICE_UUID: /* (CUuuid *, CUdevice) */
		x->device.out = a[0];
		x->device.device = (int32_t)a[1];
		break;
	default:
		break;
	}
}

static bool class_has_text(enum cuda_probe_class cls)
{
	return cls == CUDA_CLASS_MODULE_LOAD || cls == CUDA_CLASS_LIBRARY_LOAD_FROM_FILE ||
	       cls == CUDA_CLASS_MODULE_GET_FUNCTION || cls == CUDA_CLASS_LIBRARY_GET_KERNEL ||
	       cls == CUDA_CLASS_FUNC_GET_NAME || cls == CUDA_CLASS_DEVICE_PCI_BUS_ID;
}

static bool class_has_stack(enum cuda_probe_class cls, const struct call_rings_config *cfg)
{
	if (!cfg->stacks)
		return false;
	if (cuda_class_is_launch(cls))
		return cfg->launch_stacks;
	return cls >= CUDA_CLASS_MEM_ALLOC && cls <= CUDA_CLASS_MEM_ALLOC_FROM_POOL_ASYNC;
}

/* Whether this launch's return is recorded: the thread's 1st, N+1st, 2N+1st... */
static bool launch_return_sampled(uint32_t every)
{
	if (every <= 1)
		return every == 1;
	if (me.launches_to_skip) {
		me.launches_to_skip--;
		return false;
	}
	me.launches_to_skip = every - 1;
	return true;
}

/* An untrusted-length string into the record's text, cut as the uprobe path cuts it. */
static void copy_text(struct cuda_event *ev, uint64_t str)
{
	char *text = (char *)(ev + 1) + ev->stack_id * sizeof(uint64_t);
	size_t n;

	if (!str)
		return;
	n = strnlen((const char *)(uintptr_t)str, CUDA_TEXT_LEN - 1);
	memcpy(text, (const char *)(uintptr_t)str, n);
	text[n] = 0;
	ev->text_len = (uint32_t)n + 1;
}

static uint64_t read_out(uint64_t out)
{
	return out ? *(const uint64_t *)(uintptr_t)out : 0;
}

/* ---- the hot path ---- */

/* The CPU the thread runs on, from the rseq area where there is one. */
static inline uint32_t current_cpu(void)
{
	int cpu = -1;

	if (__builtin_expect(rec_state.have_rseq, 1))
		cpu = *(const volatile int *)((const char *)__builtin_thread_pointer() +
					      rec_state.rseq_offset + 4);
	if (__builtin_expect(cpu < 0, 0))
		cpu = sched_getcpu();
	return cpu < 0 ? 0 : (uint32_t)cpu;
}

/* A record reserved at the data area's start begins a lap (START_OVER_AFTER). */
static inline void note_lap(const void *rec)
{
	if ((const uint8_t *)rec == me.data + CALL_REC_HDR)
		me.lap_start = me.last_entry;
}

static inline bool may_start_over(void)
{
	return me.last_entry - me.lap_start >= START_OVER_AFTER;
}

/* A record whole at once: to the consumer now, or after the held records of the calls around it. */
static inline __attribute__((always_inline)) void commit_whole(void *rec, uint32_t len,
							       bool after_held)
{
	if (after_held)
		call_ring_append(&me.prod, rec, len);
	else
		call_ring_commit(me.ring, &me.prod, rec, len);
}

/*
 * A call left open in the driver: what its return, a call inside it
 * (nested_enter()) and a stop meanwhile need. len: its record's length;
 * reserved: what the recorder reads if recording stops first (`pending`,
 * which belongs to the outermost open call).
 */
static inline __attribute__((always_inline)) void open_call(uint32_t len, uint32_t reserved,
							    void *frame, bool nested)
{
	me.open_len = len;
	me.open_frame = (uintptr_t)frame;
	me.depth = nested ? me.depth + 1 : 1;
	if (!nested)
		atomic_store_explicit(&me.ring->pending, reserved, memory_order_release);
}

/*
 * Who the thread is, in its ring before its first short launch record and
 * again after its name may have changed (call_launch.h). false when the ring
 * is full: the launch is counted lost there, and the record is tried again
 * at the next.
 */
static __attribute__((noinline, cold)) bool say_thread(void)
{
	struct call_rec_thread *t;

	t = call_ring_reserve(me.ring, &me.prod, me.data, rec_state.ring_bytes, CALL_REC_THREAD,
			      sizeof(*t), false);
	if (!t)
		return false;
	note_lap(t);
	*t = (struct call_rec_thread){.pid = rec_state.pid, .tid = me.tid, .ppid = rec_state.ppid};
	memcpy(t->comm, me.comm, CUDA_COMM_LEN);
	commit_whole(t, sizeof(*t), me.prod.held != 0); /* said inside a call: after its record */
	me.thread_said = true;
	return true;
}

static inline bool thread_said(void)
{
	refresh_comm();
	return __builtin_expect(me.thread_said, 1) || say_thread();
}

/*
 * A launch without a user stack: its short record, every field written once.
 * nested: inside another recorded call of the thread, whose length stays in
 * `pending` (nested_enter()).
 */
static inline __attribute__((always_inline)) struct call_rec_launch *
launch_enter(uint16_t api, enum cuda_probe_class cls, bool legacy32, const uint64_t *args,
	     void *frame, bool sampled, bool nested)
{
	struct call_rec_launch *l;

	me.open_launch = NULL;
	if (!thread_said())
		return NULL;
	l = call_ring_reserve(me.ring, &me.prod, me.data, rec_state.ring_bytes, CALL_REC_LAUNCH,
			      sizeof(*l), may_start_over());
	if (!l)
		return NULL;
	note_lap(l);
	l->return_ns = 0;
	l->ret = 0;
	l->api = api;
	l->flags = legacy32 ? CUDA_EVENT_LEGACY32 : 0;
	l->cpu = current_cpu();
	decode_launch(l, cls, args, rec_state.args);
	/* last: the call's time covers the driver, not this */
	l->entry_ns = me.last_entry = call_clock();
	if (!sampled) {
		l->flags |= CUDA_EVENT_RETURN_UNSAMPLED;
		commit_whole(l, call_launch_len(l->arg_words), nested);
		return NULL;
	}
	me.open_launch = l;
	open_call(call_launch_len(l->arg_words), sizeof(*l), frame, nested);
	return l;
}

/* A line the thread will write soon, fetched now with the right to write it. */
static inline void prefetch_for_write(const void *p)
{
#if defined(__x86_64__)
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

/*
 * Where the next launch's record goes, fetched for writing while the
 * application runs between its calls. A fresh line of the ring costs its
 * store a trip to memory, and the driver's next launch may wait for the
 * stores before it (its doorbell write is ordered after them): fetched
 * here, the lines are the thread's by then. (H100, run 67: 27 ns less a
 * launch than without it in the same run; bench/RESULTS.md.)
 */
static inline void prefetch_next_record(void)
{
	uint32_t off = (uint32_t)(me.prod.head & (rec_state.ring_bytes - 1));
	const uint8_t *next = me.data + off;

	prefetch_for_write(next);
	/* not past the ring's end, into another thread's ring */
	if (off + CALL_REC_HDR + sizeof(struct call_rec_launch) > rec_state.ring_bytes)
		return;
	prefetch_for_write(next + 64);
	prefetch_for_write(next + CALL_REC_HDR + sizeof(struct call_rec_launch) - 1);
}

/*
 * A launch returned. entry_ns and len: the record's, which the thread keeps
 * (me.open_launch): the return only writes, and waits for no line of the
 * record that the driver's work evicted.
 */
static inline void launch_return(struct call_rec_launch *l, CUresult r, uint64_t now_ns,
				 uint64_t entry_ns)
{
	/* first: the call's time ends where the driver returned */
	uint64_t ret_ns = now_ns && !rec_state.raw_tsc ? now_ns : call_clock();

	/* two CPUs' counters may differ by a few ns */
	l->return_ns = ret_ns < entry_ns ? entry_ns : ret_ns;
	l->ret = r;
}

static inline void launch_exit(struct call_rec_launch *l, CUresult r, uint64_t now_ns,
			       uint64_t entry_ns, uint32_t len)
{
	launch_return(l, r, now_ns, entry_ns);
	me.open_launch = NULL;
	me.depth = 0;
	atomic_store_explicit(&me.ring->pending, 0, memory_order_relaxed);
	call_ring_commit(me.ring, &me.prod, l, len);
	prefetch_next_record();
}

/*
 * Every other call (and a launch that carries its stack): the long record, a
 * struct cuda_event with its stack and string. Out of line: the launch path
 * above stays short and in few lines of code.
 */
static __attribute__((noinline)) struct cuda_event *long_enter(uint16_t api,
							       enum cuda_probe_class cls,
							       const uint64_t *args, void *frame,
							       const void *real, bool sampled,
							       bool nested)
{
	uint64_t ips[STACK_DEPTH];
	uint32_t depth = 0, len;
	struct cuda_event *ev;

	if (apis[api].stack)
		depth = capture_stack(ips, frame, real);
	len = (uint32_t)(sizeof(*ev) + depth * sizeof(uint64_t)) +
	      (apis[api].text ? CUDA_TEXT_LEN : 0);
	me.open_launch = NULL;
	ev = call_ring_reserve(me.ring, &me.prod, me.data, rec_state.ring_bytes, CALL_REC_CALL, len,
			       may_start_over());
	if (!ev)
		return NULL;
	note_lap(ev);
	/* the header whole (its padding and unused members zero), then the class's arguments */
	*(struct cuda_event *)ev = (struct cuda_event){
	    .pid = rec_state.pid,
	    .tid = me.tid,
	    .ppid = rec_state.ppid,
	    .cpu = current_cpu(),
	    .api = api,
	    .flags = apis[api].legacy32 ? CUDA_EVENT_LEGACY32 : 0,
	    /* in the ring, stack_id carries the number of ips that follow the event */
	    .stack_id = (int32_t)depth,
	};
	if (depth)
		memcpy(ev + 1, ips, depth * sizeof(uint64_t));
	fill_comm(ev->comm);
	if (apis[api].launch) { /* one with its stack */
		struct call_rec_launch l;

		decode_launch(&l, cls, args, rec_state.args);
		call_launch_args(&ev->args.launch, &l, l.args);
	} else {
		decode_entry(ev, cls, args);
	}
	/* last: the call's time covers the driver, not this */
	ev->entry_ns = me.last_entry = call_clock();
	if (!sampled) {
		ev->flags |= CUDA_EVENT_RETURN_UNSAMPLED;
		commit_whole(ev, (uint32_t)(sizeof(*ev) + depth * sizeof(uint64_t)), nested);
		return NULL;
	}
	me.open_long = ev;
	open_call(len, len, frame, nested);
	return ev;
}

/*
 * The thread left its open calls without their returns (a longjmp out of the
 * driver, from a signal handler): they are counted lost, and whatever was
 * written after the outermost held one (the ring's head stopped there) is
 * padded over and let go, so that the thread's later calls reach the
 * recorder again.
 */
static __attribute__((noinline, cold)) void abandon_open_calls(void)
{
	/* held: the outermost and every call after it; else the one open call */
	uint32_t lost = me.prod.held ? 1 + atomic_load_explicit(&me.ring->unpublished,
								memory_order_relaxed)
				     : me.depth;

	atomic_fetch_add_explicit(&me.ring->lost, lost, memory_order_relaxed);
	if (me.prod.held) {
		uint32_t size = rec_state.ring_bytes;
		uint32_t from = (uint32_t)((uint8_t *)me.held[0].rec - CALL_REC_HDR - me.data);
		uint32_t to = (uint32_t)(me.prod.head & (size - 1));

		if (to > from) {
			call_ring_pad(me.data + from, to - from);
		} else {
			call_ring_pad(me.data + from, size - from);
			call_ring_pad(me.data, to);
		}
		me.prod.held = 0;
		atomic_store_explicit(&me.ring->head, me.prod.head, memory_order_release);
	}
	me.depth = 0;
	me.open_launch = NULL;
	me.open_long = NULL;
	atomic_store_explicit(&me.ring->unpublished, 0, memory_order_relaxed);
	atomic_store_explicit(&me.ring->pending, 0, memory_order_relaxed);
}

/*
 * A call made inside a recorded call of the same thread: the driver called
 * back into an application's code (a profiler's CUPTI callback) that calls
 * an entry point again. The open record of the call around it is held in
 * the ring (its bytes taken, nothing published) and this call's record goes
 * after it; the consumer sees them all when the outermost call returns
 * (nested_exit()).
 */
static __attribute__((noinline, cold)) void *nested_enter(uint16_t api, enum cuda_probe_class cls,
							  bool legacy32, const uint64_t *args,
							  void *frame, const void *real,
							  bool sampled, bool short_launch)
{
	uintptr_t inner = me.depth > me.prod.held ? me.open_frame : me.held[me.prod.held - 1].frame;
	uint32_t depth;
	uint64_t head;
	void *rec;

	/* not deeper than the innermost open call: not inside it, which never returned */
	if ((uintptr_t)frame + CALL_NEST_MIN_BYTES > inner) {
		abandon_open_calls();
		if (short_launch)
			return launch_enter(api, cls, legacy32, args, frame, sampled, false);
		return long_enter(api, cls, args, frame, real, sampled, false);
	}
	if (me.depth > me.prod.held) { /* the innermost open call is not held yet */
		if (me.prod.held == CALL_NEST_MAX) {
			atomic_fetch_add_explicit(&me.ring->lost, 1, memory_order_relaxed);
			return NULL;
		}
		me.held[me.prod.held] = (struct held_call){
		    .rec = me.open_launch ? (void *)me.open_launch : (void *)me.open_long,
		    .frame = me.open_frame,
		    .len = me.open_len,
		};
		call_ring_hold(&me.prod, me.open_len);
	}
	head = me.prod.head;
	depth = me.depth;
	rec = short_launch ? (void *)launch_enter(api, cls, legacy32, args, frame, sampled, true)
			   : (void *)long_enter(api, cls, args, frame, real, sampled, true);
	/* written (left open, or whole without its return): unread if recording stops first */
	if (me.prod.head != head || me.depth != depth)
		atomic_fetch_add_explicit(&me.ring->unpublished, 1, memory_order_relaxed);
	return rec;
}

void *call_record_enter_slow(uint16_t api, const uint64_t *args, void *frame, const void *real)
{
	enum cuda_probe_class cls;
	bool sampled = true;

	if (inject_in_tool || api >= GRT_CUDA_API_COUNT || apis[api].cls >= CUDA_CLASS_COUNT)
		return NULL;
	cls = apis[api].cls;
	if (!thread_ready())
		return NULL;
	if (apis[api].launch)
		sampled = launch_return_sampled(rec_state.launch_return_every);
	if (__builtin_expect(me.depth != 0, 0))
		return nested_enter(api, cls, apis[api].legacy32, args, frame, real, sampled,
				    apis[api].launch && !apis[api].stack);
	if (apis[api].launch && !apis[api].stack)
		return launch_enter(api, cls, apis[api].legacy32, args, frame, sampled, false);
	return long_enter(api, cls, args, frame, real, sampled, false);
}

/*
 * cuLaunchKernel and cuLaunchKernel_ptsz, from their wrappers, which passed
 * the library's own launches through already: the class is known and the
 * entry points are not pre-3.2 ones, so nothing is looked up per api (one
 * more line a launch would wait for).
 */
void *call_record_launch_slow(uint16_t api, const uint64_t *args, void *frame, const void *real)
{
	bool sampled;

	if (!thread_ready())
		return NULL;
	sampled = launch_return_sampled(rec_state.launch_return_every);
	if (__builtin_expect(me.depth != 0, 0))
		return nested_enter(api, CUDA_CLASS_LAUNCH, false, args, frame, real, sampled,
				    !rec_state.launch_stacks);
	if (__builtin_expect(rec_state.launch_stacks, 0))
		return long_enter(api, CUDA_CLASS_LAUNCH, args, frame, real, sampled, false);
	return launch_enter(api, CUDA_CLASS_LAUNCH, false, args, frame, sampled, false);
}

/* A long record's results, read at the return; the length it is committed with. */
static uint32_t long_return(struct cuda_event *ev, CUresult r, uint64_t now_ns)
{
	enum cuda_probe_class cls = apis[ev->api].cls;
	union cuda_call_args *x = &ev->args;

	_Static_assert(offsetof(struct cuda_event, entry_ns) == 0, "call_record_entry_ns()");
	/* first: the call's time ends where the driver returned */
	ev->return_ns = now_ns && !rec_state.raw_tsc ? now_ns : call_clock();
	/* two CPUs' counters may differ by a few ns */
	if (ev->return_ns < ev->entry_ns)
		ev->return_ns = ev->entry_ns;
	ev->ret = r;
	switch (cls) {
	case CUDA_CLASS_MEM_ALLOC:
	case CUDA_CLASS_MEM_ALLOC_ASYNC:
	case CUDA_CLASS_MEM_ALLOC_MANAGED:
	case CUDA_CLASS_MEM_ALLOC_HOST:
	case CUDA_CLASS_MEM_HOST_ALLOC:
	case CUDA_CLASS_MEM_ALLOC_PITCH:
	case CUDA_CLASS_MEM_ALLOC_FROM_POOL_ASYNC:
		x->alloc.addr = read_out(x->alloc.out);
		x->alloc.pitch = read_out(x->alloc.pitch_out);
		break;
	case CUDA_CLASS_MODULE_LOAD:
	case CUDA_CLASS_LIBRARY_LOAD_FROM_FILE:
		x->module.module = read_out(x->module.out);
		copy_text(ev, x->module.path);
		break;
	case CUDA_CLASS_MODULE_LOAD_DATA:
	case CUDA_CLASS_MODULE_LOAD_FAT_BINARY:
	case CUDA_CLASS_LIBRARY_LOAD_DATA:
		x->module.module = read_out(x->module.out);
		break;
	case CUDA_CLASS_MODULE_GET_FUNCTION:
	case CUDA_CLASS_LIBRARY_GET_KERNEL:
		x->name.handle = read_out(x->name.out);
		copy_text(ev, x->name.name);
		break;
	case CUDA_CLASS_KERNEL_GET_FUNCTION:
		x->name.handle = read_out(x->name.out);
		break;
	case CUDA_CLASS_FUNC_GET_NAME:
		/* the name pointer is the driver's only when the call succeeded */
		if (r == CUDA_SUCCESS) {
			x->name.name = read_out(x->name.out);
			copy_text(ev, x->name.name);
		}
		break;
	case CUDA_CLASS_CTX_CREATE:
	case CUDA_CLASS_CTX_CREATE_V4:
	case CUDA_CLASS_CTX_RETAIN:
	case CUDA_CLASS_CTX_POP_CURRENT:
		if (x->context.out)
			x->context.ctx = read_out(x->context.out);
		break;
	case CUDA_CLASS_DEVICE_PCI_BUS_ID:
		if (r == CUDA_SUCCESS)
			copy_text(ev, x->device.out);
		break;
	case CUDA_CLASS_DEVICE_UUID:
		if (r == CUDA_SUCCESS && x->device.out) {
			memcpy(x->device.uuid, (const void *)(uintptr_t)x->device.out,
			       sizeof(x->device.uuid));
			x->device.has_uuid = 1;
		}
		break;
	default:
		break;
	}
	return (uint32_t)(sizeof(*ev) + (uint32_t)ev->stack_id * sizeof(uint64_t) + ev->text_len);
}

static bool is_launch_record(const void *open)
{
	/* the record's type, in its ring header just before it (call_ring_reserve) */
	return ((const uint32_t *)open)[-1] == CALL_REC_LAUNCH;
}

/*
 * The return of a call while records are held (nested_enter()): the
 * innermost call's record is committed after the held ones, a held one in
 * the bytes it took; the outermost's return hands them all to the consumer.
 */
static __attribute__((noinline, cold)) void nested_exit(void *open, CUresult r, uint64_t now_ns)
{
	const struct held_call *top = &me.held[me.prod.held - 1];
	uint32_t len;

	if (is_launch_record(open)) {
		struct call_rec_launch *l = open;

		launch_return(l, r, now_ns, l->entry_ns);
		len = call_launch_len(l->arg_words);
	} else {
		len = long_return(open, r, now_ns);
	}
	me.open_launch = NULL;
	me.open_long = NULL;
	me.depth--;
	if (open != top->rec) {
		call_ring_append(&me.prod, open, len);
		return;
	}
	if (me.prod.held == 1) {
		atomic_store_explicit(&me.ring->pending, 0, memory_order_relaxed);
		atomic_store_explicit(&me.ring->unpublished, 0, memory_order_relaxed);
	}
	call_ring_commit_held(me.ring, &me.prod, open, len, top->len);
}

void call_record_exit(void *open, CUresult r, uint64_t now_ns)
{
	uint32_t len;

	/* a record in the parent's ring, the call entered before a fork: not this thread's */
	if (__builtin_expect((uintptr_t)open - (uintptr_t)me.data >= rec_state.ring_bytes, 0))
		return;
	if (__builtin_expect(me.prod.held != 0, 0)) {
		nested_exit(open, r, now_ns);
		return;
	}
	if (__builtin_expect(open == me.open_launch, 1)) {
		launch_exit(open, r, now_ns, me.last_entry, me.open_len);
		return;
	}
	if (is_launch_record(open)) {
		struct call_rec_launch *l = open;

		launch_exit(l, r, now_ns, l->entry_ns, call_launch_len(l->arg_words));
		return;
	}
	len = long_return(open, r, now_ns);
	me.open_long = NULL;
	me.depth = 0;
	atomic_store_explicit(&me.ring->pending, 0, memory_order_relaxed);
	call_ring_commit(me.ring, &me.prod, open, len);
}

/*
 * Threads name themselves (pthread_setname_np) after their first call;
 * the record carries the name the thread has at each call, as the uprobe
 * path reads it from the kernel. A rename through prctl() is not seen.
 */
EXPORT int pthread_setname_np(pthread_t thread, const char *name)
{
	static int (*real)(pthread_t, const char *);
	int err;

	if (!real)
		real = (int (*)(pthread_t, const char *))inject_real_dlsym(RTLD_NEXT,
									  "pthread_setname_np");
	if (!real)
		return ENOSYS;
	err = real(thread, name);
	if (!err)
		call_record_comm_changed();
	return err;
}
