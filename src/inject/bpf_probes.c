/* GPU eBPF programs as an instrumentation: pasted at JIT, maps per context, read back at syncs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gpubpf/bpf_attach.h"
#include "gpubpf/bpf_device.h"
#include "gpubpf/bpf_ptx.h"
#include "gpubpf/bpf_session.h"
#include "gpubpf/gpu_abi.h"
#include "inject/bpf_probes.h"
#include "inject/channel.h"
#include "inject/inject.h"
#include "inject/own_thread.h"

/*
 * The kernels the recorder's programs match get one extra parameter, the
 * device address of the context's struct grt_bpf_env (gpu_abi.h). Each
 * context gets, at its first instrumented launch, the environment, every
 * map (zeroed, as the kernel's maps start) and the printk ring, in one
 * allocation per object. The collection thread reads them back:
 *
 *  - rings (and printk): the records committed since the last read, every
 *    collection. A ring is reset (emptied, its head back to 0) only when no
 *    launch that could write it is running: after a synchronization that
 *    covers every launch since the last reset, and at exit. Until then it
 *    fills; what does not fit is counted by the device and sent as lost.
 *  - maps: a snapshot of every map when the rings could be reset (no
 *    launch running), at most every GRTRACE_GPU_DRAIN_MS, and a final one at
 *    exit.
 *
 * Images go to the recorder raw (INJ_MSG_BPF_DATA); it decodes them with the
 * objects' BTF. A ring's or map's message waits for room in the recorder's
 * ring rather than being lost, from the collection thread only.
 */

#define RINGS (GRT_BPF_MAX_MAPS + 1) /* every map slot, then the printk ring */
#define PRINTK_RING GRT_BPF_MAX_MAPS
#define CHUNK_BYTES (1u << 20)
/*
 * A copy into pageable memory goes through the driver's own staging, and a
 * full ring's 32 MB read that way slowed a kernel loop running beside it by
 * a fifth (bench/RESULTS.md, run 45): rings are read in chunks into this much
 * page-locked memory, taken once.
 */
#define PINNED_BYTES CHUNK_BYTES
#define SEND_WAIT_TRIES 4000 /* 1 ms each: the recorder drains every few ms */

/*
 * Rings come in two sets, each with its own environment (the maps are
 * shared): launches use the active set; at the first launch after every
 * launch completed, the other set, emptied meanwhile, becomes the active
 * one, so the collection empties the one left behind whenever it runs,
 * without racing the application's next launch.
 */
struct bpf_ctx {
	CUcontext ctx;
	CUstream stream;
	CUdeviceptr env[2];
	CUdeviceptr mem[2][RINGS]; /* [0]: maps and set 0's rings, by slot; [1]: set 1's rings */
	size_t len[RINGS];	   /* PRINTK_RING: the printk ring */
	unsigned active;	   /* the set launches use */
	bool dirty[2];		   /* a launch used the set since it was last emptied */
	uint64_t consumed[2][RINGS]; /* ring bytes already sent */
	uint64_t dropped_seen[2][RINGS];
	bool clock_set; /* the environments have the calibration (not yet when they were made) */
};

struct bpf_probes {
	struct inject_state *st;
	struct instr_state *is;
	struct instrumentation ops;
	unsigned index; /* among the instrumentations */
	const struct gpubpf_session *s;
	struct bpf_ctx *ctxs[INSTR_MAX_CTXS];
	unsigned nctxs;
	uint64_t last_seq;	    /* the latest launch with programs */
	uint64_t quiet_upto;	    /* every launch up to this one completed */
	uint64_t stream_key;	    /* the one stream programs ran on since the last reset */
	bool many_streams;	    /* or several */
	uint64_t uncollected;	    /* launches since the last collection */
	uint64_t since_maps;	    /* launches since the last map snapshot */
	uint64_t last_maps_ns;
	uint32_t snapshot;
	uint8_t *host;		    /* staging for read-back, when it does not fit pinned */
	size_t host_len;
	void *pinned;		    /* PINNED_BYTES of page-locked staging, the rings' */
	bool no_pinned;		    /* the driver refused it */
	uint64_t launches, no_env, lost_messages;
};

int bpf_probes_load(struct inject_state *st, char *why, size_t why_len)
{
	const void *blob;
	uint64_t len;
	int err;

	if (!st->chan.ring || !(blob = shm_ring_config(st->chan.ring, st->chan.map_len, &len)))
		return 0;
	st->bpf = calloc(1, sizeof(*st->bpf));
	if (!st->bpf) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	err = gpubpf_session_unpack(blob, (size_t)len, st->bpf, why, why_len);
	if (err) {
		gpubpf_session_free(st->bpf);
		free(st->bpf);
		st->bpf = NULL;
	}
	return err;
}

/* ---- JIT: the programs pasted into the module's kernels ---- */

static int bpf_rewrite(void *self, const char *ptx, size_t len, struct ptx_rewrite_result *res)
{
	struct bpf_probes *bp = self;
	struct gpubpf_attach_opts opts = {.progs = bp->s->progs, .nr_progs = bp->s->nr_progs};
	struct gpubpf_attach_result ar;
	int err = gpubpf_attach(ptx, len, &opts, &ar);

	/* the interface takes the kernel table; the sites are for bpf check */
	*res = ar.rw;
	free(ar.sites);
	if (err)
		channel_status(&bp->st->chan, INJ_PART_BPF, err,
			       "GPU eBPF: a module's kernels left unchanged: %s", res->error);
	return err;
}

/* ---- contexts: the environment, maps and printk ring ---- */

static void ctx_free(struct inject_driver *drv, struct bpf_ctx *c)
{
	for (unsigned set = 0; set < 2; set++) {
		for (unsigned i = 0; i < RINGS; i++)
			if (c->mem[set][i])
				drv->cuMemFree_v2(c->mem[set][i]);
		if (c->env[set])
			drv->cuMemFree_v2(c->env[set]);
	}
	free(c);
}

/* The session's clock mapping: the opening calibration's, when it is there. */
static void session_clock(struct inject_state *st, uint64_t *gpu_ref, uint64_t *mono_ref,
			  uint64_t *mult)
{
	*gpu_ref = *mono_ref = 0;
	*mult = 1ull << 32;
	if (st->globaltimer.valid) {
		*gpu_ref = st->globaltimer.fit.clock_ns;
		*mono_ref = st->globaltimer.fit.clock_ns - (uint64_t)st->globaltimer.fit.offset_ns;
	}
}

/* Allocates and zeroes n bytes of device memory on c's stream. */
static int dev_zeroed(struct inject_driver *drv, struct bpf_ctx *c, size_t n, CUdeviceptr *out)
{
	if (drv->cuMemAlloc_v2(out, n) != CUDA_SUCCESS) {
		*out = 0;
		return -ENOMEM;
	}
	return drv->cuMemsetD8Async(*out, 0, n, c->stream) ? -EIO : 0;
}

static int ring_capacity(struct inject_driver *drv, struct bpf_ctx *c, CUdeviceptr ring,
			 const uint64_t *capacity)
{
	return drv->cuMemcpyHtoDAsync_v2(ring + offsetof(struct grt_bpf_ring, capacity), capacity,
					 sizeof(*capacity), c->stream)
		   ? -EIO
		   : 0;
}

static bool is_ring_slot(const struct gpubpf_session *s, unsigned slot)
{
	for (size_t i = 0; i < s->nr_maps; i++)
		if (s->maps[i].slot == slot)
			return !s->maps[i].rodata && gpubpf_map_is_ring(s->maps[i].shape.type);
	return false;
}

/* On the library's worker thread, the context current there. */
static int bpf_context_open(void *self, struct instr_context *ic, void **priv)
{
	struct bpf_probes *bp = self;
	struct inject_state *st = bp->st;
	struct inject_driver *drv = &st->drv;
	const struct gpubpf_session *s = bp->s;
	struct bpf_ctx *c = calloc(1, sizeof(*c));
	struct grt_bpf_env env[2] = {{GRT_BPF_ENV_MAGIC, GRT_BPF_ENV_VERSION, s->thread_capacity}};
	int err = 0;

	if (!c)
		return -ENOMEM;
	c->ctx = ic->ctx;
	if (drv->cuStreamCreate(&c->stream, CU_STREAM_NON_BLOCKING)) {
		free(c);
		return -EIO;
	}
	env[0].pid_tgid = ((uint64_t)st->pid << 32) | (uint32_t)st->pid;
	session_clock(st, &env[0].clock_gpu_ref, &env[0].clock_mono_ref, &env[0].clock_mult);
	c->clock_set = st->globaltimer.valid;
	c->len[PRINTK_RING] = GRT_BPF_RING_HEAD_SIZE + s->ring_bytes;
	for (size_t i = 0; !err && i < s->nr_maps; i++) {
		const struct gpubpf_session_map *m = &s->maps[i];

		if (m->rodata)
			continue;
		c->len[m->slot] = gpubpf_map_bytes(&m->shape, s->thread_capacity, s->ring_bytes);
		err = dev_zeroed(drv, c, c->len[m->slot], &c->mem[0][m->slot]);
		env[0].map[m->slot] = c->mem[0][m->slot];
	}
	env[1] = env[0];
	for (unsigned set = 0; !err && set < 2; set++) {
		for (unsigned slot = 0; !err && slot < RINGS; slot++) {
			if (slot != PRINTK_RING &&
			    !(env[0].map[slot] && is_ring_slot(s, slot)))
				continue;
			if (set || slot == PRINTK_RING)
				err = dev_zeroed(drv, c, c->len[slot], &c->mem[set][slot]);
			if (!err)
				err = ring_capacity(drv, c, c->mem[set][slot], &s->ring_bytes);
			if (slot == PRINTK_RING)
				env[set].printk_ring = c->mem[set][slot];
			else
				env[set].map[slot] = c->mem[set][slot];
		}
		if (!err)
			err = drv->cuMemAlloc_v2(&c->env[set], sizeof(env[set])) ? -ENOMEM : 0;
		if (!err)
			err = drv->cuMemcpyHtoDAsync_v2(c->env[set], &env[set], sizeof(env[set]),
							c->stream)
				  ? -EIO
				  : 0;
	}
	/* the application's launches are not ordered with our stream: wait for it here */
	if (!err)
		err = drv->cuStreamSynchronize(c->stream) ? -EIO : 0;
	if (err) {
		channel_status(&st->chan, INJ_PART_BPF, err,
			       "GPU eBPF: no device memory for the maps (%s): kernels of this "
			       "context run unchanged",
			       strerror(-err));
		ctx_free(drv, c);
		return err;
	}
	if (bp->nctxs < INSTR_MAX_CTXS)
		bp->ctxs[bp->nctxs++] = c;
	*priv = c;
	return 0;
}

/* ---- launches ---- */

/* Every launch with programs so far has completed: nothing writes the maps or rings. */
static bool quiet(const struct bpf_probes *bp)
{
	return bp->quiet_upto >= bp->last_seq;
}

static int bpf_launch_begin(void *self, struct instr_launch *l, unsigned index, uint64_t *params)
{
	struct bpf_probes *bp = self;
	struct bpf_ctx *c = l->context->priv[index];

	if (!c) {
		bp->no_env++;
		return -ENODEV;
	}
	if (bp->last_seq && l->stream_key != bp->stream_key)
		bp->many_streams = true;
	if (!bp->last_seq || quiet(bp)) {
		/* every earlier launch is done: this one starts a new quiet period */
		bp->stream_key = l->stream_key;
		bp->many_streams = false;
	}
	/* every launch so far completed: the rings emptied meanwhile take over */
	if (quiet(bp) && c->dirty[c->active] && !c->dirty[!c->active])
		c->active ^= 1;
	c->dirty[c->active] = true;
	bp->last_seq = l->seq;
	bp->launches++;
	bp->uncollected++;
	bp->since_maps++;
	*params = c->env[c->active];
	return 0;
}

static void bpf_synchronized(void *self, uint64_t key, bool all, uint64_t token)
{
	struct bpf_probes *bp = self;

	if ((all || (!bp->many_streams && key == bp->stream_key)) && token > bp->quiet_upto)
		bp->quiet_upto = token;
}

/* New records to read, or rings to empty and maps to take now that nothing runs. */
static bool bpf_pending(void *self)
{
	struct bpf_probes *bp = self;

	if (bp->uncollected || (quiet(bp) && bp->since_maps))
		return true;
	for (unsigned i = 0; i < bp->nctxs; i++)
		if (bp->ctxs[i]->dirty[!bp->ctxs[i]->active] ||
		    (quiet(bp) && bp->ctxs[i]->dirty[bp->ctxs[i]->active]))
			return true;
	return false;
}

/* ---- collection ---- */

/* Sends one message, waiting (1 ms at a time) for room rather than losing it. */
static void send_waiting(struct bpf_probes *bp, const struct inj_bpf_data *m)
{
	struct inject_channel *ch = &bp->st->chan;
	uint32_t len = (uint32_t)sizeof(*m) + m->len;

	if (!ch->ring)
		return;
	for (int i = 0; i < SEND_WAIT_TRIES && !shm_ring_has_room(ch->ring, len); i++)
		usleep(1000);
	if (shm_ring_write(ch->ring, INJ_MSG_BPF_DATA, m, len))
		bp->lost_messages++;
}

static struct inj_bpf_data *message(struct bpf_probes *bp, uint32_t kind, uint32_t slot,
				    size_t room)
{
	struct inj_bpf_data *m = calloc(1, sizeof(*m) + room);

	if (!m)
		return NULL;
	channel_fill_head(&m->head, inject_now_ns());
	m->kind = kind;
	m->slot = slot;
	m->snapshot = bp->snapshot;
	m->thread_capacity = bp->s->thread_capacity;
	session_clock(bp->st, &m->clock_gpu_ref, &m->clock_mono_ref, &m->clock_mult);
	return m;
}

static uint8_t *staging(struct bpf_probes *bp, size_t n)
{
	if (n <= PINNED_BYTES && !bp->pinned && !bp->no_pinned &&
	    bp->st->drv.cuMemHostAlloc(&bp->pinned, PINNED_BYTES, CU_MEMHOSTALLOC_PORTABLE)) {
		bp->pinned = NULL;
		bp->no_pinned = true;
	}
	if (n <= PINNED_BYTES && bp->pinned)
		return bp->pinned;
	if (n > bp->host_len) {
		uint8_t *bigger = realloc(bp->host, n);

		if (!bigger)
			return NULL;
		bp->host = bigger;
		bp->host_len = n;
	}
	return bp->host;
}

/* Copies n bytes of device memory at src into the staging buffer, waiting for the copy. */
static uint8_t *read_back(struct bpf_probes *bp, struct bpf_ctx *c, CUdeviceptr src, size_t n)
{
	uint8_t *h = staging(bp, n ? n : 1);

	if (!h || bp->st->drv.cuMemcpyDtoHAsync_v2(h, src, n, c->stream) ||
	    bp->st->drv.cuStreamSynchronize(c->stream))
		return NULL;
	return h;
}

static void send_map(struct bpf_probes *bp, struct bpf_ctx *c, uint32_t slot, bool final)
{
	const uint8_t *img = read_back(bp, c, c->mem[0][slot], c->len[slot]);

	for (size_t off = 0; img && off < c->len[slot]; off += CHUNK_BYTES) {
		size_t n = c->len[slot] - off < CHUNK_BYTES ? c->len[slot] - off : CHUNK_BYTES;
		struct inj_bpf_data *m = message(bp, INJ_BPF_MAP, slot, n);

		if (!m)
			return;
		m->flags = final ? INJ_BPF_FINAL : 0;
		m->offset = off;
		m->total = c->len[slot];
		m->len = (uint32_t)n;
		memcpy(m->data, img + off, n);
		send_waiting(bp, m);
		free(m);
	}
}

/* Records of one ring (slot, or PRINTK_RING) to the recorder. */
static void send_records(struct bpf_probes *bp, unsigned slot, const uint8_t *rec, size_t n,
			 uint64_t dropped)
{
	struct inj_bpf_data *m =
	    message(bp, slot == PRINTK_RING ? INJ_BPF_PRINTK : INJ_BPF_RING, slot, n);

	if (!m)
		return;
	m->dropped = dropped;
	m->len = (uint32_t)n;
	if (n)
		memcpy(m->data, rec, n);
	send_waiting(bp, m);
	free(m);
}

/*
 * A ring's records committed since the last read, in messages of whole
 * records, and its new losses; then, with reset, the ring emptied on the
 * device (nothing runs that could write it).
 */
static void drain_ring(struct bpf_probes *bp, struct bpf_ctx *c, unsigned set, unsigned slot,
		       bool reset)
{
	struct inject_driver *drv = &bp->st->drv;
	CUdeviceptr ring = c->mem[set][slot];
	const uint8_t *h = read_back(bp, c, ring, sizeof(struct grt_bpf_ring));
	uint64_t used, dropped, from = c->consumed[set][slot];
	struct grt_bpf_ring head;
	const uint8_t *img;

	if (!h)
		return;
	memcpy(&head, h, sizeof(head));
	dropped = head.dropped;
	/* the drop slots only once something was dropped: head is then at or past the capacity */
	if (head.head >= head.capacity && (h = read_back(bp, c, ring, GRT_BPF_RING_HEAD_SIZE)))
		dropped = gpubpf_ring_dropped(h);
	used = head.head < head.capacity ? head.head : head.capacity;
	/* a chunk at a time, each ending with its last whole committed record */
	while (used > from) {
		size_t want = used - from < CHUNK_BYTES ? used - from : CHUNK_BYTES, off = 0, n;

		img = read_back(bp, c, ring + GRT_BPF_RING_HEAD_SIZE + from, want);
		if (!img)
			break;
		while ((n = gpubpf_ring_committed(img + off, want - off, CHUNK_BYTES))) {
			send_records(bp, slot, img + off, n, 0);
			off += n;
		}
		if (!off)
			break; /* the next record is not committed yet */
		from += off;
	}
	c->consumed[set][slot] = from;
	if (dropped > c->dropped_seen[set][slot]) {
		send_records(bp, slot, NULL, 0, dropped - c->dropped_seen[set][slot]);
		c->dropped_seen[set][slot] = dropped;
	}
	if (reset && (head.head || dropped)) {
		uint64_t zero[2] = {0, 0}; /* head and dropped; the drop slots and data follow */

		drv->cuMemsetD8Async(ring + GRT_BPF_RING_DROP_OFF, 0,
				     GRT_BPF_RING_HEAD_SIZE - GRT_BPF_RING_DROP_OFF + used, c->stream);
		drv->cuMemcpyHtoDAsync_v2(ring, zero, sizeof(zero), c->stream);
		drv->cuStreamSynchronize(c->stream);
		c->consumed[set][slot] = 0;
		c->dropped_seen[set][slot] = 0;
	}
}

/* The calibration, once there, into an environment made before it (ktime is then right). */
static void set_clock(struct bpf_probes *bp, struct bpf_ctx *c)
{
	uint64_t clk[3];

	if (c->clock_set || !bp->st->globaltimer.valid)
		return;
	session_clock(bp->st, &clk[0], &clk[1], &clk[2]);
	if (!bp->st->drv.cuMemcpyHtoDAsync_v2(c->env[0] + GRT_BPF_ENV_OFF_CLOCK_GPU_REF, clk,
					      sizeof(clk), c->stream) &&
	    !bp->st->drv.cuMemcpyHtoDAsync_v2(c->env[1] + GRT_BPF_ENV_OFF_CLOCK_GPU_REF, clk,
					      sizeof(clk), c->stream) &&
	    !bp->st->drv.cuStreamSynchronize(c->stream))
		c->clock_set = true;
}

/* Every ring of one set, the context current: read, then with reset emptied. */
static void drain_rings(struct bpf_probes *bp, struct bpf_ctx *c, unsigned set, bool reset)
{
	for (unsigned slot = 0; slot < RINGS; slot++)
		if (c->mem[set][slot] && (slot == PRINTK_RING || is_ring_slot(bp->s, slot)))
			drain_ring(bp, c, set, slot, reset);
}

/*
 * Under the lock: the maps, when no launch runs; and with every launch
 * complete, the active ring set handed over to the other set, emptied
 * meanwhile, as the next launch would (only when both hold records is the
 * set left behind, then the active one, read and emptied here, under the
 * lock).
 */
static void collect_locked(struct bpf_probes *bp, struct bpf_ctx *c, bool still, bool maps,
			   bool final)
{
	struct inject_driver *drv = &bp->st->drv;
	CUcontext popped;

	if (drv->cuCtxPushCurrent_v2(c->ctx) != CUDA_SUCCESS)
		return;
	set_clock(bp, c);
	for (size_t i = 0; maps && i < bp->s->nr_maps; i++) {
		const struct gpubpf_session_map *m = &bp->s->maps[i];

		if (!m->rodata && !gpubpf_map_is_ring(m->shape.type))
			send_map(bp, c, m->slot, final);
	}
	if (still && c->dirty[c->active]) {
		if (!c->dirty[!c->active]) {
			c->active ^= 1;
		} else { /* the older records first: the set left behind's */
			for (unsigned k = 0; k < 2; k++) {
				unsigned set = k ? c->active : !c->active;

				drain_rings(bp, c, set, true);
				c->dirty[set] = false;
			}
		}
	}
	drv->cuCtxPopCurrent_v2(&popped);
}

enum set_work { SET_IDLE, SET_READ, SET_EMPTY };

/*
 * Without the lock: a ring set's records committed since the last read and
 * its drops, then with SET_EMPTY the set emptied. Only the active set can be
 * written by a launch, and it is only read; a set left behind is dirty until
 * the lock is taken again, and a launch never switches to a dirty set. The
 * read waits for a copy, the messages for room in the recorder's ring (a full
 * ring is tens of MB): under the lock the application's launches waited
 * meanwhile, a stall of tens of ms (bench/RESULTS.md, runs 42-44). Only this
 * thread collects, so the sets' read state is its own.
 */
static void drain_set(struct bpf_probes *bp, struct bpf_ctx *c, unsigned set, enum set_work work)
{
	struct inject_driver *drv = &bp->st->drv;
	CUcontext popped;

	if (drv->cuCtxPushCurrent_v2(c->ctx) != CUDA_SUCCESS)
		return;
	drain_rings(bp, c, set, work == SET_EMPTY);
	drv->cuCtxPopCurrent_v2(&popped);
}

/*
 * Called under the lock (a launch must not start while a set it may use is
 * emptied); released while the ring sets are read.
 */
static void bpf_collect(void *self, enum instr_collect_reason why)
{
	struct bpf_probes *bp = self;
	bool final = why == INSTR_COLLECT_EXIT;
	bool still = final || quiet(bp);
	uint64_t now = inject_now_ns();
	bool maps = final || (still && bp->since_maps &&
			      now - bp->last_maps_ns >= bp->st->cfg.drain_ms * 1000000ull);
	enum set_work work[INSTR_MAX_CTXS][2];
	unsigned n;

	if (!bp->last_seq)
		return;
	if (maps) {
		bp->snapshot++;
		bp->last_maps_ns = now;
		bp->since_maps = 0;
	}
	inject_enter_tool();
	n = bp->nctxs; /* ctxs only grows, and its entries stay */
	for (unsigned i = 0; i < n; i++) {
		struct bpf_ctx *c = bp->ctxs[i];

		collect_locked(bp, c, still, maps, final);
		for (unsigned set = 0; set < 2; set++) {
			if (!c->dirty[set])
				work[i][set] = SET_IDLE;
			else
				work[i][set] = set == c->active ? SET_READ : SET_EMPTY;
		}
	}
	bp->uncollected = 0;
	pthread_mutex_unlock(&bp->is->lock);
	for (unsigned i = 0; i < n; i++) {
		/* the set left behind (SET_EMPTY) first: its records are older */
		unsigned first = work[i][1] == SET_EMPTY;

		for (unsigned set = first, k = 0; k < 2; k++, set = !set)
			if (work[i][set] != SET_IDLE)
				drain_set(bp, bp->ctxs[i], set, work[i][set]);
	}
	pthread_mutex_lock(&bp->is->lock);
	for (unsigned i = 0; i < n; i++)
		for (unsigned set = 0; set < 2; set++)
			if (work[i][set] == SET_EMPTY)
				bp->ctxs[i]->dirty[set] = false;
	inject_leave_tool();
}

static void bpf_stop(void *self)
{
	struct bpf_probes *bp = self;

	channel_status(&bp->st->chan, INJ_PART_BPF, 0,
		       "GPU eBPF: %llu launches ran programs, %llu ran without (no device memory "
		       "in their context), %llu read-back messages lost",
		       (unsigned long long)bp->launches, (unsigned long long)bp->no_env,
		       (unsigned long long)bp->lost_messages);
}

int bpf_probes_register(struct instr_state *is, char *why, size_t why_len)
{
	struct inject_state *st = is->st;
	const char *forms;
	struct bpf_probes *bp = calloc(1, sizeof(*bp));
	int err;

	if (!bp) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	bp->st = st;
	bp->is = is;
	bp->s = st->bpf;
	bp->index = is->ninstr;
	bp->ops = (struct instrumentation){
	    .name = "GPU eBPF",
	    .nr_params = 1,
	    .self = bp,
	    .rewrite = bpf_rewrite,
	    .launch_begin = bpf_launch_begin,
	    .context_open = bpf_context_open,
	    .synchronized = bpf_synchronized,
	    .pending = bpf_pending,
	    .collect = bpf_collect,
	    .stop = bpf_stop,
	};
	err = instr_register(is, &bp->ops);
	if (err) {
		snprintf(why, why_len, "too many instrumentations");
		free(bp);
		return err;
	}
	/* which code forms the numbers of this trace come from (docs/gpu-bpf.md) */
	forms = getenv(GPUBPF_VARIANTS_ENV);
	channel_status(&st->chan, INJ_PART_BPF, 0,
		       "GPU eBPF: %zu programs, %zu maps; per-thread maps for %u threads, rings of "
		       "%llu bytes; code forms: %.128s",
		       bp->s->nr_progs, bp->s->nr_maps, bp->s->thread_capacity,
		       (unsigned long long)bp->s->ring_bytes,
		       !forms ? "default (ring_fast_drop)" : *forms ? forms : "none");
	return 0;
}
