/* Payloads of the `nccl` source: communicators and collectives (uprobes on libnccl), in its record range. */
#ifndef GRT_RECORDS_NCCL_H
#define GRT_RECORDS_NCCL_H

#include <stdint.h>
#include "grt_format.h"

enum grt_nccl_record_type {
	/* a rank joined a communicator (ncclCommInitRank*) */
	GRT_REC_NCCL_COMM = GRT_REC_SOURCE_FIRST(GRT_SRC_NCCL),
	/* one collective call of one rank */
	GRT_REC_NCCL_COLL = GRT_REC_SOURCE_FIRST(GRT_SRC_NCCL) + 1,
};

enum grt_nccl_op {
	GRT_NCCL_ALL_REDUCE = 1,
	GRT_NCCL_ALL_GATHER = 2,
	GRT_NCCL_REDUCE_SCATTER = 3,
	GRT_NCCL_BROADCAST = 4,
	GRT_NCCL_REDUCE = 5,
	GRT_NCCL_SEND = 6,		/* point to point: root is the peer rank */
	GRT_NCCL_RECV = 7,
	GRT_NCCL_OPS,
};

enum grt_nccl_flags {
	GRT_NCCL_F_NO_RETURN = 1,	/* the return probe did not fire: return_ns and ret unknown */
	GRT_NCCL_F_SPLIT = 2,		/* nccl_comm: made by ncclCommSplit from parent */
};

/*
 * Header ts_ns is the call's entry, pid/tid the caller (the rank's thread:
 * its current CUDA context names the rank's device).
 */
struct grt_nccl_comm_rec {
	uint64_t return_ns;
	int32_t ret;		/* ncclResult_t */
	uint32_t flags;		/* enum grt_nccl_flags */
	uint64_t comm;		/* ncclComm_t written through the out pointer, 0 when it failed */
	/*
	 * The communicator's identity across processes: a fold of the
	 * ncclUniqueId every rank passes (its first bytes are random per id),
	 * so the ranks of one communicator in different processes match.
	 */
	uint64_t comm_id;
	uint32_t nranks;
	uint32_t rank;
	/*
	 * ncclCommSplit (GRT_NCCL_F_SPLIT): the communicator split, and the color and key this
	 * rank passed. comm_id, nranks and rank are 0 there: the new communicator's members are
	 * known only from every rank's call, so `report` derives them. (Traces before these
	 * fields have 40-byte records.)
	 */
	uint64_t parent;
	int32_t color;
	int32_t key;
};

struct grt_nccl_coll_rec {
	uint64_t return_ns;
	int32_t ret;
	uint32_t op;		/* enum grt_nccl_op */
	uint64_t comm;
	uint64_t stream;	/* cudaStream_t */
	uint64_t count;		/* elements as passed (all-gather: send count, reduce-scatter: recv count) */
	uint64_t bytes;		/* count * the datatype's size, 0 when the datatype is unknown */
	uint32_t datatype;	/* ncclDataType_t */
	int32_t root;		/* broadcast and reduce: the root; send and recv: the peer; else -1 */
	uint32_t redop;		/* ncclRedOp_t of reductions */
	uint32_t flags;		/* enum grt_nccl_flags */
};

_Static_assert(sizeof(struct grt_nccl_comm_rec) == 56, "nccl comm layout");
/* The part every nccl_comm record has (before ncclCommSplit was traced). */
#define GRT_NCCL_COMM_MIN_LEN 40
_Static_assert(sizeof(struct grt_nccl_coll_rec) == 64, "nccl coll layout");

/* "all-reduce", "all-gather", ...; "unknown" outside the enum. */
const char *grt_nccl_op_name(uint32_t op);
/* Bytes of one element of an ncclDataType_t, 0 when unknown. */
uint32_t grt_nccl_datatype_size(uint32_t datatype);

#endif
