/* u64_map against a plain reference model: inserts, replaces, removes, probe runs, resizes,
 * iteration. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "test_util.h"
#include "common/u64_map.h"

/* The reference: a flat list, slow and obviously right. */
struct ref_map {
	uint64_t *keys, *values;
	size_t n, cap;
};

static ssize_t ref_find(const struct ref_map *r, uint64_t key)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->keys[i] == key)
			return (ssize_t)i;
	return -1;
}

static void ref_put(struct ref_map *r, uint64_t key, uint64_t value)
{
	ssize_t i = ref_find(r, key);

	if (i >= 0) {
		r->values[i] = value;
		return;
	}
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->keys = realloc(r->keys, r->cap * sizeof(uint64_t));
		r->values = realloc(r->values, r->cap * sizeof(uint64_t));
		if (!r->keys || !r->values)
			abort();
	}
	r->keys[r->n] = key;
	r->values[r->n++] = value;
}

static bool ref_remove(struct ref_map *r, uint64_t key)
{
	ssize_t i = ref_find(r, key);

	if (i < 0)
		return false;
	r->keys[i] = r->keys[--r->n];
	r->values[i] = r->values[r->n];
	return true;
}

static void ref_free(struct ref_map *r)
{
	free(r->keys);
	free(r->values);
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Iteration yields every live key exactly once with its value, and nothing else. */
static void check_same(const struct u64_map *m, const struct ref_map *r)
{
	bool *seen = calloc(r->n + 1, 1);
	uint64_t k, v;
	size_t count = 0;

	CHECK_EQ_U64(u64_map_size(m), r->n);
	for (size_t pos = 0; u64_map_iter(m, &pos, &k, &v);) {
		ssize_t i = ref_find(r, k);

		count++;
		CHECK(i >= 0);
		if (i < 0)
			continue;
		CHECK(!seen[i]);
		seen[i] = true;
		CHECK_EQ_U64(v, r->values[i]);
	}
	CHECK_EQ_U64(count, r->n);
	for (size_t i = 0; i < r->n; i++) {
		CHECK(u64_map_get(m, r->keys[i], &v));
		CHECK_EQ_U64(v, r->values[i]);
	}
	free(seen);
}

/* Random puts, gets and removes over a key space small enough for many repeats. */
static void random_ops(uint64_t seed, uint64_t key_space, size_t ops)
{
	struct u64_map m;
	struct ref_map r = {0};
	uint64_t s = seed, v;

	u64_map_init(&m);
	for (size_t i = 0; i < ops && test_failures_in_case < 10; i++) {
		uint64_t op = rng_next(&s) % 10, key = rng_next(&s) % key_space,
			 value = rng_next(&s);

		/* keys that share their low bits, like page-aligned addresses */
		if (rng_next(&s) % 2)
			key <<= 12;
		if (op < 5) {
			CHECK(u64_map_put(&m, key, value) == 0);
			ref_put(&r, key, value);
		} else if (op < 8) {
			bool in_ref = ref_find(&r, key) >= 0;
			uint64_t want = in_ref ? r.values[ref_find(&r, key)] : 0;

			v = 0xdead;
			CHECK(u64_map_remove(&m, key, &v) == in_ref);
			if (in_ref)
				CHECK_EQ_U64(v, want);
			ref_remove(&r, key);
		} else {
			ssize_t at = ref_find(&r, key);

			CHECK(u64_map_get(&m, key, &v) == (at >= 0));
			if (at >= 0)
				CHECK_EQ_U64(v, r.values[at]);
			CHECK(u64_map_get(&m, key, NULL) == (at >= 0));
		}
		if (i % 10000 == 0)
			check_same(&m, &r);
	}
	check_same(&m, &r);
	u64_map_destroy(&m);
	ref_free(&r);
}

static void test_random_small_key_space(void)
{
	random_ops(1, 64, 50000);
}

static void test_random_medium_key_space(void)
{
	random_ops(2, 5000, 100000);
}

static void test_random_large_key_space(void)
{
	random_ops(3, UINT64_MAX >> 12, 50000);
}

/* Removing everything and inserting new keys, over and over: tombstones must not pile up. */
static void test_tombstone_churn(void)
{
	struct u64_map m;
	uint64_t v;
	size_t max_capacity = 0;

	u64_map_init(&m);
	for (uint64_t round = 0; round < 2000; round++) {
		for (uint64_t k = 0; k < 40; k++)
			CHECK(u64_map_put(&m, round * 1000 + k, k) == 0);
		for (uint64_t k = 0; k < 40; k++)
			CHECK(u64_map_remove(&m, round * 1000 + k, NULL));
		CHECK_EQ_U64(u64_map_size(&m), 0);
		if (m.capacity > max_capacity)
			max_capacity = m.capacity;
	}
	/* 40 live keys at most: the table stays small instead of growing with every round */
	CHECK(max_capacity <= 256);
	CHECK(!u64_map_get(&m, 1999 * 1000 + 5, &v));
	CHECK(u64_map_put(&m, 7, 8) == 0);
	CHECK(u64_map_get(&m, 7, &v) && v == 8);
	u64_map_destroy(&m);
}

/* Many keys: resizes keep every entry; replacing keeps the size. */
static void test_resize_and_replace(void)
{
	struct u64_map m;
	uint64_t v;
	const uint64_t n = 200000;

	u64_map_init(&m);
	CHECK(!u64_map_get(&m, 0, &v)); /* an empty map has no table yet */
	for (size_t pos = 0; u64_map_iter(&m, &pos, NULL, NULL);)
		CHECK(0);
	for (uint64_t k = 0; k < n; k++)
		CHECK(u64_map_put(&m, k * 4096, k) == 0);
	CHECK_EQ_U64(u64_map_size(&m), n);
	CHECK((m.capacity & (m.capacity - 1)) == 0);
	CHECK(m.occupied * 4 < m.capacity * 3);
	for (uint64_t k = 0; k < n; k++)
		CHECK(u64_map_put(&m, k * 4096, k + 1) == 0);
	CHECK_EQ_U64(u64_map_size(&m), n);
	for (uint64_t k = 0; k < n && test_failures_in_case < 5; k++)
		CHECK(u64_map_get(&m, k * 4096, &v) && v == k + 1);
	CHECK(!u64_map_get(&m, 4095, &v));
	u64_map_destroy(&m);
	CHECK_EQ_U64(m.capacity, 0);
	/* a destroyed map is an empty map again */
	CHECK(u64_map_put(&m, 1, 2) == 0);
	CHECK_EQ_U64(u64_map_size(&m), 1);
	u64_map_destroy(&m);
}


/*
 * A probe run that wraps past the table's end, with entries of several homes:
 * removing any one of them moves the right followers back, so every other
 * key is still found and a removed one is not.
 */
static void test_removal_shifts_wrapped_runs(void)
{
	uint64_t keys[8], v;
	size_t n = 0;

	/* homes 14, 14, 15, 15, 0, 14, 15, 1 in a 16-slot table: one run from 14 round to 3 */
	static const size_t homes[8] = { 14, 14, 15, 15, 0, 14, 15, 1 };

	for (uint64_t k = 1; n < 8; k++)
		if (u64_map_home(k, 16) == homes[n])
			keys[n++] = k;
	for (size_t drop = 0; drop < 8; drop++) {
		struct u64_map m;

		u64_map_init(&m);
		for (size_t i = 0; i < 8; i++)
			CHECK(u64_map_put(&m, keys[i], i) == 0);
		CHECK_EQ_U64(m.capacity, 16);
		CHECK(u64_map_remove(&m, keys[drop], &v) && v == drop);
		CHECK(!u64_map_get(&m, keys[drop], NULL));
		for (size_t i = 0; i < 8; i++)
			if (i != drop)
				CHECK(u64_map_get(&m, keys[i], &v) && v == i);
		CHECK_EQ_U64(u64_map_size(&m), 7);
		u64_map_destroy(&m);
	}
}

/* Keys and values at the edges of the range are ordinary entries. */
static void test_edge_keys(void)
{
	struct u64_map m;
	uint64_t v;

	u64_map_init(&m);
	CHECK(u64_map_put(&m, 0, UINT64_MAX) == 0);
	CHECK(u64_map_put(&m, UINT64_MAX, 0) == 0);
	CHECK(u64_map_get(&m, 0, &v) && v == UINT64_MAX);
	CHECK(u64_map_get(&m, UINT64_MAX, &v) && v == 0);
	CHECK(u64_map_remove(&m, 0, NULL));
	CHECK(!u64_map_remove(&m, 0, NULL));
	CHECK(u64_map_get(&m, UINT64_MAX, NULL));
	CHECK_EQ_U64(u64_map_size(&m), 1);
	u64_map_destroy(&m);
}

int main(void)
{
	RUN_TEST(test_random_small_key_space);
	RUN_TEST(test_random_medium_key_space);
	RUN_TEST(test_random_large_key_space);
	RUN_TEST(test_tombstone_churn);
	RUN_TEST(test_resize_and_replace);
	RUN_TEST(test_edge_keys);
	RUN_TEST(test_removal_shifts_wrapped_runs);
	return TEST_EXIT_STATUS();
}
