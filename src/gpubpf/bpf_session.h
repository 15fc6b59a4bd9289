/* The programs of a recording as the injected library receives them: maps, translations, kernels. */
#ifndef GRT_GPUBPF_BPF_SESSION_H
#define GRT_GPUBPF_BPF_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "gpubpf/bpf_attach.h"
#include "gpubpf/bpf_device.h"
#include "gpubpf/bpf_ptx.h"

/*
 * The recorder verifies and translates every object before the command
 * starts, then packs what the device side needs into one blob: each map's
 * slot and shape, each program's number, attach point, kernel pattern and
 * PTX. The blob travels in the recorder's shared ring file (shm_ring.h), so
 * the programs that run are the ones the recorder verified: the injected
 * library never reads an object file, and the target's environment cannot
 * name one. No libbpf here: the injected library links this file.
 */

#define GPUBPF_SESSION_MAGIC 0x53504247u /* "GBPS" */
#define GPUBPF_SESSION_VERSION 2u
#define GPUBPF_SESSION_MAX_PROGS 256u

struct gpubpf_session_map {
	uint32_t slot; /* env.map[] index */
	struct gpubpf_map_shape shape;
	bool rodata; /* folded into the PTX: no device memory */
};

struct gpubpf_session {
	uint32_t thread_capacity; /* threads a per-thread map holds */
	uint64_t ring_bytes;	  /* data bytes of each ring (and of the printk ring) */
	struct gpubpf_session_map maps[GRT_BPF_MAX_MAPS];
	size_t nr_maps;
	struct gpubpf_translation *ptx;	    /* nr_progs, their text inside `blob` */
	struct gpubpf_attach_prog *progs;   /* nr_progs, for gpubpf_attach() */
	uint16_t *prog_ids;		    /* nr_progs */
	size_t nr_progs;
	uint8_t *blob; /* the unpacked copy everything points into */
};

struct gpubpf_bundle;

/*
 * Packs bundles (their map slots and program ids already distinct) into a
 * malloc'd blob of *len bytes; NULL when out of memory or over the limits.
 */
void *gpubpf_session_pack(const struct gpubpf_bundle *bundles, size_t nr_bundles,
			  uint32_t thread_capacity, uint64_t ring_bytes, size_t *len);

/*
 * Reads a blob back, checking every length and field. 0, or -EINVAL with one
 * line in err; gpubpf_session_free() in every case.
 */
int gpubpf_session_unpack(const void *blob, size_t len, struct gpubpf_session *s, char *err,
			  size_t err_len);
void gpubpf_session_free(struct gpubpf_session *s);

#endif
