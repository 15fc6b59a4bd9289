/* Finding PTX in what an application hands the driver: fat binaries, PTX, cubins, files. */
#ifndef GRT_FATBIN_H
#define GRT_FATBIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * An "image" is what cuModuleLoadData / cuModuleLoadFatBinary / cuLibraryLoadData
 * receive: a fat binary wrapper (__fatBinC_Wrapper_t, magic 0x466243b1, as
 * registered by the CUDA runtime), a fat binary (magic 0xBA55ED50), a cubin
 * (ELF), or NUL-terminated PTX text. The driver is given no length, so
 * `max_len` may be FATBIN_LEN_UNKNOWN: the parser then trusts the sizes the
 * headers declare (as the driver does). With a real length (files, fuzzing)
 * nothing outside [image, image + max_len) is ever read.
 */
#define FATBIN_LEN_UNKNOWN SIZE_MAX

#define FATBIN_WRAPPER_MAGIC 0x466243b1u
#define FATBIN_MAGIC 0xBA55ED50u

enum fatbin_image_kind {
	FATBIN_IMAGE_UNKNOWN = 0,
	FATBIN_IMAGE_WRAPPER, /* __fatBinC_Wrapper_t pointing to a fat binary */
	FATBIN_IMAGE_FATBIN,  /* fat binary header + entries */
	FATBIN_IMAGE_PTX,     /* PTX text */
	FATBIN_IMAGE_ELF,     /* cubin: machine code only */
};

enum fatbin_entry_kind {
	FATBIN_ENTRY_PTX = 1,
	FATBIN_ENTRY_ELF = 2,	/* cubin */
	FATBIN_ENTRY_OTHER = 3, /* anything else (e.g. LTO IR): skipped */
};

/* One entry of a fat binary; pointers point into the image. */
struct fatbin_entry {
	enum fatbin_entry_kind kind;
	uint16_t raw_kind; /* the kind field as stored */
	unsigned arch;	   /* 90 for sm_90 */
	uint64_t flags;	   /* as stored; FATBIN_FLAG_* */
	bool compressed;
	const uint8_t *payload;	    /* stored bytes (compressed when `compressed`) */
	uint64_t payload_size;	    /* stored bytes available at payload */
	uint64_t uncompressed_size; /* 0 when unknown */
	uint64_t offset;	    /* of the entry header from the fat binary header */
};

/* Iterates over the entries of the fat binary in an image (wrapper or fat binary). */
struct fatbin_iter {
	const uint8_t *fatbin; /* the fat binary header */
	uint64_t len;	       /* bytes readable from `fatbin` (later fat binaries included) */
	uint64_t pos;	       /* next entry header, from `fatbin` */
	uint64_t end;	       /* end of this fat binary's entries, from `fatbin` */
};

/* Classifies an image by its first bytes. */
enum fatbin_image_kind fatbin_classify(const void *image, size_t max_len);

/*
 * Starts iterating over a wrapper or a fat binary image. Returns 0, or
 * -EINVAL (not a fat binary / wrapper, or a header that does not fit).
 */
int fatbin_iter_init(struct fatbin_iter *it, const void *image, size_t max_len);
/* Returns 1 and fills *entry, 0 at the end, or -EINVAL on a malformed entry. */
int fatbin_iter_next(struct fatbin_iter *it, struct fatbin_entry *entry);

/*
 * The entry's contents, decompressed when needed, in a new malloc'd buffer
 * with a NUL after the last byte (*len excludes it; PTX text stops at its
 * first NUL). Returns 0, -ENOMEM or -EINVAL (corrupt compressed data).
 */
int fatbin_entry_contents(const struct fatbin_entry *entry, char **out, size_t *len);

/* PTX found in an image, or why none was. */
struct fatbin_ptx {
	char *text;    /* malloc'd, NUL-terminated; fatbin_ptx_free() it */
	size_t len;    /* strlen(text) */
	unsigned arch; /* sm_XX of the entry (PTX text images: its .target) */
	bool was_compressed;
	char reason[128]; /* on failure: one line, e.g. "no PTX (machine code only: sm_90)" */
};

/*
 * The PTX to rewrite for a device of `device_arch` (e.g. 90; 0 = any): the
 * entry with the highest arch <= device_arch, or, when device_arch is 0, the
 * highest arch. Returns 0 and fills *ptx; otherwise a negative errno and
 * ptx->reason: -ENOENT no PTX (machine code only), -ENOEXEC PTX only for a
 * newer arch than the device, -EINVAL malformed image or corrupt compressed
 * entry, -ENOMEM.
 */
int fatbin_find_ptx(const void *image, size_t max_len, unsigned device_arch,
		    struct fatbin_ptx *ptx);

/*
 * Same, for a file (cuModuleLoad, cuLibraryLoadFromFile): a fat binary, a
 * cubin, PTX text, or an ELF executable/library with a .nv_fatbin section.
 */
int fatbin_find_ptx_file(const char *path, unsigned device_arch, struct fatbin_ptx *ptx);

void fatbin_ptx_free(struct fatbin_ptx *ptx);

#endif
