/* --filter expressions: type names, pids, tids, kernel and API name globs, a time window. */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli/event_filter.h"
#include "common/num_parse.h"
#include "trace/record_desc.h"

void event_filter_init(struct event_filter *f)
{
	memset(f, 0, sizeof(*f));
}

void event_filter_destroy(struct event_filter *f)
{
	for (unsigned i = 0; i < f->nkernels; i++)
		free(f->kernels[i]);
	for (unsigned i = 0; i < f->napis; i++)
		free(f->apis[i]);
	memset(f, 0, sizeof(*f));
}

static int parse_u32(const char *s, uint32_t *out)
{
	uint64_t v;
	int err = num_parse_u64(s, 0, UINT32_MAX, &v);

	if (!err)
		*out = (uint32_t)v;
	return err ? -EINVAL : 0;
}

/* Appends a number to a list; a bad number leaves the list as it was. */
static int add_u32(uint32_t *list, unsigned *n, const char *value)
{
	if (*n == EVENT_FILTER_MAX || parse_u32(value, &list[*n]))
		return -EINVAL;
	(*n)++;
	return 0;
}

static int add_pattern(char **list, unsigned *n, const char *value)
{
	if (*n == EVENT_FILTER_MAX || !(list[*n] = strdup(value)))
		return -EINVAL;
	(*n)++;
	return 0;
}

/* Seconds from the trace's start, or an empty end of the window. */
static int parse_time_end(const char *text, size_t len, uint64_t empty, uint64_t *out)
{
	char buf[64], *end;
	double s;

	if (!len) {
		*out = empty;
		return 0;
	}
	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, text, len);
	buf[len] = 0;
	s = strtod(buf, &end);
	if (end == buf || *end || !isfinite(s) || s < 0 || s > 1e9)
		return -EINVAL;
	*out = (uint64_t)llround(s * 1e9);
	return 0;
}

/* time=A..B: from A to B seconds after the start; "A.." and "..B" leave an end open. */
static int set_window(struct event_filter *f, const char *value)
{
	const char *dots = strstr(value, "..");

	if (!dots || f->has_window || (dots == value && !dots[2]) ||
	    parse_time_end(value, (size_t)(dots - value), 0, &f->from_ns) ||
	    parse_time_end(dots + 2, strlen(dots + 2), UINT64_MAX, &f->to_ns) ||
	    f->from_ns > f->to_ns)
		return -EINVAL;
	f->has_window = true;
	return 0;
}

static int add_value(struct event_filter *f, const char *key, const char *value)
{
	const struct grt_record_desc *desc;

	if (!strcmp(key, "type")) {
		desc = grt_record_desc_by_name(value);
		if (!desc || f->ntypes == EVENT_FILTER_MAX)
			return -EINVAL;
		f->types[f->ntypes++] = desc->type;
		return 0;
	}
	if (!strcmp(key, "pid"))
		return add_u32(f->pids, &f->npids, value);
	if (!strcmp(key, "tid"))
		return add_u32(f->tids, &f->ntids, value);
	if (!strcmp(key, "kernel"))
		return add_pattern(f->kernels, &f->nkernels, value);
	if (!strcmp(key, "api"))
		return add_pattern(f->apis, &f->napis, value);
	if (!strcmp(key, "time"))
		return set_window(f, value);
	return -EINVAL;
}

int event_filter_add(struct event_filter *f, const char *expr)
{
	char key[16] = "", *copy = strdup(expr), *item, *save = NULL;
	unsigned added = 0;
	int err = copy ? 0 : -ENOMEM;

	/* commas separate values and keys: a kernel name with a comma is matched with a '*' there */
	for (item = copy ? strtok_r(copy, ",", &save) : NULL; item && !err;
	     item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		const char *value = item;

		if (eq && eq != item && (size_t)(eq - item) < sizeof(key) &&
		    strspn(item, "abcdefghijklmnopqrstuvwxyz") == (size_t)(eq - item)) {
			memcpy(key, item, (size_t)(eq - item));
			key[eq - item] = 0;
			value = eq + 1;
		}
		/* "type=," names nothing; silently matching everything would hide the mistake */
		err = !key[0] || !*value ? -EINVAL : add_value(f, key, value);
		added++;
	}
	free(copy);
	return err ? err : added ? 0 : -EINVAL;
}

static bool in_list(const uint32_t *list, unsigned n, uint32_t v)
{
	for (unsigned i = 0; i < n; i++)
		if (list[i] == v)
			return true;
	return false;
}

bool event_filter_match_type(const struct event_filter *f, uint16_t type)
{
	bool type_ok = !f->ntypes;

	for (unsigned i = 0; i < f->ntypes; i++)
		type_ok |= f->types[i] == type;
	return type_ok;
}

/*
 * The record's kernel and api fields matched as describe() gives them: a
 * string may live only for the call (a name built on the stack).
 */
struct named_fields {
	struct grt_fields fields;	/* first: describe() gets &named->fields */
	const struct event_filter *filter;
	bool kernel_ok;
	bool api_ok;
};

static void ignore_u64(struct grt_fields *f, const char *k, uint64_t v) {}
static void ignore_i64(struct grt_fields *f, const char *k, int64_t v) {}
static void ignore_f64(struct grt_fields *f, const char *k, double v) {}
static void ignore_dim3(struct grt_fields *f, const char *k, const uint32_t v[3]) {}
static void ignore_list(struct grt_fields *f, const char *k, const uint64_t *v, uint32_t n) {}

static bool any_match(char *const *patterns, unsigned n, const char *text)
{
	if (!n)
		return true;
	for (unsigned i = 0; text && i < n; i++)
		if (!fnmatch(patterns[i], text, 0))
			return true;
	return false;
}

static void catch_str(struct grt_fields *f, const char *k, const char *s)
{
	struct named_fields *named = (struct named_fields *)f;
	const struct event_filter *filter = named->filter;

	if (!strcmp(k, "kernel"))
		named->kernel_ok = any_match(filter->kernels, filter->nkernels, s);
	else if (!strcmp(k, "api"))
		named->api_ok = any_match(filter->apis, filter->napis, s);
}

static const struct grt_fields_ops catch_ops = {
	.u64 = ignore_u64, .i64 = ignore_i64, .hex = ignore_u64, .f64 = ignore_f64,
	.str = catch_str, .dim3 = ignore_dim3, .hex_list = ignore_list,
};

static bool names_match(const struct event_filter *f, const struct grt_record *rec,
			const struct grt_strings *strings)
{
	const struct grt_record_desc *desc;
	/* a record without the field matches only where no pattern asks for it */
	struct named_fields named = {
	    .fields.ops = &catch_ops,
	    .filter = f,
	    .kernel_ok = !f->nkernels,
	    .api_ok = !f->napis,
	};

	if (!f->nkernels && !f->napis)
		return true;
	desc = grt_record_desc_find(rec->hdr.type);
	if (!desc)
		return false;
	desc->describe(rec, strings, &named.fields);
	return named.kernel_ok && named.api_ok;
}

bool event_filter_match(const struct event_filter *f, const struct grt_record *rec,
			const struct grt_strings *strings, uint64_t start_ns)
{
	uint64_t rel = rec->hdr.ts_ns > start_ns ? rec->hdr.ts_ns - start_ns : 0;

	return event_filter_match_type(f, rec->hdr.type) &&
	       (!f->npids || in_list(f->pids, f->npids, rec->hdr.pid)) &&
	       (!f->ntids || in_list(f->tids, f->ntids, rec->hdr.tid)) &&
	       (!f->has_window || (rel >= f->from_ns && rel <= f->to_ns)) &&
	       names_match(f, rec, strings);
}
