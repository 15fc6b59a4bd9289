/* The Perfetto model's calls carried to the encoder on a thread of its own. */
#ifndef GRT_PERFETTO_QUEUE_H
#define GRT_PERFETTO_QUEUE_H

#include "export/perfetto_model.h"

/*
 * Reading the trace and building jobs takes one core; encoding the timeline
 * takes a good part of another. The queue records each call of the model
 * (pf_sink_ops) into a batch and hands full batches to a thread that makes
 * the same calls, in the same order, on the encoder: the encoder runs on
 * one thread only, as it would without the queue. What the calls point at
 * must live until pf_queue_finish(): the trace's strings (the reader keeps
 * every text it handed out), static names, the job builder's names, the
 * model's streams and lanes (whose fields the encoder reads, set before the
 * call that hands them out, and whose sink pointer only the encoder writes).
 */
struct pf_queue;

/* NULL when out of memory or without a thread: the caller then calls ops itself. */
struct pf_queue *pf_queue_start(const struct pf_sink_ops *ops, void *ctx);
/* The calls to make instead of ops, with the queue as their ctx. */
extern const struct pf_sink_ops pf_queue_ops;
/* Hands over what is left and waits until the encoder has had every call; frees q. */
int pf_queue_finish(struct pf_queue *q);

#endif
