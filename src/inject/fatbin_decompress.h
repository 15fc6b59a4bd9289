/* Decompressors for fat binary entries: NVIDIA's LZ4 block entries and zstd entries. */
#ifndef GRT_FATBIN_DECOMPRESS_H
#define GRT_FATBIN_DECOMPRESS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decodes one LZ4 block (no frame header) of `in_len` bytes into exactly
 * `out_len` bytes. Returns 0, or -EINVAL when the block is corrupt, would
 * write past out_len, reads past in_len, or produces fewer bytes.
 */
int lz4_block_decode(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len);

/* Decodes a zstd frame into exactly `out_len` bytes; 0 or -EINVAL. */
int zstd_frame_decode(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len);

#endif
