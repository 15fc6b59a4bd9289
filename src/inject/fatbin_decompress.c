/* Decompressors for fat binary entries: NVIDIA's LZ4 block entries and zstd entries. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <zstd.h>
#include "fatbin_decompress.h"

/*
 * An LZ4 length: the 4-bit field, extended by bytes while they are 255.
 * Returns false when the extension runs off the input or overflows.
 */
static bool lz4_read_length(const uint8_t *in, size_t in_len, size_t *pos, size_t *length)
{
	uint8_t more;

	if (*length != 15)
		return true;
	do {
		if (*pos >= in_len)
			return false;
		more = in[(*pos)++];
		if (*length > SIZE_MAX - 255)
			return false;
		*length += more;
	} while (more == 255);
	return true;
}

/*
 * Sequences of (token, literals, 2-byte offset, match); the last sequence has
 * literals only. Every copy is checked against both buffers before it runs.
 */
int lz4_block_decode(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len)
{
	size_t ip = 0, op = 0;

	while (ip < in_len) {
		uint8_t token = in[ip++];
		size_t literals = token >> 4, match = token & 15, offset;

		if (!lz4_read_length(in, in_len, &ip, &literals))
			return -EINVAL;
		if (literals > in_len - ip || literals > out_len - op)
			return -EINVAL;
		memcpy(out + op, in + ip, literals);
		ip += literals;
		op += literals;
		if (ip == in_len)
			break; /* the last sequence ends after its literals */
		if (in_len - ip < 2)
			return -EINVAL;
		offset = in[ip] | (size_t)in[ip + 1] << 8;
		ip += 2;
		if (offset == 0 || offset > op)
			return -EINVAL;
		if (!lz4_read_length(in, in_len, &ip, &match))
			return -EINVAL;
		if (match > SIZE_MAX - 4)
			return -EINVAL;
		match += 4;
		if (match > out_len - op)
			return -EINVAL;
		/* Overlapping copies repeat the pattern, so copy byte by byte. */
		for (size_t i = 0; i < match; i++, op++)
			out[op] = out[op - offset];
	}
	return op == out_len ? 0 : -EINVAL;
}

int zstd_frame_decode(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len)
{
	size_t got = ZSTD_decompress(out, out_len, in, in_len);

	if (ZSTD_isError(got) || got != out_len)
		return -EINVAL;
	return 0;
}
