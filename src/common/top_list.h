/* A bounded list kept largest first: where a new entry goes, the smaller ones moved down. */
#ifndef GRT_TOP_LIST_H
#define GRT_TOP_LIST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * rows holds *n of cap entries of size bytes, by value(row) largest first.
 * Returns the slot an entry of value v takes (after the entries equal to it,
 * so the first kept of a tie stays first), having moved the smaller ones down
 * one and dropped the last when the list was full; -1 when it is full of
 * entries at least as large. The caller writes the entry into the slot.
 */
static inline long top_list_slot(void *rows, size_t size, uint32_t *n, uint32_t cap, uint64_t v,
				 uint64_t (*value)(const void *row))
{
	char *base = rows;
	uint32_t end = *n, at;

	if (end == cap) {
		if (!cap || value(base + (size_t)(end - 1) * size) >= v)
			return -1;
		end--;
	} else {
		(*n)++;
	}
	at = end;
	while (at && value(base + (size_t)(at - 1) * size) < v)
		at--;
	memmove(base + (size_t)(at + 1) * size, base + (size_t)at * size, (size_t)(end - at) * size);
	return at;
}

#endif
