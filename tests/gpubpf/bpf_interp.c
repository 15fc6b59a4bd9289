/* The reference interpreter: GPU eBPF programs run on the host over a simulated grid. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bpf_interp.h"
#include "gpubpf/bpf_device.h"
#include "gpubpf/bpf_helpers.h"
#include "gpubpf/bpf_scalar.h"

/* What a thread knows of itself while its programs run. */
struct thread {
	uint32_t ctaid[3], nctaid[3], tid[3], ntid[3];
	uint64_t linear; /* in the grid (gpu_abi.h) */
	uint32_t smid, warpid, laneid;
	uint64_t now; /* simulated %globaltimer */
};

struct run {
	struct interp_session *s;
	const struct gpubpf_bundle *b;
	const struct gpubpf_program *p;
	struct thread *th;
	char *err;
	size_t err_len;
};

static uint64_t globaltimer(struct thread *th)
{
	return th->now++;
}

/* --- maps ------------------------------------------------------------------------------- */

int interp_session_init(struct interp_session *s, const struct gpubpf_bundle *b,
			uint32_t thread_capacity, size_t ring_bytes)
{
	memset(s, 0, sizeof(*s));
	s->env.magic = GRT_BPF_ENV_MAGIC;
	s->env.version = GRT_BPF_ENV_VERSION;
	s->env.thread_capacity = thread_capacity;
	s->env.pid_tgid = (4242ull << 32) | 4243;
	s->env.clock_gpu_ref = 0;
	s->env.clock_mono_ref = 1000000000ull;
	s->env.clock_mult = 1ull << 32;
	for (size_t i = 0; i < b->obj.nr_maps; i++) {
		const struct gpubpf_map *m = &b->obj.maps[i];
		uint32_t slot = b->map_slot_base + (uint32_t)i;
		struct gpubpf_map_shape shape = {m->type, m->key_size, m->value_size,
						 m->max_entries, m->stripe_width};
		size_t len = m->rodata ? 0 : gpubpf_map_bytes(&shape, thread_capacity, ring_bytes);

		if (!len)
			continue;
		s->map_mem[slot] = calloc(1, len);
		if (!s->map_mem[slot])
			return -ENOMEM;
		s->map_len[slot] = len;
		s->env.map[slot] = (uint64_t)(uintptr_t)s->map_mem[slot];
		if (gpubpf_map_is_ring(m->type))
			((struct grt_bpf_ring *)s->map_mem[slot])->capacity = ring_bytes;
	}
	s->printk_len = GRT_BPF_RING_HEAD_SIZE + ring_bytes;
	s->printk_ring = calloc(1, s->printk_len);
	if (!s->printk_ring)
		return -ENOMEM;
	((struct grt_bpf_ring *)s->printk_ring)->capacity = ring_bytes;
	s->env.printk_ring = (uint64_t)(uintptr_t)s->printk_ring;
	return 0;
}

void interp_session_free(struct interp_session *s)
{
	for (unsigned i = 0; i < GRT_BPF_MAX_MAPS; i++)
		free(s->map_mem[i]);
	free(s->printk_ring);
	memset(s, 0, sizeof(*s));
}

static uint8_t *map_base(struct run *r, int map)
{
	return (uint8_t *)(uintptr_t)r->s->env.map[r->b->map_slot_base + (uint32_t)map];
}

/* Reads n <= 8 bytes as a little-endian number. */
static uint64_t get_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Copies n bytes and zeroes the rest of the 8-byte words, as the translation's word stores do. */
static void copy_words(uint8_t *dst, const uint8_t *src, uint32_t n)
{
	memcpy(dst, src, n);
	memset(dst + n, 0, grt_bpf_stride(n) - n);
}

static uint8_t *array_slot(struct run *r, int map, const uint8_t *key)
{
	const struct gpubpf_map *m = &r->b->obj.maps[map];
	uint64_t idx = get_le(key, 4), stride = grt_bpf_stride(m->value_size);

	if (idx >= m->max_entries)
		return NULL;
	if (m->type == BPF_MAP_TYPE_PERCPU_ARRAY) {
		if (r->th->smid >= GRT_BPF_SM_SLOTS)
			return NULL;
		idx = idx * GRT_BPF_SM_SLOTS + r->th->smid;
	} else if (m->stripe_width) { /* a counter kept per SM, as the device keeps it */
		idx = idx * GRT_BPF_SM_SLOTS + r->th->smid % GRT_BPF_SM_SLOTS;
		stride = grt_bpf_stripe_stride(m->value_size);
	} else if (m->type == GRT_BPF_MAP_PERGPUTD_ARRAY) {
		if (r->th->linear >= r->s->env.thread_capacity)
			return NULL;
		idx = idx * r->s->env.thread_capacity + r->th->linear;
	}
	return map_base(r, map) + idx * stride;
}

/* The slot of key, or of the first empty slot on its path (*found false), or NULL when full. */
static uint8_t *hash_find(struct run *r, int map, const uint8_t *key, bool *found)
{
	const struct gpubpf_map *m = &r->b->obj.maps[map];
	uint64_t cap = grt_bpf_hash_capacity(m->max_entries);
	uint64_t slot_size =
	    GRT_BPF_HASH_SLOT_HEAD + grt_bpf_stride(m->key_size) + grt_bpf_stride(m->value_size);
	uint64_t idx = grt_bpf_hash_home(key, m->key_size, cap);
	uint8_t padded[512 + 8] = {0};

	memcpy(padded, key, m->key_size);
	*found = false;
	for (uint64_t n = 0; n < cap; n++, idx = (idx + 1) & (cap - 1)) {
		uint8_t *slot = map_base(r, map) + idx * slot_size;
		uint32_t state = (uint32_t)get_le(slot, 4);

		if (state == GRT_BPF_HASH_EMPTY)
			return slot;
		if (!memcmp(slot + GRT_BPF_HASH_SLOT_HEAD, padded, grt_bpf_stride(m->key_size))) {
			*found = true;
			return slot;
		}
	}
	return NULL;
}

static void set_state(uint8_t *slot, uint32_t state)
{
	memcpy(slot, &state, 4);
}

static uint64_t map_op(struct run *r, int32_t fn, int map, const uint8_t *key, const uint8_t *val,
		       uint64_t flags)
{
	const struct gpubpf_map *m = &r->b->obj.maps[map];
	uint32_t voff = GRT_BPF_HASH_SLOT_HEAD + grt_bpf_stride(m->key_size);
	uint8_t *slot;
	bool found;

	if (m->type != BPF_MAP_TYPE_HASH) {
		if (fn == GRT_BPF_FN_MAP_DELETE)
			return (uint64_t)-EINVAL;
		slot = array_slot(r, map, key);
		if (fn == GRT_BPF_FN_MAP_LOOKUP)
			return (uint64_t)(uintptr_t)slot;
		if (flags > BPF_EXIST)
			return (uint64_t)-EINVAL;
		if (!slot)
			return (uint64_t)-E2BIG;
		if (flags == BPF_NOEXIST)
			return (uint64_t)-EEXIST;
		copy_words(slot, val, m->value_size);
		return 0;
	}
	if (fn == GRT_BPF_FN_MAP_UPDATE && flags > BPF_EXIST)
		return (uint64_t)-EINVAL;
	slot = hash_find(r, map, key, &found);
	switch (fn) {
	case GRT_BPF_FN_MAP_LOOKUP:
		return found && get_le(slot, 4) == GRT_BPF_HASH_FULL
			   ? (uint64_t)(uintptr_t)(slot + voff)
			   : 0;
	case GRT_BPF_FN_MAP_DELETE:
		if (!found || get_le(slot, 4) != GRT_BPF_HASH_FULL)
			return (uint64_t)-ENOENT;
		set_state(slot, GRT_BPF_HASH_DELETED);
		return 0;
	}
	if (!slot)
		return (uint64_t)-E2BIG;
	if (found && get_le(slot, 4) == GRT_BPF_HASH_FULL) {
		if (flags == BPF_NOEXIST)
			return (uint64_t)-EEXIST;
	} else {
		if (flags == BPF_EXIST)
			return (uint64_t)-ENOENT;
		if (!found)
			copy_words(slot + GRT_BPF_HASH_SLOT_HEAD, key, m->key_size);
		set_state(slot, GRT_BPF_HASH_FULL);
	}
	copy_words(slot + voff, val, m->value_size);
	return 0;
}

/* --- rings ------------------------------------------------------------------------------ */

static uint8_t *ring_reserve(struct run *r, uint8_t *ring_mem, uint32_t rec_size)
{
	struct grt_bpf_ring *ring = (struct grt_bpf_ring *)ring_mem;
	uint64_t at = ring->head;
	struct grt_bpf_ring_rec *rec;

	ring->head += rec_size;
	if (at + rec_size > ring->capacity) {
		/* counted where the device counts it: its SM's drop slot */
		uint64_t *slot = (uint64_t *)(ring_mem + grt_bpf_ring_drop_slot(r->th->smid));

		++*slot;
		return NULL;
	}
	rec = (struct grt_bpf_ring_rec *)(ring_mem + GRT_BPF_RING_HEAD_SIZE + at);
	rec->prog = r->p->id;
	rec->smid = (uint16_t)r->th->smid;
	rec->gpu_ns = globaltimer(r->th);
	return (uint8_t *)rec;
}

static uint64_t ring_output(struct run *r, int map, const uint8_t *data, uint32_t size, int err)
{
	uint8_t *rec =
	    ring_reserve(r, map_base(r, map), GRT_BPF_RING_REC_SIZE + grt_bpf_stride(size));

	if (!rec)
		return (uint64_t)-err;
	copy_words(rec + GRT_BPF_RING_REC_SIZE, data, size);
	((struct grt_bpf_ring_rec *)rec)->len = size;
	return 0;
}

static uint64_t printk(struct run *r, const uint8_t *fmt, uint32_t len, const uint64_t *args,
		       bool puts)
{
	uint32_t rec_size;
	struct grt_bpf_printk pk = {.kind = puts ? GRT_BPF_PUTS : GRT_BPF_PRINTK};
	uint8_t *rec;

	if (len > GRT_BPF_PRINTK_MAX)
		len = GRT_BPF_PRINTK_MAX;
	rec_size = GRT_BPF_RING_REC_SIZE + (uint32_t)sizeof(pk) + grt_bpf_stride(len);
	if (!r->s->env.printk_ring)
		return (uint64_t)-ENOSPC;
	rec = ring_reserve(r, (uint8_t *)(uintptr_t)r->s->env.printk_ring, rec_size);
	if (!rec)
		return (uint64_t)-ENOSPC;
	pk.fmt_len = len;
	for (int i = 0; i < 3 && !puts; i++)
		pk.arg[i] = args[i];
	memcpy(rec + GRT_BPF_RING_REC_SIZE, &pk, sizeof(pk));
	copy_words(rec + GRT_BPF_RING_REC_SIZE + sizeof(pk), fmt, len);
	((struct grt_bpf_ring_rec *)rec)->len = (uint32_t)sizeof(pk) + len;
	return 0;
}

/* --- the machine ------------------------------------------------------------------------ */

static int fault(struct run *r, size_t pc, const char *what)
{
	snprintf(r->err, r->err_len, "%s insn %zu: %s", r->p->prog->section, pc, what);
	return -EFAULT;
}

static uint64_t byte_swap(uint64_t v, unsigned bits, bool to_le)
{
	if (to_le)
		return bits == 64 ? v : v & ((1ull << bits) - 1);
	return bits == 16   ? __builtin_bswap16((uint16_t)v)
	       : bits == 32 ? __builtin_bswap32((uint32_t)v)
			    : __builtin_bswap64(v);
}

static uint64_t load(const void *p, unsigned size, bool sx)
{
	uint64_t v = get_le(p, size);

	if (sx && size < 8 && (v >> (8 * size - 1)) & 1)
		v |= ~0ull << (8 * size);
	return v;
}

static void store(void *p, unsigned size, uint64_t v)
{
	for (unsigned i = 0; i < size; i++)
		((uint8_t *)p)[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t atomic_op(uint8_t *p, unsigned size, int32_t op, uint64_t src, uint64_t *r0)
{
	uint64_t old = load(p, size, false), val = src;

	switch (op & ~BPF_FETCH) {
	case BPF_ADD:
		val = old + src;
		break;
	case BPF_OR:
		val = old | src;
		break;
	case BPF_AND:
		val = old & src;
		break;
	case BPF_XOR:
		val = old ^ src;
		break;
	}
	if (op == BPF_CMPXCHG) {
		val = old == (size == 4 ? (uint32_t)*r0 : *r0) ? src : old;
		*r0 = old;
	}
	store(p, size, val);
	return old;
}

static uint64_t call(struct run *r, size_t pc, const struct bpf_insn *insn, uint64_t *reg)
{
	const struct gpubpf_insn_info *info = &r->p->ver.info[pc];
	struct thread *th = r->th;
	uint8_t *p1 = (uint8_t *)(uintptr_t)reg[1];
	uint64_t dims[3] = {0};

	switch (insn->imm) {
	case GRT_BPF_FN_MAP_LOOKUP:
	case GRT_BPF_FN_MAP_UPDATE:
	case GRT_BPF_FN_MAP_DELETE:
		return map_op(r, insn->imm, info->map, (const uint8_t *)(uintptr_t)reg[2],
			      (const uint8_t *)(uintptr_t)reg[3], reg[4]);
	case GRT_BPF_FN_KTIME_GET_NS: {
		__int128 d = (__int128)(int64_t)(globaltimer(th) - r->s->env.clock_gpu_ref) *
			     (__int128)r->s->env.clock_mult;

		return r->s->env.clock_mono_ref + (uint64_t)(d >> 32);
	}
	case GRT_BPF_FN_TRACE_PRINTK:
		return printk(r, p1, info->size, &reg[3], false);
	case GRT_BPF_FN_PUTS:
		return printk(r, p1, info->size, &reg[3], true);
	case GRT_BPF_FN_SMP_PROCESSOR_ID:
	case GRT_BPF_FN_SM_ID:
		return th->smid;
	case GRT_BPF_FN_WARP_ID:
		return th->warpid;
	case GRT_BPF_FN_LANE_ID:
		return th->laneid;
	case GRT_BPF_FN_GET_PID_TGID:
		return r->s->env.pid_tgid;
	case GRT_BPF_FN_PERF_EVENT_OUTPUT:
		return ring_output(r, info->map, (const uint8_t *)(uintptr_t)reg[4], info->size,
				   ENOSPC);
	case GRT_BPF_FN_RINGBUF_OUTPUT:
		return ring_output(r, info->map, (const uint8_t *)(uintptr_t)reg[2], info->size,
				   EAGAIN);
	case GRT_BPF_FN_RINGBUF_RESERVE: {
		uint8_t *rec = ring_reserve(r, map_base(r, info->map),
					    GRT_BPF_RING_REC_SIZE + grt_bpf_stride(info->size));

		return rec ? (uint64_t)(uintptr_t)(rec + GRT_BPF_RING_REC_SIZE) : 0;
	}
	case GRT_BPF_FN_RINGBUF_SUBMIT:
	case GRT_BPF_FN_RINGBUF_DISCARD:
		((struct grt_bpf_ring_rec *)(p1 - GRT_BPF_RING_REC_SIZE))->len =
		    info->size |
		    (insn->imm == GRT_BPF_FN_RINGBUF_DISCARD ? GRT_BPF_RING_DISCARDED : 0);
		return 0;
	case GRT_BPF_FN_GLOBALTIMER:
		return globaltimer(th);
	case GRT_BPF_FN_BLOCK_IDX:
	case GRT_BPF_FN_BLOCK_DIM:
	case GRT_BPF_FN_THREAD_IDX:
	case GRT_BPF_FN_GRID_DIM: {
		const uint32_t *src = insn->imm == GRT_BPF_FN_BLOCK_IDX	   ? th->ctaid
				      : insn->imm == GRT_BPF_FN_BLOCK_DIM  ? th->ntid
				      : insn->imm == GRT_BPF_FN_THREAD_IDX ? th->tid
									   : th->nctaid;

		for (int i = 0; i < 3; i++) {
			dims[i] = src[i];
			store((void *)(uintptr_t)reg[1 + i], 8, dims[i]);
		}
		return 0;
	}
	case GRT_BPF_FN_MEMBAR:
		return 0;
	}
	return 0;
}

static int execute(struct run *r, const void *ctx, uint64_t *ret)
{
	const struct gpubpf_prog *prog = r->p->prog;
	uint64_t reg[BPF_MAX_REG] = {0};
	uint8_t stack[BPF_STACK_SIZE] __attribute__((aligned(8))) = {0};
	size_t pc = 0, steps = 0;

	reg[1] = (uint64_t)(uintptr_t)ctx;
	reg[10] = (uint64_t)(uintptr_t)(stack + sizeof(stack));
	while (pc < prog->nr_insns) {
		const struct bpf_insn *insn = &prog->insns[pc];
		uint8_t cls = BPF_INSN_CLASS(insn->code), op = BPF_INSN_OP(insn->code);
		bool is64 = cls == BPF_ALU64 || cls == BPF_JMP,
		     x = BPF_INSN_SRC(insn->code) == BPF_X;
		uint64_t src = x      ? reg[insn->src_reg]
			       : is64 ? (uint64_t)(int64_t)insn->imm
				      : (uint64_t)(uint32_t)insn->imm;
		unsigned size = bpf_size_bytes(insn->code);

		if (++steps > 1000000)
			return fault(r, pc, "runs too long");
		r->s->insns_run++;
		if (r->s->executed)
			r->s->executed[pc] = true;
		switch (cls) {
		case BPF_ALU:
		case BPF_ALU64:
			if (op == BPF_END)
				reg[insn->dst_reg] = byte_swap(
				    reg[insn->dst_reg], (unsigned)insn->imm, cls == BPF_ALU && !x);
			else if (op == BPF_MOV && insn->off && x)
				reg[insn->dst_reg] = load(&src, (unsigned)insn->off / 8, true);
			else if (op == BPF_MOV)
				reg[insn->dst_reg] = src;
			else
				reg[insn->dst_reg] =
				    bpf_alu_eval(op, reg[insn->dst_reg], src, is64, insn->off == 1);
			if (cls == BPF_ALU && op != BPF_END) /* a byte swap's width is its own */
				reg[insn->dst_reg] = (uint32_t)reg[insn->dst_reg];
			pc++;
			continue;
		case BPF_LD: {
			const struct gpubpf_map *m =
			    insn->src_reg ? &r->b->obj.maps[insn->imm] : NULL;

			if (!m)
				reg[insn->dst_reg] =
				    (uint32_t)insn->imm | (uint64_t)(uint32_t)insn[1].imm << 32;
			else if (insn->src_reg == BPF_PSEUDO_MAP_VALUE)
				reg[insn->dst_reg] = (uint64_t)(uintptr_t)(m->data + insn[1].imm);
			else
				reg[insn->dst_reg] = 0;
			pc += 2;
			continue;
		}
		case BPF_LDX:
			reg[insn->dst_reg] =
			    r->p->ver.info[pc].mem.bases == GPUBPF_BASE_CTX && !ctx
				? 0
				: load((void *)(uintptr_t)(reg[insn->src_reg] + insn->off), size,
				       BPF_INSN_MODE(insn->code) == BPF_MEMSX);
			pc++;
			continue;
		case BPF_ST:
			store((void *)(uintptr_t)(reg[insn->dst_reg] + insn->off), size,
			      (uint64_t)(int64_t)insn->imm);
			pc++;
			continue;
		case BPF_STX:
			if (BPF_INSN_MODE(insn->code) == BPF_ATOMIC) {
				uint64_t old = atomic_op(
				    (uint8_t *)(uintptr_t)(reg[insn->dst_reg] + insn->off), size,
				    insn->imm, reg[insn->src_reg], &reg[0]);

				if ((insn->imm & BPF_FETCH) && insn->imm != BPF_CMPXCHG)
					reg[insn->src_reg] = old;
			} else {
				store((void *)(uintptr_t)(reg[insn->dst_reg] + insn->off), size,
				      reg[insn->src_reg]);
			}
			pc++;
			continue;
		}
		if (op == BPF_EXIT) {
			*ret = reg[0];
			return 0;
		}
		if (op == BPF_CALL) {
			reg[0] = call(r, pc, insn, reg);
			pc++;
			continue;
		}
		if (op == BPF_JA) {
			pc += 1 + (size_t)(int64_t)(cls == BPF_JMP32 ? insn->imm : insn->off);
			continue;
		}
		{
			uint64_t a = reg[insn->dst_reg], b = src;
			bool taken;

			if (cls == BPF_JMP32) {
				a = (uint32_t)a;
				b = (uint32_t)b;
			}
#define S(v) (cls == BPF_JMP32 ? (int64_t)(int32_t)(v) : (int64_t)(v))
			switch (op) {
			case BPF_JEQ:
				taken = a == b;
				break;
			case BPF_JNE:
				taken = a != b;
				break;
			case BPF_JGT:
				taken = a > b;
				break;
			case BPF_JGE:
				taken = a >= b;
				break;
			case BPF_JLT:
				taken = a < b;
				break;
			case BPF_JLE:
				taken = a <= b;
				break;
			case BPF_JSGT:
				taken = S(a) > S(b);
				break;
			case BPF_JSGE:
				taken = S(a) >= S(b);
				break;
			case BPF_JSLT:
				taken = S(a) < S(b);
				break;
			case BPF_JSLE:
				taken = S(a) <= S(b);
				break;
			default:
				taken = (a & b) != 0;
				break; /* BPF_JSET */
			}
#undef S
			pc += 1 + (taken ? (size_t)(int64_t)insn->off : 0);
		}
	}
	return fault(r, pc, "ran off the end");
}

static void set_thread(struct thread *th, const struct interp_launch *l, uint64_t block,
		       uint32_t thread)
{
	uint32_t per_block = l->block[0] * l->block[1] * l->block[2];

	memset(th, 0, sizeof(*th));
	memcpy(th->nctaid, l->grid, sizeof(th->nctaid));
	memcpy(th->ntid, l->block, sizeof(th->ntid));
	th->ctaid[0] = (uint32_t)(block % l->grid[0]);
	th->ctaid[1] = (uint32_t)(block / l->grid[0] % l->grid[1]);
	th->ctaid[2] = (uint32_t)(block / l->grid[0] / l->grid[1]);
	th->tid[0] = thread % l->block[0];
	th->tid[1] = thread / l->block[0] % l->block[1];
	th->tid[2] = thread / l->block[0] / l->block[1];
	th->linear = block * per_block + thread;
	th->smid = (uint32_t)(block % (l->nr_sms ? l->nr_sms : 1));
	th->warpid = thread / 32;
	th->laneid = thread % 32;
	th->now = l->t0_ns + block * l->block_ns + thread * l->thread_ns;
}

static bool matches(const struct gpubpf_program *p, const char *kernel, enum grt_bpf_attach kind)
{
	return p->prog->attach == kind &&
	       (kind == GRT_BPF_ATTACH_MEMCAPTURE || !fnmatch(p->prog->kernel, kernel, 0));
}

static int run_kind(struct run *r, const struct interp_launch *l, enum grt_bpf_attach kind,
		    const void *ctx)
{
	uint64_t ret;

	for (size_t i = 0; i < r->b->nr_progs; i++) {
		int rc;

		if (!matches(&r->b->progs[i], l->kernel, kind))
			continue;
		r->p = &r->b->progs[i];
		rc = execute(r, ctx, &ret);
		if (rc)
			return rc;
	}
	return 0;
}

int interp_run(struct interp_session *s, const struct gpubpf_bundle *b,
	       const struct interp_launch *l, char *err, size_t err_len)
{
	uint64_t blocks = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
	uint32_t per_block = l->block[0] * l->block[1] * l->block[2];
	struct grt_bpf_kernel_ctx kctx = {.kernel_id = l->kernel_id};
	struct thread th;
	struct run r = {.s = s, .b = b, .th = &th, .err = err, .err_len = err_len};
	struct grt_bpf_mem_ctx acc[64];

	memcpy(kctx.param, l->params, sizeof(kctx.param));
	for (uint64_t blk = 0; blk < blocks; blk++)
		for (uint32_t t = 0; t < per_block; t++) {
			size_t n = l->accesses ? l->accesses(l->arg, blk, t, acc, 64) : 0;
			int rc;

			set_thread(&th, l, blk, t);
			rc = run_kind(&r, l, GRT_BPF_ATTACH_ENTRY, &kctx);
			for (size_t k = 0; !rc && k < n; k++) {
				acc[k].kernel_id = l->kernel_id;
				rc = run_kind(&r, l, GRT_BPF_ATTACH_MEMCAPTURE, &acc[k]);
			}
			th.now = l->t0_ns + blk * l->block_ns + t * l->thread_ns + l->body_ns;
			if (!rc)
				rc = run_kind(&r, l, GRT_BPF_ATTACH_EXIT, &kctx);
			if (rc)
				return rc;
		}
	return 0;
}

int interp_run_one(struct interp_session *s, const struct gpubpf_bundle *b, size_t prog,
		   const void *ctx, uint64_t *ret, char *err, size_t err_len)
{
	struct thread th = {.ntid = {1, 1, 1}, .nctaid = {1, 1, 1}};
	struct run r = {
	    .s = s, .b = b, .p = &b->progs[prog], .th = &th, .err = err, .err_len = err_len};

	return execute(&r, ctx, ret);
}
