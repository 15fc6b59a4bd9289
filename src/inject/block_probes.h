/* Block (and thread) probes: the first instrumentation, its launches and its collection. */
#ifndef GRT_INJECT_BLOCK_PROBES_H
#define GRT_INJECT_BLOCK_PROBES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "inject/cuda_decls.h"
#include "inject/device_arena.h"
#include "inject/instrument.h"

#define PROBE_STREAM_SLOTS 256

/* The probes' resources in one context. */
struct probe_ctx {
	struct pool_ctx pool; /* the context and our stream */
	CUevent *free_events;
	unsigned nfree_events, cap_events;
	/* events that could not be made are not asked for again before this (events_rest) */
	uint64_t events_retry_ns;
	uint32_t events_rest_ms;
	CUevent done_event;   /* blocking-sync: the collection thread sleeps on it */
	CUfunction summarize; /* __grt_summarize loaded in this context (block mode) */
	int summarize_state;  /* 0 not tried, 1 loaded, -1 failed: the host summarizes */
	CUdeviceptr scratch;  /* thread mode: where the launches whose records are not read write */
	uint64_t scratch_spans;
};

/* One instrumented launch until it is collected. */
struct pending {
	struct pending *next;
	uint64_t seq;
	uint64_t launch_id;
	uint64_t stream_key;
	uint64_t stream;
	uint64_t api_enter_ns;
	uint64_t api_return_ns;
	uint64_t param; /* the probe parameter: buffer address and tag */
	uint16_t tag;
	CUcontext ctx;
	struct probe_ctx *res;
	struct twin *fn;
	struct pool_slot *slot;
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t tid;
	CUevent event;	     /* taken at launch: it is recorded after the launch when it is due */
	bool event_recorded; /* the event is on the stream behind this launch */
	atomic_bool launched; /* the launch was submitted (or failed): the collection may take it */
	bool failed;	      /* the instrumented launch failed: nothing to read, the slot goes back */
	bool unlisted;	      /* thread mode, records not read: no slot, not collected */
	bool complete;
	bool blocks_wanted;   /* per-block records go to the trace */
	bool summarized;      /* block mode: the device summarized it, only its totals are read */
	uint64_t staging_off; /* where its buffer landed in the staging copy */
};

struct stream_count {
	uint64_t key;
	unsigned since_event;
};

struct block_probes {
	struct inject_state *st;
	struct instr_state *is; /* its lock guards everything below */
	struct instrumentation ops;
	int mode;
	pthread_cond_t slot_freed;
	struct pending *head, *tail; /* in launch order */
	unsigned npending;
	unsigned most_pending; /* the most launches holding buffers at once: what a pool must hold */
	struct probe_pool pool;
	struct stream_count streams[PROBE_STREAM_SLOTS];
	uint64_t max_complete_seq; /* no launch after this one is marked complete */
	void *staging;		   /* host buffer the collection copies into */
	size_t staging_size;
	struct grt_probe_summary_job *jobs; /* mapped pinned: the summarizer's work list */
	size_t jobs_cap;
	unsigned sm_slots; /* block mode: SM slots read back per launch (0: not known yet) */
	atomic_ullong no_buffer, lost_blocks;
	atomic_ullong recycled; /* launches collected while the application ran: buffers reused */
	atomic_ullong unread;	/* probed launches whose buffers could not be read back */
	atomic_bool unread_said;
	struct pending *free_pending; /* entries kept for the next launches */
	struct probe_ctx *ctxs[INSTR_MAX_CTXS]; /* every context's, as opened */
	unsigned nctxs;
};

/* Makes the probes of cfg.probe_mode the shared path's first instrumentation. */
int block_probes_register(struct instr_state *is, char *why, size_t why_len);

/* The collection thread: each context's completion events made ahead again. Under the lock. */
void probes_events_top_up(struct block_probes *bp);
/* probe_collect.c: reading the buffers back. */
void probes_collect(void *self, enum instr_collect_reason why);
/* Loads __grt_summarize in r's context (current), once; false when the host summarizes. */
bool probes_summarizer_ready(struct block_probes *bp, struct probe_ctx *r);
/* The collection's pinned host buffers, made once with a context current. */
void probes_collection_buffers(struct block_probes *bp);
/* A completion event back to its context's free list. */
void probes_event_put(struct probe_ctx *r, CUevent e);
/* An entry back to the free list (the launch path does no malloc). */
void probes_pending_free(struct block_probes *bp, struct pending *p);
/*
 * Marks the launched entries up to launch `token` complete: those of stream
 * `key`, or every stream's when `all`. Returns whether any was not yet.
 * Under the lock.
 */
bool probes_mark_complete(struct block_probes *bp, uint64_t key, bool all, uint64_t token);

#endif
