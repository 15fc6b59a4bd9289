/* Writing GPU eBPF output into a trace: descriptions, map dumps, ring events, printk lines. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include "gpubpf/bpf_device.h"
#include "gpubpf/bpf_layout.h"
#include "gpubpf/bpf_trace.h"
#include "trace/grt_format.h"
#include "trace/records_bpf.h"
#include "trace/records_core.h"

/* A string id, or 0 for NULL (as the writer's "no string"). */
static uint32_t out_intern(const struct gpubpf_out *w, const char *text)
{
	return text ? w->intern(w->ctx, text) : 0;
}

static int writer_append(void *ctx, uint16_t type, const struct grt_event_origin *at,
			 const void *payload, uint32_t len)
{
	return grt_writer_append(ctx, type, at, payload, len);
}

static uint32_t writer_intern(void *ctx, const char *text)
{
	return grt_writer_intern(ctx, text);
}

static int writer_drop(void *ctx, uint32_t source, uint64_t count, uint64_t ts_ns)
{
	return grt_writer_drop(ctx, source, count, ts_ns);
}

struct gpubpf_out gpubpf_out_writer(struct grt_writer *w)
{
	return (struct gpubpf_out){w, writer_append, writer_intern, writer_drop};
}

uint64_t gpubpf_clock_mono(const struct gpubpf_clock *c, uint64_t gpu_ns)
{
	__int128 d = (__int128)(int64_t)(gpu_ns - c->gpu_ref) * (__int128)c->mult;

	return c->mono_ref + (uint64_t)(d >> 32);
}

static uint16_t attach_kind(enum grt_bpf_attach a)
{
	return a == GRT_BPF_ATTACH_ENTRY  ? GRT_BPF_REC_ENTRY
	       : a == GRT_BPF_ATTACH_EXIT ? GRT_BPF_REC_EXIT
					  : GRT_BPF_REC_MEMORY;
}

/* A value type that is one char array is padding (bpftime's 1024-byte ring values): opaque. */
static bool opaque_padding(const char *layout)
{
	return layout && !strchr(layout, ';') && strstr(layout, ":str");
}

static int intern_layout(const struct gpubpf_out *w, const struct btf *btf, uint32_t type,
			 const char *name, bool ring, uint32_t *id)
{
	char *layout = gpubpf_btf_layout(btf, type, name);

	*id = layout && !(ring && opaque_padding(layout)) ? out_intern(w, layout) : 0;
	free(layout);
	return 0;
}

int gpubpf_trace_bundle(const struct gpubpf_out *w, const struct gpubpf_bundle *b, uint32_t object_id,
			const struct grt_event_origin *at)
{
	size_t btf_len = b->obj.btf_len <= GRT_MAX_PAYLOAD - 64 ? b->obj.btf_len : 0;
	struct grt_bpf_object_rec *o = calloc(1, sizeof(*o) + btf_len);
	int err;

	if (!o)
		return -ENOMEM;
	o->object_id = object_id;
	o->name_str = out_intern(w, b->obj.name);
	o->btf_len = (uint32_t)btf_len;
	if (btf_len)
		memcpy(o->btf, b->obj.btf_data, btf_len);
	err = w->append(w->ctx, GRT_REC_BPF_OBJECT, at, o, (uint32_t)(sizeof(*o) + btf_len));
	free(o);
	for (size_t i = 0; !err && i < b->nr_progs; i++) {
		const struct gpubpf_program *p = &b->progs[i];
		struct grt_bpf_prog_rec r = {.object_id = object_id,
					     .prog_id = p->id,
					     .attach = attach_kind(p->prog->attach),
					     .section_str = out_intern(w, p->prog->section),
					     .name_str = out_intern(w, p->prog->name),
					     .nr_insns = (uint32_t)p->prog->nr_insns,
					     .ptx_insns = (uint32_t)p->ptx.ptx_insns};

		err = w->append(w->ctx, GRT_REC_BPF_PROG, at, &r, sizeof(r));
	}
	for (size_t i = 0; !err && i < b->obj.nr_maps; i++) {
		const struct gpubpf_map *m = &b->obj.maps[i];
		struct grt_bpf_map_rec r = {.object_id = object_id,
					    .slot = (uint16_t)(b->map_slot_base + i),
					    .flags = m->rodata ? GRT_BPF_MAP_F_RODATA : 0,
					    .name_str = out_intern(w, m->name),
					    .type = m->type,
					    .key_size = m->key_size,
					    .value_size = m->value_size,
					    .max_entries = m->max_entries,
					    .btf_key_type = m->btf_key_type,
					    .btf_value_type = m->btf_value_type};

		err =
		    intern_layout(w, b->obj.btf, m->btf_key_type, "key", false, &r.key_layout_str);
		if (!err)
			err = intern_layout(w, b->obj.btf, m->btf_value_type, "value",
					    gpubpf_map_is_ring(m->type), &r.value_layout_str);
		if (!err)
			err = w->append(w->ctx, GRT_REC_BPF_MAP, at, &r, sizeof(r));
	}
	return err;
}

int gpubpf_trace_refusal(const struct gpubpf_out *w, const char *object, uint32_t object_id, int status,
			 const char *reason, const struct grt_event_origin *at)
{
	struct grt_bpf_object_rec o = {.object_id = object_id,
				       .name_str = out_intern(w, object)};
	struct grt_bpf_prog_rec p = {
	    .object_id = object_id, .status = status, .reason_str = out_intern(w, reason)};
	int err = w->append(w->ctx, GRT_REC_BPF_OBJECT, at, &o, sizeof(o));

	return err ? err : w->append(w->ctx, GRT_REC_BPF_PROG, at, &p, sizeof(p));
}

/* --- maps -------------------------------------------------------------------------------- */

struct dump {
	const struct gpubpf_out *w;
	const struct grt_event_origin *at;
	struct grt_bpf_map_dump_rec *rec;
	uint32_t key_stride, value_stride;
	uint64_t total;
	int err;
};

static int flush_dump(struct dump *d, bool last)
{
	uint32_t len = (uint32_t)sizeof(*d->rec) + d->rec->nr_entries * d->rec->entry_size;

	if (last)
		d->rec->flags |= GRT_BPF_DUMP_LAST;
	d->err = d->w->append(d->w->ctx, GRT_REC_BPF_MAP_DUMP, d->at, d->rec, len);
	d->rec->nr_entries = 0;
	return d->err;
}

static int add_entry(void *arg, uint32_t sub, const uint8_t *key, const uint8_t *value)
{
	struct dump *d = arg;
	uint8_t *e = d->rec->entries + (size_t)d->rec->nr_entries * d->rec->entry_size;

	memset(e, 0, d->rec->entry_size);
	memcpy(e, &sub, 4);
	memcpy(e + GRT_BPF_DUMP_ENTRY_HEAD, key, d->key_stride);
	memcpy(e + GRT_BPF_DUMP_ENTRY_HEAD + d->key_stride, value, d->value_stride);
	if (++d->rec->nr_entries == GRT_BPF_DUMP_MAX_ENTRIES)
		return flush_dump(d, false);
	return 0;
}

int gpubpf_trace_map(const struct gpubpf_out *w, const struct gpubpf_bundle *b, size_t map,
		     const uint8_t *image, size_t len, uint32_t thread_capacity, uint32_t snapshot,
		     bool final, const struct grt_event_origin *at)
{
	const struct gpubpf_map *m = &b->obj.maps[map];
	struct gpubpf_map_shape shape = {m->type, m->key_size, m->value_size, m->max_entries,
					 m->stripe_width};
	/* array keys are the 4-byte index */
	uint32_t ks = grt_bpf_stride(m->type == BPF_MAP_TYPE_HASH ? m->key_size : 4);
	uint32_t entry = GRT_BPF_DUMP_ENTRY_HEAD + ks + grt_bpf_stride(m->value_size);
	struct dump d = {
	    .w = w, .at = at, .key_stride = ks, .value_stride = grt_bpf_stride(m->value_size)};
	long n;

	if (m->rodata || gpubpf_map_is_ring(m->type))
		return -EINVAL;
	/* the whole snapshot's count goes in every record: walk once to count */
	n = gpubpf_map_walk(&shape, image, len, thread_capacity, NULL, NULL);
	if (n < 0)
		return -EINVAL;
	if ((uint64_t)entry * GRT_BPF_DUMP_MAX_ENTRIES > GRT_MAX_PAYLOAD)
		return -E2BIG;
	d.rec = calloc(1, sizeof(*d.rec) + (size_t)entry * GRT_BPF_DUMP_MAX_ENTRIES);
	if (!d.rec)
		return -ENOMEM;
	d.rec->slot = (uint16_t)(b->map_slot_base + map);
	d.rec->flags = final ? GRT_BPF_DUMP_FINAL : 0;
	d.rec->snapshot = snapshot;
	d.rec->entry_size = entry;
	d.rec->total_entries = (uint64_t)n;
	gpubpf_map_walk(&shape, image, len, thread_capacity, add_entry, &d);
	if (!d.err)
		flush_dump(&d, true);
	free(d.rec);
	return d.err;
}

/* --- rings ------------------------------------------------------------------------------- */

struct ring_out {
	const struct gpubpf_out *w;
	const struct grt_event_origin *at;
	const struct gpubpf_clock *clk;
	uint16_t slot;
	uint32_t name_str, layout_str;
	uint8_t *buf;
	int err;
};

static int write_event(void *arg, const struct gpubpf_ring_record *r)
{
	struct ring_out *o = arg;
	struct grt_bpf_event_rec *e = (struct grt_bpf_event_rec *)o->buf;
	struct grt_event_origin at = *o->at;

	if (r->discarded)
		return 0;
	if (r->len > GRT_MAX_PAYLOAD - sizeof(*e))
		return 0;
	*e = (struct grt_bpf_event_rec){.slot = o->slot,
					.prog_id = r->prog,
					.smid = r->smid,
					.gpu_ns = r->gpu_ns,
					.map_name_str = o->name_str,
					.layout_str = o->layout_str,
					.data_len = r->len};
	memcpy(e->data, r->data, r->len);
	at.ts_ns = gpubpf_clock_mono(o->clk, r->gpu_ns);
	o->err =
	    o->w->append(o->w->ctx, GRT_REC_BPF_EVENT, &at, e, (uint32_t)(sizeof(*e) + r->len));
	return o->err;
}

static int write_lost(const struct gpubpf_out *w, uint16_t slot, uint32_t name_str, uint64_t dropped,
		      const struct grt_event_origin *at)
{
	struct grt_bpf_lost_rec l = {.slot = slot, .map_name_str = name_str, .count = dropped};
	int err;

	if (!dropped)
		return 0;
	err = w->append(w->ctx, GRT_REC_BPF_LOST, at, &l, sizeof(l));
	return err ? err : w->drop(w->ctx, GRT_SRC_GPU, dropped, at->ts_ns);
}

int gpubpf_trace_ring(const struct gpubpf_out *w, const struct gpubpf_bundle *b, size_t map,
		      const uint8_t *image, size_t len, const struct gpubpf_clock *clk,
		      const struct grt_event_origin *at)
{
	const struct gpubpf_map *m = &b->obj.maps[map];
	struct ring_out o = {.w = w,
			     .at = at,
			     .clk = clk,
			     .slot = (uint16_t)(b->map_slot_base + map),
			     .name_str = out_intern(w, m->name)};
	uint64_t dropped;

	if (!gpubpf_map_is_ring(m->type))
		return -EINVAL;
	o.err = intern_layout(w, b->obj.btf, m->btf_value_type, "value", true, &o.layout_str);
	o.buf = malloc(GRT_MAX_PAYLOAD);
	if (!o.buf)
		return -ENOMEM;
	if (!o.err)
		gpubpf_ring_walk(image, len, write_event, &o, &dropped);
	free(o.buf);
	return o.err ? o.err : write_lost(w, o.slot, o.name_str, dropped, at);
}

/* --- printk ------------------------------------------------------------------------------ */

static void append(char *out, size_t len, size_t *at, const char *s)
{
	size_t n = strlen(s);

	if (*at + 1 >= len)
		return;
	if (n > len - 1 - *at)
		n = len - 1 - *at;
	memcpy(out + *at, s, n);
	*at += n;
	out[*at] = 0;
}

void gpubpf_format_printk(char *out, size_t len, const char *fmt, size_t fmt_len,
			  const uint64_t args[3])
{
	size_t at = 0, i = 0;
	unsigned used = 0;

	if (!len)
		return;
	out[0] = 0;
	while (i < fmt_len && fmt[i]) {
		char spec[32], piece[96], conv;
		size_t s = 0;
		int longs = 0, shorts = 0;
		uint64_t v;

		if (fmt[i] != '%') {
			char c[2] = {fmt[i++], 0};

			append(out, len, &at, c);
			continue;
		}
		spec[s++] = fmt[i++];
		while (i < fmt_len && s < 20 && strchr("-+ #0123456789.", fmt[i]))
			spec[s++] = fmt[i++];
		for (; i < fmt_len && (fmt[i] == 'l' || fmt[i] == 'h' || fmt[i] == 'z'); i++)
			fmt[i] == 'h' ? shorts++ : longs++;
		if (i >= fmt_len || !fmt[i])
			break;
		conv = fmt[i++];
		if (conv == '%') {
			append(out, len, &at, "%");
			continue;
		}
		if (!strchr("diuxXocps", conv)) {
			append(out, len, &at, "?");
			continue;
		}
		if (used == 3) {
			append(out, len, &at, "(none)");
			continue;
		}
		v = args[used++];
		if (shorts == 1)
			v = conv == 'd' || conv == 'i' ? (uint64_t)(int64_t)(int16_t)v
						       : (uint16_t)v;
		else if (shorts >= 2)
			v = conv == 'd' || conv == 'i' ? (uint64_t)(int64_t)(int8_t)v : (uint8_t)v;
		else if (!longs)
			v = conv == 'd' || conv == 'i' ? (uint64_t)(int64_t)(int32_t)v
						       : (uint32_t)v;
		spec[s] = 0;
		switch (conv) {
		case 'd':
		case 'i':
			snprintf(spec + s, sizeof(spec) - s, "lld");
			snprintf(piece, sizeof(piece), spec, (long long)v);
			break;
		case 'c':
			snprintf(piece, sizeof(piece), "%c", (char)v ? (char)v : ' ');
			break;
		case 'p':
			snprintf(piece, sizeof(piece), "0x%llx", (unsigned long long)v);
			break;
		case 's':
			snprintf(piece, sizeof(piece), "(str)");
			break;
		default:
			snprintf(spec + s, sizeof(spec) - s, "ll%c", conv);
			snprintf(piece, sizeof(piece), spec, (unsigned long long)v);
		}
		append(out, len, &at, piece);
	}
	while (at && (out[at - 1] == '\n' || out[at - 1] == '\r'))
		out[--at] = 0;
}

struct printk_out {
	const struct gpubpf_out *w;
	const struct grt_event_origin *at;
	const struct gpubpf_clock *clk;
	int err;
};

static int write_printk(void *arg, const struct gpubpf_ring_record *r)
{
	struct printk_out *o = arg;
	struct grt_bpf_printk pk;
	struct {
		struct grt_bpf_printk_rec rec;
		char text[GRT_BPF_PRINTK_MAX + 512];
	} out;
	struct grt_event_origin at = *o->at;
	const char *fmt;
	size_t fmt_len, n;

	if (r->len < sizeof(pk))
		return 0;
	memcpy(&pk, r->data, sizeof(pk));
	fmt = (const char *)r->data + sizeof(pk);
	fmt_len = r->len - sizeof(pk) < pk.fmt_len ? r->len - sizeof(pk) : pk.fmt_len;
	memset(&out.rec, 0, sizeof(out.rec));
	out.rec.prog_id = r->prog;
	out.rec.kind = pk.kind == GRT_BPF_PUTS ? GRT_BPF_REC_PUTS : GRT_BPF_REC_PRINTK;
	out.rec.smid = r->smid;
	out.rec.gpu_ns = r->gpu_ns;
	if (pk.kind == GRT_BPF_PUTS) {
		n = strnlen(fmt, fmt_len);
		if (n >= sizeof(out.text))
			n = sizeof(out.text) - 1;
		memcpy(out.text, fmt, n);
		out.text[n] = 0;
	} else {
		gpubpf_format_printk(out.text, sizeof(out.text), fmt, fmt_len, pk.arg);
		n = strlen(out.text);
	}
	out.rec.len = (uint32_t)n + 1;
	at.ts_ns = gpubpf_clock_mono(o->clk, r->gpu_ns);
	o->err = o->w->append(o->w->ctx, GRT_REC_BPF_PRINTK, &at, &out,
				   (uint32_t)(sizeof(out.rec) + n + 1));
	return o->err;
}

int gpubpf_trace_printk(const struct gpubpf_out *w, const uint8_t *image, size_t len,
			const struct gpubpf_clock *clk, const struct grt_event_origin *at)
{
	struct printk_out o = {.w = w, .at = at, .clk = clk};
	uint64_t dropped;

	gpubpf_ring_walk(image, len, write_printk, &o, &dropped);
	return o.err ? o.err : write_lost(w, GRT_BPF_PRINTK_SLOT, 0, dropped, at);
}
