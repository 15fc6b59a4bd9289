/* Event shared by nccl.bpf.c and nccl.c: one libnccl call, communicator creation or a collective. */
#ifndef GRT_NCCL_SOURCE_H
#define GRT_NCCL_SOURCE_H

/* The BPF cookie of a probe: what it probes. */
enum nccl_call_kind {
	NCCL_CALL_COMM_INIT = 0,	/* ncclCommInitRank, ncclCommInitRankConfig */
	/* 1..7: the collectives and point-to-point calls, enum grt_nccl_op */
	NCCL_CALL_COMM_SPLIT = 100,	/* ncclCommSplit */
};

struct nccl_event {
	__u64 entry_ns;
	__u64 return_ns;	/* 0 when sent without its return (detach) */
	__u32 pid;
	__u32 tid;
	__u32 cpu;
	__s32 ret;
	__u32 kind;		/* enum nccl_call_kind, or a collective's enum grt_nccl_op */
	__u32 datatype;
	__u64 comm;		/* the communicator; comm init and split: *out at return */
	__u64 comm_out;		/* comm init and split: the ncclComm_t * argument */
	__u64 parent;		/* comm split: the communicator split */
	__s32 color;		/* comm split */
	__s32 key;
	__u64 comm_id;		/* comm init: the ncclUniqueId folded to 64 bits */
	__u64 stream;
	__u64 count;
	__s32 root;		/* broadcast, reduce: the root; send, recv: the peer */
	__u32 redop;
	__u32 nranks;
	__u32 rank;
};

_Static_assert(sizeof(struct nccl_event) == 112, "nccl event layout");

#endif
