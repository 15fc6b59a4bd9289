/* What the verifier knows of an integer: known bits (tnum) and unsigned/signed bounds. */
#include <linux/bpf.h>
#include "gpubpf/bpf_scalar.h"

#define SIGN_BIT (1ull << 63)

/* --- known bits ------------------------------------------------------------------------ */

static struct tnum tn_const(uint64_t v)
{
	return (struct tnum){v, 0};
}

static struct tnum tn_unknown(void)
{
	return (struct tnum){0, ~0ull};
}

/* The known bits shared by every value in [min, max]. */
static struct tnum tn_range(uint64_t min, uint64_t max)
{
	uint64_t chi = min ^ max, delta;
	int bits = chi ? 64 - __builtin_clzll(chi) : 0;

	if (bits > 63)
		return tn_unknown();
	delta = (1ull << bits) - 1;
	return (struct tnum){min & ~delta, delta};
}

static struct tnum tn_add(struct tnum a, struct tnum b)
{
	uint64_t sm = a.mask + b.mask, sv = a.value + b.value, sigma = sm + sv;
	uint64_t mu = (sigma ^ sv) | a.mask | b.mask;

	return (struct tnum){sv & ~mu, mu};
}

static struct tnum tn_sub(struct tnum a, struct tnum b)
{
	uint64_t dv = a.value - b.value, alpha = dv + a.mask, beta = dv - b.mask;
	uint64_t mu = (alpha ^ beta) | a.mask | b.mask;

	return (struct tnum){dv & ~mu, mu};
}

static struct tnum tn_and(struct tnum a, struct tnum b)
{
	uint64_t alpha = a.value | a.mask, beta = b.value | b.mask, v = a.value & b.value;

	return (struct tnum){v, alpha & beta & ~v};
}

static struct tnum tn_or(struct tnum a, struct tnum b)
{
	uint64_t v = a.value | b.value, mu = a.mask | b.mask;

	return (struct tnum){v, mu & ~v};
}

static struct tnum tn_xor(struct tnum a, struct tnum b)
{
	uint64_t v = a.value ^ b.value, mu = a.mask | b.mask;

	return (struct tnum){v & ~mu, mu};
}

/* Known trailing zero bits. */
static unsigned tn_tz(struct tnum a)
{
	uint64_t maybe = a.value | a.mask;

	return maybe ? (unsigned)__builtin_ctzll(maybe) : 64;
}

/* A product keeps the operands' trailing zeros; its other bits are not tracked. */
static struct tnum tn_mul(struct tnum a, struct tnum b)
{
	unsigned tz;

	if (!a.mask && !b.mask)
		return tn_const(a.value * b.value);
	tz = tn_tz(a) + tn_tz(b);
	return tz >= 64 ? tn_const(0) : (struct tnum){0, ~0ull << tz};
}

static struct tnum tn_intersect(struct tnum a, struct tnum b)
{
	uint64_t v = a.value | b.value, mu = a.mask & b.mask;

	return (struct tnum){v & ~mu, mu};
}

static struct tnum tn_cast(struct tnum a, unsigned bytes)
{
	uint64_t m = bytes >= 8 ? ~0ull : (1ull << (8 * bytes)) - 1;

	return (struct tnum){a.value & m, a.mask & m};
}

/* Every value of b is one of a. */
static bool tn_in(struct tnum a, struct tnum b)
{
	if (b.mask & ~a.mask)
		return false;
	return a.value == (b.value & ~a.mask);
}

/* --- bounds ----------------------------------------------------------------------------- */

static uint64_t umax64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t umin64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static int64_t smax64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t smin64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

struct bpf_scalar scalar_const(uint64_t v)
{
	return (struct bpf_scalar){tn_const(v), v, v, (int64_t)v, (int64_t)v};
}

struct bpf_scalar scalar_unknown(void)
{
	return (struct bpf_scalar){tn_unknown(), 0, ~0ull, INT64_MIN, INT64_MAX};
}

bool scalar_is_const(const struct bpf_scalar *s)
{
	return !s->t.mask;
}

/* Makes bounds and known bits agree. False when no value is left (an impossible branch). */
static bool sync_bounds(struct bpf_scalar *s)
{
	uint64_t tmax = s->t.value | s->t.mask;

	s->umin = umax64(s->umin, s->t.value);
	s->umax = umin64(s->umax, tmax);
	if (!(s->t.mask & SIGN_BIT)) { /* sign known: the tnum bounds are signed ones too */
		s->smin = smax64(s->smin, (int64_t)s->t.value);
		s->smax = smin64(s->smax, (int64_t)tmax);
	} else {
		s->smin = smax64(s->smin, (int64_t)(s->t.value | SIGN_BIT));
		s->smax = smin64(s->smax, (int64_t)(tmax & ~SIGN_BIT));
	}
	/* a signed range of one sign is an unsigned range, and back */
	if (s->smin >= 0 || s->smax < 0) {
		s->umin = umax64(s->umin, (uint64_t)s->smin);
		s->umax = umin64(s->umax, (uint64_t)s->smax);
	}
	if (s->umax <= (uint64_t)INT64_MAX || (int64_t)s->umin < 0) {
		/* all non-negative, or all with the top bit set: the order is the same */
		s->smin = smax64(s->smin, (int64_t)s->umin);
		s->smax = smin64(s->smax, (int64_t)s->umax);
	}
	if (s->umin > s->umax || s->smin > s->smax)
		return false;
	s->t = tn_intersect(s->t, tn_range(s->umin, s->umax));
	return !(s->t.value & s->t.mask);
}

struct bpf_scalar scalar_of_size(unsigned bytes)
{
	struct bpf_scalar s = scalar_unknown();

	scalar_truncate(&s, bytes);
	return s;
}

void scalar_truncate(struct bpf_scalar *s, unsigned bytes)
{
	uint64_t m = bytes >= 8 ? ~0ull : (1ull << (8 * bytes)) - 1;

	if (bytes >= 8)
		return;
	s->t = tn_cast(s->t, bytes);
	if (s->umax > m || s->umin > m) {
		s->umin = 0;
		s->umax = m;
	}
	s->smin = (int64_t)s->umin;
	s->smax = (int64_t)s->umax;
	sync_bounds(s);
}

static void set_unknown_bounds(struct bpf_scalar *s)
{
	s->umin = 0;
	s->umax = ~0ull;
	s->smin = INT64_MIN;
	s->smax = INT64_MAX;
}

static void alu_add(struct bpf_scalar *d, const struct bpf_scalar *s)
{
	int64_t smin, smax;

	if (__builtin_add_overflow(d->smin, s->smin, &smin) ||
	    __builtin_add_overflow(d->smax, s->smax, &smax)) {
		d->smin = INT64_MIN;
		d->smax = INT64_MAX;
	} else {
		d->smin = smin;
		d->smax = smax;
	}
	if (d->umax + s->umax < d->umax) {
		d->umin = 0;
		d->umax = ~0ull;
	} else {
		d->umin += s->umin;
		d->umax += s->umax;
	}
	d->t = tn_add(d->t, s->t);
}

static void alu_sub(struct bpf_scalar *d, const struct bpf_scalar *s)
{
	int64_t smin, smax;

	if (__builtin_sub_overflow(d->smin, s->smax, &smin) ||
	    __builtin_sub_overflow(d->smax, s->smin, &smax)) {
		d->smin = INT64_MIN;
		d->smax = INT64_MAX;
	} else {
		d->smin = smin;
		d->smax = smax;
	}
	if (d->umin < s->umax) {
		d->umin = 0;
		d->umax = ~0ull;
	} else {
		d->umin -= s->umax;
		d->umax -= s->umin;
	}
	d->t = tn_sub(d->t, s->t);
}

static void alu_mul(struct bpf_scalar *d, const struct bpf_scalar *s)
{
	struct tnum t = tn_mul(d->t, s->t);

	if (d->umax <= UINT32_MAX && s->umax <= UINT32_MAX) {
		d->umin *= s->umin;
		d->umax *= s->umax;
		d->smin = INT64_MIN;
		d->smax = INT64_MAX;
	} else {
		set_unknown_bounds(d);
	}
	d->t = t;
}

static void alu_shift(struct bpf_scalar *d, const struct bpf_scalar *s, uint8_t op, unsigned bits)
{
	uint64_t n = s->t.value & (bits - 1);

	if (!scalar_is_const(s)) {
		*d = scalar_unknown();
		return;
	}
	if (op == BPF_LSH) {
		d->t = (struct tnum){d->t.value << n, d->t.mask << n};
		if (n && d->umax > (~0ull >> n))
			set_unknown_bounds(d);
		else {
			d->umin <<= n;
			d->umax <<= n;
			d->smin = INT64_MIN;
			d->smax = INT64_MAX;
		}
	} else if (op == BPF_RSH) {
		d->t = (struct tnum){d->t.value >> n, d->t.mask >> n};
		d->umin >>= n;
		d->umax >>= n;
		d->smin = INT64_MIN;
		d->smax = INT64_MAX;
	} else { /* BPF_ARSH */
		d->t = (struct tnum){(uint64_t)((int64_t)d->t.value >> n),
				     (uint64_t)((int64_t)d->t.mask >> n)};
		d->smin >>= n;
		d->smax >>= n;
		d->umin = 0;
		d->umax = ~0ull;
	}
}

uint64_t bpf_alu_eval(uint8_t op, uint64_t a, uint64_t b, bool is64, bool is_signed)
{
	uint64_t r = 0;
	int64_t x, y;

	if (!is64) {
		a = (uint32_t)a;
		b = (uint32_t)b;
	}
	x = is64 ? (int64_t)a : (int32_t)a;
	y = is64 ? (int64_t)b : (int32_t)b;
	switch (op) {
	case BPF_ADD:
		r = a + b;
		break;
	case BPF_SUB:
		r = a - b;
		break;
	case BPF_MUL:
		r = a * b;
		break;
	case BPF_DIV: /* x / 0 = 0; signed: x / -1 = -x (no trap on the minimum) */
		r = is_signed ? (!y	   ? 0
				 : y == -1 ? (uint64_t)-x
					   : (uint64_t)(x / y))
		    : b	      ? a / b
			      : 0;
		break;
	case BPF_MOD: /* x % 0 = x; signed: x % -1 = 0 */
		r = is_signed ? (!y	   ? (uint64_t)x
				 : y == -1 ? 0
					   : (uint64_t)(x % y))
		    : b	      ? a % b
			      : a;
		break;
	case BPF_OR:
		r = a | b;
		break;
	case BPF_AND:
		r = a & b;
		break;
	case BPF_XOR:
		r = a ^ b;
		break;
	case BPF_LSH: /* amounts masked to the width */
		r = a << (b & (is64 ? 63 : 31));
		break;
	case BPF_RSH:
		r = a >> (b & (is64 ? 63 : 31));
		break;
	case BPF_ARSH:
		r = is64 ? (uint64_t)(x >> (b & 63)) : (uint64_t)(uint32_t)((int32_t)x >> (b & 31));
		break;
	case BPF_NEG:
		r = -a;
		break;
	case BPF_MOV:
		r = b;
		break;
	}
	return is64 ? r : (uint32_t)r;
}

void scalar_alu(struct bpf_scalar *dst, const struct bpf_scalar *src_in, uint8_t op, bool is64)
{
	struct bpf_scalar src = *src_in;

	if (!is64) {
		scalar_truncate(dst, 4);
		scalar_truncate(&src, 4);
	}
	if (scalar_is_const(dst) && scalar_is_const(&src)) {
		*dst = scalar_const(bpf_alu_eval(op, dst->t.value, src.t.value, is64, false));
		return;
	}
	switch (op) {
	case BPF_MOV:
		*dst = src;
		return;
	case BPF_ADD:
		alu_add(dst, &src);
		break;
	case BPF_SUB:
		alu_sub(dst, &src);
		break;
	case BPF_MUL:
		alu_mul(dst, &src);
		break;
	case BPF_AND:
		dst->t = tn_and(dst->t, src.t);
		dst->umax = umin64(dst->umax, src.umax);
		dst->umin = 0;
		dst->smin = INT64_MIN;
		dst->smax = INT64_MAX;
		break;
	case BPF_OR:
		dst->t = tn_or(dst->t, src.t);
		dst->umin = umax64(dst->umin, src.umin);
		dst->umax = ~0ull;
		dst->smin = INT64_MIN;
		dst->smax = INT64_MAX;
		break;
	case BPF_XOR:
		dst->t = tn_xor(dst->t, src.t);
		set_unknown_bounds(dst);
		break;
	case BPF_LSH:
	case BPF_RSH:
		alu_shift(dst, &src, op, is64 ? 64 : 32);
		break;
	case BPF_ARSH:
		if (!is64) { /* a 32-bit arithmetic shift works on the sign-extended low half */
			*dst = scalar_unknown();
			scalar_truncate(dst, 4);
			return;
		}
		alu_shift(dst, &src, op, 64);
		break;
	case BPF_DIV:
		if (scalar_is_const(&src) && src.t.value) {
			dst->umin /= src.t.value;
			dst->umax /= src.t.value;
			dst->t = tn_range(dst->umin, dst->umax);
		} else {
			dst->umin = 0; /* division by zero gives 0 */
			dst->t = tn_range(0, dst->umax);
		}
		dst->smin = INT64_MIN;
		dst->smax = INT64_MAX;
		break;
	case BPF_MOD:
		if (scalar_is_const(&src) && src.t.value)
			dst->umax = umin64(dst->umax, src.t.value - 1);
		/* modulo zero leaves dst, which [0, umax] holds */
		dst->umin = 0;
		dst->t = tn_range(0, dst->umax);
		dst->smin = INT64_MIN;
		dst->smax = INT64_MAX;
		break;
	default: /* negation, signed division and anything else: nothing known */
		*dst = scalar_unknown();
		break;
	}
	if (!sync_bounds(dst))
		*dst = scalar_unknown();
	if (!is64)
		scalar_truncate(dst, 4);
}

/* --- comparisons ----------------------------------------------------------------------- */

/* Operands as a 32-bit comparison sees them; false when signed views cannot be bounded. */
static void view32(const struct bpf_scalar *in, struct bpf_scalar *out, bool is_signed)
{
	*out = *in;
	scalar_truncate(out, 4);
	if (!is_signed)
		return;
	if (out->umax <= INT32_MAX) {
		out->smin = (int64_t)out->umin;
		out->smax = (int64_t)out->umax;
	} else if (scalar_is_const(out)) {
		out->smin = out->smax = (int32_t)(uint32_t)out->t.value;
	} else {
		out->smin = INT32_MIN;
		out->smax = INT32_MAX;
	}
}

static bool is_signed_op(uint8_t op)
{
	return op == BPF_JSGT || op == BPF_JSGE || op == BPF_JSLT || op == BPF_JSLE;
}

int scalar_branch(const struct bpf_scalar *dst_in, const struct bpf_scalar *src_in, uint8_t op,
		  bool is64)
{
	struct bpf_scalar a = *dst_in, b = *src_in;

	if (!is64) {
		view32(dst_in, &a, is_signed_op(op));
		view32(src_in, &b, is_signed_op(op));
	}
	switch (op) {
	case BPF_JEQ:
	case BPF_JNE: {
		int eq = -1;

		if (scalar_is_const(&a) && scalar_is_const(&b))
			eq = a.t.value == b.t.value;
		else if (a.umax < b.umin || a.umin > b.umax || a.smax < b.smin || a.smin > b.smax ||
			 ((a.t.value ^ b.t.value) & ~(a.t.mask | b.t.mask)))
			eq = 0;
		return eq < 0 ? -1 : op == BPF_JEQ ? eq : !eq;
	}
	case BPF_JGT:
		return a.umin > b.umax ? 1 : a.umax <= b.umin ? 0 : -1;
	case BPF_JGE:
		return a.umin >= b.umax ? 1 : a.umax < b.umin ? 0 : -1;
	case BPF_JLT:
		return a.umax < b.umin ? 1 : a.umin >= b.umax ? 0 : -1;
	case BPF_JLE:
		return a.umax <= b.umin ? 1 : a.umin > b.umax ? 0 : -1;
	case BPF_JSGT:
		return a.smin > b.smax ? 1 : a.smax <= b.smin ? 0 : -1;
	case BPF_JSGE:
		return a.smin >= b.smax ? 1 : a.smax < b.smin ? 0 : -1;
	case BPF_JSLT:
		return a.smax < b.smin ? 1 : a.smin >= b.smax ? 0 : -1;
	case BPF_JSLE:
		return a.smax <= b.smin ? 1 : a.smin > b.smax ? 0 : -1;
	case BPF_JSET:
		if (a.t.value & b.t.value)
			return 1;
		if (!((a.t.value | a.t.mask) & (b.t.value | b.t.mask)))
			return 0;
		return -1;
	}
	return -1;
}

static uint8_t negate(uint8_t op)
{
	switch (op) {
	case BPF_JEQ:
		return BPF_JNE;
	case BPF_JNE:
		return BPF_JEQ;
	case BPF_JGT:
		return BPF_JLE;
	case BPF_JLE:
		return BPF_JGT;
	case BPF_JGE:
		return BPF_JLT;
	case BPF_JLT:
		return BPF_JGE;
	case BPF_JSGT:
		return BPF_JSLE;
	case BPF_JSLE:
		return BPF_JSGT;
	case BPF_JSGE:
		return BPF_JSLT;
	case BPF_JSLT:
		return BPF_JSGE;
	}
	return op;
}

static void refine_ne(struct bpf_scalar *a, const struct bpf_scalar *b)
{
	if (!scalar_is_const(b))
		return;
	if (a->umin == b->t.value && a->umin < a->umax)
		a->umin++;
	else if (a->umax == b->t.value && a->umin < a->umax)
		a->umax--;
	if (a->smin == (int64_t)b->t.value && a->smin < a->smax)
		a->smin++;
	else if (a->smax == (int64_t)b->t.value && a->smin < a->smax)
		a->smax--;
}

/* Applies `a op b` holding, for op one of the non-negated comparisons. */
static void refine_holds(struct bpf_scalar *a, struct bpf_scalar *b, uint8_t op)
{
	switch (op) {
	case BPF_JEQ:
		a->umin = b->umin = umax64(a->umin, b->umin);
		a->umax = b->umax = umin64(a->umax, b->umax);
		a->smin = b->smin = smax64(a->smin, b->smin);
		a->smax = b->smax = smin64(a->smax, b->smax);
		a->t = b->t = tn_intersect(a->t, b->t);
		break;
	case BPF_JNE:
		refine_ne(a, b);
		refine_ne(b, a);
		break;
	case BPF_JGT: /* a > b */
		a->umin = umax64(a->umin, b->umin == ~0ull ? ~0ull : b->umin + 1);
		b->umax = umin64(b->umax, a->umax ? a->umax - 1 : 0);
		if (a->umax == 0)
			b->umin = 1, b->umax = 0; /* impossible */
		break;
	case BPF_JGE:
		a->umin = umax64(a->umin, b->umin);
		b->umax = umin64(b->umax, a->umax);
		break;
	case BPF_JLT:
		refine_holds(b, a, BPF_JGT);
		break;
	case BPF_JLE:
		refine_holds(b, a, BPF_JGE);
		break;
	case BPF_JSGT:
		a->smin = smax64(a->smin, b->smin == INT64_MAX ? INT64_MAX : b->smin + 1);
		b->smax = smin64(b->smax, a->smax == INT64_MIN ? INT64_MIN : a->smax - 1);
		if (a->smax == INT64_MIN)
			b->smin = 1, b->smax = 0;
		break;
	case BPF_JSGE:
		a->smin = smax64(a->smin, b->smin);
		b->smax = smin64(b->smax, a->smax);
		break;
	case BPF_JSLT:
		refine_holds(b, a, BPF_JSGT);
		break;
	case BPF_JSLE:
		refine_holds(b, a, BPF_JSGE);
		break;
	}
}

void scalar_refine(struct bpf_scalar *dst, struct bpf_scalar *src, uint8_t op, bool is64,
		   bool taken)
{
	if (!is64) {
		/* 32-bit comparisons narrow only values known to fit their view */
		uint64_t limit = is_signed_op(op) ? INT32_MAX : UINT32_MAX;

		if (dst->umax > limit || src->umax > limit)
			return;
	}
	if (op == BPF_JSET) {
		if (!taken && scalar_is_const(src)) {
			dst->t.value &= ~src->t.value;
			dst->t.mask &= ~src->t.value;
		}
	} else {
		refine_holds(dst, src, taken ? op : negate(op));
	}
	if (!sync_bounds(dst))
		dst->umin = 1, dst->umax = 0;
	if (!sync_bounds(src))
		src->umin = 1, src->umax = 0;
}

bool scalar_within(const struct bpf_scalar *a, const struct bpf_scalar *b)
{
	return a->umin <= b->umin && a->umax >= b->umax && a->smin <= b->smin &&
	       a->smax >= b->smax && tn_in(a->t, b->t);
}

bool scalar_empty(const struct bpf_scalar *s)
{
	return s->umin > s->umax || s->smin > s->smax;
}
