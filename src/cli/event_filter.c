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

/* Appends a number to a list; a bad number leaves the list as it was. */
static int add_u32(uint32_t *list, unsigned *n, const char *value)
{
	if (*n == EVENT_FILTER_MAX || parse_u32(value, &list[*n]))
		return -EINVAL;
	(*n)++;
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
	return -EINVAL;
}

int event_filter_add(struct event_filter *f, const char *expr)
{
	const char *eq = strchr(expr, '=');
	char key[16], *values, *value, *save = NULL;
	unsigned added = 0;
	int err = 0;

	if (!eq || eq == expr || (size_t)(eq - expr) >= sizeof(key) || !eq[1])
		return -EINVAL;
	memcpy(key, expr, (size_t)(eq - expr));
	key[eq - expr] = 0;
	values = strdup(eq + 1);
	if (!values)
		return -ENOMEM;
	for (value = strtok_r(values, ",", &save); value && !err; value = strtok_r(NULL, ",", &save)) {
		err = add_value(f, key, value);
		added++;
	}
	free(values);
	/* "type=," names nothing; silently matching everything would hide the mistake */
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

bool event_filter_match(const struct event_filter *f, const struct grt_record *rec)
{
	return event_filter_match_type(f, rec->hdr.type) && (!f->npids || in_list(f->pids, f->npids, rec->hdr.pid)) &&
	       (!f->ntids || in_list(f->tids, f->ntids, rec->hdr.tid));
}
