/* The NCCL API as the fake libnccl.so.2 exports it: real names, real argument order (nccl.h). */
#ifndef GRT_FAKE_NCCL_H
#define GRT_FAKE_NCCL_H

#include <stddef.h>
#include "fake_cuda.h"

typedef int ncclResult_t;
typedef struct fake_nccl_comm *ncclComm_t;
typedef int ncclDataType_t;
typedef int ncclRedOp_t;
typedef CUstream cudaStream_t;

typedef struct {
	char internal[128];
} ncclUniqueId;

#define ncclSuccess 0
#define ncclInvalidArgument 4
#define ncclFloat32 7
#define ncclSum 0
#define NCCL_SPLIT_NOCOLOR -1

/*
 * The kernels the collectives launch through the fake driver, one per op,
 * named as NCCL names its device kernels.
 */
#define FAKE_NCCL_ALL_REDUCE_KERNEL "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
#define FAKE_NCCL_SEND_RECV_KERNEL "ncclDevKernel_SendRecv"

ncclResult_t ncclGetUniqueId(ncclUniqueId *id);
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
/* Collective over comm: the ranks passing one color make a communicator, numbered by key. */
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, void *config);
ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
			   ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
			   cudaStream_t stream);
ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
			   ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
			       ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
			       cudaStream_t stream);
ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
			   ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
			ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
			cudaStream_t stream);
/* Point to point: each launches the send/receive kernel and returns, as NCCL queues them. */
ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
		      ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
		      ncclComm_t comm, cudaStream_t stream);

#endif
