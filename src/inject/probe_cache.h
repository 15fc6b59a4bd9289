/* On-disk cache of compiled instrumented modules (by PTX content, architecture, driver). */
#ifndef GRT_PROBE_CACHE_H
#define GRT_PROBE_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct probe_cache_key {
	uint64_t ptx_hash; /* FNV-1a of the rewritten PTX */
	uint64_t ptx_len;
	unsigned arch;	    /* 90 for sm_90 */
	int driver_version; /* cuDriverGetVersion */
};

uint64_t probe_cache_hash(const void *data, size_t len);

/* The cache file name for key under dir (no I/O). */
void probe_cache_path(const char *dir, const struct probe_cache_key *key, char *out,
		      size_t out_len);

/* A cached image (malloc'd) or NULL: 0, -ENOENT (miss) or another negative errno. */
int probe_cache_load(const char *dir, const struct probe_cache_key *key, void **image, size_t *len);

/* Stores an image; creates dir (and parents) as needed; written atomically. 0 or negative errno. */
int probe_cache_store(const char *dir, const struct probe_cache_key *key, const void *image,
		      size_t len);

#endif
