/* Text and JSON Lines renderings of one event, both driven by the record's describe(). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "common/json_writer.h"
#include "common/text_escape.h"
#include "export/event_printer.h"
#include "trace/record_desc.h"

struct grt_event_printer {
	struct grt_fields fields;	/* first: describe() gets &printer->fields */
	FILE *out;
	enum grt_event_format format;
	uint64_t time_base_ns;
	struct json_writer json;
};

int grt_event_format_parse(const char *name)
{
	if (!strcmp(name, "text"))
		return GRT_FORMAT_TEXT;
	if (!strcmp(name, "csv"))
		return GRT_FORMAT_CSV;
	if (!strcmp(name, "json"))
		return GRT_FORMAT_JSON;
	return -1;
}

static struct grt_event_printer *printer_of(struct grt_fields *f)
{
	return (struct grt_event_printer *)f;
}

/* Text: "key=value" pairs separated by spaces. */
static void kv_u64(struct grt_fields *f, const char *k, uint64_t v)
{
	fprintf(printer_of(f)->out, " %s=%" PRIu64, k, v);
}

static void kv_i64(struct grt_fields *f, const char *k, int64_t v)
{
	fprintf(printer_of(f)->out, " %s=%" PRId64, k, v);
}

static void kv_hex(struct grt_fields *f, const char *k, uint64_t v)
{
	fprintf(printer_of(f)->out, " %s=0x%" PRIx64, k, v);
}

static void kv_f64(struct grt_fields *f, const char *k, double v)
{
	fprintf(printer_of(f)->out, " %s=%.3f", k, v);
}

/* Whether a text value must be quoted to stay one token of a key=value line. */
static bool needs_quotes(const char *s)
{
	if (!*s || !strcmp(s, "-")) /* "-" alone is how a missing value prints */
		return true;
	return strpbrk(s, " =") || text_needs_escape(s, true);
}

/* C-style escapes keep a value with quotes or line breaks on its line and in its token. */
static void write_quoted(FILE *out, const char *s)
{
	fputc('"', out);
	text_escape_write(out, s, true);
	fputc('"', out);
}

static void kv_str(struct grt_fields *f, const char *k, const char *s)
{
	FILE *out = printer_of(f)->out;

	if (!s) {
		fprintf(out, " %s=-", k);
	} else if (needs_quotes(s)) {
		fprintf(out, " %s=", k);
		write_quoted(out, s);
	} else {
		fprintf(out, " %s=%s", k, s);
	}
}

static void kv_dim3(struct grt_fields *f, const char *k, const uint32_t v[3])
{
	fprintf(printer_of(f)->out, " %s=(%u,%u,%u)", k, v[0], v[1], v[2]);
}

static void kv_hex_list(struct grt_fields *f, const char *k, const uint64_t *v, uint32_t n)
{
	FILE *out = printer_of(f)->out;

	fprintf(out, " %s=[", k);
	for (uint32_t i = 0; i < n; i++)
		fprintf(out, "%s0x%" PRIx64, i ? "," : "", v[i]);
	fputc(']', out);
}

static const struct grt_fields_ops kv_ops = {
	.u64 = kv_u64, .i64 = kv_i64, .hex = kv_hex, .f64 = kv_f64,
	.str = kv_str, .dim3 = kv_dim3, .hex_list = kv_hex_list,
};

static void js_u64(struct grt_fields *f, const char *k, uint64_t v)
{
	jw_key(&printer_of(f)->json, k);
	jw_u64(&printer_of(f)->json, v);
}

static void js_i64(struct grt_fields *f, const char *k, int64_t v)
{
	jw_key(&printer_of(f)->json, k);
	jw_i64(&printer_of(f)->json, v);
}

/* Handles and addresses are numbers too, so scripts compare them without parsing hex. */
static void js_hex(struct grt_fields *f, const char *k, uint64_t v)
{
	js_u64(f, k, v);
}

static void js_f64(struct grt_fields *f, const char *k, double v)
{
	jw_key(&printer_of(f)->json, k);
	jw_f64(&printer_of(f)->json, v);
}

static void js_str(struct grt_fields *f, const char *k, const char *s)
{
	jw_key(&printer_of(f)->json, k);
	jw_string(&printer_of(f)->json, s);
}

static void js_dim3(struct grt_fields *f, const char *k, const uint32_t v[3])
{
	struct json_writer *w = &printer_of(f)->json;

	jw_key(w, k);
	jw_begin_array(w);
	for (int i = 0; i < 3; i++)
		jw_u64(w, v[i]);
	jw_end_array(w);
}

static void js_hex_list(struct grt_fields *f, const char *k, const uint64_t *v, uint32_t n)
{
	struct json_writer *w = &printer_of(f)->json;

	jw_key(w, k);
	jw_begin_array(w);
	for (uint32_t i = 0; i < n; i++)
		jw_u64(w, v[i]);
	jw_end_array(w);
}

static const struct grt_fields_ops json_ops = {
	.u64 = js_u64, .i64 = js_i64, .hex = js_hex, .f64 = js_f64,
	.str = js_str, .dim3 = js_dim3, .hex_list = js_hex_list,
};

struct grt_event_printer *grt_event_printer_new(FILE *out, enum grt_event_format format,
						uint64_t time_base_ns)
{
	struct grt_event_printer *p = format == GRT_FORMAT_CSV ? NULL : calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->fields.ops = format == GRT_FORMAT_JSON ? &json_ops : &kv_ops;
	p->out = out;
	p->format = format;
	p->time_base_ns = time_base_ns;
	jw_init(&p->json, out);
	return p;
}

void grt_event_printer_free(struct grt_event_printer *p)
{
	free(p);
}

static const char *type_name(const struct grt_record_desc *desc, char *buf, size_t len,
			     uint16_t type)
{
	if (desc)
		return desc->name;
	snprintf(buf, len, "type%u", type);
	return buf;
}

static void print_json(struct grt_event_printer *p, const struct grt_record *rec,
		       const struct grt_record_desc *desc, const char *name,
		       const struct grt_strings *strings)
{
	struct json_writer *w = &p->json;

	jw_begin_object(w);
	jw_key(w, "type");
	jw_string(w, name);
	jw_key(w, "ts_ns");
	jw_u64(w, rec->hdr.ts_ns);
	jw_key(w, "cpu");
	jw_u64(w, rec->hdr.cpu);
	jw_key(w, "pid");
	jw_u64(w, rec->hdr.pid);
	jw_key(w, "tid");
	jw_u64(w, rec->hdr.tid);
	jw_key(w, "seq");
	jw_u64(w, rec->hdr.seq);
	if (desc)
		desc->describe(rec, strings, &p->fields);
	jw_end_object(w);
	jw_newline(w);
}

static void print_text(struct grt_event_printer *p, const struct grt_record *rec,
		       const struct grt_record_desc *desc, const char *name,
		       const struct grt_strings *strings)
{
	uint64_t rel = rec->hdr.ts_ns >= p->time_base_ns ? rec->hdr.ts_ns - p->time_base_ns : 0;

	fprintf(p->out, "%5" PRIu64 ".%09" PRIu64 " %3u %7u/%-7u %-12s", rel / 1000000000u,
		rel % 1000000000u, rec->hdr.cpu, rec->hdr.pid, rec->hdr.tid, name);
	if (desc)
		desc->describe(rec, strings, &p->fields);
	fputc('\n', p->out);
}

void grt_event_printer_print(struct grt_event_printer *p, const struct grt_record *rec,
			     const struct grt_strings *strings)
{
	const struct grt_record_desc *desc = grt_record_desc_find(rec->hdr.type);
	char unknown[16];
	const char *name = type_name(desc, unknown, sizeof(unknown), rec->hdr.type);

	if (p->format == GRT_FORMAT_JSON)
		print_json(p, rec, desc, name, strings);
	else
		print_text(p, rec, desc, name, strings);
}
