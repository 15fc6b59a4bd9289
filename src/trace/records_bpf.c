/* Descriptions of GPU eBPF records, and values decoded with their layouts. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/grt_strings.h"
#include "trace/record_desc.h"
#include "trace/records_bpf.h"

const char *const grt_bpf_reserved_keys[] = {
    /* the printers' own */
    "type",
    "ts_ns",
    "cpu",
    "pid",
    "tid",
    "seq",
    /* the bpf records' */
    "map",
    "prog",
    "smid",
    "gpu_ns",
    "size",
    "data",
    "slot",
    "kind",
    "text",
    "snapshot",
    "entries",
    "total_entries",
    "final",
    "count",
    NULL,
};

static const struct {
	uint32_t type;
	const char *name;
} map_types[] = {
    {1, "hash"},	 {2, "array"},		{4, "perf_event_array"},
    {6, "percpu_array"}, {27, "ringbuf"},	{1502, "pergputd_array"},
    {1503, "gpu_array"}, {1527, "gpu_ringbuf"},
};

const char *grt_bpf_map_type_name(uint32_t type)
{
	for (size_t i = 0; i < sizeof(map_types) / sizeof(map_types[0]); i++)
		if (map_types[i].type == type)
			return map_types[i].name;
	return "unknown";
}

/* --- layouts ----------------------------------------------------------------------------- */

#define MAX_ARRAY_SHOWN 32

struct field {
	char name[64];
	char kind;	/* 'u', 's', 'x', 'f', 'c' (chars) */
	unsigned bytes; /* of one element */
	unsigned count; /* elements; for 'c', the string's bytes */
	unsigned long offset;
};

/* Parses "name:type@offset" at s (up to ';' or the end); returns the rest, or NULL. */
static const char *parse_field(const char *s, struct field *f)
{
	const char *colon = strchr(s, ':'), *at, *end;
	char *num_end;
	size_t n;

	if (!colon || (size_t)(colon - s) >= sizeof(f->name) || colon == s)
		return NULL;
	n = (size_t)(colon - s);
	memcpy(f->name, s, n);
	f->name[n] = 0;
	at = strchr(colon, '@');
	end = strchr(colon, ';');
	if (!at || (end && at > end))
		return NULL;
	f->count = 1;
	if (!strncmp(colon + 1, "str", 3)) {
		f->kind = 'c';
		f->bytes = 1;
		f->count = (unsigned)strtoul(colon + 4, &num_end, 10);
	} else {
		f->kind = colon[1];
		if (!strchr("usxf", f->kind))
			return NULL;
		f->bytes = (unsigned)strtoul(colon + 2, &num_end, 10) / 8;
		if (*num_end == '[')
			f->count = (unsigned)strtoul(num_end + 1, &num_end, 10), num_end++;
	}
	if (num_end != at || !f->count || f->count > (1u << 20) ||
	    (f->kind != 'c' && f->bytes != 1 && f->bytes != 2 && f->bytes != 4 && f->bytes != 8) ||
	    (f->kind == 'f' && f->bytes != 4 && f->bytes != 8))
		return NULL;
	f->offset = strtoul(at + 1, &num_end, 10);
	if (num_end == at + 1 || (*num_end && *num_end != ';'))
		return NULL;
	return *num_end ? num_end + 1 : num_end;
}

static uint64_t get_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void emit_scalar(struct grt_fields *out, const char *key, char kind, const uint8_t *p,
			unsigned bytes)
{
	uint64_t v = get_le(p, bytes);

	switch (kind) {
	case 's':
		if (bytes < 8 && (v >> (8 * bytes - 1)) & 1)
			v |= ~0ull << (8 * bytes);
		grt_field_i64(out, key, (int64_t)v);
		break;
	case 'x':
		grt_field_hex(out, key, v);
		break;
	case 'f':
		if (bytes == 4) {
			float f;
			uint32_t u = (uint32_t)v;

			memcpy(&f, &u, 4);
			grt_field_f64(out, key, f);
		} else {
			double d;

			memcpy(&d, &v, 8);
			grt_field_f64(out, key, d);
		}
		break;
	default:
		grt_field_u64(out, key, v);
	}
}

void grt_bpf_layout_describe(struct grt_fields *out, const char *layout, const uint8_t *data,
			     uint32_t len)
{
	const char *s = layout;

	while (s && *s) {
		struct field f;
		char key[80];

		s = parse_field(s, &f);
		if (!s)
			return;
		if (f.kind == 'c') {
			char text[256];
			unsigned n = 0;

			if (f.offset > len || f.count > len - f.offset)
				return;
			for (; n < f.count && n < sizeof(text) - 1 && data[f.offset + n]; n++)
				text[n] =
				    isprint(data[f.offset + n]) ? (char)data[f.offset + n] : '.';
			text[n] = 0;
			grt_field_str(out, f.name, text);
			continue;
		}
		for (unsigned i = 0; i < f.count && i < MAX_ARRAY_SHOWN; i++) {
			unsigned long at = f.offset + (unsigned long)i * f.bytes;

			if (f.offset > len || at > len || f.bytes > len - at)
				return;
			if (f.count == 1)
				snprintf(key, sizeof(key), "%s", f.name);
			else
				snprintf(key, sizeof(key), "%s_%u", f.name, i);
			emit_scalar(out, key, f.kind, data + at, f.bytes);
		}
	}
}

/* --- descriptions ------------------------------------------------------------------------- */

static const char *attach_name(uint16_t attach)
{
	return attach == GRT_BPF_REC_ENTRY    ? "entry"
	       : attach == GRT_BPF_REC_EXIT   ? "exit"
	       : attach == GRT_BPF_REC_MEMORY ? "memory"
					      : "unknown";
}

static int validate_object(const void *payload, uint32_t len)
{
	const struct grt_bpf_object_rec *o = payload;

	return o->btf_len > len - sizeof(*o) ? -1 : 0;
}

static void describe_object(const struct grt_record *rec, const struct grt_strings *strings,
			    struct grt_fields *out)
{
	const struct grt_bpf_object_rec *o = rec->payload;

	grt_field_u64(out, "object", o->object_id);
	grt_field_str(out, "name", grt_strings_get(strings, o->name_str));
	grt_field_u64(out, "btf_bytes", o->btf_len);
}

GRT_RECORD_DESC(bpf_object_desc) = {
    .type = GRT_REC_BPF_OBJECT,
    .name = "bpf_object",
    .min_len = sizeof(struct grt_bpf_object_rec),
    .validate = validate_object,
    .describe = describe_object,
};

static void describe_prog(const struct grt_record *rec, const struct grt_strings *strings,
			  struct grt_fields *out)
{
	const struct grt_bpf_prog_rec *p = rec->payload;

	grt_field_u64(out, "prog", p->prog_id);
	grt_field_u64(out, "object", p->object_id);
	grt_field_str(out, "section", grt_strings_get(strings, p->section_str));
	grt_field_str(out, "name", grt_strings_get(strings, p->name_str));
	grt_field_str(out, "attach", attach_name(p->attach));
	grt_field_u64(out, "insns", p->nr_insns);
	grt_field_u64(out, "ptx_insns", p->ptx_insns);
	grt_field_i64(out, "status", p->status);
	grt_field_str(out, "reason", grt_strings_get(strings, p->reason_str));
}

GRT_RECORD_DESC(bpf_prog_desc) = {
    .type = GRT_REC_BPF_PROG,
    .name = "bpf_prog",
    .min_len = sizeof(struct grt_bpf_prog_rec),
    .describe = describe_prog,
};

static void describe_map(const struct grt_record *rec, const struct grt_strings *strings,
			 struct grt_fields *out)
{
	const struct grt_bpf_map_rec *m = rec->payload;

	grt_field_u64(out, "slot", m->slot);
	grt_field_str(out, "map", grt_strings_get(strings, m->name_str));
	grt_field_u64(out, "object", m->object_id);
	grt_field_str(out, "map_type", grt_bpf_map_type_name(m->type));
	grt_field_u64(out, "key_size", m->key_size);
	grt_field_u64(out, "value_size", m->value_size);
	grt_field_u64(out, "max_entries", m->max_entries);
	grt_field_str(out, "key_layout", grt_strings_get(strings, m->key_layout_str));
	grt_field_str(out, "value_layout", grt_strings_get(strings, m->value_layout_str));
}

GRT_RECORD_DESC(bpf_map_desc) = {
    .type = GRT_REC_BPF_MAP,
    .name = "bpf_map",
    .min_len = sizeof(struct grt_bpf_map_rec),
    .describe = describe_map,
};

static int validate_dump(const void *payload, uint32_t len)
{
	const struct grt_bpf_map_dump_rec *d = payload;

	if (d->nr_entries && d->entry_size < GRT_BPF_DUMP_ENTRY_HEAD)
		return -1;
	return (uint64_t)d->nr_entries * d->entry_size > len - sizeof(*d) ? -1 : 0;
}

static void describe_dump(const struct grt_record *rec, const struct grt_strings *strings,
			  struct grt_fields *out)
{
	const struct grt_bpf_map_dump_rec *d = rec->payload;

	grt_field_u64(out, "slot", d->slot);
	grt_field_u64(out, "snapshot", d->snapshot);
	grt_field_u64(out, "final", d->flags & GRT_BPF_DUMP_FINAL ? 1 : 0);
	grt_field_u64(out, "entries", d->nr_entries);
	grt_field_u64(out, "total_entries", d->total_entries);
}

GRT_RECORD_DESC(bpf_map_dump_desc) = {
    .type = GRT_REC_BPF_MAP_DUMP,
    .name = "bpf_map_dump",
    .min_len = sizeof(struct grt_bpf_map_dump_rec),
    .validate = validate_dump,
    .describe = describe_dump,
};

static int validate_event(const void *payload, uint32_t len)
{
	const struct grt_bpf_event_rec *e = payload;

	return e->data_len > len - sizeof(*e) ? -1 : 0;
}

static void describe_event(const struct grt_record *rec, const struct grt_strings *strings,
			   struct grt_fields *out)
{
	const struct grt_bpf_event_rec *e = rec->payload;
	const char *layout = grt_strings_get(strings, e->layout_str);

	grt_field_u64(out, "slot", e->slot);
	grt_field_str(out, "map", grt_strings_get(strings, e->map_name_str));
	grt_field_u64(out, "prog", e->prog_id);
	grt_field_u64(out, "smid", e->smid);
	grt_field_u64(out, "gpu_ns", e->gpu_ns);
	grt_field_u64(out, "size", e->data_len);
	if (layout) {
		grt_bpf_layout_describe(out, layout, e->data, e->data_len);
	} else {
		uint64_t words[16];
		uint32_t n = 0;

		for (; n < 16 && 8 * n < e->data_len; n++)
			words[n] = get_le(e->data + 8 * n,
					  e->data_len - 8 * n < 8 ? e->data_len - 8 * n : 8);
		grt_field_hex_list(out, "data", words, n);
	}
}

GRT_RECORD_DESC(bpf_event_desc) = {
    .type = GRT_REC_BPF_EVENT,
    .name = "bpf_event",
    .min_len = sizeof(struct grt_bpf_event_rec),
    .validate = validate_event,
    .describe = describe_event,
};

static int validate_printk(const void *payload, uint32_t len)
{
	const struct grt_bpf_printk_rec *p = payload;

	if (p->len > len - sizeof(*p))
		return -1;
	return p->len && p->text[p->len - 1] ? -1 : 0; /* the text ends with its NUL */
}

static void describe_printk(const struct grt_record *rec, const struct grt_strings *strings,
			    struct grt_fields *out)
{
	const struct grt_bpf_printk_rec *p = rec->payload;

	grt_field_u64(out, "prog", p->prog_id);
	grt_field_str(out, "kind", p->kind == GRT_BPF_REC_PUTS ? "puts" : "printk");
	grt_field_u64(out, "smid", p->smid);
	grt_field_u64(out, "gpu_ns", p->gpu_ns);
	grt_field_str(out, "text", p->len ? p->text : "");
}

GRT_RECORD_DESC(bpf_printk_desc) = {
    .type = GRT_REC_BPF_PRINTK,
    .name = "bpf_printk",
    .min_len = sizeof(struct grt_bpf_printk_rec),
    .validate = validate_printk,
    .describe = describe_printk,
};

static void describe_lost(const struct grt_record *rec, const struct grt_strings *strings,
			  struct grt_fields *out)
{
	const struct grt_bpf_lost_rec *l = rec->payload;

	if (l->slot == GRT_BPF_PRINTK_SLOT)
		grt_field_str(out, "map", "printk");
	else
		grt_field_str(out, "map", grt_strings_get(strings, l->map_name_str));
	grt_field_u64(out, "slot", l->slot);
	grt_field_u64(out, "count", l->count);
}

GRT_RECORD_DESC(bpf_lost_desc) = {
    .type = GRT_REC_BPF_LOST,
    .name = "bpf_lost",
    .min_len = sizeof(struct grt_bpf_lost_rec),
    .describe = describe_lost,
};
