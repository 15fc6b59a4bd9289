/* CRC-32C (Castagnoli, reflected polynomial 0x82f63b78): hardware where there is one, else a table. */
#include <stdbool.h>
#include <string.h>
#include "common/crc32c.h"

#define POLY 0x82f63b78u

static uint32_t table[8][256];
static bool table_ready;

static void make_table(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
		table[0][n] = c;
	}
	for (uint32_t n = 0; n < 256; n++)
		for (int t = 1; t < 8; t++)
			table[t][n] = (table[t - 1][n] >> 8) ^ table[0][table[t - 1][n] & 0xff];
	table_ready = true;
}

/* Eight bytes a step ("slicing by 8"), little-endian loads. */
static uint32_t crc_table(uint32_t crc, const unsigned char *p, size_t len)
{
	if (!table_ready)
		make_table();
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		w ^= crc;
		crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^ table[5][(w >> 16) & 0xff] ^
		      table[4][(w >> 24) & 0xff] ^ table[3][(w >> 32) & 0xff] ^
		      table[2][(w >> 40) & 0xff] ^ table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
	}
	while (len--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t crc, const unsigned char *p,
							      size_t len)
{
	uint64_t c = crc;

	/* the writer sums whole buffers: 32 bytes a turn of the loop, fewer branches */
	for (; len >= 32; p += 32, len -= 32) {
		uint64_t w[4];

		memcpy(w, p, sizeof(w));
		c = __builtin_ia32_crc32di(c, w[0]);
		c = __builtin_ia32_crc32di(c, w[1]);
		c = __builtin_ia32_crc32di(c, w[2]);
		c = __builtin_ia32_crc32di(c, w[3]);
	}
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		c = __builtin_ia32_crc32di(c, w);
	}
	crc = (uint32_t)c;
	while (len--)
		crc = __builtin_ia32_crc32qi(crc, *p++);
	return crc;
}
#endif

/* The implementation for this CPU, chosen at the first call (a pointer store is atomic enough). */
static uint32_t (*crc_impl)(uint32_t crc, const unsigned char *p, size_t len);

uint32_t crc32c_update(uint32_t crc, const void *data, size_t len)
{
	if (!crc_impl) {
		crc_impl = crc_table;
#if defined(__x86_64__)
		if (__builtin_cpu_supports("sse4.2"))
			crc_impl = crc_sse42;
#endif
	}
	return ~crc_impl(~crc, data, len);
}
