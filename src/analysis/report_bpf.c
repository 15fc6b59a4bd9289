/* Report section `bpf`: GPU eBPF programs, final map contents decoded from BTF, events, printk. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/report_section.h"
#include "analysis/report_util.h"
#include "trace/records_bpf.h"

#define MAX_SLOTS 64
#define MAX_PROGS 256
#define MAX_KEPT_ENTRIES (1u << 20) /* entries of one map snapshot kept for printing */
#define LAST_EVENTS 3
#define LAST_LINES 10

struct bpf_prog_row {
	uint16_t id;
	uint16_t attach;
	int32_t status;
	uint32_t insns, ptx_insns;
	char *section, *name, *reason;
};

/* What a map slot holds at the latest snapshot, and what its ring carried. */
struct bpf_map_row {
	bool described;
	char *name, *key_layout, *value_layout;
	uint32_t type, key_size, value_size, max_entries;
	uint32_t snapshot;
	bool final;
	uint64_t total_entries;
	uint8_t *entries; /* of the snapshot, as recorded */
	uint32_t entry_size;
	size_t nr_entries, cap;
	uint64_t dropped_entries; /* beyond MAX_KEPT_ENTRIES */
	uint64_t events, lost;
	uint8_t *last[LAST_EVENTS]; /* the latest events' data */
	uint32_t last_len[LAST_EVENTS];
	unsigned nr_last;
};

struct bpf_report {
	struct bpf_prog_row progs[MAX_PROGS];
	size_t nr_progs;
	struct bpf_map_row maps[MAX_SLOTS];
	uint64_t printk_lines, printk_lost;
	char *lines[LAST_LINES];
	unsigned nr_lines;
	unsigned top_n;
	bool out_of_memory;
};

static void *bpf_create(const struct report_input *in)
{
	struct bpf_report *r = calloc(1, sizeof(*r));

	if (r)
		r->top_n = in->top_n;
	return r;
}

static char *dup_str(struct bpf_report *r, const char *s)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		r->out_of_memory = true;
	return d;
}

static void on_prog(struct bpf_report *r, const struct grt_bpf_prog_rec *p,
		    const struct grt_strings *strings)
{
	struct bpf_prog_row *row;

	if (r->nr_progs == MAX_PROGS)
		return;
	row = &r->progs[r->nr_progs++];
	row->id = p->prog_id;
	row->attach = p->attach;
	row->status = p->status;
	row->insns = p->nr_insns;
	row->ptx_insns = p->ptx_insns;
	row->section = dup_str(r, grt_strings_get(strings, p->section_str));
	row->name = dup_str(r, grt_strings_get(strings, p->name_str));
	row->reason = dup_str(r, grt_strings_get(strings, p->reason_str));
}

static void on_map(struct bpf_report *r, const struct grt_bpf_map_rec *m,
		   const struct grt_strings *strings)
{
	struct bpf_map_row *row;

	if (m->slot >= MAX_SLOTS || (m->flags & GRT_BPF_MAP_F_RODATA))
		return;
	row = &r->maps[m->slot];
	free(row->name);
	free(row->key_layout);
	free(row->value_layout);
	row->described = true;
	row->name = dup_str(r, grt_strings_get(strings, m->name_str));
	row->key_layout = dup_str(r, grt_strings_get(strings, m->key_layout_str));
	row->value_layout = dup_str(r, grt_strings_get(strings, m->value_layout_str));
	row->type = m->type;
	row->key_size = m->key_size;
	row->value_size = m->value_size;
	row->max_entries = m->max_entries;
}

static void on_dump(struct bpf_report *r, const struct grt_bpf_map_dump_rec *d)
{
	struct bpf_map_row *row;
	size_t want;

	if (d->slot >= MAX_SLOTS)
		return;
	row = &r->maps[d->slot];
	if (d->snapshot != row->snapshot || d->entry_size != row->entry_size) {
		/* a newer snapshot replaces what was kept */
		row->nr_entries = 0;
		row->dropped_entries = 0;
		row->snapshot = d->snapshot;
		row->entry_size = d->entry_size;
	}
	row->final = d->flags & GRT_BPF_DUMP_FINAL;
	row->total_entries = d->total_entries;
	want = row->nr_entries + d->nr_entries;
	if (want > MAX_KEPT_ENTRIES) {
		row->dropped_entries += d->nr_entries;
		return;
	}
	if (want > row->cap) {
		size_t cap = row->cap ? row->cap : 64;
		uint8_t *v;

		while (cap < want)
			cap *= 2;
		v = realloc(row->entries, cap * d->entry_size);
		if (!v) {
			r->out_of_memory = true;
			return;
		}
		row->entries = v;
		row->cap = cap;
	}
	memcpy(row->entries + row->nr_entries * d->entry_size, d->entries,
	       (size_t)d->nr_entries * d->entry_size);
	row->nr_entries = want;
}

static void on_event(struct bpf_report *r, const struct grt_bpf_event_rec *e)
{
	struct bpf_map_row *row;
	uint8_t *copy;

	if (e->slot >= MAX_SLOTS)
		return;
	row = &r->maps[e->slot];
	row->events++;
	copy = malloc(e->data_len ? e->data_len : 1);
	if (!copy) {
		r->out_of_memory = true;
		return;
	}
	memcpy(copy, e->data, e->data_len);
	if (row->nr_last == LAST_EVENTS) {
		free(row->last[0]);
		memmove(row->last, row->last + 1, sizeof(row->last[0]) * (LAST_EVENTS - 1));
		memmove(row->last_len, row->last_len + 1,
			sizeof(row->last_len[0]) * (LAST_EVENTS - 1));
		row->nr_last--;
	}
	row->last[row->nr_last] = copy;
	row->last_len[row->nr_last++] = e->data_len;
}

static void on_printk(struct bpf_report *r, const struct grt_bpf_printk_rec *p)
{
	char *line = strdup(p->len ? p->text : "");

	r->printk_lines++;
	if (!line) {
		r->out_of_memory = true;
		return;
	}
	if (r->nr_lines == LAST_LINES) {
		free(r->lines[0]);
		memmove(r->lines, r->lines + 1, sizeof(r->lines[0]) * (LAST_LINES - 1));
		r->nr_lines--;
	}
	r->lines[r->nr_lines++] = line;
}

static void bpf_on_record(void *state, const struct grt_record *rec,
			  const struct grt_strings *strings)
{
	struct bpf_report *r = state;
	const struct grt_bpf_lost_rec *l;

	switch (rec->hdr.type) {
	case GRT_REC_BPF_PROG:
		on_prog(r, rec->payload, strings);
		break;
	case GRT_REC_BPF_MAP:
		on_map(r, rec->payload, strings);
		break;
	case GRT_REC_BPF_MAP_DUMP:
		on_dump(r, rec->payload);
		break;
	case GRT_REC_BPF_EVENT:
		on_event(r, rec->payload);
		break;
	case GRT_REC_BPF_PRINTK:
		on_printk(r, rec->payload);
		break;
	case GRT_REC_BPF_LOST:
		l = rec->payload;
		if (l->slot == GRT_BPF_PRINTK_SLOT)
			r->printk_lost += l->count;
		else if (l->slot < MAX_SLOTS)
			r->maps[l->slot].lost += l->count;
		break;
	}
}

/* --- decoded values as text and as JSON --------------------------------------------------- */

struct text_fields {
	struct grt_fields f;
	char *buf;
	size_t len, at;
};

static void tf_put(struct text_fields *t, const char *key, const char *val)
{
	int n = snprintf(t->buf + t->at, t->len - t->at, "%s%s=%s", t->at ? " " : "", key, val);

	if (n > 0)
		t->at = t->at + (size_t)n < t->len ? t->at + (size_t)n : t->len - 1;
}

static void tf_u64(struct grt_fields *f, const char *k, uint64_t v)
{
	char s[32];

	snprintf(s, sizeof(s), "%" PRIu64, v);
	tf_put((struct text_fields *)f, k, s);
}

static void tf_i64(struct grt_fields *f, const char *k, int64_t v)
{
	char s[32];

	snprintf(s, sizeof(s), "%" PRId64, v);
	tf_put((struct text_fields *)f, k, s);
}

static void tf_hex(struct grt_fields *f, const char *k, uint64_t v)
{
	char s[32];

	snprintf(s, sizeof(s), "0x%" PRIx64, v);
	tf_put((struct text_fields *)f, k, s);
}

static void tf_f64(struct grt_fields *f, const char *k, double v)
{
	char s[40];

	snprintf(s, sizeof(s), "%g", v);
	tf_put((struct text_fields *)f, k, s);
}

static void tf_str(struct grt_fields *f, const char *k, const char *v)
{
	char s[300];

	snprintf(s, sizeof(s), "\"%s\"", v ? v : "");
	tf_put((struct text_fields *)f, k, s);
}

static void tf_dim3(struct grt_fields *f, const char *k, const uint32_t v[3])
{
	char s[48];

	snprintf(s, sizeof(s), "%u,%u,%u", v[0], v[1], v[2]);
	tf_put((struct text_fields *)f, k, s);
}

static void tf_hex_list(struct grt_fields *f, const char *k, const uint64_t *v, uint32_t n)
{
	char s[200];
	size_t at = 0;

	s[0] = 0;
	for (uint32_t i = 0; i < n && at < sizeof(s) - 20; i++)
		at += (size_t)snprintf(s + at, sizeof(s) - at, "%s0x%" PRIx64, i ? "," : "", v[i]);
	tf_put((struct text_fields *)f, k, s);
}

static const struct grt_fields_ops text_ops = {tf_u64, tf_i64,	tf_hex,	    tf_f64,
					       tf_str, tf_dim3, tf_hex_list};

/* "a=1 b=2" of data decoded with layout; raw words when there is no layout. */
static const char *decode_text(const char *layout, const uint8_t *data, uint32_t len, char *buf,
			       size_t buf_len)
{
	struct text_fields t = {.f.ops = &text_ops, .buf = buf, .len = buf_len};

	buf[0] = 0;
	if (layout) {
		grt_bpf_layout_describe(&t.f, layout, data, len);
	} else {
		uint64_t words[8];
		uint32_t n = 0;

		for (; n < 8 && 8 * n < len; n++) {
			words[n] = 0;
			for (uint32_t b = 0; b < 8 && 8 * n + b < len; b++)
				words[n] |= (uint64_t)data[8 * n + b] << (8 * b);
		}
		tf_hex_list(&t.f, "bytes", words, n);
	}
	return buf;
}

struct json_fields {
	struct grt_fields f;
	struct json_writer *w;
};

static void jf_u64(struct grt_fields *f, const char *k, uint64_t v)
{
	jw_key(((struct json_fields *)f)->w, k);
	jw_u64(((struct json_fields *)f)->w, v);
}

static void jf_i64(struct grt_fields *f, const char *k, int64_t v)
{
	jw_key(((struct json_fields *)f)->w, k);
	jw_i64(((struct json_fields *)f)->w, v);
}

static void jf_f64(struct grt_fields *f, const char *k, double v)
{
	jw_key(((struct json_fields *)f)->w, k);
	jw_f64(((struct json_fields *)f)->w, v);
}

static void jf_str(struct grt_fields *f, const char *k, const char *v)
{
	jw_field_string(((struct json_fields *)f)->w, k, v);
}

static void jf_dim3(struct grt_fields *f, const char *k, const uint32_t v[3])
{
	struct json_writer *w = ((struct json_fields *)f)->w;

	jw_key(w, k);
	jw_begin_array(w);
	for (int i = 0; i < 3; i++)
		jw_u64(w, v[i]);
	jw_end_array(w);
}

static void jf_hex_list(struct grt_fields *f, const char *k, const uint64_t *v, uint32_t n)
{
	struct json_writer *w = ((struct json_fields *)f)->w;

	jw_key(w, k);
	jw_begin_array(w);
	for (uint32_t i = 0; i < n; i++)
		jw_u64(w, v[i]);
	jw_end_array(w);
}

static const struct grt_fields_ops json_ops = {jf_u64, jf_i64,	jf_u64,	    jf_f64,
					       jf_str, jf_dim3, jf_hex_list};

static void decode_json(struct json_writer *w, const char *layout, const uint8_t *data,
			uint32_t len)
{
	struct json_fields j = {.f.ops = &json_ops, .w = w};

	jw_begin_object(w);
	if (layout) {
		grt_bpf_layout_describe(&j.f, layout, data, len);
	} else {
		jw_key(w, "bytes");
		jw_begin_array(w);
		for (uint32_t i = 0; i < len; i++)
			jw_u64(w, data[i]);
		jw_end_array(w);
	}
	jw_end_object(w);
}

/* --- output -------------------------------------------------------------------------------- */

static const char *attach_name(uint16_t a)
{
	return a == GRT_BPF_REC_ENTRY ? "entry" : a == GRT_BPF_REC_EXIT ? "exit" : "memory";
}

static bool is_ring(uint32_t type)
{
	return type == 27 || type == 4 || type == 1527;
}

/* The entry's parts: sub (thread/SM), key, value. */
static void entry_parts(const struct bpf_map_row *m, size_t i, uint32_t *sub, const uint8_t **key,
			uint32_t *key_len, const uint8_t **value)
{
	const uint8_t *e = m->entries + i * m->entry_size;
	uint32_t ks = m->type == 1 ? (m->key_size + 7) & ~7u : 8;

	memcpy(sub, e, 4);
	*key = e + GRT_BPF_DUMP_ENTRY_HEAD;
	*key_len = m->type == 1 ? m->key_size : 4;
	*value = e + GRT_BPF_DUMP_ENTRY_HEAD + ks;
}

static const char *sub_name(uint32_t type)
{
	return type == 1502 ? "thread" : type == 6 ? "sm" : NULL;
}

static void print_map_text(const struct bpf_report *r, const struct bpf_map_row *m, FILE *out)
{
	size_t shown = r->top_n ? r->top_n : m->nr_entries;
	char kbuf[512], vbuf[1024];

	fprintf(out, "  map %s: %s, key %u, value %u, %u entries max\n", m->name ? m->name : "?",
		grt_bpf_map_type_name(m->type), m->key_size, m->value_size, m->max_entries);
	if (!m->snapshot) {
		fprintf(out, "    no contents read back\n");
		return;
	}
	fprintf(out, "    %" PRIu64 " %s (snapshot %u%s)\n", m->total_entries,
		m->type == 1 ? "keys" : "non-zero values", m->snapshot, m->final ? ", final" : "");
	for (size_t i = 0; i < m->nr_entries && i < shown; i++) {
		uint32_t sub, klen;
		const uint8_t *key, *value;

		entry_parts(m, i, &sub, &key, &klen, &value);
		decode_text(m->key_layout, key, klen, kbuf, sizeof(kbuf));
		decode_text(m->value_layout, value, m->value_size, vbuf, sizeof(vbuf));
		if (sub_name(m->type))
			fprintf(out, "    %s %u, %s -> %s\n", sub_name(m->type), sub, kbuf, vbuf);
		else
			fprintf(out, "    %s -> %s\n", kbuf, vbuf);
	}
	if (m->nr_entries > shown)
		fprintf(out, "    (%zu more; --top 0 shows all)\n", m->nr_entries - shown);
	if (m->dropped_entries)
		fprintf(out, "    (%" PRIu64 " more not kept)\n", m->dropped_entries);
}

static void bpf_print_text(void *state, FILE *out)
{
	struct bpf_report *r = state;
	char buf[1024];

	if (!r->nr_progs) {
		fprintf(out, "no GPU eBPF programs in this trace (record with --bpf PROG.bpf.o)\n");
		return;
	}
	fprintf(out, "GPU eBPF programs\n");
	for (size_t i = 0; i < r->nr_progs; i++) {
		const struct bpf_prog_row *p = &r->progs[i];

		if (p->status)
			fprintf(out, "  refused: %s\n", p->reason ? p->reason : "?");
		else
			fprintf(out, "  %s (%s): %s probe, %u eBPF / %u PTX instructions\n",
				p->section ? p->section : "?", p->name ? p->name : "?",
				attach_name(p->attach), p->insns, p->ptx_insns);
	}
	for (int s = 0; s < MAX_SLOTS; s++) {
		const struct bpf_map_row *m = &r->maps[s];

		if (!m->described || is_ring(m->type))
			continue;
		print_map_text(r, m, out);
	}
	for (int s = 0; s < MAX_SLOTS; s++) {
		const struct bpf_map_row *m = &r->maps[s];

		if (!m->described || !is_ring(m->type))
			continue;
		fprintf(out, "  ring %s: %" PRIu64 " events, %" PRIu64 " lost\n",
			m->name ? m->name : "?", m->events, m->lost);
		for (unsigned i = 0; i < m->nr_last; i++)
			fprintf(out, "    %s\n",
				decode_text(m->value_layout, m->last[i], m->last_len[i], buf,
					    sizeof(buf)));
	}
	if (r->printk_lines || r->printk_lost) {
		fprintf(out, "  printk: %" PRIu64 " lines, %" PRIu64 " lost\n", r->printk_lines,
			r->printk_lost);
		for (unsigned i = 0; i < r->nr_lines; i++)
			fprintf(out, "    %s\n", r->lines[i]);
	}
	if (r->out_of_memory)
		fprintf(out, "  (out of memory: some contents are missing)\n");
}

static void print_map_json(const struct bpf_report *r, const struct bpf_map_row *m, int slot,
			   struct json_writer *w)
{
	size_t shown = r->top_n ? r->top_n : m->nr_entries;

	jw_begin_object(w);
	jw_field_u64(w, "slot", (uint64_t)slot);
	jw_field_string(w, "name", m->name);
	jw_field_string(w, "type", grt_bpf_map_type_name(m->type));
	jw_field_u64(w, "key_size", m->key_size);
	jw_field_u64(w, "value_size", m->value_size);
	jw_field_u64(w, "max_entries", m->max_entries);
	if (is_ring(m->type)) {
		jw_field_u64(w, "events", m->events);
		jw_field_u64(w, "lost", m->lost);
		jw_end_object(w);
		return;
	}
	jw_field_u64(w, "snapshot", m->snapshot);
	jw_key(w, "final");
	jw_bool(w, m->final);
	jw_field_u64(w, "total_entries", m->total_entries);
	jw_key(w, "entries");
	jw_begin_array(w);
	for (size_t i = 0; i < m->nr_entries && i < shown; i++) {
		uint32_t sub, klen;
		const uint8_t *key, *value;

		entry_parts(m, i, &sub, &key, &klen, &value);
		jw_begin_object(w);
		if (sub_name(m->type))
			jw_field_u64(w, sub_name(m->type), sub);
		jw_key(w, "key");
		decode_json(w, m->key_layout, key, klen);
		jw_key(w, "value");
		decode_json(w, m->value_layout, value, m->value_size);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_end_object(w);
}

static void bpf_print_json(void *state, struct json_writer *w)
{
	struct bpf_report *r = state;

	jw_begin_object(w);
	jw_key(w, "programs");
	jw_begin_array(w);
	for (size_t i = 0; i < r->nr_progs; i++) {
		const struct bpf_prog_row *p = &r->progs[i];

		jw_begin_object(w);
		jw_field_u64(w, "prog", p->id);
		jw_field_string(w, "section", p->section);
		jw_field_string(w, "name", p->name);
		jw_field_string(w, "attach", attach_name(p->attach));
		jw_key(w, "status");
		jw_i64(w, p->status);
		jw_field_string(w, "reason", p->reason);
		jw_field_u64(w, "insns", p->insns);
		jw_field_u64(w, "ptx_insns", p->ptx_insns);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_key(w, "maps");
	jw_begin_array(w);
	for (int s = 0; s < MAX_SLOTS; s++)
		if (r->maps[s].described)
			print_map_json(r, &r->maps[s], s, w);
	jw_end_array(w);
	jw_key(w, "printk");
	jw_begin_object(w);
	jw_field_u64(w, "lines", r->printk_lines);
	jw_field_u64(w, "lost", r->printk_lost);
	jw_key(w, "last");
	jw_begin_array(w);
	for (unsigned i = 0; i < r->nr_lines; i++)
		jw_string(w, r->lines[i]);
	jw_end_array(w);
	jw_end_object(w);
	jw_end_object(w);
}

static void bpf_destroy(void *state)
{
	struct bpf_report *r = state;

	for (size_t i = 0; i < r->nr_progs; i++) {
		free(r->progs[i].section);
		free(r->progs[i].name);
		free(r->progs[i].reason);
	}
	for (int s = 0; s < MAX_SLOTS; s++) {
		free(r->maps[s].name);
		free(r->maps[s].key_layout);
		free(r->maps[s].value_layout);
		free(r->maps[s].entries);
		for (unsigned i = 0; i < r->maps[s].nr_last; i++)
			free(r->maps[s].last[i]);
	}
	for (unsigned i = 0; i < r->nr_lines; i++)
		free(r->lines[i]);
	free(r);
}

GRT_REPORT_SECTION(bpf_section) = {
    .name = "bpf",
    .summary = "GPU eBPF programs: final map contents decoded from BTF, ring events, printk",
    .default_on = false,
    .sources = 1u << GRT_SRC_GPU,
    .order = 72,
    .create = bpf_create,
    .on_record = bpf_on_record,
    .print_text = bpf_print_text,
    .print_json = bpf_print_json,
    .destroy = bpf_destroy,
};
