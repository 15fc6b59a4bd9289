/* Helpers shared by report sections. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/report_util.h"
#include "common/num_parse.h"
#include "trace/grt_format.h"
#include "trace/records_core.h"

/* cuda record types: records_cuda.h owns 16..47, and 47 is the settings, not a call */
#define CUDA_TYPE_FIRST GRT_REC_CUDA_LAUNCH
#define CUDA_TYPE_LAST (GRT_REC_CUDA_CONFIG - 1)

const struct grt_cuda_call *report_cuda_call(const struct grt_record *rec)
{
	if (rec->hdr.type < CUDA_TYPE_FIRST || rec->hdr.type > CUDA_TYPE_LAST ||
	    rec->hdr.payload_len < sizeof(struct grt_cuda_call))
		return NULL;
	return rec->payload;
}

bool report_call_ns(const struct grt_record *rec, const struct grt_cuda_call *call, uint64_t *ns)
{
	if (!grt_cuda_call_returned(call) || call->return_ns < rec->hdr.ts_ns)
		return false;
	*ns = call->return_ns - rec->hdr.ts_ns;
	return true;
}

bool report_call_failed(const struct grt_cuda_call *call)
{
	return grt_cuda_call_returned(call) && call->ret != 0;
}

void report_json_stats(struct json_writer *w, struct grt_stats *s)
{
	jw_begin_object(w);
	jw_field_u64(w, "count", s->count);
	jw_field_u64(w, "total", s->total);
	jw_field_u64(w, "min", s->count ? s->min : 0);
	jw_field_u64(w, "max", s->max);
	jw_key(w, "mean");
	jw_f64(w, grt_stats_mean(s));
	jw_field_u64(w, "p50", grt_stats_percentile(s, 50));
	jw_field_u64(w, "p90", grt_stats_percentile(s, 90));
	jw_field_u64(w, "p99", grt_stats_percentile(s, 99));
	jw_end_object(w);
}

const char *report_format_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	int unit = -1;

	if (bytes < 1024) {
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	while (v >= 1024.0 && unit < 5) {
		v /= 1024.0;
		unit++;
	}
	snprintf(buf, len, "%.2f %s", v, units[unit]);
	return buf;
}

/*
 * Walks "k=v,k=v", validating every item (-EINVAL at the first malformed
 * one); when want names a key present in the list, stores its value.
 */
/*
 * Items are KEY=VALUE; an item without '=' continues the previous key (the
 * jobs section's "queue-wait=50%,500us"). Only the wanted key's value must be
 * a plain number; other keys belong to other sections, which check them.
 */
static int threshold_walk(const char *list, const char *want, double *found, int *hit)
{
	const char *at = list;
	bool any_key = false;

	while (*at) {
		const char *end = strchr(at, ','), *eq;
		size_t item_len = end ? (size_t)(end - at) : strlen(at);
		char value[64];
		double v;

		eq = memchr(at, '=', item_len);
		if (!item_len || (!eq && !any_key) || (eq && (eq == at || at + item_len == eq + 1)))
			return -EINVAL;
		any_key |= eq != NULL;
		if (eq && want && strlen(want) == (size_t)(eq - at) && !strncmp(at, want, (size_t)(eq - at))) {
			if ((size_t)(at + item_len - eq - 1) >= sizeof(value))
				return -EINVAL;
			memcpy(value, eq + 1, (size_t)(at + item_len - eq - 1));
			value[at + item_len - eq - 1] = 0;
			if (num_parse_double(value, 0, REPORT_THRESHOLD_MAX, &v))
				return -EINVAL;
			*found = v;
			*hit = 1;
		}
		at += item_len;
		if (*at == ',')
			at++;
	}
	return 0;
}

int report_threshold(const char *list, const char *key, double *value)
{
	int hit = 0, err;

	if (!list)
		return 0;
	err = threshold_walk(list, key, value, &hit);
	return err ? err : hit;
}

int report_threshold_check(const char *list)
{
	int hit = 0;
	double unused;

	return list ? threshold_walk(list, NULL, &unused, &hit) : 0;
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

void name_table_init(struct name_table *t)
{
	memset(t, 0, sizeof(*t));
	u64_map_init(&t->by_hash);
}

void name_table_destroy(struct name_table *t)
{
	for (size_t i = 0; i < t->count; i++)
		free(t->names[i]);
	free(t->names);
	free(t->next_same_hash);
	u64_map_destroy(&t->by_hash);
	memset(t, 0, sizeof(*t));
}

long name_table_find(const struct name_table *t, const char *name)
{
	uint64_t first;

	if (!u64_map_get(&t->by_hash, fnv1a(name), &first))
		return -1;
	for (uint64_t i = first; i; i = t->next_same_hash[i - 1])
		if (!strcmp(t->names[i - 1], name))
			return (long)(i - 1);
	return -1;
}

static int name_table_grow(struct name_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 16;
	char **names = realloc(t->names, cap * sizeof(*names));
	uint32_t *next;

	if (!names)
		return -ENOMEM;
	t->names = names;
	next = realloc(t->next_same_hash, cap * sizeof(*next));
	if (!next)
		return -ENOMEM;
	t->next_same_hash = next;
	t->cap = cap;
	return 0;
}

long name_table_intern(struct name_table *t, const char *name)
{
	long found = name_table_find(t, name);
	uint64_t hash = fnv1a(name), first = 0;
	char *copy;

	if (found >= 0)
		return found;
	if (t->count == t->cap && name_table_grow(t))
		return -ENOMEM;
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	u64_map_get(&t->by_hash, hash, &first);
	if (u64_map_put(&t->by_hash, hash, t->count + 1)) {
		free(copy);
		return -ENOMEM;
	}
	t->names[t->count] = copy;
	t->next_same_hash[t->count] = (uint32_t)first;
	return (long)t->count++;
}

void pid_comms_init(struct pid_comms *c)
{
	u64_map_init(&c->by_pid);
}

void pid_comms_destroy(struct pid_comms *c)
{
	uint64_t text;

	for (size_t i = 0; u64_map_iter(&c->by_pid, &i, NULL, &text);)
		free((char *)(uintptr_t)text);
	u64_map_destroy(&c->by_pid);
}

static void pid_comms_set(struct pid_comms *c, uint32_t pid, const char *name, bool replace)
{
	uint64_t old = 0;
	char *copy;

	if (!name || !*name)
		return;
	if (u64_map_get(&c->by_pid, pid, &old) &&
	    (!replace || !strcmp((const char *)(uintptr_t)old, name)))
		return;
	copy = strdup(name);
	if (!copy || u64_map_put(&c->by_pid, pid, (uintptr_t)copy)) {
		free(copy);
		c->out_of_memory = true; /* the report would print "?": not the whole answer */
		return;
	}
	free((char *)(uintptr_t)old);
}

void pid_comms_on_record(struct pid_comms *c, const struct grt_record *rec,
			 const struct grt_strings *strings)
{
	const struct grt_cuda_call *call;

	if (rec->hdr.type == GRT_REC_PROCESS) {
		const struct grt_process_rec *p = rec->payload;

		pid_comms_set(c, rec->hdr.pid, grt_strings_get(strings, p->comm_str), true);
	} else if ((call = report_cuda_call(rec))) {
		pid_comms_set(c, rec->hdr.pid, grt_strings_get(strings, call->comm_str), false);
	}
}

const char *pid_comms_get(const struct pid_comms *c, uint32_t pid)
{
	uint64_t text;

	return u64_map_get(&c->by_pid, pid, &text) ? (const char *)(uintptr_t)text : "?";
}
