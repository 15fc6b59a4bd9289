/* Walking fat binaries: the wrapper, the header and its entries, with every read bounded. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fatbin.h"
#include "fatbin_decompress.h"
#include "fatbin_image.h"

/*
 * On-disk layout, little-endian, as nvcc/fatbinary (CUDA 13) write it:
 *
 * wrapper (__fatBinC_Wrapper_t), 24 bytes:
 *   u32 magic 0x466243b1, u32 version (1, or 2 for -rdc), u64 fatbin address, u64 (unused here)
 * fat binary header, 16 bytes:
 *   u32 magic 0xBA55ED50, u16 version (1), u16 header size (16), u64 bytes of entries that follow
 * entry header (64 bytes for cubins, 80 for PTX), then the payload:
 *   0x00 u16 kind (1 PTX, 2 cubin)   0x02 u16 (0x0101)    0x04 u32 header size
 *   0x08 u64 payload size (padded)   0x10 u32 compressed size (0 = not compressed)
 *   0x14 u32 options offset          0x18 u16 minor, u16 major version of the payload
 *   0x1c u32 arch (90 = sm_90)       0x20 u32 name offset, u32 name length
 *   0x28 u64 flags                   0x30 u64 (zero)     0x38 u64 uncompressed size
 * Compression is a flag: 0x2000 an LZ4 block ("--compress-mode=speed"),
 * 0x8000 a zstd frame (the default, and -Xfatbin -compress-all).
 */
#define WRAPPER_SIZE 24
#define FATBIN_HEADER_SIZE 16
#define ENTRY_MIN_HEADER 0x40
#define FLAG_LZ4 0x2000
#define FLAG_ZSTD 0x8000
/* Sizes beyond this are corrupt, not big: no device image comes near 4 GiB. */
#define FATBIN_SANE_SIZE (1ull << 32)
/*
 * An entry never expands past this: PTX of the largest libraries is far
 * smaller, and LZ4 cannot exceed 255:1, so a bigger claim is a corrupt header,
 * not a reason to allocate gigabytes.
 */
#define FATBIN_MAX_CONTENTS (1ull << 30)
#define FATBIN_MAX_RATIO 1024

static uint16_t get_u16(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const uint8_t *p)
{
	return get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

enum fatbin_image_kind fatbin_classify(const void *image, size_t max_len)
{
	const uint8_t *p = image;

	if (!image || max_len < 4)
		return FATBIN_IMAGE_UNKNOWN;
	if (get_u32(p) == FATBIN_WRAPPER_MAGIC)
		return FATBIN_IMAGE_WRAPPER;
	if (get_u32(p) == FATBIN_MAGIC)
		return FATBIN_IMAGE_FATBIN;
	if (!memcmp(p, "\177ELF", 4))
		return FATBIN_IMAGE_ELF;
	if (ptx_text_looks_valid((const char *)p, max_len))
		return FATBIN_IMAGE_PTX;
	return FATBIN_IMAGE_UNKNOWN;
}

/* Points the iterator at the fat binary header at `fb`, of which `avail` bytes are readable. */
static int iter_start(struct fatbin_iter *it, const uint8_t *fb, uint64_t avail)
{
	uint16_t header_size;
	uint64_t entries;

	if (avail < FATBIN_HEADER_SIZE || get_u32(fb) != FATBIN_MAGIC)
		return -EINVAL;
	header_size = get_u16(fb + 6);
	entries = get_u64(fb + 8);
	if (header_size < FATBIN_HEADER_SIZE || entries > FATBIN_SANE_SIZE)
		return -EINVAL;
	/* With an unknown length the header's own size is the bound. */
	if (avail == FATBIN_LEN_UNKNOWN)
		avail = header_size + entries;
	if (header_size > avail || entries > avail - header_size)
		return -EINVAL;
	it->fatbin = fb;
	it->len = avail;
	it->pos = header_size;
	it->end = header_size + entries;
	return 0;
}

int fatbin_iter_init(struct fatbin_iter *it, const void *image, size_t max_len)
{
	const uint8_t *p = image;

	memset(it, 0, sizeof(*it));
	switch (fatbin_classify(image, max_len)) {
	case FATBIN_IMAGE_FATBIN:
		return iter_start(it, p, max_len);
	case FATBIN_IMAGE_WRAPPER: {
		const uint8_t *fb;

		if (max_len < WRAPPER_SIZE)
			return -EINVAL;
		fb = (const uint8_t *)(uintptr_t)get_u64(p + 8);
		if (!fb)
			return -EINVAL;
		if (max_len == FATBIN_LEN_UNKNOWN)
			return iter_start(it, fb, FATBIN_LEN_UNKNOWN);
		/* A known length must contain what the wrapper points to. */
		uintptr_t off = (uintptr_t)fb - (uintptr_t)p;

		if ((uintptr_t)fb < (uintptr_t)p || off >= max_len)
			return -EINVAL;
		return iter_start(it, p + off, max_len - off);
	}
	default:
		return -EINVAL;
	}
}

/* Fat binaries are laid end to end (8-byte aligned) in a .nv_fatbin section: move to the next. */
static bool iter_next_fatbin(struct fatbin_iter *it)
{
	uint64_t next = (it->end + 7) & ~7ull;

	if (it->len == FATBIN_LEN_UNKNOWN || next < it->end || next >= it->len)
		return false;
	return iter_start(it, it->fatbin + next, it->len - next) == 0;
}

static void entry_fill(struct fatbin_entry *e, const uint8_t *h, uint32_t header_size,
		       uint64_t payload_size)
{
	uint16_t kind = get_u16(h);
	uint32_t compressed_size = get_u32(h + 0x10);

	memset(e, 0, sizeof(*e));
	e->raw_kind = kind;
	e->kind = kind == 1 ? FATBIN_ENTRY_PTX : kind == 2 ? FATBIN_ENTRY_ELF : FATBIN_ENTRY_OTHER;
	e->arch = get_u32(h + 0x1c);
	e->flags = get_u64(h + 0x28);
	e->compressed = (e->flags & (FLAG_LZ4 | FLAG_ZSTD)) != 0;
	e->uncompressed_size = get_u64(h + 0x38);
	e->payload = h + header_size;
	e->payload_size = payload_size;
	/* The payload is padded; a compressed stream must be decoded at its exact size. */
	if (e->compressed && compressed_size && compressed_size <= payload_size)
		e->payload_size = compressed_size;
}

int fatbin_iter_next(struct fatbin_iter *it, struct fatbin_entry *entry)
{
	const uint8_t *h;
	uint32_t header_size;
	uint64_t payload_size;

	if (!it->fatbin)
		return 0;
	while (it->pos >= it->end) {
		if (!iter_next_fatbin(it)) {
			it->fatbin = NULL;
			return 0;
		}
	}
	if (it->end - it->pos < ENTRY_MIN_HEADER)
		return -EINVAL;
	h = it->fatbin + it->pos;
	header_size = get_u32(h + 4);
	payload_size = get_u64(h + 8);
	if (header_size < ENTRY_MIN_HEADER || header_size > it->end - it->pos ||
	    payload_size > it->end - it->pos - header_size)
		return -EINVAL;
	entry_fill(entry, h, header_size, payload_size);
	entry->offset = it->pos;
	it->pos += header_size + payload_size;
	return 1;
}

int fatbin_entry_contents(const struct fatbin_entry *e, char **out, size_t *len)
{
	uint64_t size = e->compressed ? e->uncompressed_size : e->payload_size;
	char *buf;
	int err = 0;

	*out = NULL;
	*len = 0;
	if (size >= FATBIN_MAX_CONTENTS || (e->compressed && !size) ||
	    (e->compressed && size / FATBIN_MAX_RATIO > e->payload_size))
		return -EINVAL;
	buf = malloc(size + 1);
	if (!buf)
		return -ENOMEM;
	if (!e->compressed)
		memcpy(buf, e->payload, size);
	else if (e->flags & FLAG_ZSTD)
		err = zstd_frame_decode(e->payload, e->payload_size, (uint8_t *)buf, size);
	else
		err = lz4_block_decode(e->payload, e->payload_size, (uint8_t *)buf, size);
	if (err) {
		free(buf);
		return err;
	}
	buf[size] = 0;
	*out = buf;
	*len = size;
	return 0;
}
