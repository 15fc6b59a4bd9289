/* The library's end of the recorder's ring: messages from this process, never waiting. */
#ifndef GRT_INJECT_CHANNEL_H
#define GRT_INJECT_CHANNEL_H

#include <pthread.h>
#include <stdint.h>
#include "inject/inject_proto.h"
#include "inject/shm_ring.h"

struct inject_channel {
	struct shm_ring *ring; /* NULL: not recording (messages are discarded) */
	uint64_t map_len;
	pthread_mutex_t names_lock;
	uint64_t *names_sent; /* open-addressing set of name ids already sent */
	uint32_t names_cap;
	uint32_t names_used;
};

/* All return silently when not recording or when the ring is full (the loss is counted). */
int channel_open(struct inject_channel *ch, const char *path);
void channel_close(struct inject_channel *ch);
void channel_fill_head(struct inj_head *h, uint64_t ts_ns);
/* Sends name once per process; returns its id (0 for NULL). */
uint64_t channel_name(struct inject_channel *ch, const char *name);
void channel_status(struct inject_channel *ch, uint32_t part, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same, stamped with when it happened (it may be sent later). */
void channel_status_at(struct inject_channel *ch, uint32_t part, int status, uint64_t ts_ns,
		       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void channel_send(struct inject_channel *ch, uint32_t type, const void *msg, uint32_t len);
void channel_drops(struct inject_channel *ch, uint32_t kind, uint64_t count);
void channel_instrument(struct inject_channel *ch, const char *kernel, int status,
			const char *reason);

#endif
