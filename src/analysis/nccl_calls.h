/* NCCL calls of a trace: ranks, each call's instance and kernel, and which rank waited for which. */
#ifndef GRT_NCCL_CALLS_H
#define GRT_NCCL_CALLS_H

#include <stdbool.h>
#include <stdint.h>
#include "analysis/report_util.h"
#include "trace/grt_reader.h"
#include "trace/records_nccl.h"

#define NCCL_MAX_RANKS 256	/* (communicator, rank) pairs followed */
#define NCCL_INSTANCE_RANKS 16	/* ranks of one collective compared; a host rarely has more */
#define NCCL_NONE UINT32_MAX

/*
 * NCCL requires every rank of a communicator to call its collectives in the
 * same order, so the k-th collective of each rank is one collective: the
 * rank that entered it last held the others, which entered earlier and
 * waited (on the device) for it. Point to point the same holds per
 * direction: the k-th send from rank a to b is the k-th receive on b from a.
 * A communicator made by ncclCommSplit has as members the ranks of its
 * parent that passed the same color, in the order of their keys (then of
 * their ranks in the parent), as NCCL numbers them.
 *
 * Each call is tied to the first NCCL kernel its thread launches from the
 * call on, before its next call. Where every rank's kernel of one collective
 * has device timing (its START, matched to the launch by the job builder),
 * the waits are measured on the GPU: the last rank's kernel START minus each
 * rank's; otherwise between the host entries, when each rank queued it.
 */
enum nccl_basis {
	NCCL_BASIS_HOST = 0,
	NCCL_BASIS_DEVICE = 1,
};

struct nccl_rank {
	uint64_t comm;		/* ncclComm_t in its process */
	uint64_t comm_id;
	uint32_t pid;
	uint32_t tid;		/* the thread that created it */
	uint32_t rank;
	uint32_t nranks;
	int32_t device;
	uint32_t seq;		/* collectives called so far */
	uint64_t p2p;		/* sends and receives */
	uint32_t splits;	/* ncclCommSplit calls on it so far */
	bool split;		/* made by ncclCommSplit: rank and nranks follow its members */
	int32_t key;
	uint32_t parent_rank;
	uint64_t bytes;
	uint64_t kernels;	/* NCCL kernel launches tied to its calls */
	uint64_t waited_ns;	/* summed over its calls */
	uint64_t last_in;	/* calls it entered last (the others waited for it) */
};

/* One ncclAllReduce/.../ncclSend/ncclRecv of a rank known from its communicator. */
struct nccl_call {
	uint64_t enter;		/* host entry, trace time */
	uint64_t inst_key;	/* the calls of one instance share it and seq */
	uint64_t comm_id;
	uint64_t bytes;
	uint64_t kernel_enter;	/* API entry of its NCCL kernel launch, 0 when none was tied */
	uint64_t kernel_start;	/* that kernel's device START, 0 unknown */
	uint64_t wait_ns;	/* how long it waited for the last rank in, 0 when it was last */
	uint64_t wait_from;	/* where the wait began: kernel_start or enter, by basis */
	uint32_t pid;
	uint32_t tid;
	uint32_t rank_index;	/* into the ranks */
	uint32_t rank;		/* in its communicator (final once the calls are finished) */
	uint32_t nranks;
	uint32_t seq;		/* #k - 1, per rank (per direction and peer for send and recv) */
	uint32_t op;		/* enum grt_nccl_op */
	uint32_t inst_nranks;	/* ranks expected in its instance when it entered */
	int32_t peer;		/* send and recv: the peer rank; else -1 */
	int32_t device;		/* its kernel's job device, else its rank's, -1 unknown */
	uint32_t kernel_name;	/* index in the kernel names, NCCL_NONE when no kernel was tied */
	uint32_t waited_for;	/* index of the call of the rank entered last, NCCL_NONE when none */
	uint32_t for_rank;	/* that call's rank and device */
	int32_t for_device;
	uint8_t basis;		/* enum nccl_basis of the instance */
	bool last_in;
};

struct nccl_calls;

/* hdr may be NULL; with the gpu source in it, the NCCL kernels' STARTs are followed. */
struct nccl_calls *nccl_calls_new(const struct grt_file_header *hdr);
void nccl_calls_free(struct nccl_calls *c);
void nccl_calls_record(struct nccl_calls *c, const struct grt_record *rec,
		       const struct grt_strings *strings);
/* Ties kernels and judges every instance; later records are ignored. Idempotent. */
void nccl_calls_finish(struct nccl_calls *c);

uint32_t nccl_calls_count(const struct nccl_calls *c);
const struct nccl_call *nccl_calls_at(const struct nccl_calls *c, uint32_t i);
uint32_t nccl_calls_ranks(const struct nccl_calls *c);
const struct nccl_rank *nccl_calls_rank(const struct nccl_calls *c, uint32_t i);
/* Every call by op (on communicators not seen created too), their bytes. */
uint64_t nccl_calls_op_calls(const struct nccl_calls *c, uint32_t op);
uint64_t nccl_calls_op_bytes(const struct nccl_calls *c, uint32_t op);
/* The first NCCL kernel tied to a call of op, NULL when none. */
const char *nccl_calls_op_kernel(const struct nccl_calls *c, uint32_t op);
const char *nccl_calls_kernel_name(const struct nccl_calls *c, uint32_t index);
/* Calls on communicators created before the trace started: no rank, no waits. */
uint64_t nccl_calls_unknown_comm(const struct nccl_calls *c);
bool nccl_calls_incomplete(const struct nccl_calls *c);

/* The call whose NCCL kernel thread tid launched at api_enter (after finish), or NULL. */
const struct nccl_call *nccl_calls_of_kernel(const struct nccl_calls *c, uint32_t tid,
					     uint64_t api_enter);

/* "all-reduce #15 rank 0/2" into buf. */
const char *nccl_call_name(const struct nccl_call *call, char *buf, unsigned len);
/* "host" or "device". */
const char *nccl_basis_name(uint32_t basis);
/*
 * Whether name (a launch's kernel name, mangled or not) is an NCCL kernel;
 * out gets it without C++ mangling.
 */
bool nccl_kernel_name(const char *name, char *out, size_t len);

#endif
