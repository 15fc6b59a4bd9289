/* Growing a heap-allocated array by doubling. */
#include "grow_array.h"

#include <errno.h>
#include <stdlib.h>

int grt_grow_array(void **arr, uint32_t *cap, size_t elem, uint32_t need)
{
	uint32_t n = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*arr, n * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}
