/* A binary min-heap over a plain array of structs ordered by a uint64_t field in each. */
#include "min_heap.h"

#include <string.h>

static unsigned char *at(void *heap, uint32_t i, size_t elem)
{
	return (unsigned char *)heap + (size_t)i * elem;
}

static uint64_t key_at(void *heap, uint32_t i, size_t elem, size_t key_off)
{
	uint64_t k;

	memcpy(&k, at(heap, i, elem) + key_off, sizeof(k));
	return k;
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
	uint32_t i = len - 1;

	while (i && key_at(heap, (i - 1) / 2, elem, key_off) > key_at(heap, i, elem, key_off)) {
		swap(heap, (i - 1) / 2, i, elem);
		i = (i - 1) / 2;
	}
}

void grt_min_heap_pop(void *heap, uint32_t *len, size_t elem, size_t key_off, void *top)
{
	uint32_t n = --*len, i = 0;

	memcpy(top, heap, elem);
	memmove(heap, at(heap, n, elem), elem);
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < n && key_at(heap, l, elem, key_off) < key_at(heap, m, elem, key_off))
			m = l;
		if (r < n && key_at(heap, r, elem, key_off) < key_at(heap, m, elem, key_off))
			m = r;
		if (m == i)
			break;
		swap(heap, i, m, elem);
		i = m;
	}
}
