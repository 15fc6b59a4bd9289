/* The `gpu` source's GPU eBPF half: the programs handed to the library, what comes back decoded. */
#ifndef GRT_SOURCES_GPU_BPF_H
#define GRT_SOURCES_GPU_BPF_H

#include <stddef.h>
#include <stdint.h>

struct grt_session;
struct gpu_bpf;

/*
 * Loads, verifies and translates the --bpf objects at paths (a refusal fails
 * the session with its one line, so the held command never runs), describes
 * them in the session (objects with their BTF, programs, maps, the time that
 * took) and packs them for the injected library (bpf_session.h): *blob,
 * malloc'd, goes into the ring file. 0 or a negative errno (session failed).
 */
int gpu_bpf_new(struct grt_session *s, const char *const *paths, unsigned nr,
		struct gpu_bpf **out, void **blob, size_t *blob_len);

/*
 * One INJ_MSG_BPF_DATA message: map images (reassembled from chunks) become
 * map dumps, ring records events and printk lines, losses lost records and
 * drops. 0, or -EINVAL for a malformed message.
 */
int gpu_bpf_on_data(struct gpu_bpf *gb, const void *payload, uint32_t len);

void gpu_bpf_free(struct gpu_bpf *gb);

#endif
