/* A launch's short ring record, and the thread record it leans on: written by the library, read by the recorder. */
#ifndef GRT_INJECT_CALL_LAUNCH_H
#define GRT_INJECT_CALL_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/types.h>
#include "sources/cuda.h"

/*
 * Most of a struct cuda_event is the same for every call of a thread: its
 * pid, tid, parent and name. A launch (without a user stack) leaves them out
 * and writes only what changes from launch to launch, and only the argument
 * words it read: 96 bytes with the ring's header for a kernel of two
 * arguments, against 152. After a real launch, whose driver work evicts
 * what the wrapper touched, every line the record spans is a miss on the
 * application's thread, and every line is one the recorder's CPU must fetch
 * from the thread's.
 *
 * The thread says who it is in a CALL_REC_THREAD record, first in a ring it
 * claimed and again after its name may have changed; the recorder keeps an
 * event per ring with the identity it said (call_thread_event) and fills
 * each launch into it (call_launch_fill): the same event the long record
 * gives.
 */

/* CALL_REC_THREAD: who writes the ring's CALL_REC_LAUNCH records after it. */
struct call_rec_thread {
	uint32_t pid;
	uint32_t tid;
	uint32_t ppid;
	uint32_t reserved;
	char comm[CUDA_COMM_LEN];
};

/* CALL_REC_LAUNCH: a launch, graph launches included (function holds the graph exec). */
struct call_rec_launch {
	uint64_t entry_ns; /* first, as in struct cuda_event: call_record_entry_ns() */
	uint64_t return_ns;
	uint64_t function;
	uint64_t stream;
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t shared_mem;
	int32_t ret;
	uint16_t api;
	uint8_t flags; /* enum cuda_event_flags the library sets */
	uint8_t arg_words;
	uint32_t cpu;
	uint64_t args[CUDA_LAUNCH_ARG_WORDS]; /* arg_words of them written */
};

#define CALL_REC_LAUNCH_FIXED offsetof(struct call_rec_launch, args)

_Static_assert(sizeof(struct call_rec_thread) == 32, "thread record layout");
_Static_assert(CALL_REC_LAUNCH_FIXED == 72 && sizeof(struct call_rec_launch) == 104,
	       "launch record layout");
_Static_assert(offsetof(struct call_rec_launch, entry_ns) == 0, "entry time first");
_Static_assert(offsetof(struct cuda_graph_args, graph_exec) ==
			   offsetof(struct cuda_launch_args, function) &&
		       offsetof(struct cuda_graph_args, stream) ==
			   offsetof(struct cuda_launch_args, stream),
	       "a graph launch's two fields sit where a launch's function and stream do");

/* The bytes a launch record of n argument words takes (its payload). */
static inline uint32_t call_launch_len(uint32_t arg_words)
{
	return (uint32_t)CALL_REC_LAUNCH_FIXED + arg_words * (uint32_t)sizeof(uint64_t);
}

/*
 * A launch record's arguments, as an event holds them, the words past
 * arg_words 0. args: the record's argument words, read one by one and only
 * those there are (a short record may end where the ring's data area does).
 */
static inline void call_launch_args(struct cuda_launch_args *out, const struct call_rec_launch *l,
				    const void *args)
{
	*out = (struct cuda_launch_args){
	    .function = l->function,
	    .stream = l->stream,
	    .grid = {l->grid[0], l->grid[1], l->grid[2]},
	    .block = {l->block[0], l->block[1], l->block[2]},
	    .shared_mem = l->shared_mem,
	    .arg_words = l->arg_words,
	};
	for (uint32_t i = 0; i < l->arg_words && i < CUDA_LAUNCH_ARG_WORDS; i++)
		memcpy(&out->args[i], (const uint8_t *)args + i * sizeof(uint64_t), sizeof(uint64_t));
}

/* The recorder's side: an event of thread's calls, before a launch record fills it in. */
static inline void call_thread_event(const struct call_rec_thread *thread, struct cuda_event *out)
{
	*out = (struct cuda_event){.pid = thread->pid, .tid = thread->tid, .ppid = thread->ppid};
	memcpy(out->comm, thread->comm, CUDA_COMM_LEN);
	out->comm[CUDA_COMM_LEN - 1] = 0;
}

/*
 * A launch record (payload, len bytes, read once, field by field) into an
 * event of its thread's (call_thread_event): everything a launch sets, the
 * rest left as it is. The recorder keeps one such event per ring and fills
 * it in for each launch rather than building a new one. false when the
 * record is malformed: too short for the argument words it claims, or more
 * of them than an event holds. The traced process writes the records;
 * nothing in them is trusted beyond its size.
 */
static inline bool call_launch_fill(struct cuda_event *ev, const void *payload, uint32_t len)
{
	struct call_rec_launch l;

	if (len < CALL_REC_LAUNCH_FIXED)
		return false;
	memcpy(&l, payload, CALL_REC_LAUNCH_FIXED);
	if (l.arg_words > CUDA_LAUNCH_ARG_WORDS || len < call_launch_len(l.arg_words))
		return false;
	ev->entry_ns = l.entry_ns;
	ev->return_ns = l.return_ns;
	ev->cpu = l.cpu;
	ev->ret = l.ret;
	ev->api = l.api;
	ev->flags = l.flags;
	call_launch_args(&ev->args.launch, &l, (const uint8_t *)payload + CALL_REC_LAUNCH_FIXED);
	return true;
}

#endif
