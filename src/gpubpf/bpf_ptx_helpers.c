/* Helpers emitted inline as PTX: map operations on the device layouts, ring output, GPU state. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "gpubpf/bpf_ptx_emit.h"

/* A helper's local labels: $H<n>_<what>, n unique in the body. */
struct labels {
	unsigned n;
};

static struct labels new_labels(struct emit *e)
{
	return (struct labels){e->helper_seq++};
}

static void set_r0_errno(struct emit *e, int err)
{
	emitf(e, "\tmov.b64 %%r0, 0x%llx;\n", (unsigned long long)(int64_t)-err);
}

static const struct gpubpf_map *call_map(struct emit *e)
{
	int16_t m = e->ver->info[e->pc].map;

	return m >= 0 ? &e->obj->maps[m] : NULL;
}

/* n bytes of m into global memory at %t<addr> + off (8-byte aligned): whole words. */
static void copy_to_global(struct emit *e, const struct msrc *m, unsigned addr, uint32_t off,
			   uint32_t n)
{
	unsigned t = new_t(e);

	for (uint32_t i = 0; i < n; i += 8) {
		load_bytes(e, m, (int32_t)i, n - i < 8 ? n - i : 8, t);
		emitf(e, "\tst.global.u64 [%%t%u+%u], %%t%u;\n", addr, off + i, t);
	}
}

/* --- arrays ----------------------------------------------------------------------------- */

/*
 * The address of the key's value for this thread into %t<addr>, and %p<bad>
 * when there is none (index past max_entries, or no per-thread/per-SM slot).
 */
static void array_slot(struct emit *e, const struct gpubpf_map *map, int map_idx,
		       const struct msrc *key, unsigned addr, unsigned bad)
{
	unsigned k = new_t(e), base = new_t(e), stride = grt_bpf_stride(map->value_size);

	load_bytes(e, key, 0, 4, k);
	emitf(e, "\tsetp.ge.u64 %%p%u, %%t%u, %u;\n", bad, k, map->max_entries);
	load_map_base(e, map_idx, base);
	if (map->type == BPF_MAP_TYPE_PERCPU_ARRAY) {
		unsigned sm = new_t(e), w = new_w(e), p = new_p(e);

		emitf(e, "\tmov.u32 %%w%u, %%smid;\n", w);
		emitf(e, "\tcvt.u64.u32 %%t%u, %%w%u;\n", sm, w);
		emitf(e, "\tsetp.ge.u64 %%p%u, %%t%u, %u;\n", p, sm, GRT_BPF_SM_SLOTS);
		emitf(e, "\tor.pred %%p%u, %%p%u, %%p%u;\n", bad, bad, p);
		emitf(e, "\tmad.lo.u64 %%t%u, %%t%u, %u, %%t%u;\n", k, k, GRT_BPF_SM_SLOTS, sm);
	} else if (map->stripe_width) {
		/* a counter kept per SM (gpubpf_stripe_counters): every SM has a copy */
		unsigned sm = new_t(e), w = new_w(e);

		emitf(e, "\tmov.u32 %%w%u, %%smid;\n", w);
		emitf(e, "\tand.b32 %%w%u, %%w%u, %u;\n", w, w, GRT_BPF_SM_SLOTS - 1);
		emitf(e, "\tcvt.u64.u32 %%t%u, %%w%u;\n", sm, w);
		emitf(e, "\tmad.lo.u64 %%t%u, %%t%u, %u, %%t%u;\n", k, k, GRT_BPF_SM_SLOTS, sm);
		stride = grt_bpf_stripe_stride(map->value_size);
	} else if (map->type == GRT_BPF_MAP_PERGPUTD_ARRAY) {
		unsigned cap = new_t(e), p = new_p(e);

		e->need_thread_id = true;
		load_env(e, GRT_BPF_ENV_OFF_THREAD_CAPACITY, cap);
		emitf(e, "\tand.b64 %%t%u, %%t%u, 0xffffffff;\n", cap, cap);
		emitf(e, "\tsetp.ge.u64 %%p%u, %%gtid, %%t%u;\n", p, cap);
		emitf(e, "\tor.pred %%p%u, %%p%u, %%p%u;\n", bad, bad, p);
		emitf(e, "\tmad.lo.u64 %%t%u, %%t%u, %%t%u, %%gtid;\n", k, k, cap);
	}
	emitf(e, "\tmad.lo.u64 %%t%u, %%t%u, %u, %%t%u;\n", addr, k, stride, base);
}

/* --- hashes ----------------------------------------------------------------------------- */

struct hash_walk {
	struct labels l;
	unsigned slot;	/* %t: the slot's address */
	unsigned state; /* %w: the slot's state */
	unsigned key_words[64];
	unsigned nwords;
};

/*
 * Loads the key, hashes it and walks the slots from its home: falls into
 * $H<n>_match with a slot holding the key (FULL or DELETED), jumps to
 * $H<n>_empty at the first empty slot and $H<n>_full after every slot.
 */
static void hash_walk(struct emit *e, const struct gpubpf_map *map, int map_idx,
		      const struct msrc *key, struct hash_walk *h)
{
	uint64_t cap = grt_bpf_hash_capacity(map->max_entries);
	unsigned slot_stride = GRT_BPF_HASH_SLOT_HEAD + grt_bpf_stride(map->key_size) +
			       grt_bpf_stride(map->value_size);
	unsigned hash = new_t(e), idx = new_t(e), base = new_t(e), probes = new_t(e), p = new_p(e);
	unsigned n = h->l.n;

	h->nwords = (map->key_size + 7) / 8;
	h->slot = new_t(e);
	h->state = new_w(e);
	emitf(e, "\tmov.b64 %%t%u, 0;\n", hash);
	for (unsigned i = 0; i < h->nwords; i++) {
		h->key_words[i] = new_t(e);
		load_bytes(e, key, (int32_t)(8 * i),
			   map->key_size - 8 * i < 8 ? map->key_size - 8 * i : 8, h->key_words[i]);
		emitf(e, "\txor.b64 %%t%u, %%t%u, %%t%u;\n", hash, hash, h->key_words[i]);
		emitf(e, "\tmul.lo.u64 %%t%u, %%t%u, 0x%llx;\n", hash, hash,
		      (unsigned long long)GRT_BPF_HASH_MULT);
	}
	emitf(e, "\tshr.u64 %%t%u, %%t%u, 32;\n", idx, hash);
	emitf(e, "\tand.b64 %%t%u, %%t%u, 0x%llx;\n", idx, idx, (unsigned long long)(cap - 1));
	load_map_base(e, map_idx, base);
	emitf(e, "\tmov.b64 %%t%u, 0;\n", probes);
	emitf(e, "$H%u_loop:\n", n);
	emitf(e, "\tmad.lo.u64 %%t%u, %%t%u, %u, %%t%u;\n", h->slot, idx, slot_stride, base);
	emitf(e, "\tld.acquire.gpu.global.u32 %%w%u, [%%t%u];\n", h->state, h->slot);
	emitf(e, "\tsetp.eq.u32 %%p%u, %%w%u, %u;\n", p, h->state, GRT_BPF_HASH_EMPTY);
	emitf(e, "\t@%%p%u bra $H%u_empty;\n", p, n);
	emitf(e, "\tsetp.eq.u32 %%p%u, %%w%u, %u;\n", p, h->state, GRT_BPF_HASH_BUSY);
	emitf(e, "\t@%%p%u bra $H%u_loop;\n", p, n); /* being written: read it again */
	for (unsigned i = 0; i < h->nwords; i++) {
		unsigned t = new_t(e);

		emitf(e, "\tld.global.u64 %%t%u, [%%t%u+%u];\n", t, h->slot,
		      GRT_BPF_HASH_SLOT_HEAD + 8 * i);
		emitf(e, "\tsetp.ne.b64 %%p%u, %%t%u, %%t%u;\n", p, t, h->key_words[i]);
		emitf(e, "\t@%%p%u bra $H%u_next;\n", p, n);
	}
	emitf(e, "\tbra $H%u_match;\n", n);
	emitf(e, "$H%u_next:\n", n);
	emitf(e, "\tadd.u64 %%t%u, %%t%u, 1;\n", idx, idx);
	emitf(e, "\tand.b64 %%t%u, %%t%u, 0x%llx;\n", idx, idx, (unsigned long long)(cap - 1));
	emitf(e, "\tadd.u64 %%t%u, %%t%u, 1;\n", probes, probes);
	emitf(e, "\tsetp.lt.u64 %%p%u, %%t%u, %llu;\n", p, probes, (unsigned long long)cap);
	emitf(e, "\t@%%p%u bra $H%u_loop;\n", p, n);
	emitf(e, "\tbra $H%u_full;\n", n);
	emitf(e, "$H%u_match:\n", n);
}

static uint32_t hash_value_off(const struct gpubpf_map *map)
{
	return GRT_BPF_HASH_SLOT_HEAD + grt_bpf_stride(map->key_size);
}

/* Claims the slot from state `from`: a lost race examines the slot again. */
static void hash_claim(struct emit *e, const struct hash_walk *h, unsigned from)
{
	unsigned w = new_w(e), p = new_p(e);

	emitf(e, "\tatom.global.cas.b32 %%w%u, [%%t%u], %u, %u;\n", w, h->slot, from,
	      GRT_BPF_HASH_BUSY);
	emitf(e, "\tsetp.ne.u32 %%p%u, %%w%u, %u;\n", p, w, from);
	emitf(e, "\t@%%p%u bra $H%u_loop;\n", p, h->l.n);
}

static void hash_publish(struct emit *e, const struct hash_walk *h)
{
	emitf(e, "\tst.release.gpu.global.u32 [%%t%u], %u;\n", h->slot, GRT_BPF_HASH_FULL);
}

/* if (r4 == flags) { r0 = -err; done } */
static void fail_if_flags(struct emit *e, unsigned n, uint64_t flags, int err)
{
	unsigned p = new_p(e);

	emitf(e, "\tsetp.eq.u64 %%p%u, %%r4, %llu;\n", p, (unsigned long long)flags);
	set_r0_errno(e, err);
	emitf(e, "\t@%%p%u bra $H%u_done;\n", p, n);
}

static int emit_hash_op(struct emit *e, int32_t fn, const struct gpubpf_map *map, int map_idx)
{
	struct hash_walk h = {.l = new_labels(e)};
	struct msrc key, val;
	unsigned n = h.l.n, p;

	if (helper_msrc(e, 2, &key))
		return -EINVAL;
	if (fn == GRT_BPF_FN_MAP_UPDATE) {
		if (helper_msrc(e, 3, &val))
			return -EINVAL;
		p = new_p(e);
		emitf(e, "\tsetp.gt.u64 %%p%u, %%r4, %d;\n", p, BPF_EXIST);
		set_r0_errno(e, EINVAL);
		emitf(e, "\t@%%p%u bra $H%u_done;\n", p, n);
	}
	hash_walk(e, map, map_idx, &key, &h);
	p = new_p(e);
	switch (fn) {
	case GRT_BPF_FN_MAP_LOOKUP:
		emitf(e, "\tsetp.ne.u32 %%p%u, %%w%u, %u;\n", p, h.state, GRT_BPF_HASH_FULL);
		emitf(e, "\t@%%p%u bra $H%u_empty;\n", p, n);
		emitf(e, "\tadd.u64 %%r0, %%t%u, %u;\n", h.slot, hash_value_off(map));
		emitf(e, "\tbra $H%u_done;\n", n);
		emitf(e, "$H%u_empty:\n$H%u_full:\n", n, n);
		emitf(e, "\tmov.b64 %%r0, 0;\n");
		break;
	case GRT_BPF_FN_MAP_UPDATE:
		emitf(e, "\tsetp.eq.u32 %%p%u, %%w%u, %u;\n", p, h.state, GRT_BPF_HASH_DELETED);
		emitf(e, "\t@%%p%u bra $H%u_revive;\n", p, n);
		fail_if_flags(e, n, BPF_NOEXIST, EEXIST);
		copy_to_global(e, &val, h.slot, hash_value_off(map), map->value_size);
		emitf(e, "\tmov.b64 %%r0, 0;\n\tbra $H%u_done;\n", n);
		emitf(e, "$H%u_revive:\n", n);
		fail_if_flags(e, n, BPF_EXIST, ENOENT);
		hash_claim(e, &h, GRT_BPF_HASH_DELETED);
		copy_to_global(e, &val, h.slot, hash_value_off(map), map->value_size);
		hash_publish(e, &h);
		emitf(e, "\tmov.b64 %%r0, 0;\n\tbra $H%u_done;\n", n);
		emitf(e, "$H%u_empty:\n", n);
		fail_if_flags(e, n, BPF_EXIST, ENOENT);
		hash_claim(e, &h, GRT_BPF_HASH_EMPTY);
		for (unsigned i = 0; i < h.nwords; i++)
			emitf(e, "\tst.global.u64 [%%t%u+%u], %%t%u;\n", h.slot,
			      GRT_BPF_HASH_SLOT_HEAD + 8 * i, h.key_words[i]);
		copy_to_global(e, &val, h.slot, hash_value_off(map), map->value_size);
		hash_publish(e, &h);
		emitf(e, "\tmov.b64 %%r0, 0;\n\tbra $H%u_done;\n", n);
		emitf(e, "$H%u_full:\n", n);
		set_r0_errno(e, E2BIG);
		break;
	default: /* delete */
		emitf(e, "\tsetp.ne.u32 %%p%u, %%w%u, %u;\n", p, h.state, GRT_BPF_HASH_FULL);
		emitf(e, "\t@%%p%u bra $H%u_empty;\n", p, n);
		{
			unsigned w = new_w(e), q = new_p(e);

			emitf(e, "\tatom.global.cas.b32 %%w%u, [%%t%u], %u, %u;\n", w, h.slot,
			      GRT_BPF_HASH_FULL, GRT_BPF_HASH_DELETED);
			emitf(e, "\tsetp.ne.u32 %%p%u, %%w%u, %u;\n", q, w, GRT_BPF_HASH_FULL);
			emitf(e, "\t@%%p%u bra $H%u_loop;\n", q, n);
		}
		emitf(e, "\tmov.b64 %%r0, 0;\n\tbra $H%u_done;\n", n);
		emitf(e, "$H%u_empty:\n$H%u_full:\n", n, n);
		set_r0_errno(e, ENOENT);
		break;
	}
	emitf(e, "$H%u_done:\n", n);
	return 0;
}

/* --- map helpers ------------------------------------------------------------------------ */

static int emit_map_op(struct emit *e, int32_t fn)
{
	const struct gpubpf_map *map = call_map(e);
	int map_idx = e->ver->info[e->pc].map;
	struct msrc key, val;
	unsigned addr, bad;

	if (!map)
		return emit_err(e, "map of the call unknown");
	if (map->type == BPF_MAP_TYPE_HASH)
		return emit_hash_op(e, fn, map, map_idx);
	if (fn == GRT_BPF_FN_MAP_DELETE) { /* array elements cannot be deleted */
		set_r0_errno(e, EINVAL);
		return 0;
	}
	if (helper_msrc(e, 2, &key))
		return -EINVAL;
	addr = new_t(e);
	bad = new_p(e);
	array_slot(e, map, map_idx, &key, addr, bad);
	if (fn == GRT_BPF_FN_MAP_LOOKUP) {
		emitf(e, "\tselp.b64 %%r0, 0, %%t%u, %%p%u;\n", addr, bad);
		return 0;
	}
	{
		struct labels l = new_labels(e);
		unsigned p = new_p(e);

		if (helper_msrc(e, 3, &val))
			return -EINVAL;
		/* kernel order: bad flags, then index, then NOEXIST (the last that holds wins) */
		emitf(e, "\tmov.b64 %%r0, 0;\n");
		emitf(e, "\tsetp.eq.u64 %%p%u, %%r4, %d;\n", p, BPF_NOEXIST);
		emitf(e, "\t@%%p%u mov.b64 %%r0, 0x%llx;\n", p,
		      (unsigned long long)-(int64_t)EEXIST);
		emitf(e, "\t@%%p%u mov.b64 %%r0, 0x%llx;\n", bad,
		      (unsigned long long)-(int64_t)E2BIG);
		emitf(e, "\tsetp.gt.u64 %%p%u, %%r4, %d;\n", p, BPF_EXIST);
		emitf(e, "\t@%%p%u mov.b64 %%r0, 0x%llx;\n", p,
		      (unsigned long long)-(int64_t)EINVAL);
		emitf(e, "\tsetp.ne.b64 %%p%u, %%r0, 0;\n", p);
		emitf(e, "\t@%%p%u bra $H%u_done;\n", p, l.n);
		copy_to_global(e, &val, addr, 0, map->value_size);
		emitf(e, "$H%u_done:\n", l.n);
	}
	return 0;
}

/* --- rings ------------------------------------------------------------------------------- */

/*
 * Reserves rec_size bytes in the ring at %t<ring> for every active lane at
 * once: the lowest lane adds the warp's total to head, the lanes take
 * consecutive places by rank. Sets %t<rec> to this lane's record and jumps to
 * `drop` (after counting the event in dropped) when it does not fit.
 * A full ring is the common case of a busy kernel (the host empties it only
 * between launches), so its cost is kept to one load and one atomic per warp,
 * both in the warp's SM's drop slot (grt_bpf_ring_drop_slot: smid % slots,
 * 128 bytes apart) rather than on one address every warp of the grid queues on:
 * the lowest lane first reads the slot's "exhausted" word, set by a lane of
 * that SM that saw head at or past the capacity (no reservation of any size
 * fits then, until the host resets the ring with its slots); only while it is
 * clear does it read head and add to it. The lowest dropping lane counts all
 * the warp's drops at once, in the slot's counter.
 */
/*
 * GPUBPF_VARIANT_RING_FAST_DROP: when the lowest lane reads "exhausted", the
 * warp learns it by one vote and that lane counts every active lane as
 * dropped, what the full path concludes too (no place fits: base is the
 * capacity for all), without its shuffles, ballot and second popc.
 */
static void ring_exhausted_exit(struct emit *e, unsigned word, unsigned first, unsigned mask,
				unsigned count, unsigned slot, const char *drop)
{
	struct labels l = new_labels(e);
	unsigned full = new_p(e), n = new_t(e);

	emitf(e, "	setp.ne.and.u64 %%p%u, %%t%u, 0, %%p%u;\n", full, word, first);
	emitf(e, "	vote.sync.any.pred %%p%u, %%p%u, %%w%u;\n", full, full, mask);
	emitf(e, "	@!%%p%u bra $H%u_room;\n", full, l.n);
	emitf(e, "	cvt.u64.u32 %%t%u, %%w%u;\n", n, count);
	emitf(e, "	@%%p%u red.global.add.u64 [%%t%u+%u], %%t%u;\n", first, slot,
	      GRT_BPF_RING_DROP_OFF, n);
	emitf(e, "	bra %s;\n", drop);
	emitf(e, "$H%u_room:\n", l.n);
}

/*
 * The drop slot of this warp (its address in %t<slot>): the SM's, or with
 * GPUBPF_VARIANT_RING_WARP_SLOTS one of two per SM by warp id parity. Any
 * slot is right for any warp: the host sums every counter, and a slot's
 * "exhausted" word only says what holds for the whole ring.
 */
static void ring_drop_slot(struct emit *e, unsigned ring, unsigned slot, unsigned w)
{
	emitf(e, "	mov.u32 %%w%u, %%smid;\n", w);
	if (e->opts->variants & GPUBPF_VARIANT_RING_WARP_SLOTS) {
		unsigned par = new_w(e);

		emitf(e, "	mov.u32 %%w%u, %%warpid;\n", par);
		emitf(e, "	and.b32 %%w%u, %%w%u, 1;\n", par, par);
		emitf(e, "	shl.b32 %%w%u, %%w%u, 1;\n", w, w);
		emitf(e, "	or.b32 %%w%u, %%w%u, %%w%u;\n", w, w, par);
	}
	emitf(e, "	and.b32 %%w%u, %%w%u, %u;\n", w, w, GRT_BPF_RING_DROP_SLOTS - 1);
	emitf(e, "	mul.wide.u32 %%t%u, %%w%u, %u;\n", slot, w, GRT_BPF_RING_DROP_STRIDE);
	emitf(e, "	add.u64 %%t%u, %%t%u, %%t%u;\n", slot, slot, ring);
}

void emit_ring_early_read(struct emit *e)
{
	unsigned ring = new_t(e), slot = new_t(e), w = new_w(e);

	bool movable = e->opts->variants & GPUBPF_VARIANT_RING_ENTRY_READ;

	/* a block of its own (its registers declared in it), so that it may run elsewhere */
	emitf(e, "%s{\n\t.reg .b64 %%t<2>;\n\t.reg .b32 %%w<2>;\n",
	      movable ? GPUBPF_EARLY_OPEN : "");
	load_map_base(e, e->early_ring, ring);
	ring_drop_slot(e, ring, slot, w);
	emitf(e, "	ld.relaxed.gpu.global.u64 %%xw, [%%t%u+%u];\n", slot,
	      GRT_BPF_RING_DROP_OFF + GRT_BPF_RING_EXHAUSTED);
	emitf(e, "}\n%s", movable ? GPUBPF_EARLY_CLOSE : "");
}

/* Whether this output's "exhausted" word is the one read early (map -1: the printk ring). */
static bool ring_read_early(struct emit *e, int map)
{
	if (!(e->opts->variants & GPUBPF_VARIANT_RING_EARLY_READ) || map < 0 ||
	    (e->early_read && e->early_ring != map))
		return false;
	e->early_read = true;
	e->early_ring = map;
	return true;
}

static void ring_reserve(struct emit *e, unsigned ring, uint32_t rec_size, unsigned rec,
			 const char *drop, int map)
{
	unsigned mask = new_w(e), lt = new_w(e), rank = new_w(e), count = new_w(e),
		 leader = new_w(e), lo = new_w(e), hi = new_w(e), drops = new_w(e);
	unsigned total = new_t(e), base = new_t(e), end = new_t(e), cap = new_t(e),
		 slot = new_t(e), word = new_t(e);
	unsigned first = new_p(e), fits = new_p(e), room = new_p(e), counts = new_p(e),
		 ask = new_p(e), spent = new_p(e);
	bool fast = e->opts->variants & GPUBPF_VARIANT_RING_FAST_DROP;

	emitf(e, "	activemask.b32 %%w%u;\n", mask);
	emitf(e, "	mov.u32 %%w%u, %%lanemask_lt;\n", lt);
	emitf(e, "	and.b32 %%w%u, %%w%u, %%w%u;\n", lt, lt, mask);
	emitf(e, "	popc.b32 %%w%u, %%w%u;\n", rank, lt);
	emitf(e, "	popc.b32 %%w%u, %%w%u;\n", count, mask);
	emitf(e, "	brev.b32 %%w%u, %%w%u;\n", leader, mask);
	emitf(e, "	bfind.shiftamt.u32 %%w%u, %%w%u;\n", leader, leader);
	emitf(e, "	setp.eq.u32 %%p%u, %%w%u, 0;\n", first, rank);
	emitf(e, "	mul.wide.u32 %%t%u, %%w%u, %u;\n", total, count, rec_size);
	if (!fast) /* the fast exit needs no capacity: it is read after it */
		emitf(e, "	ld.global.nc.u64 %%t%u, [%%t%u+16];\n", cap, ring);
	ring_drop_slot(e, ring, slot, lo);
	if (ring_read_early(e, map)) {
		emitf(e, "	mov.b64 %%t%u, %%xw;\n", word);
	} else {
		emitf(e, "	mov.b64 %%t%u, 0;\n", word);
		emitf(e, "	@%%p%u ld.relaxed.gpu.global.u64 %%t%u, [%%t%u+%u];\n", first, word,
		      slot, GRT_BPF_RING_DROP_OFF + GRT_BPF_RING_EXHAUSTED);
	}
	if (fast) {
		ring_exhausted_exit(e, word, first, mask, count, slot, drop);
		emitf(e, "	ld.global.nc.u64 %%t%u, [%%t%u+16];\n", cap, ring);
	}
	emitf(e, "	setp.eq.and.u64 %%p%u, %%t%u, 0, %%p%u;\n", ask, word, first);
	emitf(e, "	mov.b64 %%t%u, %%t%u;\n", base, cap);
	emitf(e, "	@%%p%u ld.relaxed.gpu.global.u64 %%t%u, [%%t%u];\n", ask, base, ring);
	emitf(e, "	setp.lt.and.u64 %%p%u, %%t%u, %%t%u, %%p%u;\n", room, base, cap, ask);
	emitf(e, "	@%%p%u atom.global.add.u64 %%t%u, [%%t%u], %%t%u;\n", room, base, ring, total);
	/* head is at or past the capacity now (this add took it there, or it was): mark the slot */
	emitf(e, "	add.u64 %%t%u, %%t%u, %%t%u;\n", end, base, total);
	emitf(e, "	setp.ge.and.u64 %%p%u, %%t%u, %%t%u, %%p%u;\n", spent, end, cap, ask);
	emitf(e, "	mov.b64 %%t%u, 1;\n", word);
	emitf(e, "	@%%p%u st.relaxed.gpu.global.u64 [%%t%u+%u], %%t%u;\n", spent, slot,
	      GRT_BPF_RING_DROP_OFF + GRT_BPF_RING_EXHAUSTED, word);
	emitf(e, "	mov.b64 {%%w%u, %%w%u}, %%t%u;\n", lo, hi, base);
	emitf(e, "	shfl.sync.idx.b32 %%w%u, %%w%u, %%w%u, 31, %%w%u;\n", lo, lo, leader, mask);
	emitf(e, "	shfl.sync.idx.b32 %%w%u, %%w%u, %%w%u, 31, %%w%u;\n", hi, hi, leader, mask);
	emitf(e, "	mov.b64 %%t%u, {%%w%u, %%w%u};\n", base, lo, hi);
	emitf(e, "	mul.wide.u32 %%t%u, %%w%u, %u;\n", total, rank, rec_size);
	emitf(e, "	add.u64 %%t%u, %%t%u, %%t%u;\n", base, base, total);
	emitf(e, "	add.u64 %%t%u, %%t%u, %u;\n", end, base, rec_size);
	emitf(e, "	setp.le.u64 %%p%u, %%t%u, %%t%u;\n", fits, end, cap);
	emitf(e, "	vote.sync.ballot.b32 %%w%u, !%%p%u, %%w%u;\n", drops, fits, mask);
	emitf(e, "	and.b32 %%w%u, %%w%u, %%w%u;\n", lt, lt, drops);
	emitf(e, "	setp.eq.and.u32 %%p%u, %%w%u, 0, !%%p%u;\n", counts, lt, fits);
	emitf(e, "	popc.b32 %%w%u, %%w%u;\n", drops, drops);
	emitf(e, "	cvt.u64.u32 %%t%u, %%w%u;\n", total, drops);
	emitf(e, "	@%%p%u red.global.add.u64 [%%t%u+%u], %%t%u;\n", counts, slot, GRT_BPF_RING_DROP_OFF,
	      total);
	emitf(e, "	@!%%p%u bra %s;\n", fits, drop);
	emitf(e, "	add.u64 %%t%u, %%t%u, %u;\n", rec, ring, GRT_BPF_RING_HEAD_SIZE);
	emitf(e, "	add.u64 %%t%u, %%t%u, %%t%u;\n", rec, rec, base);
}

/* The record header but its length: program, SM, time. */
static void ring_header(struct emit *e, unsigned rec)
{
	unsigned t = new_t(e), w = new_w(e);

	emitf(e, "\tmov.u64 %%t%u, %%globaltimer;\n", t);
	emitf(e, "\tst.global.u64 [%%t%u+8], %%t%u;\n", rec, t);
	emitf(e, "\tmov.u32 %%w%u, %%smid;\n", w);
	emitf(e, "\tshl.b32 %%w%u, %%w%u, 16;\n", w, w);
	emitf(e, "\tor.b32 %%w%u, %%w%u, %u;\n", w, w, e->opts->prog_id);
	emitf(e, "\tst.global.u32 [%%t%u+4], %%w%u;\n", rec, w);
}

/* Publishes a record: its length last, after everything else is visible. */
static void ring_commit(struct emit *e, unsigned rec, uint32_t len)
{
	emitf(e, "\tst.release.gpu.global.u32 [%%t%u], %u;\n", rec, len);
}

static int emit_output(struct emit *e, int32_t fn)
{
	unsigned data_arg = fn == GRT_BPF_FN_PERF_EVENT_OUTPUT ? 4 : 2;
	uint32_t size = e->ver->info[e->pc].size;
	uint32_t rec_size = GRT_BPF_RING_REC_SIZE + grt_bpf_stride(size);
	struct labels l = new_labels(e);
	unsigned ring = new_t(e), rec = new_t(e);
	struct msrc data;
	char drop[32];

	if (e->ver->info[e->pc].map < 0 || helper_msrc(e, data_arg, &data))
		return e->ver->info[e->pc].map < 0 ? emit_err(e, "map of the call unknown")
						   : -EINVAL;
	snprintf(drop, sizeof(drop), "$H%u_drop", l.n);
	load_map_base(e, e->ver->info[e->pc].map, ring);
	ring_reserve(e, ring, rec_size, rec, drop, e->ver->info[e->pc].map);
	copy_to_global(e, &data, rec, GRT_BPF_RING_REC_SIZE, size);
	ring_header(e, rec);
	ring_commit(e, rec, size);
	emitf(e, "\tmov.b64 %%r0, 0;\n\tbra $H%u_done;\n", l.n);
	emitf(e, "%s:\n", drop);
	set_r0_errno(e, fn == GRT_BPF_FN_PERF_EVENT_OUTPUT ? ENOSPC : EAGAIN);
	emitf(e, "$H%u_done:\n", l.n);
	return 0;
}

static int emit_reserve(struct emit *e)
{
	uint32_t size = e->ver->info[e->pc].size;
	struct labels l = new_labels(e);
	unsigned ring = new_t(e), rec = new_t(e);
	char drop[32];

	snprintf(drop, sizeof(drop), "$H%u_drop", l.n);
	load_map_base(e, e->ver->info[e->pc].map, ring);
	ring_reserve(e, ring, GRT_BPF_RING_REC_SIZE + grt_bpf_stride(size), rec, drop,
		     e->ver->info[e->pc].map);
	ring_header(e, rec);
	emitf(e, "\tadd.u64 %%r0, %%t%u, %u;\n", rec, GRT_BPF_RING_REC_SIZE);
	emitf(e, "\tbra $H%u_done;\n", l.n);
	emitf(e, "%s:\n\tmov.b64 %%r0, 0;\n", drop);
	emitf(e, "$H%u_done:\n", l.n);
	return 0;
}

static int emit_release(struct emit *e, bool discard)
{
	uint32_t len = e->ver->info[e->pc].size | (discard ? GRT_BPF_RING_DISCARDED : 0);

	emitf(e, "\tst.release.gpu.global.u32 [%%r1+-%u], %u;\n", GRT_BPF_RING_REC_SIZE, len);
	return 0;
}

/* bpf_trace_printk and puts: a line for the host to format, in the printk ring. */
static int emit_printk(struct emit *e, bool puts)
{
	uint32_t len = e->ver->info[e->pc].size;
	struct labels l = new_labels(e);
	unsigned ring = new_t(e), rec = new_t(e), p = new_p(e), t = new_t(e);
	struct msrc fmt;
	uint32_t rec_size;
	char drop[32];

	if (helper_msrc(e, 1, &fmt))
		return -EINVAL;
	if (len > GRT_BPF_PRINTK_MAX)
		len = GRT_BPF_PRINTK_MAX;
	rec_size =
	    GRT_BPF_RING_REC_SIZE + (uint32_t)sizeof(struct grt_bpf_printk) + grt_bpf_stride(len);
	snprintf(drop, sizeof(drop), "$H%u_drop", l.n);
	load_env(e, GRT_BPF_ENV_OFF_PRINTK_RING, ring);
	emitf(e, "\tsetp.eq.u64 %%p%u, %%t%u, 0;\n", p, ring);
	emitf(e, "\t@%%p%u bra %s;\n", p, drop);
	ring_reserve(e, ring, rec_size, rec, drop, -1);
	emitf(e, "\tmov.b64 %%t%u, 0x%llx;\n", t,
	      (unsigned long long)((uint64_t)len << 32 | (puts ? GRT_BPF_PUTS : GRT_BPF_PRINTK)));
	emitf(e, "\tst.global.u64 [%%t%u+%u], %%t%u;\n", rec, GRT_BPF_RING_REC_SIZE, t);
	for (unsigned i = 0; i < 3; i++) {
		if (puts)
			emitf(e, "\tst.global.u64 [%%t%u+%u], 0;\n", rec,
			      GRT_BPF_RING_REC_SIZE + 8 + 8 * i);
		else
			emitf(e, "\tst.global.u64 [%%t%u+%u], %%r%u;\n", rec,
			      GRT_BPF_RING_REC_SIZE + 8 + 8 * i, 3 + i);
	}
	copy_to_global(e, &fmt, rec,
		       GRT_BPF_RING_REC_SIZE + (uint32_t)sizeof(struct grt_bpf_printk), len);
	ring_header(e, rec);
	ring_commit(e, rec, (uint32_t)sizeof(struct grt_bpf_printk) + len);
	emitf(e, "\tmov.b64 %%r0, 0;\n\tbra $H%u_done;\n", l.n);
	emitf(e, "%s:\n", drop);
	set_r0_errno(e, ENOSPC);
	emitf(e, "$H%u_done:\n", l.n);
	return 0;
}

/* --- GPU state ---------------------------------------------------------------------------- */

/* bpftime's (u64 *x, u64 *y, u64 *z) helpers: one special register per pointer. */
static int emit_dims(struct emit *e, const char *sreg)
{
	static const char axis[] = "xyz";

	for (unsigned i = 0; i < 3; i++) {
		unsigned w = new_w(e), t = new_t(e);
		struct msrc m;

		if (helper_msrc(e, i + 1, &m))
			return -EINVAL;
		emitf(e, "\tmov.u32 %%w%u, %%%s.%c;\n", w, sreg, axis[i]);
		emitf(e, "\tcvt.u64.u32 %%t%u, %%w%u;\n", t, w);
		store_bytes(e, &m, 0, 8, t);
	}
	emitf(e, "\tmov.b64 %%r0, 0;\n");
	return 0;
}

static void emit_special32(struct emit *e, const char *sreg)
{
	unsigned w = new_w(e);

	emitf(e, "\tmov.u32 %%w%u, %%%s;\n", w, sreg);
	emitf(e, "\tcvt.u64.u32 %%r0, %%w%u;\n", w);
}

/* CLOCK_MONOTONIC from %globaltimer: mono_ref + ((gpu - gpu_ref) * mult >> 32), 128-bit product. */
static void emit_ktime(struct emit *e)
{
	unsigned d = new_t(e), ref = new_t(e), mult = new_t(e), lo = new_t(e), hi = new_t(e);

	emitf(e, "\tmov.u64 %%t%u, %%globaltimer;\n", d);
	load_env(e, GRT_BPF_ENV_OFF_CLOCK_GPU_REF, ref);
	emitf(e, "\tsub.s64 %%t%u, %%t%u, %%t%u;\n", d, d, ref);
	load_env(e, GRT_BPF_ENV_OFF_CLOCK_MULT, mult);
	emitf(e, "\tmul.lo.u64 %%t%u, %%t%u, %%t%u;\n", lo, d, mult);
	emitf(e, "\tmul.hi.s64 %%t%u, %%t%u, %%t%u;\n", hi, d, mult);
	emitf(e, "\tshr.u64 %%t%u, %%t%u, 32;\n", lo, lo);
	emitf(e, "\tshl.b64 %%t%u, %%t%u, 32;\n", hi, hi);
	emitf(e, "\tor.b64 %%t%u, %%t%u, %%t%u;\n", lo, lo, hi);
	load_env(e, GRT_BPF_ENV_OFF_CLOCK_MONO_REF, ref);
	emitf(e, "\tadd.s64 %%r0, %%t%u, %%t%u;\n", lo, ref);
}

int emit_call(struct emit *e, const struct bpf_insn *insn)
{
	switch (insn->imm) {
	case GRT_BPF_FN_MAP_LOOKUP:
	case GRT_BPF_FN_MAP_UPDATE:
	case GRT_BPF_FN_MAP_DELETE:
		return emit_map_op(e, insn->imm);
	case GRT_BPF_FN_KTIME_GET_NS:
		emit_ktime(e);
		return 0;
	case GRT_BPF_FN_TRACE_PRINTK:
		return emit_printk(e, false);
	case GRT_BPF_FN_PUTS:
		return emit_printk(e, true);
	case GRT_BPF_FN_SMP_PROCESSOR_ID:
	case GRT_BPF_FN_SM_ID:
		emit_special32(e, "smid");
		return 0;
	case GRT_BPF_FN_WARP_ID:
		emit_special32(e, "warpid");
		return 0;
	case GRT_BPF_FN_LANE_ID:
		emit_special32(e, "laneid");
		return 0;
	case GRT_BPF_FN_GET_PID_TGID: {
		unsigned t = new_t(e);

		load_env(e, GRT_BPF_ENV_OFF_PID_TGID, t);
		emitf(e, "\tmov.b64 %%r0, %%t%u;\n", t);
		return 0;
	}
	case GRT_BPF_FN_PERF_EVENT_OUTPUT:
	case GRT_BPF_FN_RINGBUF_OUTPUT:
		return emit_output(e, insn->imm);
	case GRT_BPF_FN_RINGBUF_RESERVE:
		return emit_reserve(e);
	case GRT_BPF_FN_RINGBUF_SUBMIT:
	case GRT_BPF_FN_RINGBUF_DISCARD:
		return emit_release(e, insn->imm == GRT_BPF_FN_RINGBUF_DISCARD);
	case GRT_BPF_FN_GLOBALTIMER:
		emitf(e, "\tmov.u64 %%r0, %%globaltimer;\n");
		return 0;
	case GRT_BPF_FN_BLOCK_IDX:
		return emit_dims(e, "ctaid");
	case GRT_BPF_FN_BLOCK_DIM:
		return emit_dims(e, "ntid");
	case GRT_BPF_FN_THREAD_IDX:
		return emit_dims(e, "tid");
	case GRT_BPF_FN_GRID_DIM:
		return emit_dims(e, "nctaid");
	case GRT_BPF_FN_MEMBAR:
		emitf(e, "\tmembar.sys;\n\tmov.b64 %%r0, 0;\n");
		return 0;
	}
	return emit_err(e, "helper %d has no translation", insn->imm);
}
