/* Keyed statistics tables and duration lists shared by the kernel report sections. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "analysis/kernel_stats.h"
#include "trace/grt_reader.h"
#include "trace/records_core.h"

void kstat_init(struct kstat_table *t)
{
	memset(t, 0, sizeof(*t));
	u64_map_init(&t->index);
}

void kstat_free(struct kstat_table *t)
{
	u64_map_destroy(&t->index);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

struct kstat *kstat_get(struct kstat_table *t, uint64_t key)
{
	uint64_t row;

	if (u64_map_get(&t->index, key, &row))
		return &t->rows[row];
	if (t->count == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct kstat *grown = realloc(t->rows, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		t->rows = grown;
		t->cap = cap;
	}
	if (u64_map_put(&t->index, key, t->count))
		return NULL;
	t->rows[t->count] = (struct kstat){ .key = key };
	return &t->rows[t->count++];
}

void kstat_add(struct kstat *s, uint64_t ns, bool error)
{
	s->count++;
	s->total_ns += ns;
	if (ns > s->max_ns)
		s->max_ns = ns;
	s->errors += error;
}

static int by_total_desc(const void *a, const void *b)
{
	const struct kstat *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

void kstat_sort(struct kstat_table *t)
{
	if (t->count)
		qsort(t->rows, t->count, sizeof(t->rows[0]), by_total_desc);
	u64_map_destroy(&t->index);
	u64_map_init(&t->index);
}

void kstat_json_times(struct json_writer *w, const struct kstat *s, const char *errors_key,
		      const char *aux_key)
{
	jw_field_u64(w, "count", s->count);
	jw_field_u64(w, "total_ns", s->total_ns);
	jw_field_u64(w, "max_ns", s->max_ns);
	jw_key(w, errors_key);
	jw_u64(w, s->errors);
	jw_key(w, aux_key);
	jw_u64(w, s->aux);
}

void kstat_text_more(FILE *out, size_t count, size_t rows)
{
	if (count > rows)
		fprintf(out, "  ... %zu more (--top 0 shows all)\n", count - rows);
}

int duration_list_push(struct duration_list *d, uint64_t ns)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		uint64_t *grown = realloc(d->v, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		d->v = grown;
		d->cap = cap;
	}
	d->v[d->n++] = ns;
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t duration_list_percentile(struct duration_list *d, double p)
{
	size_t rank;

	if (!d->n)
		return 0;
	qsort(d->v, d->n, sizeof(d->v[0]), u64_cmp);
	rank = (size_t)(p / 100.0 * d->n + 0.999999);
	if (rank < 1)
		rank = 1;
	return d->v[(rank > d->n ? d->n : rank) - 1];
}

void duration_list_free(struct duration_list *d)
{
	free(d->v);
	memset(d, 0, sizeof(*d));
}

void comm_table_init(struct comm_table *c)
{
	memset(c, 0, sizeof(*c));
	u64_map_init(&c->index);
}

void comm_table_free(struct comm_table *c)
{
	u64_map_destroy(&c->index);
	free(c->names);
	memset(c, 0, sizeof(*c));
}

void comm_table_note(struct comm_table *c, const struct grt_record *rec, const struct grt_strings *strings)
{
	const struct grt_process_rec *p = rec->payload;
	const char *name;
	uint64_t slot;

	if (rec->hdr.type != GRT_REC_PROCESS || !(name = grt_strings_get(strings, p->comm_str)))
		return;
	if (!u64_map_get(&c->index, rec->hdr.pid, &slot)) {
		if (c->n == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 32;
			char(*grown)[32] = realloc(c->names, cap * sizeof(*grown));

			if (!grown)
				return;
			c->names = grown;
			c->cap = cap;
		}
		if (u64_map_put(&c->index, rec->hdr.pid, c->n))
			return;
		slot = c->n++;
	}
	snprintf(c->names[slot], sizeof(c->names[slot]), "%s", name);
}

const char *comm_table_get(const struct comm_table *c, uint32_t pid)
{
	uint64_t slot;

	return u64_map_get(&c->index, pid, &slot) ? c->names[slot] : "-";
}
