/* The cuda source's in-process half: each interposed driver call written to its thread's ring. */
#ifndef GRT_INJECT_CALL_RECORD_H
#define GRT_INJECT_CALL_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include "inject/cuda_decls.h"

/* The recorder names the rings' file here when the cuda source records in-process. */
#define GRT_INJECT_ENV_CALLS "GRTRACE_CUDA_CALLS"
/* "monotonic": the calls' timestamps from clock_gettime, never the raw TSC */
#define GRT_INJECT_ENV_CLOCK "GRTRACE_INJECT_CLOCK"

/*
 * Whether this process records its calls in-process. Read on every call, so
 * a plain global: set once at load (and again in a forked child).
 */
extern bool call_record_on;
/* Whether its calls' timestamps are the raw TSC (the recorder converts them). */
extern bool call_record_raw_tsc;

/*
 * The entry of a call to api (enum grt_cuda_api) with its arguments in order
 * (args[0] is the first; integers as the caller's registers held them).
 * frame is the exported wrapper's __builtin_frame_address(0): the user stack
 * starts at its caller. real is the driver's function (the first frame, as
 * a uprobe there sees it). Returns the call's open record in its ring (a
 * struct cuda_event, or a launch's short record: call_launch.h), to be
 * passed to call_record_exit(), or NULL when nothing more is to be done (not
 * recording, the ring was full, or a launch whose return is not sampled:
 * already written).
 */
void *call_record_enter_slow(uint16_t api, const uint64_t *args, void *frame, const void *real);

/* Whether a call to api (the driver's function real) is recorded here at all. */
static inline bool call_record_wanted(uint16_t api, const void *real)
{
	return call_record_on && api && real;
}

static inline void *call_record_enter(uint16_t api, const uint64_t *args, void *frame,
				      const void *real)
{
	return call_record_wanted(api, real) ? call_record_enter_slow(api, args, frame, real)
					     : NULL;
}

/*
 * call_record_enter() for cuLaunchKernel and cuLaunchKernel_ptsz, whose
 * wrappers passed the library's own calls through already.
 */
void *call_record_launch_slow(uint16_t api, const uint64_t *args, void *frame, const void *real);

static inline void *call_record_launch(uint16_t api, const uint64_t *args, void *frame,
				       const void *real)
{
	return call_record_wanted(api, real) ? call_record_launch_slow(api, args, frame, real)
					     : NULL;
}

/*
 * The call returned r at now_ns (0: read the clock here): its results are
 * read and the record goes to the recorder.
 */
void call_record_exit(void *open, CUresult r, uint64_t now_ns);

/*
 * When the open call was entered: the wrapper's bracket reuses it instead of
 * reading the clock. Only where the gpu source records in the process, whose
 * calls' timestamps are CLOCK_MONOTONIC (never the raw TSC).
 */
static inline uint64_t call_record_entry_ns(const void *open)
{
	/* entry_ns, the first field of both records */
	return open && !call_record_raw_tsc ? *(const uint64_t *)open : 0;
}

/* A thread's name changed (pthread_setname_np, the library's own threads): comm is read again. */
void call_record_comm_changed(void);

/* Set up from the environment at load; in a forked child, the child's own rings. */
void call_record_load(void);
void call_record_after_fork(void);

/*
 * Called once by every process that records in-process, before its first
 * call: the recorder's uprobe on it keeps the cuda source's libcuda probes,
 * if any are attached, from recording this process a second time.
 */
void grt_cuda_inproc_begin(uint32_t pid);

#endif
