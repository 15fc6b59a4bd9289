/* --filter expressions: type names, pids and tids. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cli/event_filter.h"
#include "trace/record_desc.h"

void event_filter_init(struct event_filter *f)
{
	memset(f, 0, sizeof(*f));
}

void event_filter_destroy(struct event_filter *f)
{
	(void)f;
}

static int parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
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
		return f->npids < EVENT_FILTER_MAX ? parse_u32(value, &f->pids[f->npids++]) : -EINVAL;
	if (!strcmp(key, "tid"))
		return f->ntids < EVENT_FILTER_MAX ? parse_u32(value, &f->tids[f->ntids++]) : -EINVAL;
	return -EINVAL;
}

int event_filter_add(struct event_filter *f, const char *expr)
{
	const char *eq = strchr(expr, '=');
	char key[16], *values, *value, *save = NULL;
	int err = 0;

	if (!eq || eq == expr || (size_t)(eq - expr) >= sizeof(key) || !eq[1])
		return -EINVAL;
	memcpy(key, expr, (size_t)(eq - expr));
	key[eq - expr] = 0;
	values = strdup(eq + 1);
	if (!values)
		return -ENOMEM;
	for (value = strtok_r(values, ",", &save); value && !err; value = strtok_r(NULL, ",", &save))
		err = add_value(f, key, value);
	free(values);
	return err;
}

static bool in_list(const uint32_t *list, unsigned n, uint32_t v)
{
	for (unsigned i = 0; i < n; i++)
		if (list[i] == v)
			return true;
	return false;
}

bool event_filter_match(const struct event_filter *f, const struct grt_record *rec)
{
	bool type_ok = !f->ntypes;

	for (unsigned i = 0; i < f->ntypes; i++)
		type_ok |= f->types[i] == rec->hdr.type;
	return type_ok && (!f->npids || in_list(f->pids, f->npids, rec->hdr.pid)) &&
	       (!f->ntids || in_list(f->tids, f->ntids, rec->hdr.tid));
}
