/* A fake libnccl.so.2: communicators across processes, collectives that launch a kernel and meet the other ranks. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "fake_nccl.h"

/*
 * Each collective launches its ncclDevKernel_* kernel through the fake
 * driver on the caller's stream, then waits until every rank of the
 * communicator has entered the same collective (a barrier in shared memory
 * named by the unique id): a rank that comes early waits in the call, as a
 * real one waits on the device, so the entry times tell who waited for whom.
 */
#define FAKE_API __attribute__((noinline, used, visibility("default")))
#define ID_MAGIC "fake-nccl"

#define FAKE_NCCL_MAX_RANKS 16

struct shared {
	int arrived;
	int generation;
	int color[FAKE_NCCL_MAX_RANKS];	/* ncclCommSplit: what each rank passed */
	int key[FAKE_NCCL_MAX_RANKS];
};

struct fake_nccl_comm {
	int rank;
	int nranks;
	struct shared *shared;
	char id[128];		/* the unique id it was made from: its splits' ids extend it */
	int splits;
	char shm_name[160];
	CUfunction kernels[8];
};

static volatile unsigned long fake_calls;

static const char *const kernel_names[8] = {
	"", FAKE_NCCL_ALL_REDUCE_KERNEL, "ncclDevKernel_AllGather_RING_LL",
	"ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", "ncclDevKernel_Broadcast_RING_LL",
	"ncclDevKernel_Reduce_Sum_f32_RING_LL", FAKE_NCCL_SEND_RECV_KERNEL, FAKE_NCCL_SEND_RECV_KERNEL,
};

FAKE_API ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
	struct timespec now;

	fake_calls++;
	clock_gettime(CLOCK_REALTIME, &now);
	memset(id, 0, sizeof(*id));
	/* the first words differ per id, as the random magic of a real one */
	snprintf(id->internal, sizeof(id->internal), "%s-%d-%ld", ID_MAGIC, (int)getpid(),
		 (long)now.tv_nsec);
	return ncclSuccess;
}

static struct shared *shared_of(const ncclUniqueId *id, char *name, size_t len)
{
	struct shared *s;
	int fd;

	snprintf(name, len, "/%.120s", id->internal);
	fd = shm_open(name, O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, sizeof(*s))) {
		close(fd);
		return NULL;
	}
	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return s == MAP_FAILED ? NULL : s;
}

/* Every rank waits here until all have arrived (a generation barrier). */
static void meet(struct fake_nccl_comm *c)
{
	int generation = __atomic_load_n(&c->shared->generation, __ATOMIC_ACQUIRE);

	if (__atomic_add_fetch(&c->shared->arrived, 1, __ATOMIC_ACQ_REL) == c->nranks) {
		__atomic_store_n(&c->shared->arrived, 0, __ATOMIC_RELAXED);
		__atomic_add_fetch(&c->shared->generation, 1, __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(&c->shared->generation, __ATOMIC_ACQUIRE) == generation)
		usleep(200);
}

static ncclResult_t init_rank(ncclComm_t *out, int nranks, const ncclUniqueId *id, int rank)
{
	struct fake_nccl_comm *c = calloc(1, sizeof(*c));
	CUmodule module;

	if (!c || rank < 0 || rank >= nranks || nranks > FAKE_NCCL_MAX_RANKS ||
	    strncmp(id->internal, ID_MAGIC, strlen(ID_MAGIC))) {
		free(c);
		return ncclInvalidArgument;
	}
	c->rank = rank;
	c->nranks = nranks;
	memcpy(c->id, id->internal, sizeof(c->id));
	c->shared = shared_of(id, c->shm_name, sizeof(c->shm_name));
	if (!c->shared || cuModuleLoad(&module, "/opt/fake/nccl_kernels.cubin")) {
		free(c);
		return ncclInvalidArgument;
	}
	for (int op = 1; op < 8; op++)
		cuModuleGetFunction(&c->kernels[op], module, kernel_names[op]);
	*out = c;
	meet(c); /* creating a communicator is collective, as in NCCL: every rank returns together */
	return ncclSuccess;
}

FAKE_API ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
	fake_calls++;
	return init_rank(comm, nranks, &id, rank);
}

FAKE_API ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id,
					     int rank, void *config)
{
	fake_calls++;
	return init_rank(comm, nranks, &id, rank);
}

FAKE_API ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	fake_calls++;
	/* every rank opened it before the first collective could complete: the name can go */
	if (comm) {
		shm_unlink(comm->shm_name);
		munmap(comm->shared, sizeof(*comm->shared));
	}
	free(comm);
	return ncclSuccess;
}

static ncclResult_t collective(int op, ncclComm_t comm, cudaStream_t stream)
{
	if (!comm)
		return ncclInvalidArgument;
	cuLaunchKernel(comm->kernels[op], 1, 1, 1, 256, 1, 1, 0, stream, NULL, NULL);
	meet(comm);
	return ncclSuccess;
}

FAKE_API ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
				    ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
				    cudaStream_t stream)
{
	fake_calls++;
	return collective(1, comm, stream);
}

FAKE_API ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
				    ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
	fake_calls++;
	return collective(2, comm, stream);
}

FAKE_API ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
					ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
					cudaStream_t stream)
{
	fake_calls++;
	return collective(3, comm, stream);
}

FAKE_API ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
				    ncclDataType_t datatype, int root, ncclComm_t comm,
				    cudaStream_t stream)
{
	fake_calls++;
	return collective(4, comm, stream);
}

FAKE_API ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
				 ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
				 cudaStream_t stream)
{
	fake_calls++;
	return collective(5, comm, stream);
}

/*
 * Every rank of comm passes its color and key; the ranks of one color make a communicator of
 * their own, numbered by key, then by rank in comm (NCCL's order).
 */
FAKE_API ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
				    void *config)
{
	ncclUniqueId id;
	int rank = 0, nranks = 0, split;

	fake_calls++;
	if (!comm || !newcomm)
		return ncclInvalidArgument;
	split = comm->splits++;
	comm->shared->color[comm->rank] = color;
	comm->shared->key[comm->rank] = key;
	meet(comm);
	for (int r = 0; r < comm->nranks; r++) {
		if (comm->shared->color[r] != color)
			continue;
		nranks++;
		rank += comm->shared->key[r] < key || (comm->shared->key[r] == key && r < comm->rank);
	}
	meet(comm); /* everyone has read the colors before the next split writes them */
	*newcomm = NULL;
	if (color == NCCL_SPLIT_NOCOLOR)
		return ncclSuccess;
	memset(&id, 0, sizeof(id));
	snprintf(id.internal, sizeof(id.internal), "%.100s-s%d-c%d", comm->id, split, color);
	return init_rank(newcomm, nranks, &id, rank);
}

/* A send or receive (op 6 or 7): its kernel on the stream, no wait for the peer (NCCL queues it). */
static ncclResult_t point_to_point(int op, int peer, ncclComm_t comm, cudaStream_t stream)
{
	if (!comm || peer < 0 || peer >= comm->nranks)
		return ncclInvalidArgument;
	cuLaunchKernel(comm->kernels[op], 1, 1, 1, 256, 1, 1, 0, stream, NULL, NULL);
	return ncclSuccess;
}

FAKE_API ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype,
			       int peer, ncclComm_t comm, cudaStream_t stream)
{
	fake_calls++;
	return point_to_point(6, peer, comm, stream);
}

FAKE_API ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
			       ncclComm_t comm, cudaStream_t stream)
{
	fake_calls++;
	return point_to_point(7, peer, comm, stream);
}
