/* The min-heap against the plain swapping heap it replaced: the same layout after every step. */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include "common/min_heap.h"
#include "test_util.h"

struct small {
	uint64_t id;
	uint64_t key;	/* not first: the key offset is honoured */
	uint32_t tag;
};

struct big {
	uint64_t key;
	unsigned char pad[72];	/* larger than the heap's holding buffer */
	uint64_t id;
};

/* The reference: swap-based sifting, as simple as it gets. */
static uint64_t ref_key(unsigned char *h, uint32_t i, size_t elem, size_t off)
{
	uint64_t k;

	memcpy(&k, h + i * elem + off, sizeof(k));
	return k;
}

static void ref_swap(unsigned char *h, uint32_t i, uint32_t j, size_t elem)
{
	unsigned char t[128];

	memcpy(t, h + i * elem, elem);
	memcpy(h + i * elem, h + j * elem, elem);
	memcpy(h + j * elem, t, elem);
}

static void ref_up(unsigned char *h, uint32_t len, size_t elem, size_t off)
{
	for (uint32_t i = len - 1; i && ref_key(h, (i - 1) / 2, elem, off) > ref_key(h, i, elem, off);
	     i = (i - 1) / 2)
		ref_swap(h, (i - 1) / 2, i, elem);
}

static void ref_pop(unsigned char *h, uint32_t *len, size_t elem, size_t off, void *top)
{
	uint32_t n = --*len, i = 0;

	memcpy(top, h, elem);
	memmove(h, h + n * elem, elem);
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < n && ref_key(h, l, elem, off) < ref_key(h, m, elem, off))
			m = l;
		if (r < n && ref_key(h, r, elem, off) < ref_key(h, m, elem, off))
			m = r;
		if (m == i)
			break;
		ref_swap(h, i, m, elem);
		i = m;
	}
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Random pushes and pops with many equal keys; both heaps must stay byte for byte equal. */
static void same_as_reference(size_t elem, size_t key_off, size_t id_off, uint64_t seed)
{
	enum { CAP = 3000 };
	unsigned char *h = calloc(CAP, elem), *ref = calloc(CAP, elem), top[128], ref_top[128];
	uint32_t len = 0, ref_len = 0, diverged = 0;
	uint64_t last = 0, id = 0;

	for (int step = 0; step < 40000; step++) {
		bool push = len < CAP && (len == 0 || rng_next(&seed) % 100 < 55);

		if (push) {
			uint64_t key = rng_next(&seed) % 50; /* ties everywhere */

			memset(h + len * elem, 0, elem);
			memcpy(h + len * elem + key_off, &key, 8);
			id++;
			memcpy(h + len * elem + id_off, &id, 8);
			memcpy(ref + ref_len * elem, h + len * elem, elem);
			grt_min_heap_up(h, ++len, elem, key_off);
			ref_up(ref, ++ref_len, elem, key_off);
		} else {
			grt_min_heap_pop(h, &len, elem, key_off, top);
			ref_pop(ref, &ref_len, elem, key_off, ref_top);
			diverged += memcmp(top, ref_top, elem) != 0;
		}
		diverged += len != ref_len || memcmp(h, ref, len * elem) != 0;
		if (diverged)
			break;
	}
	CHECK_EQ_U64(diverged, 0);
	/* and drained, the keys come out in order */
	for (last = 0; len;) {
		grt_min_heap_pop(h, &len, elem, key_off, top);
		CHECK(ref_key(top, 0, elem, key_off) >= last);
		last = ref_key(top, 0, elem, key_off);
	}
	free(h);
	free(ref);
}

static void test_small_elements(void)
{
	same_as_reference(sizeof(struct small), offsetof(struct small, key), offsetof(struct small, id),
			  1);
}

static void test_big_elements(void)
{
	same_as_reference(sizeof(struct big), offsetof(struct big, key), offsetof(struct big, id), 2);
}

int main(void)
{
	RUN_TEST(test_small_elements);
	RUN_TEST(test_big_elements);
	return TEST_EXIT_STATUS();
}
