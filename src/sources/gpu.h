/* The `gpu` source's pieces tests reach: library lookup, message handling, ring path. */
#ifndef GRT_SOURCES_GPU_H
#define GRT_SOURCES_GPU_H

#include <stddef.h>
#include <stdint.h>

/*
 * The messages themselves (shared with libgrtrace-inject.so) are in
 * inject/inject_proto.h, the ring in inject/shm_ring.h.
 */
struct gpu_source;

/* Turns one message of the ring into records. 0, or -EINVAL for a malformed message. */
int gpu_handle_message(struct gpu_source *g, uint32_t type, const void *payload, uint32_t len);

/* The ring file an attached source created (its attach() ctx), for tests. */
const char *gpu_ring_path(const void *ctx);

#endif
