/* A binary min-heap over a plain array of structs ordered by a uint64_t field in each. */
#include "min_heap.h"

#include <string.h>

/*
 * Sifting moves a hole instead of swapping: each level copies one element,
 * not three. The element in motion waits in a local buffer (pop: in the
 * slot just vacated past the end), so the comparisons and the resulting
 * order are exactly those of swapping.
 */
#define HOLD_MAX 64

static unsigned char *at(void *heap, uint32_t i, size_t elem)
{
	return (unsigned char *)heap + (size_t)i * elem;
}

static uint64_t key_of(const unsigned char *e, size_t key_off)
{
	uint64_t k;

	memcpy(&k, e + key_off, sizeof(k));
	return k;
}

static uint64_t key_at(void *heap, uint32_t i, size_t elem, size_t key_off)
{
	return key_of(at(heap, i, elem), key_off);
}

static void swap(void *heap, uint32_t i, uint32_t j, size_t elem)
{
	unsigned char *a = at(heap, i, elem), *b = at(heap, j, elem);
	unsigned char t[32];

	while (elem) {
		size_t n = elem < sizeof(t) ? elem : sizeof(t);

		memcpy(t, a, n);
		memcpy(a, b, n);
		memcpy(b, t, n);
		a += n;
		b += n;
		elem -= n;
	}
}

void grt_min_heap_up(void *heap, uint32_t len, size_t elem, size_t key_off)
{
	unsigned char hold[HOLD_MAX];
	uint32_t i = len - 1;
	uint64_t key = key_at(heap, i, elem, key_off);

	if (elem > sizeof(hold)) {
		while (i && key_at(heap, (i - 1) / 2, elem, key_off) > key) {
			swap(heap, (i - 1) / 2, i, elem);
			i = (i - 1) / 2;
		}
		return;
	}
	if (!i || key_at(heap, (i - 1) / 2, elem, key_off) <= key)
		return;
	memcpy(hold, at(heap, i, elem), elem);
	while (i && key_at(heap, (i - 1) / 2, elem, key_off) > key) {
		memcpy(at(heap, i, elem), at(heap, (i - 1) / 2, elem), elem);
		i = (i - 1) / 2;
	}
	memcpy(at(heap, i, elem), hold, elem);
}

void grt_min_heap_pop(void *heap, uint32_t *len, size_t elem, size_t key_off, void *top)
{
	uint32_t n = --*len, i = 0;
	/* the last element sinks from the root; it stays where it was until it lands */
	const unsigned char *last = at(heap, n, elem);
	uint64_t key = key_of(last, key_off);

	memcpy(top, heap, elem);
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = l;

		if (l >= n)
			break;
		if (r < n && key_at(heap, r, elem, key_off) < key_at(heap, l, elem, key_off))
			m = r;
		if (key_at(heap, m, elem, key_off) >= key)
			break;
		memcpy(at(heap, i, elem), at(heap, m, elem), elem);
		i = m;
	}
	if (i != n)
		memcpy(at(heap, i, elem), last, elem);
}
