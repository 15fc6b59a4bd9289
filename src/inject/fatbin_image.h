/* Small helpers for the images fatbin.c meets: PTX text checks and ELF section lookup. */
#ifndef GRT_FATBIN_IMAGE_H
#define GRT_FATBIN_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when the text (at most max_len bytes) starts, after blanks and comments, with ".version". */
bool ptx_text_looks_valid(const char *text, size_t max_len);

/* The NN of the first ".target sm_NN" in the text, or 0. */
unsigned ptx_text_target_arch(const char *text, size_t len);

/*
 * Finds section `name` in a 64-bit little-endian ELF image of `len` bytes.
 * Returns 0 with the offset and size inside the image, -ENOENT when absent, -EINVAL
 * when the ELF headers do not fit.
 */
int elf_find_section(const uint8_t *elf, size_t len, const char *name, uint64_t *off,
		     uint64_t *size);

#endif
